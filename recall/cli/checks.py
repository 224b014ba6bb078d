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

from indexer import sources as agent_sources
from recall.core import config, paths
from recall.core.errors import RecallError
from recall.core.text import counted
from recall.setup.install import HOOK_EVENTS, MCP_NAME, SetupError, load_json, mcp_file, project_root


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warn: bool = False  # a failed check that does not make recall unusable
    shell: bool = False  # its answer depends on the environment it runs in (PATH, ANTHROPIC_* variables)


#: the checks whose answer depends on the environment of the process that runs them: the page,
#: served by the service, leaves them out (``doctor(shell=False)``); `recall doctor` in a shell runs them
SHELL_CHECKS = ("recall command", "UserPromptSubmit hook run", "Claude Code loads recall", "API key", "model backend")


def find_hooks(root: Path) -> dict[str, tuple[Path, dict]]:
    """event -> (settings file, hook entry) for recall's hooks that Claude Code would run here."""
    from recall.core.wiring import setup_hooks

    return {event: found for event, found in setup_hooks(root).items() if event in HOOK_EVENTS}


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


def check_hooks(root: Path, run: bool = True) -> list[Check]:
    """Recall's hooks in Claude Code's settings, each runnable; with ``run``, the prompt hook run
    once (in this process's environment)."""
    checks = []
    found = find_hooks(root)
    fix = f"run `recall setup --project {shlex.quote(str(root))}`"
    missing = [e for e in HOOK_EVENTS if e not in found]
    if missing:
        checks.append(Check("hooks", False, f"missing in Claude Code's settings for {root}: {', '.join(missing)}", fix))
    else:
        checks.append(
            Check(
                "hooks",
                True,
                "all five hooks are registered (" + ", ".join(sorted({str(p) for p, _ in found.values()})) + ")",
            )
        )
    for event, (path, h) in found.items():
        why = _runnable(str(h.get("command")))
        if why:
            checks.append(Check(f"{event} hook", False, f"{why} ({path})", fix))
        elif not isinstance(h.get("timeout"), (int, float)):
            checks.append(Check(f"{event} hook", False, f"has no timeout ({path})", fix))
    if run and "UserPromptSubmit" in found and not _runnable(str(found["UserPromptSubmit"][1].get("command"))):
        command = str(found["UserPromptSubmit"][1]["command"])
        payload = json.dumps(
            {"prompt": "ok", "cwd": str(root), "session_id": "recall-doctor", "hook_event_name": "UserPromptSubmit"}
        )
        started = time.monotonic()
        try:
            proc = subprocess.run(
                command,
                shell=True,
                input=payload,
                capture_output=True,
                text=True,
                timeout=30,
                cwd=str(root),
                env={**os.environ, "RECALL_HOOK_PROBE": "1"},
            )
            took = time.monotonic() - started
            bad_out = proc.stdout.strip() and not proc.stdout.strip().startswith("{")
            if proc.returncode != 0 or bad_out:
                checks.append(
                    Check(
                        "UserPromptSubmit hook run",
                        False,
                        f"exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}",
                        f"see {paths.log_dir() / 'recall.log'}, then {fix}",
                    )
                )
            else:
                checks.append(Check("UserPromptSubmit hook run", True, f"ran in {took * 1000:.0f} ms"))
        except subprocess.TimeoutExpired:
            checks.append(
                Check(
                    "UserPromptSubmit hook run",
                    False,
                    "did not finish within 30 s",
                    f"see {paths.log_dir() / 'recall.log'}",
                )
            )
        except OSError as exc:
            checks.append(Check("UserPromptSubmit hook run", False, f"could not start: {exc}", fix))
    return checks


def check_service() -> Check:
    from recall.core import service_client as client

    info = client.ping(timeout=1.0)
    if info:
        from recall.core import code_version

        if info.get("code") and info["code"] != code_version.fingerprint():
            return Check(
                "service",
                False,
                f"running (pid {info.get('pid', '?')}), but on the code from before the "
                "last install or upgrade (or from another install than this `recall`): it restarts itself "
                "once the new code holds still and imports, and has not",
                f"run `recall service restart`; {paths.log_dir() / 'recall.log'} says why it did not",
            )
        return Check("service", True, f"running (pid {info.get('pid', '?')}, version {info.get('version', '?')})")
    return Check(
        "service",
        False,
        "not running: prompts are served in-process (slower) and new transcript lines wait for `recall index`",
        "run `recall service start`",
        warn=True,
    )


