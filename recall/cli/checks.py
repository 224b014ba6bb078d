"""``recall doctor``'s checks: each piece (config, hooks, service, index, API key, MCP
server, memory) as a ``Check`` with the fix for a failure."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from recall.cli.install import (HOOK_EVENTS, MCP_NAME, SetupError, load_json, local_settings_file, mcp_file,
                                ours, project_root)
from recall.core import config, paths
from recall.core.errors import RecallError


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warn: bool = False  # a failed check that does not make recall unusable


def _settings_candidates(root: Path) -> list[Path]:
    return [root / ".claude" / "settings.json", local_settings_file(root), paths.claude_config_dir() / "settings.json"]


def find_hooks(root: Path) -> dict[str, tuple[Path, dict]]:
    """event -> (settings file, hook entry) for recall's hooks that Claude Code would run here."""
    found: dict[str, tuple[Path, dict]] = {}
    for path in _settings_candidates(root):
        try:
            data = load_json(path) or {}
        except SetupError:
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                for h in (group.get("hooks") if isinstance(group, dict) else None) or []:
                    name = ours(h)
                    if name and event in HOOK_EVENTS and HOOK_EVENTS[event][0] == name and event not in found:
                        found[event] = (path, h)
    return found


def _runnable(command: str) -> str | None:
    """None when the command's program exists and is executable, else why not."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return f"cannot parse the command ({exc})"
    if not argv:
        return "the command is empty"
    exe = argv[0]
    resolved = exe if os.sep in exe else shutil.which(exe)
    if not resolved or not os.path.isfile(resolved):
        return f"{exe} does not exist"
    if not os.access(resolved, os.X_OK):
        return f"{exe} is not executable"
    return None


def check_hooks(root: Path) -> list[Check]:
    checks = []
    found = find_hooks(root)
    fix = f"run `recall setup --project {shlex.quote(str(root))}`"
    missing = [e for e in HOOK_EVENTS if e not in found]
    if missing:
        checks.append(Check("hooks", False, f"missing in Claude Code's settings for {root}: {', '.join(missing)}", fix))
    else:
        checks.append(Check("hooks", True, "all five hooks are registered ("
                            + ", ".join(sorted({str(p) for p, _ in found.values()})) + ")"))
    for event, (path, h) in found.items():
        why = _runnable(str(h.get("command")))
        if why:
            checks.append(Check(f"{event} hook", False, f"{why} ({path})", fix))
        elif not isinstance(h.get("timeout"), (int, float)):
            checks.append(Check(f"{event} hook", False, f"has no timeout ({path})", fix))
    if "UserPromptSubmit" in found and not _runnable(str(found["UserPromptSubmit"][1].get("command"))):
        command = str(found["UserPromptSubmit"][1]["command"])
        payload = json.dumps({"prompt": "ok", "cwd": str(root), "session_id": "recall-doctor",
                              "hook_event_name": "UserPromptSubmit"})
        started = time.monotonic()
        try:
            proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True,
                                  timeout=30, cwd=str(root))
            took = time.monotonic() - started
            bad_out = proc.stdout.strip() and not proc.stdout.strip().startswith("{")
            if proc.returncode != 0 or bad_out:
                checks.append(Check("UserPromptSubmit hook run", False,
                                    f"exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}",
                                    f"see {paths.log_dir() / 'recall.log'}, then {fix}"))
            else:
                checks.append(Check("UserPromptSubmit hook run", True, f"ran in {took * 1000:.0f} ms"))
        except subprocess.TimeoutExpired:
            checks.append(Check("UserPromptSubmit hook run", False, "did not finish within 30 s",
                                f"see {paths.log_dir() / 'recall.log'}"))
        except OSError as exc:
            checks.append(Check("UserPromptSubmit hook run", False, f"could not start: {exc}", fix))
    return checks


def check_service() -> Check:
    from recall.core import service_client as client

    info = client.ping(timeout=1.0)
    if info:
        return Check("service", True, f"running (pid {info.get('pid', '?')}, version {info.get('version', '?')})")
    return Check("service", False, "not running: prompts are served in-process (slower) and new "
                 "transcript lines wait for `recall index`", "run `recall service start`", warn=True)


def check_index() -> Check:
    from indexer.schema import index_exists, index_id

    index = paths.index_dir()
    if not index_exists(index):
        if paths.state_db_path().exists():
            return Check("index", False, f"no index at {index}, though offsets say transcripts were indexed "
                         "(the index was deleted or lost)",
                         "run `recall index`: it rebuilds the index from the archive")
        return Check("index", False, f"no index at {index}", "run `recall index`")
    try:
        from indexer.archive import Archive
        from indexer.ingest import discover
        from indexer.state import StateDB
        from indexer.transcripts import path_text
        from recall.search.searcher import Searcher

        searcher = Searcher(index)
        docs = searcher.count()
        checked, lost, session = searcher.missing_text()
        state = StateDB(paths.state_db_path())
        try:
            known = state.all_files()
            saved_id = state.get_meta("index_id")
        finally:
            state.close()
        behind = 0
        for path in discover(paths.transcript_roots()):
            try:
                st = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # a FIFO or device named *.jsonl: never indexed, never behind
            size = st.st_size
            k = known.get(path_text(path))
            if k is None or k.offset < size:
                behind += 1
        ident = index_id(index)
        missing = _unindexed(searcher, Archive(paths.archive_dir()))
    except RecallError as exc:
        return Check("index", False, str(exc), "run `recall index --rebuild`")
    except Exception as exc:
        return Check("index", False, f"cannot be read ({type(exc).__name__}: {exc})", "run `recall index --rebuild`")
    service = _service_status()
    if service.get("write_error"):
        return Check("index", False, f"the service cannot write: {service['write_error']}",
                     "free space (or fix the filesystem); the service then reads again by itself")
    if saved_id and ident and saved_id != ident:
        return Check("index", False, f"{index} is not the index the saved offsets describe (it was lost or "
                     "replaced): transcripts marked done may be missing from it",
                     "run `recall index`: it rebuilds the index from the archive")
    if lost:
        return Check("index", False, f"{lost} of the {checked} newest messages have no text: their lines in the "
                     f"archive ({paths.archive_dir()}) are gone (session {session})",
                     f"restore {paths.archive_dir()} from a backup; `recall index --rebuild` would keep only "
                     "what the archive and the live transcripts still hold")
    if missing:
        gap, archived = missing
        if service.get("state") in ("starting", "backfilling", "rebuilding", "retrying"):
            return Check("index", False, f"{gap} of the {archived} archived messages are not in the index yet "
                         f"(the service is {service['state']})", "wait for the service to finish", warn=True)
        return Check("index", False, f"{gap} of the {archived} archived messages are not in the index "
                     "(a write that failed, or an index replaced behind recall's back)",
                     "run `recall index --rebuild`: it replays the archive (nothing is lost)")
    if behind:
        return Check("index", False, f"{docs} documents; {behind} transcript file(s) have lines not indexed yet",
                     "run `recall index` (or `recall service start` to keep it fresh)")
    return Check("index", True, f"{docs} documents, up to date with every transcript")


def check_redaction(service_up: bool = False) -> Check:
    """Whether the stored history was redacted by the current rules (``indexer.reredact``)."""
    from indexer.redact import REDACTION_VERSION
    from indexer.reredact import progress

    p = progress(paths.archive_dir())
    if p is None:
        return Check("redaction", True, f"stored history redacted by the current rules (version {REDACTION_VERSION})")
    if p.get("stage") in ("messages", "facts", "memories"):
        done, total = int(p.get("files_done") or 0), int(p.get("files_total") or 0)
        return Check("redaction", False, f"stored history is being re-redacted under the current rules "
                     f"(version {p['from']} -> {p['to']}: {done:,} of {total:,} archive files done); until it "
                     "finishes, older messages may still hold secrets the current rules redact",
                     "wait for the service to finish (`recall status` shows how far)" if service_up else
                     "run `recall index` (or `recall service start`): the pass resumes where it stopped",
                     warn=True)
    return Check("redaction", False, f"stored history was redacted by older rules (version {p['from']}, current "
                 f"{p['to']}): the archive, the index, session facts and memories may still hold secrets the "
                 "current rules redact",
                 "start the service (`recall service restart`) or run `recall index`: it re-redacts everything "
                 "once (nothing else is changed)", warn=True)


def _message_count(searcher) -> int:
    import tantivy

    searcher.refresh()
    q = tantivy.Query.term_query(searcher.schema, "doctype", "message", index_option="basic")
    return searcher.index.searcher().search(q, 1, count=True).count


def _unindexed(searcher, archive) -> tuple[int, int] | None:
    """(messages archived but not in the index, messages archived), or None when the index
    holds them all. Every message is archived before the commit that indexes it, so a gap
    that outlives the writer's next commit (~1 s) means a batch was lost."""
    archived = archive.count()
    gap = archived - _message_count(searcher)
    if gap > 0 and _service_status().get("running"):
        time.sleep(1.0)  # a commit of the running service may be due: count again
        archived = archive.count()
        gap = archived - _message_count(searcher)
    if gap > 0:  # lines are not messages: count each uuid once (slower, so only now)
        archived = archive.distinct_messages()
        gap = archived - _message_count(searcher)
    return (gap, archived) if gap > 0 else None


def _service_status() -> dict:
    """The running service's status: asked live (its status file may be stale, or unwritable
    on a full disk), else read from that file; {} when no service runs."""
    from recall.core import service_client as client
    from recall.service.daemon import lock_holder, read_status

    try:
        st = client.call("status", {}, timeout=2.0)
        if isinstance(st, dict):
            return st
    except Exception:  # no service, or one that does not answer: its file says the rest
        pass
    st = read_status() or {}
    return st if st.get("running") and lock_holder() else {}


def check_key(service_up: bool = False) -> Check:
    from recall.llm import messages_api as llm

    key, where = llm.find_api_key()
    if key:
        return Check("API key", True, f"found in {where}")
    return Check("API key", False, "none found: the model backend is Claude Code's own login if it can be used "
                 "(see the backend line)", "export ANTHROPIC_API_KEY, or run `recall config set api_key KEY`",
                 warn=True)


def check_backend(service_up: bool = False) -> Check:
    """The backend each feature uses right now, here and in the service: FAIL when the service,
    given this shell's credentials as a hook would pass them, would still have none."""
    from recall.llm import backend

    here = backend.describe()
    detail = "; ".join(f"{name}: {f['backend']}" for name, f in here["features"].items())
    detail = f"model.backend = {here['setting']}: {detail} ({here['why']})"
    if here["backend"] == "off":
        return Check("model backend", False, f"{detail}; the hook injects raw snippets",
                     "export ANTHROPIC_API_KEY, `recall config set api_key KEY`, or install and log in to Claude Code",
                     warn=True)
    if service_up:
        from recall.core import service_client as client

        try:
            remote = client.call("backend", {}, timeout=30.0, credentials=True)
        except client.Unavailable as exc:
            return Check("model backend", False, f"{detail}; the service cannot say which it would use ({exc})",
                         "run `recall service restart`")
        theirs = (remote or {}).get("caller") or {}
        if theirs.get("backend") != here["backend"]:
            return Check("model backend", False,
                         f"{detail}; but the service, given the hook's credentials, would use "
                         f"{theirs.get('backend', '?')} ({theirs.get('why', 'no answer')})",
                         "run `recall service restart` from a shell that has your key and Claude Code on PATH, "
                         "or `recall config set api_key KEY`")
    return Check("model backend", True, detail)