def check_index() -> Check:
    from indexer.schema import index_exists, index_id

    index = paths.index_dir()
    if not index_exists(index):
        if paths.state_db_path().exists():
            return Check(
                "index",
                False,
                f"no index at {index}, though offsets say transcripts were indexed (the index was deleted or lost)",
                "run `recall index`: it rebuilds the index from the archive",
            )
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
        for path in discover(agent_sources.all_roots()):
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
        return Check(
            "index",
            False,
            f"the service cannot write: {service['write_error']}",
            "free space (or fix the filesystem); the service then reads again by itself",
        )
    if saved_id and ident and saved_id != ident:
        return Check(
            "index",
            False,
            f"{index} is not the index the saved offsets describe (it was lost or "
            "replaced): transcripts marked done may be missing from it",
            "run `recall index`: it rebuilds the index from the archive",
        )
    if lost:
        return Check(
            "index",
            False,
            f"{lost} of the {checked} newest messages have no text: their lines in the "
            f"archive ({paths.archive_dir()}) are gone (session {session})",
            f"restore {paths.archive_dir()} from a backup; `recall index --rebuild` would keep only "
            "what the archive and the live transcripts still hold",
        )
    if missing:
        gap, archived = missing
        if service.get("state") in ("starting", "backfilling", "rebuilding", "retrying"):
            return Check(
                "index",
                False,
                f"{gap} of the {archived} archived messages are not in the index yet "
                f"(the service is {service['state']})",
                "wait for the service to finish",
                warn=True,
            )
        return Check(
            "index",
            False,
            f"{gap} of the {archived} archived messages are not in the index "
            "(a write that failed, or an index replaced behind recall's back)",
            "run `recall index --rebuild`: it replays the archive (nothing is lost)",
        )
    if behind:
        return Check(
            "index",
            False,
            f"{counted(docs, 'document')}; {counted(behind, 'transcript file')} "
            f"{'has' if behind == 1 else 'have'} lines not indexed yet",
            "run `recall index` (or `recall service start` to keep it fresh)",
        )
    return Check("index", True, f"{counted(docs, 'document')}, up to date with every transcript")


def check_redaction(service_up: bool = False) -> Check:
    """Whether the stored history was redacted by the current rules (``indexer.reredact_archive``)."""
    from indexer.redact import REDACTION_VERSION
    from indexer.reredact_archive import progress

    p = progress(paths.archive_dir())
    if p is None:
        return Check("redaction", True, f"stored history redacted by the current rules (version {REDACTION_VERSION})")
    if p.get("stage") in ("messages", "facts", "memories", "purge"):
        done, total = int(p.get("files_done") or 0), int(p.get("files_total") or 0)
        return Check(
            "redaction",
            False,
            f"stored history is being re-redacted under the current rules "
            f"(version {p['from']} -> {p['to']}: {done:,} of {total:,} archive files done); until it "
            "finishes, older messages may still hold secrets the current rules redact",
            "wait for the service to finish (`recall status` shows how far)"
            if service_up
            else "run `recall index` (or `recall service start`): the pass resumes where it stopped",
            warn=True,
        )
    return Check(
        "redaction",
        False,
        f"stored history was redacted by older rules (version {p['from']}, current "
        f"{p['to']}): the archive, the index, session facts and memories may still hold secrets the "
        "current rules redact",
        "start the service (`recall service restart`) or run `recall index`: it re-redacts everything "
        "once (nothing else is changed)",
        warn=True,
    )