def check_mcp(root: Path) -> Check:
    fix = f"run `recall setup --project {shlex.quote(str(root))}`"
    for path, getter in ((root / ".mcp.json", lambda d: (d.get("mcpServers") or {}).get(MCP_NAME)),
                         (mcp_file(None, True), lambda d: (d.get("mcpServers") or {}).get(MCP_NAME)
                          or ((d.get("projects") or {}).get(str(root)) or {}).get("mcpServers", {}).get(MCP_NAME))):
        try:
            data = load_json(path) or {}
            entry = getter(data)
        except (SetupError, AttributeError):
            continue
        if isinstance(entry, dict):
            why = _runnable(" ".join(shlex.quote(str(p)) for p in [entry.get("command") or "", *(entry.get("args") or [])]))
            if why:
                return Check("MCP server", False, f"registered in {path}, but {why}", fix)
            return Check("MCP server", True, f"registered in {path}")
    return Check("MCP server", False, f"not registered for {root}", fix)


def check_config() -> Check:
    problems = config.problems()
    if problems:
        return Check("config", False, problems[0], f"edit {paths.config_path()}")
    return Check("config", True, f"{paths.config_path()}" + ("" if paths.config_path().exists() else " (defaults)"))


def doctor(project: Path | str | None = None) -> list[Check]:
    root = project_root(project)
    service = check_service()
    checks = [check_config(), *check_hooks(root), service, check_index(), check_redaction(service.ok),
              check_key(service.ok), check_backend(service.ok), check_mcp(root)]
    return [*checks, *check_memory(root), *check_rules(root)]


def check_rules(root: Path) -> list[Check]:
    """Rule files that are too large, unreadable, or hold project rules nobody accepted (a
    clone or a pull brought them): a warning each, naming the fix. Nothing when all is well."""
    from recall.rules import store

    problems = store.problems(store.project_file(str(root)), "project", str(root)) \
        + store.problems(store.global_file(), "global")
    return [Check("rules", False, p, "`recall rules list` shows them (`recall rules trust` accepts a project's)",
                  warn=True) for p in problems]


def check_memory(project=None) -> list[Check]:
    """Whether memory extraction is on, and the project's memory state readable."""
    from recall.memory.status import DISABLED, NO_KEY, memory_status

    s = memory_status(str(project) if project else None)
    checks = []
    if not s["key"]:
        checks.append(Check("memory", False, NO_KEY.format(why=s["backend_why"]),
                            "export ANTHROPIC_API_KEY, run `recall config set api_key KEY`, or install and log in "
                            "to Claude Code", warn=True))
    elif not s["configured"]:
        checks.append(Check("memory", False, DISABLED, "recall config set memory.enabled true", warn=True))
    elif s["cap_reached"]:
        checks.append(Check("memory", False, f"the daily cap of {s['daily_call_cap']} model calls is reached",
                            "wait for midnight UTC, or `recall config set memory.daily_call_cap N`", warn=True))
    else:
        checks.append(Check("memory", True, f"extraction on; {s['active']} active memories in {s['project']}; "
                                            f"{s['calls_today']} calls today, est. ${s['cost_total']:.2f} in all"))
    if s["problem"]:
        checks.append(Check("memory state", False, s["problem"], "fix or move the file aside"))
    return checks