def check_semantic(service_status: dict | None = None) -> Check:
    """The semantic channel: its encoder loads and answers, its vectors can be read, or the
    service is rebuilding them (a warning: words alone still work)."""
    from recall.core import config
    from recall.prompt.settings import hook_settings

    if not hook_settings(config.load()).semantic:
        return Check("semantic channel", True, "off (hook.semantic is false): the hook finds by words only")
    from recall.search import minilm

    fix = "reinstall recall (`pip install --force-reinstall recall-memory`), or `recall config set hook.semantic false`"
    if not minilm.available():
        return Check("semantic channel", False, "the sentence encoder is not installed", fix, warn=True)
    try:
        vec = minilm.MiniLM().embed(["store prices as integer cents"])
        if vec.shape != (1, minilm.DIM):
            raise ValueError(f"a vector of shape {vec.shape}")
    except Exception as exc:  # noqa: BLE001 - whatever numpy or the file says, said once
        return Check(
            "semantic channel", False, f"the sentence encoder fails: {type(exc).__name__}: {exc}", fix, warn=True
        )
    sem = (service_status if service_status is not None else _service_status()).get("semantic") or {}
    if sem.get("rebuilding"):
        from recall.cli.output import semantic_rebuild_text

        return Check("semantic channel", False, f"vectors.db {semantic_rebuild_text(sem)}", warn=True)
    from indexer.vectors import Damaged, VectorStore, db_path

    held = ""
    if db_path().exists():
        try:
            store = VectorStore()
            try:
                held = f"; {store.count():,} messages embedded"
                if not sem:  # no service has it open: its pages read once, as the service will
                    store.check()
            finally:
                store.close()
        except Damaged as exc:
            return Check(
                "semantic channel",
                False,
                f"vectors.db is damaged ({exc}): the service sets it aside and rebuilds it when it starts; "
                "prompts find by words until then",
                "start the service (`recall service start`)",
                warn=True,
            )
    return Check("semantic channel", True, f"all-MiniLM-L6-v2 loads and answers{held}")


def check_forget() -> Check:
    """Whether a forget (or a `recall: off` drop) was interrupted before its last step: work
    in progress until it is finished (``recall.privacy.forget``)."""
    from recall.privacy.forget import STEPS, describe_selection, pending

    items = pending()
    if not items:
        return Check("forget", True, "no forget under way")
    first = items[0]
    done = list(first.get("done") or [])
    left = [s for s in STEPS if s not in done]
    what = describe_selection(first.get("selection") or {}, reveal=False)
    more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
    return Check(
        "forget",
        False,
        f"a forget of {what}{more} was interrupted and is not finished: "
        f"{', '.join(left)} still to do; nothing it removes comes back meanwhile, but until it "
        "finishes those stores may still hold it",
        "run the same `recall forget` again, `recall index`, or start the service: each finishes it where it stopped",
        warn=True,
    )


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
    from recall.core.service_state import lock_holder, read_status

    try:
        st = client.call("status", {}, timeout=2.0)
        if isinstance(st, dict):
            return st
    except Exception:  # no service, or one that does not answer: its file says the rest
        pass
    st = read_status() or {}
    return st if st.get("running") and lock_holder() else {}


def check_key(service_up: bool = False) -> Check:
    from recall.llm.credentials import find_api_key

    key, where = find_api_key()
    if key:
        return Check("API key", True, f"found in {where}")
    from recall.llm import backend

    keys = sorted({k for u in backend.used_today() if u["backend"] == "api" for k in u["keys"]})
    elsewhere = f"; today's api calls had one: {', '.join(keys)}" if keys else ""
    return Check(
        "API key",
        False,
        "none found in this shell's environment or recall's config: the model backend here is Claude Code's "
        f"own login if it can be used (see the backend line){elsewhere}",
        "export ANTHROPIC_API_KEY, or run `recall config set api_key KEY`",
        warn=True,
    )


def _claude_code_calls_today(used: list[dict]) -> int:
    """Model calls through Claude Code that succeeded today (the usage log)."""
    return next((u["ok"] for u in used if u["backend"] == "claude-code"), 0)


def _used_line(used: list[dict]) -> str:
    """``today: api: 33 calls succeeded today (prompt hook 30, memory 3; key ANTHROPIC_API_KEY
    from a hook's environment)``: the backend each caller really used (issue 44)."""
    from recall.llm import backend

    return "; ".join(backend.used_text(u) for u in used)


def check_backend(service_up: bool = False) -> Check:
    """The backend each feature would use from this shell, and the ones today's calls really
    went to (the hooks run with Claude Code's environment, which may hold a key or a login this
    shell lacks). FAIL only when nothing works: no backend here and no call succeeded today, or
    the service, given this shell's credentials as a hook would pass them, would still have none
    (a warning when today's calls succeeded all the same)."""
    from recall.llm import backend

    here = backend.describe()
    used = backend.used_today()
    worked = sum(u["ok"] for u in used)
    detail = "; ".join(f"{name}: {f['backend']}" for name, f in here["features"].items())
    detail = f"model.backend = {here['setting']}: {detail} ({here['why']}) as this shell would call it"
    today = f"; but the hooks' and the service's calls work: {_used_line(used)}" if worked else ""
    if here["backend"] == "off":
        if worked:
            return Check(
                "model backend",
                False,
                f"{detail}: a model call from this shell (`recall ask`) has no backend{today}",
                "to call models from this shell too: export ANTHROPIC_API_KEY, `recall config set api_key KEY`, "
                "or install and log in to Claude Code",
                warn=True,
            )
        return Check(
            "model backend",
            False,
            f"{detail}; the hook injects raw snippets",
            "export ANTHROPIC_API_KEY, `recall config set api_key KEY`, or install and log in to Claude Code",
            warn=True,
        )
    if here["backend"] == "claude-code":
        from recall.llm import claude_code

        choice = backend.choose()
        logged_in, said = claude_code.login_status(choice.source)
        if logged_in is False:
            fix = (
                "run `claude` and log in (/login), or give recall an API key: export ANTHROPIC_API_KEY or "
                "`recall config set api_key KEY`"
            )
            through = _claude_code_calls_today(used)
            if through:  # the hooks run it in Claude Code's environment, which may hold a login this shell lacks
                others = [u for u in used if u["backend"] != "claude-code"]
                return Check(
                    "model backend",
                    False,
                    f"{detail}; Claude Code at {choice.source} says it is not logged in in this shell "
                    f"({said}), but {through} of today's model calls through it succeeded (from the "
                    "hooks and the service); a call from this shell (`recall ask`) fails"
                    + (f"; today: {_used_line(used)}" if others else ""),
                    fix,
                    warn=True,
                )
            if worked:  # the hooks' calls went to another backend (a key in Claude Code's environment)
                return Check(
                    "model backend",
                    False,
                    f"{detail}; Claude Code at {choice.source} is not logged in in this shell ({said}), "
                    f"so a model call from this shell (`recall ask`) fails{today}",
                    f"to call models from this shell too: {fix}",
                    warn=True,
                )
            return Check(
                "model backend",
                False,
                f"{detail}; but Claude Code at {choice.source} is not logged in "
                f"({said}): its model calls fail (none succeeded today)",
                fix,
            )
        if logged_in is None:
            return Check(
                "model backend",
                False,
                f"{detail}; whether Claude Code is logged in could not be told ({said})"
                + (f"; today: {_used_line(used)}" if worked else ""),
                "run `claude auth status`",
                warn=True,
            )
        detail += f"; Claude Code is logged in ({said})"
    if service_up:
        from recall.core import service_client as client

        try:
            remote = client.call("backend", {}, timeout=30.0, credentials=True)
        except client.Unavailable as exc:
            return Check(
                "model backend",
                False,
                f"{detail}; the service cannot say which it would use ({exc}){today}",
                "run `recall service restart`",
                warn=bool(worked),
            )
        theirs = (remote or {}).get("caller") or {}
        if theirs.get("backend") != here["backend"]:
            return Check(
                "model backend",
                False,
                f"{detail}; but the service, given the hook's credentials, would use "
                f"{theirs.get('backend', '?')} ({theirs.get('why', 'no answer')}){today}",
                "run `recall service restart` from a shell that has your key and Claude Code on PATH, "
                "or `recall config set api_key KEY`",
                warn=bool(worked),
            )
    return Check("model backend", True, detail + (f"; today: {_used_line(used)}" if worked else ""))


def check_mcp(root: Path) -> Check:
    fix = f"run `recall setup --project {shlex.quote(str(root))}`"
    for path, getter in (
        (root / ".mcp.json", lambda d: (d.get("mcpServers") or {}).get(MCP_NAME)),
        (
            mcp_file(None, True),
            lambda d: (
                (d.get("mcpServers") or {}).get(MCP_NAME)
                or ((d.get("projects") or {}).get(str(root)) or {}).get("mcpServers", {}).get(MCP_NAME)
            ),
        ),
    ):
        try:
            data = load_json(path) or {}
            entry = getter(data)
        except (SetupError, AttributeError):
            continue
        if isinstance(entry, dict):
            why = _runnable(
                " ".join(shlex.quote(str(p)) for p in [entry.get("command") or "", *(entry.get("args") or [])])
            )
            if why:
                return Check("MCP server", False, f"registered in {path}, but {why}", fix)
            return Check("MCP server", True, f"registered in {path}")
    return Check("MCP server", False, f"not registered for {root}", fix)


def check_config() -> Check:
    problems = config.problems()
    if problems:
        return Check("config", False, problems[0], f"edit {paths.config_path()}")
    return Check("config", True, f"{paths.config_path()}" + ("" if paths.config_path().exists() else " (defaults)"))


def check_folder_modes(root: Path) -> Check | None:
    """A folder an earlier `recall setup` made 0700 (``recall.setup.folder_modes``); None when none."""
    from recall.setup import folder_modes

    found = folder_modes.suspects(folder_modes.candidates(root, True))
    if not found:
        return None
    s = found[0]
    if s.restore_to is not None:
        again = (
            "recall setup --global"
            if s.folder in folder_modes.candidates(None, True)
            else f"recall setup --project {shlex.quote(str(root))}"
        )
        fix = f"run `{again}`: it puts back {s.restore_to:o} ({s.evidence})"
    else:
        fix = (
            f"if you did not choose 0700 yourself, `chmod {folder_modes.usual_mode(s.folder):o} "
            f"{shlex.quote(str(s.folder))}` ({s.evidence}, so recall leaves it)"
        )
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return Check(
        "folder modes",
        False,
        f"{s.folder} is 0700, as an earlier `recall setup` left it when it wrote {s.why}{more}",
        fix,
        warn=True,
    )


LOAD_CHECK = "Claude Code loads recall"
LOAD_TIMEOUT = 90.0
#: the hooks a headless run fires (SessionStart at its start, UserPromptSubmit for its prompt)
LOAD_EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}


def check_claude_loads(root: Path, by_plugin: bool, mcp_expected: bool) -> Check:
    """Ask the installed Claude Code whether it really runs recall's hooks and connects its MCP
    server (issue 36: a Claude Code update can switch a hook format off without a word): a
    headless run in the project, with recall's hooks told to only note that they ran
    (``RECALL_DOCTOR_PROBE``) and the model endpoint unreachable, so no model is called and
    nothing is kept (``--no-session-persistence``). What it could not check, it says (a warning)."""
    import tempfile

    from recall.llm import claude_code

    found = claude_code.find()
    if found.path is None:
        return Check(
            LOAD_CHECK,
            False,
            f"not checked: {found.problem or claude_code.NOT_FOUND}",
            "install Claude Code (or set model.claude_path), then `recall doctor` again",
            warn=True,
        )
    if by_plugin:
        from recall.core import wiring
        from recall.setup import plugin_runtime

        plugin = wiring.plugin(root)
        if plugin is not None and not plugin_runtime.ready(plugin.data_dir, plugin.version or ""):
            return Check(
                LOAD_CHECK,
                False,
                "not checked: the plugin's runtime is not built yet (its hooks exit at once until then)",
                "start a Claude Code session, then `recall doctor` again",
                warn=True,
            )
    with tempfile.TemporaryDirectory(prefix="recall-doctor-") as tmp:
        probe = os.path.join(tmp, "hooks-run")
        env = {k: v for k, v in os.environ.items() if k not in ("RECALL_CHILD", "CLAUDECODE")}
        env.update(
            RECALL_DOCTOR_PROBE=probe,
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",
            CLAUDE_CODE_MAX_RETRIES="0",
            MCP_CONNECTION_NONBLOCKING="0",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        argv = [
            found.path,
            "-p",
            "recall doctor checks that Claude Code loads recall (no model is called)",
            "--output-format",
            "stream-json",
            "--verbose",
        ]
        if "--no-session-persistence" in found.flags:
            argv.append("--no-session-persistence")
        try:
            proc = subprocess.run(
                argv,
                cwd=str(root),
                env=env,
                capture_output=True,
                text=True,
                timeout=LOAD_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return Check(
                LOAD_CHECK,
                False,
                f"not checked: a headless run of {found.path} did not finish ({type(exc).__name__})",
                "run `claude -p hi` to see what it does",
                warn=True,
            )
        try:
            ran = set(Path(probe).read_text(encoding="utf-8").split())
        except OSError:
            ran = set()
    init = None
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("subtype") == "init":
            init = event
            break
    if init is None:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()[-1][:160]
        return Check(
            LOAD_CHECK,
            False,
            f"not checked: Claude Code at {found.path} started no session ({said})",
            "run `claude -p hi` to see why",
            warn=True,
        )
    who = f"Claude Code {found.version}".strip()
    problems = []
    missing = [LOAD_EVENTS[e] for e in LOAD_EVENTS if e not in ran]
    if missing:
        problems.append(f"did not run recall's {' and '.join(missing)} hook{'s' if len(missing) > 1 else ''}")
    servers = [
        s
        for s in init.get("mcp_servers") or []
        if isinstance(s, dict) and (s.get("name") == MCP_NAME or str(s.get("name", "")).endswith(f":{MCP_NAME}"))
    ]
    if mcp_expected or by_plugin:
        if not servers:
            problems.append("does not list recall's MCP server")
        elif not any(s.get("status") == "connected" for s in servers):
            problems.append(f"could not connect recall's MCP server ({servers[0].get('status')})")
    where = f"a headless run in {root}, no model called"
    if problems:
        return Check(
            LOAD_CHECK,
            False,
            f"{who} {'; '.join(problems)} ({where})",
            "run `recall setup` again (it rewrites recall's entries in the format this Claude Code reads); "
            "`claude --debug` shows what it skipped"
            if not by_plugin
            else "update the plugin (`claude plugin update recall@recall`); `claude --debug` shows what it skipped",
        )
    mcp = " and connected its MCP server" if servers else ""
    return Check(LOAD_CHECK, True, f"{who} ran recall's SessionStart and UserPromptSubmit hooks{mcp} ({where})")


def check_command() -> Check:
    """Whether the ``recall`` a shell finds is this install (issue 36): other packages install a
    ``recall`` command too, and a second install of recall may answer instead."""
    from recall.control.units import recall_executable
    from recall.setup.install import bin_dir, command_kind

    this = recall_executable()
    this_exe = this[0] if len(this) == 1 else " ".join(this)
    found = shutil.which("recall")
    if not found:
        return Check(
            "recall command",
            False,
            "no `recall` on your PATH",
            f"`recall setup` links one in {bin_dir()} (then put that folder on PATH), or run {this_exe}",
            warn=True,
        )
    real = os.path.realpath(found)
    kind = command_kind(real)
    plugin_data = os.environ.get("RECALL_PLUGIN_DATA")
    if real == os.path.realpath(this[0]) or (
        kind == "plugin" and plugin_data and real == os.path.realpath(os.path.join(plugin_data, "bin", "recall"))
    ):
        return Check("recall command", True, f"`recall` on your PATH is this install ({found})")
    if kind == "other":
        return Check(
            "recall command",
            False,
            f"`recall` on your PATH ({found}) is another program, not this "
            f"install ({this_exe}): typing `recall` runs that one",
            f"run this recall as {this_exe} (or `alias recall={shlex.quote(this_exe)}`), or remove the other program",
            warn=True,
        )
    which = "recall's Claude Code plugin" if kind == "plugin" else "another install of recall"
    return Check(
        "recall command",
        False,
        f"`recall` on your PATH ({found}) is {which}, not this install "
        f"({this_exe}): its version and settings may differ",
        f"keep one install (`recall doctor` from each says which wires Claude Code), or run this one as {this_exe}",
        warn=True,
    )


def doctor(project: Path | str | None = None, shell: bool = True) -> list[Check]:
    """Every check. ``shell=False``: without those whose answer depends on the environment they
    run in (``SHELL_CHECKS``: the page runs doctor in the service's, not the user's shell)."""
    root = project_root(project)
    wiring, by_plugin = check_wiring(root)  # the plugin's hooks and MCP server replace setup's
    service = check_service()
    hooks = [] if by_plugin else check_hooks(root, run=shell)
    mcp = [] if by_plugin else [check_mcp(root)]
    loads = (
        [check_claude_loads(root, by_plugin, bool(mcp) and mcp[0].ok)]
        if shell and (by_plugin or any(c.ok for c in hooks))
        else []
    )
    checks = [
        check_config(),
        *([check_command()] if shell else []),
        *wiring,
        *hooks,
        *loads,
        service,
        check_index(),
        check_redaction(service.ok),
        check_forget(),
        check_semantic(),
        *([check_key(service.ok), check_backend(service.ok)] if shell else []),
        *mcp,
    ]
    modes = check_folder_modes(root)
    out = [*checks, *check_agents(), *check_memory(root), *check_rules(root), *([modes] if modes else [])]
    for c in out:
        c.shell = c.shell or c.name in SHELL_CHECKS
    return out if shell else [c for c in out if not c.shell]


def check_agents() -> list[Check]:
    """recall's MCP server in Codex CLI and Gemini CLI (``recall setup --codex|--gemini``): a check
    each where it is registered, and where that agent's sessions are found without it, a warning
    naming the setup. Nothing for an agent not on this machine."""
    from recall.setup import agent_wiring

    out: list[Check] = []
    for agent in agent_wiring.AGENTS:
        label = agent_wiring.LABELS[agent]
        path, entry = agent_wiring.registered(agent)
        name = f"MCP server in {label}"
        if entry is not None:
            why = agent_wiring.entry_problem(entry)
            if why:
                out.append(
                    Check(name, False, f"registered in {path}, but {why}", f"run `recall setup --{agent}` again")
                )
            else:
                out.append(Check(name, True, f"registered in {path}"))
            continue
        roots = agent_sources.module(agent).roots()
        if agent_sources.setting()[agent] and any(r.is_dir() for r in roots):
            out.append(
                Check(
                    name,
                    False,
                    f"{label}'s sessions are indexed, but it cannot call recall's tools",
                    f"`recall setup --{agent}` registers the MCP server in {path}",
                    warn=True,
                )
            )
    return out


def check_rules(root: Path) -> list[Check]:
    """Rule files that are too large, unreadable, or hold project rules nobody accepted (a
    clone or a pull brought them): a warning each, naming the fix. Nothing when all is well."""
    from recall.rules import store

    problems = store.problems(store.project_file(str(root)), "project", str(root)) + store.problems(
        store.global_file(), "global"
    )
    return [
        Check("rules", False, p, "`recall rules list` shows them (`recall rules trust` accepts a project's)", warn=True)
        for p in problems
    ]


def check_memory(project=None) -> list[Check]:
    """Whether memory extraction is on, and the project's memory state readable."""
    from recall.llm import backend
    from recall.memory.status import DISABLED, NO_KEY, memory_status

    s = memory_status(str(project) if project else None)
    checks = []
    worked = [u for u in backend.used_today() if u["callers"].get("memory")]
    if not s["key"] and worked and s["configured"]:  # no backend here, but the service's extraction works
        u = worked[0]
        checks.append(
            Check(
                "memory",
                True,
                f"extraction on with the hooks' credentials ({u['backend']}: "
                f"{counted(u['callers']['memory'], 'memory call')} succeeded today), though this shell has "
                f"no model backend; {counted(s['active'], 'active memory', 'active memories')} in {s['project']}",
            )
        )
    elif not s["key"]:
        checks.append(
            Check(
                "memory",
                False,
                NO_KEY.format(why=s["backend_why"]),
                "export ANTHROPIC_API_KEY, run `recall config set api_key KEY`, or install and log in to Claude Code",
                warn=True,
                shell=True,  # this process has no backend: the hooks' environment may have one
            )
        )
    elif not s["configured"]:
        checks.append(Check("memory", False, DISABLED, "recall config set memory.enabled true", warn=True))
    elif s["cap_reached"]:
        checks.append(
            Check(
                "memory",
                False,
                f"the daily cap of {s['daily_call_cap']} model calls is reached",
                "wait for midnight UTC, or `recall config set memory.daily_call_cap N`",
                warn=True,
            )
        )
    else:
        checks.append(
            Check(
                "memory",
                True,
                f"extraction on; {counted(s['active'], 'active memory')} in {s['project']}; "
                f"{s['calls_today']} call{'' if s['calls_today'] == 1 else 's'} today, est. ${s['cost_total']:.2f} in all",
            )
        )
    if s["problem"]:
        checks.append(Check("memory state", False, s["problem"], "fix or move the file aside"))
    return checks


# ------------------------------------------------------------------------------ wiring: setup, the plugin
def _runtime_check(found) -> Check:
    """The state of the plugin's runtime (``recall.setup.plugin_runtime``)."""
    from recall.setup import plugin_runtime

    st = plugin_runtime.status(found.data_dir, found.version)
    where = f"recall's Claude Code plugin {found.id} {found.version or ''} ({found.scope} settings)".replace("  ", " ")
    state = st["state"]
    if state == "ready":
        return Check(
            "wiring",
            True,
            f"{where}: its hooks, MCP server and slash commands; runtime ready in "
            f"{st['runtime']} (Python {st.get('python_version', '?')})",
        )
    since = time.strftime("%H:%M:%S", time.localtime(st["started"])) if st.get("started") else "?"
    if state == "building":
        return Check(
            "wiring",
            False,
            f"{where}: its runtime is being built since {since} (log: {st['log']}); "
            "until it is ready its hooks do nothing",
            "wait a minute or two",
            warn=True,
        )
    if state == "interrupted":
        return Check(
            "wiring",
            False,
            f"{where}: building its runtime was interrupted (log: {st['log']})",
            "start a new Claude Code session: it builds the runtime again in the background",
            warn=True,
        )
    if state == "failed":
        return Check(
            "wiring",
            False,
            f"{where}: building its runtime failed: {st.get('error', '?')} (log: {st['log']})",
            st.get("fix") or "start a new Claude Code session to try again",
        )
    return Check(
        "wiring",
        False,
        f"{where}: its runtime is not built yet",
        "start a Claude Code session: its SessionStart builds it in the background",
        warn=True,
    )


def check_wiring(root: Path) -> tuple[list[Check], bool]:
    """Which of ``recall setup`` and recall's Claude Code plugin wires recall here (the plugin with
    the state of its runtime; both: the plugin stands down). Returns the checks, and whether the
    plugin is what wires recall (then its hooks and MCP server replace the ones ``recall setup``
    would have written)."""
    from recall.core import wiring

    hooks = wiring.setup_hooks(root)
    found = wiring.plugin(root)
    if found is None:
        if hooks:
            files = ", ".join(sorted({str(p) for p, _ in hooks.values()}))
            return [
                Check("wiring", True, f"recall setup ({files}); recall's Claude Code plugin is not installed")
            ], False
        return [], False  # the hooks check says what to do
    if not hooks:
        return [_runtime_check(found)], True
    files = sorted({str(p) for p, _ in hooks.values()})
    scope = " --global" if str(wiring.user_settings()) in files else f" --project {shlex.quote(str(root))}"
    return [
        Check(
            "wiring",
            False,
            f"both: recall setup is the active install (hooks in {', '.join(files)}); recall's "
            f"Claude Code plugin {found.id} is installed too and stands down everywhere: its "
            "hooks for the events setup's handle (one injection per prompt, one service), its "
            "MCP server (no tools where setup registered one), its /recall:... commands "
            "(they point to /recall...)",
            f"keep one: `recall setup --uninstall{scope}`, or `claude plugin uninstall {found.id}`",
            warn=True,
        )
    ], False
