"""The everyday commands without typer: ``recall status``, ``log``, ``sessions``, ``show`` and
``memories`` (the list), as plain functions that print and return an exit code.

They run on every glance at recall, so they should start as fast as a search: typer's import
and its option building cost ~0.3 s, which ``recall.cli.fast_commands`` skips by parsing these
commands' plain forms itself and calling these functions; the typer commands in
``recall.cli.commands`` call the same functions, so both paths print the same. Errors are
``RecallError``s (one line, at the edge).
"""

from __future__ import annotations

import json
import os
import sys
import time

from recall.cli.output import counted, semantic_rebuild_text, short_project
from recall.core import paths
from recall.core.errors import RecallError, UsageError
from recall.core.text import one_line


def echo(text: str = "", err: bool = False, nl: bool = True) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text + ("\n" if nl else ""))


# status ------------------------------------------------------------------------------------
def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 1:
        return "just now"
    if seconds < 90:
        return f"{seconds:.0f}s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.0f}d ago"


def _span(seconds: float) -> str:
    seconds = int(max(0, seconds))
    d, rem = divmod(seconds, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if d:
        return f"{d}d{h}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def collect_status(every_count: bool = True) -> dict:
    """Everything ``recall status`` shows, as a dict. ``every_count=False``: the sources that are
    off or not found are not counted (their lines show no count; each count is a query of the
    whole index)."""
    from recall.core import service_client as client

    live = None
    try:
        live = client.call("status", {}, timeout=1.5)
    except client.Unavailable:
        live = None
    from recall.core.service_state import lock_holder, read_status

    saved = read_status() or {}
    out: dict = {"home": str(paths.recall_home())}
    if live:
        svc = dict(live)
        svc["running"] = True
    else:
        pid = lock_holder()
        svc = {
            k: saved.get(k)
            for k in ("pid", "started", "stopped", "roots", "errors", "last_commit", "commits", "version", "state")
        }
        svc["running"] = False
        if pid is not None and saved.get("pid") == pid and saved.get("running"):
            svc["running"] = True
            svc["answering"] = False
        for r in svc.get("roots") or []:
            r["watched"] = bool(svc["running"] and r.get("watched"))
    out["service"] = svc
    counts = dict((live or {}).get("counts") or {})
    index = _open_index()  # once, for the counts and the sources' (the service's too: it has no agent counts)
    if not live:
        counts.update(_index_counts(index))
    out["index"] = counts
    out["index"]["path"] = str(paths.index_dir())
    out["archive"] = _archive_stats()
    from indexer.reredact_archive import progress as redaction_progress

    out["redaction"] = redaction_progress(paths.archive_dir())  # a re-redaction pass under way, or None
    if not svc.get("roots"):
        from indexer.sources import all_roots

        out["service"]["roots"] = [{"path": str(r), "watched": False, "exists": r.is_dir()} for r in all_roots()]
    out["sources"] = source_rows(index, every_count)
    out["capture"] = capture_status()
    try:
        from recall.llm.usage import usage_summary

        out["model_usage"] = usage_summary()
    except Exception:
        pass
    return out


def capture_status() -> dict:
    """Whether capture is paused (since, until), the exclusions, the sessions switched off."""
    from indexer.ledger import current_pause, exclusions, off_sessions, read_controls

    data = read_controls()
    p = current_pause(data)
    return {
        "paused": p is not None,
        "since": p["since"] if p else None,
        "until": p["until"] if p else None,
        "excluded": exclusions(),
        "sessions_off": len(off_sessions(data)),
    }


def capture_line(cap: dict, now: float) -> str:
    if cap.get("paused"):
        from recall.cli.command_utils import until_text

        return (
            f"Capture: paused since {_ago(now - cap['since'])}, {until_text(cap.get('until'), now)} "
            "(nothing is captured or injected; `recall resume` ends it)"
        )
    bits = []
    if cap.get("excluded"):
        bits.append(f"{len(cap['excluded'])} exclusions (`recall exclude list`)")
    if cap.get("sessions_off"):
        bits.append(f"{counted(cap['sessions_off'], 'session')} switched off by `recall: off`")
    return "Capture: on" + (f"; {', '.join(bits)}" if bits else "")


def _open_index():
    """The index opened to count its documents (``recall.search.index_open``: no searcher, whose
    imports would cost status tens of milliseconds), or the exception opening it raised."""
    from recall.search.index_open import open_for_reading

    try:
        return open_for_reading()
    except Exception as exc:  # noqa: BLE001 - each count says it in its own way
        return exc


def _opened(index):
    """``index`` (from ``_open_index``) to count with: opened now when None, raised when it is
    the exception opening it raised."""
    index = _open_index() if index is None else index
    if isinstance(index, Exception):
        raise index
    return index


def _index_counts(index=None) -> dict:
    out: dict = {}
    try:
        import tantivy

        ix = _opened(index)
        searcher = ix.searcher()
        for dt, name in (("message", "messages"), ("session", "sessions_indexed"), ("memory", "memories")):
            q = tantivy.Query.term_query(ix.schema, "doctype", dt, index_option="basic")
            out[name] = searcher.search(q, 1, count=True).count
    except RecallError as exc:
        out["problem"] = str(exc)
    except Exception as exc:
        out["problem"] = f"cannot open the index ({type(exc).__name__}: {exc})"
    db = paths.state_db_path()
    if db.exists():
        import sqlite3

        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                out["files"] = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
                out["sessions"] = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    try:
        out["last_commit"] = (paths.index_dir() / "meta.json").stat().st_mtime
    except OSError:
        pass
    return out


def source_rows(index=None, every_count: bool = True) -> list[dict]:
    """Each source (``indexer.sources``): on or off, its folders and whether they exist, and
    the messages and sessions the index holds of it (``index``: from ``_open_index``, else
    opened here; ``every_count=False``: only those on and found are counted, the others say 0)."""
    from indexer import sources

    on = sources.setting()
    rows = []
    for name in sources.NAMES:
        folders = [str(r) for r in sources.module(name).roots()]
        rows.append(
            {
                "name": name,
                "label": sources.label(name),
                "enabled": on[name],
                "folders": [{"path": f, "exists": os.path.isdir(f)} for f in folders],
                "found": any(os.path.isdir(f) for f in folders),
            }
        )
    wanted = [r["name"] for r in rows if every_count or (r["enabled"] and r["found"])]
    counts = _agent_counts(index, wanted) if wanted else {}
    for r in rows:
        r.update(counts.get(r["name"], {"messages": 0, "sessions": 0}))
    return rows


def _agent_counts(index=None, names=None) -> dict:
    """agent -> {"messages", "sessions"} in the index, of every source or of ``names`` (empty
    when it cannot be opened)."""
    out: dict = {}
    try:
        import tantivy

        from indexer import sources

        ix = _opened(index)
        searcher = ix.searcher()
        schema = ix.schema
        for name in sources.NAMES if names is None else names:
            row = {}
            for dt, key in (("message", "messages"), ("session", "sessions")):
                q = tantivy.Query.boolean_query(
                    [
                        (tantivy.Occur.Must, tantivy.Query.term_query(schema, "doctype", dt, index_option="basic")),
                        (tantivy.Occur.Must, tantivy.Query.term_query(schema, "agent", name, index_option="basic")),
                    ]
                )
                row[key] = searcher.search(q, 1, count=True).count
            out[name] = row
    except Exception:  # noqa: BLE001 - no index yet, or one being rebuilt: counts say 0
        pass
    return out


def print_sources(rows: list[dict]) -> None:
    for i, r in enumerate(rows):
        if not r["enabled"]:
            what = f"off (`recall sources {r['name']} on`)"
        elif not r["found"]:
            what = "not found (" + ", ".join(short_project(f["path"]) for f in r["folders"]) + ")"
        else:
            where = ", ".join(short_project(f["path"]) for f in r["folders"] if f["exists"])
            what = f"{counted(r['messages'], 'message')}, {counted(r['sessions'], 'session')} ({where})"
        echo(f"{'Sources:' if i == 0 else '':8} {r['label']:<12} {what}")


def _archive_stats() -> dict:
    """The archive's session files (``sessions/*/*.jsonl``) and their bytes: what
    ``root.glob("*/*.jsonl")`` finds, by ``os.scandir`` (a third of the time at 2,000 sessions)."""
    root = paths.archive_dir() / "sessions"
    n = size = 0
    for folder in _entries(str(root)):
        try:
            if not folder.is_dir():
                continue
        except OSError:
            continue
        for entry in _entries(folder.path):
            if entry.name.endswith(".jsonl"):
                try:
                    size += entry.stat().st_size
                    n += 1
                except OSError:
                    pass
    return {"path": str(paths.archive_dir()), "sessions": n, "bytes": size}


def _entries(path: str) -> list:
    """The entries of the folder ``path`` (none when it is missing or cannot be read)."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def print_service_line(info: dict) -> None:
    svc = info["service"]
    now = time.time()
    if svc.get("running"):
        bits = [f"pid {svc.get('pid')}"]
        if svc.get("uptime") is not None:
            bits.append(f"up {_span(svc['uptime'])}")
        if svc.get("state"):
            bits.append(svc["state"])
        if svc.get("rss_mb"):
            bits.append(f"{svc['rss_mb']:.0f} MB")
        if svc.get("answering") is False:
            bits.append("not answering on its socket")
        echo(f"Service: running ({', '.join(bits)})")
    else:
        last = ""
        if svc.get("pid") and svc.get("stopped"):
            last = f" (last: pid {svc['pid']}, stopped {_ago(now - svc['stopped'])})"
        elif svc.get("pid"):
            last = f" (last: pid {svc['pid']}, ended without a clean stop)"
        echo(f"Service: not running{last}; `recall service start` starts it")


#: the features that run with the hooks' credentials, not this shell's, and the purposes of
#: their calls in the usage log (``recall.llm.usage``)
HOOK_FEATURES = {"synthesis": ("recall",), "memory": ("extraction", "consolidation", "summary")}
_CALLS = {"synthesis": "synthesis", "memory": "extraction"}  # what each feature's calls are named


def _count_memories(info: dict) -> None:
    """``index.memories``: the typed memories ``recall memories`` lists, across projects (the
    index's memory documents, session summaries, rules and Claude Code's memory files among
    them, are ``index.memory_documents``)."""
    from recall.memory.status import typed_memories

    idx = info["index"]
    if "memories" in idx:
        idx["memory_documents"] = idx.pop("memories")
    try:
        counted_ = typed_memories(also=(info["memory"].get("project") or "",))
    except Exception:  # noqa: BLE001 - unreadable state: the memory line says the problem
        return
    idx["memories"] = counted_["memories"]
    idx["memory_projects"] = counted_["projects"]


def _hook_backends(info: dict) -> None:
    """The per-prompt synthesis runs in the hook (or the service for it) with Claude Code's
    environment, and memory extraction in the service with the credentials of the last hook
    that reached it: not this shell's. When the service runs, those features name the backend it
    uses with the last hook's credentials (issue 36); without one, the backend today's calls of
    that feature went to, when that is not this shell's pick (issue 44)."""
    features = info["backends"]["features"]
    remote = None
    if info["service"].get("running"):
        from recall.core import service_client as client

        try:
            remote = client.call("backend", {}, timeout=2.0) or {}
        except client.Unavailable:
            remote = None
    by_backend = (info.get("model_usage") or {}).get("today_by_backend") or {}
    for feature, purposes in HOOK_FEATURES.items():
        mine = features.get(feature) or {}
        if mine.get("why", "").startswith(("hook.synthesize", "memory.enabled")):
            continue  # switched off by a setting: off wherever it runs
        theirs = remote.get("memory") if isinstance(remote, dict) else None  # the last hook's credentials
        if isinstance(theirs, dict) and theirs.get("backend"):
            if feature == "memory" or theirs["backend"] not in ("off", mine.get("backend")):
                features[feature] = {
                    "backend": theirs["backend"],
                    "why": f"in the service, with the last hook's credentials: {theirs.get('why', '')}",
                }
            if feature == "memory" or theirs["backend"] != "off":
                continue
        used = [
            name
            for name, b in sorted(by_backend.items(), key=lambda kv: -kv[1].get("calls", 0))
            if any((b.get("ok_purposes") or {}).get(p) for p in purposes) and b.get("calls", 0) > b.get("failed", 0)
        ]
        if used and mine.get("backend") not in used:
            calls = sum(((by_backend[used[0]].get("ok_purposes") or {}).get(p, 0)) for p in purposes)
            features[feature] = {
                "backend": used[0],
                "why": f"today's {_CALLS[feature]} calls went to {used[0]}"
                + (f" ({calls} succeeded)" if calls else "")
                + f", with the hooks' credentials; this shell would use {mine.get('backend')}",
            }
    mem = features.get("memory") or {}
    if info.get("memory") and mem.get("backend") not in (None, "off"):  # the Memory line says the same
        info["memory"].update(key=True, enabled=info["memory"].get("configured", True), backend=mem["backend"])


def status(as_json: bool = False) -> int:
    """``recall status``."""
    from recall.llm import backend
    from recall.memory.status import memory_status, status_lines
    from recall.prompt import injections

    info = collect_status(every_count=as_json)  # the text shows no count of a source off or not found
    info["memory"] = memory_status()
    _count_memories(info)
    info["backends"] = backend.describe()
    _hook_backends(info)
    info["prompts_today"] = injections.day_summary()
    if as_json:
        echo(json.dumps(info, default=str))
        return 0
    now = time.time()
    svc = info["service"]
    print_service_line(info)
    echo(capture_line(info["capture"], now))
    _print_index_lines(info, now)
    _print_model_lines(info)
    _print_prompts_line(info["prompts_today"])
    for line in status_lines(s=info["memory"]):
        echo(line)
    errors = svc.get("errors") or []
    if errors:
        echo("Recent errors:")
        for e in errors[-5:]:
            echo(f"  {_ago(now - e.get('time', now))}: {e.get('message')}")
    return 0


def _print_index_lines(info: dict, now: float) -> None:
    """``recall status``: the roots, the index, the sources, the last commit, a backfill under
    way, the archive and the re-redaction pass."""
    svc = info["service"]
    roots = svc.get("roots") or []
    for i, r in enumerate(roots):
        state = "watched" if r.get("watched") else ("missing" if not r.get("exists", True) else "not watched")
        echo(f"{'Roots:' if i == 0 else '':8} {short_project(r['path'])} ({state})")
    idx = info["index"]
    if idx.get("problem"):
        echo(f"Index:   {idx['problem']}")
    else:
        parts = [
            counted(idx.get("messages", 0), "message"),
            counted(idx.get("sessions_indexed", idx.get("sessions", 0)), "session"),
        ]
        if idx.get("memories"):
            held = idx.get("memory_projects") or 0
            parts.append(counted(idx["memories"], "memory") + (f" (in {counted(held, 'project')})" if held > 1 else ""))
        if idx.get("files") is not None:
            parts.append(f"from {counted(idx['files'], 'transcript file')}")
        echo(f"Index:   {', '.join(parts)}")
    print_sources(info.get("sources") or [])
    last = svc.get("last_commit") or idx.get("last_commit")
    line = f"Last commit: {_ago(now - last)}" if last else "Last commit: never"
    if svc.get("running") and "lag_seconds" in svc:
        line += f"; lag {svc['lag_seconds']:.1f} s, {counted(svc.get('backlog_files', 0), 'file')} waiting"
    echo(line)
    if svc.get("backfill"):
        from recall.cli.output import backfill_text

        echo(f"Backfill: {backfill_text(svc['backfill'])}, newest sessions first")
    sem = svc.get("semantic") if svc.get("running") else None
    if sem:
        if sem.get("rebuilding"):
            echo(f"Semantic: {semantic_rebuild_text(sem)}")
        elif sem.get("on"):
            waiting = f", {sem['waiting']:,} waiting" if sem.get("waiting") else ""
            echo(f"Semantic: {counted(sem.get('vectors') or 0, 'message')} embedded{waiting}")
        else:
            echo(f"Semantic: off: {sem.get('why')}")
    arch = info["archive"]
    echo(
        f"Archive: {counted(arch['sessions'], 'session')}, {arch['bytes'] / 1e6:.1f} MB ({short_project(arch['path'])})"
    )
    if info.get("redaction"):
        from recall.cli.output import redaction_status_line

        echo(redaction_status_line(info["redaction"]))


def _print_model_lines(info: dict) -> None:
    """``recall status``: the model calls (today, in all, per backend) and the backend of each feature."""
    from recall.llm import backend

    usage = info.get("model_usage")
    if usage and usage.get("calls"):
        echo(
            f"Model:   {counted(usage['today_calls'], 'call')} today (${usage['today_cost']:.2f}), "
            f"{usage['calls']:,} in all (${usage['cost']:.2f})"
        )
        for name, b in sorted((usage.get("today_by_backend") or {}).items(), key=lambda kv: -kv[1]["calls"]):
            what = ", ".join(f"{p} {n}" for p, n in sorted(b["purposes"].items(), key=lambda kv: -kv[1]))
            failed = f"; {b['failed']} failed: {b['last_error']}" if b.get("failed") else ""
            keys = b.get("keys") or {}
            key = f"; key {', '.join(sorted(keys, key=lambda k: -keys[k]))}" if keys else ""
            echo(f"         today on {name}: {b['calls']} ({what}){failed}{key}")
    b = info["backends"]
    features = b["features"]
    if len({(f["backend"], f["why"]) for f in features.values()}) == 1:
        echo(
            f"Backend: model.backend = {b['setting']}: {b['backend']} for every feature ({b['why']}), "
            "as this shell would call it"
        )
    else:
        echo(f"Backend: model.backend = {b['setting']}")
        for feature, label in backend.FEATURES.items():
            echo(f"         {label}: {features[feature]['backend']} ({features[feature]['why']})")


def _print_prompts_line(p: dict) -> None:
    """``recall status``: the prompts of the last 24 h and what the hook did with them."""
    if p["prompts"]:
        o = p["outcomes"]
        why = ", ".join(f"{n} {k}" for k, n in sorted(p["raw_why"].items(), key=lambda kv: -kv[1]))
        echo(
            f"Prompts: last 24 h: {o['synthesized']} synthesized, {o['raw']} raw"
            f"{f' ({why})' if why else ''}, {o['nothing']} nothing found, {o['trivial']} trivial"
            f"{f', {n} rules only' if (n := o['rules']) else ''}"
            f"{f', {n} briefings too late for their turn' if (n := o['dropped']) else ''}; "
            f"~{p['injected_tokens']:,} tokens injected (`recall log` lists them)"
        )
    else:
        echo("Prompts: none in the last 24 h")


# log ---------------------------------------------------------------------------------------
def _when(t) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError, OverflowError):
        return "?"


def _record(rec: dict):
    """The log line ``rec`` as an ``InjectionRecord`` (each field of the writer's type)."""
    from recall.prompt.injections import InjectionRecord

    return InjectionRecord.of(rec)


def _held(rec: dict) -> str:
    """`` (background: held 41 ms)``: which way the prompt took and how long it was held
    (``recall.prompt.ways``), for records that say so."""
    from recall.prompt.ways import WAYS

    r = _record(rec)
    if r.way not in WAYS or r.held_ms is None:
        return ""
    return f" ({r.way}: held {r.held_ms:.0f} ms)"


def _path(rec: dict) -> str:
    """`` [model path: hook.model_min_confidence 0.20]``: which path decided, by which gate."""
    r = _record(rec)
    if r.path not in ("raw", "model"):
        return ""
    setting, value = r.gate.get("setting"), r.gate.get("value")
    where = f": {setting} {value:.2f}" if setting and isinstance(value, (int, float)) else ""
    return f" [{r.path} path{where}]"


def _outcome(rec: dict) -> str:
    from recall.prompt.injections import Outcome

    r = _record(rec)
    if r.outcome == Outcome.SYNTHESIZED:
        return f"synthesized ({r.backend or '?'})"
    outcome = str(r.outcome or "?")
    return f"{outcome} ({r.why})" if r.why else outcome


def _hits(rec: dict) -> str:
    hits = rec.get("hits") if isinstance(rec.get("hits"), list) else []
    return ", ".join(_hit(h) for h in hits[:4] if isinstance(h, dict)) + (f" +{len(hits) - 4}" if len(hits) > 4 else "")


def _hit(h: dict) -> str:
    """``3c4e0949 confidence 0.42`` (the score alone in records from before the confidence)."""
    c = h.get("confidence")
    if isinstance(c, (int, float)):
        return f"{str(h.get('session', ''))[:8]} confidence {c:.2f}"
    return f"{str(h.get('session', ''))[:8]} score {float(h.get('score') or 0):.1f}"


def log(limit: int = 20, show: int | None = None, as_json: bool = False) -> int:
    """``recall log``."""
    from recall.prompt import injections

    if limit < 1:
        raise UsageError(f"--limit takes a number of prompts >= 1, not {limit}.")
    records = injections.read()[::-1]  # newest first
    if show is not None:
        if not records:
            raise UsageError("The injection log is empty: it fills as you send prompts in Claude Code.")
        if not 1 <= show <= len(records):
            raise UsageError(
                f"No prompt #{show} in the log (it holds {len(records)}): `recall log` numbers them, "
                "1 being the newest."
            )
        rec = records[show - 1]
        if as_json:
            echo(json.dumps({"n": show, **rec}, ensure_ascii=False))
            return 0
        if not rec.get("text"):
            echo(f"Nothing was injected for prompt #{show} ({_outcome(rec)}).")
            return 0
        echo(rec["text"])
        return 0
    shown = records[:limit]
    from recall.prompt.used import annotate

    annotate(shown)  # did the next reply use each injection (read from the archive)
    if as_json:
        echo(json.dumps([{"n": i, **rec} for i, rec in enumerate(shown, 1)], ensure_ascii=False))
        return 0
    if not shown:
        echo("No prompts logged yet: the hook records each prompt here once it runs in Claude Code.")
        return 0
    for i, rec in enumerate(shown, 1):
        project = os.path.basename(str(rec.get("project") or "").rstrip("/")) or "?"
        size = f"{rec.get('chars', 0)} chars ~{rec.get('tokens', 0)} tokens" if rec.get("chars") else "nothing injected"
        via = f" via {rec['via']}" if rec.get("via") else ""
        wrong = "  [marked wrong]" if rec.get("wrong") is True else ""
        echo(
            f"#{i:<3} {_when(rec.get('t'))}  {project}  {_outcome(rec)}{via}{_path(rec)}  {size}  "
            f"{float(rec.get('latency_ms') or 0):.0f} ms{_held(rec)}{wrong}"
        )
        if rec.get("hits"):
            echo(f"     hits: {_hits(rec)}")
        if "used" in rec:
            echo(f"     used: {_used(rec)}")
    echo("`recall log --show N` prints the exact text injected for prompt N.")
    return 0


def _used(rec: dict) -> str:
    """``yes (repeats deploy/billing.yaml)`` / ``no (…)`` / ``not known yet (…)``."""
    from recall.prompt.used import label

    return label(rec)


def stats(weeks: int = 8, as_json: bool = False) -> int:
    """``recall stats``."""
    from recall.prompt import injections
    from recall.prompt.stats import weekly

    if weeks < 1:
        raise UsageError(f"--weeks takes a number of weeks >= 1, not {weeks}.")
    records = injections.read()
    searcher = None
    if records:
        from recall.core.errors import RecallError

        try:
            from recall.search.searcher import Searcher

            searcher = Searcher()
        except RecallError:
            searcher = None  # no index yet: no question can have been answered before
    rows = weekly(records, weeks, searcher=searcher)
    if as_json:
        echo(json.dumps({"weeks": rows}, ensure_ascii=False))
        return 0
    if not rows:
        echo("No prompts logged in that time: the hook records each prompt once it runs in Claude Code.")
        return 0
    echo(f"{'week of':<11} {'prompts':>7} {'injected':>8} {'used':>6} {'silent':>6} {'misses':>6}")
    for r in rows:
        used = f"{r['used_share']:.0%}" if r["used_share"] is not None else "-"
        silent = f"{r['silent_share']:.0%}" if r["silent_share"] is not None else "-"
        more = []
        if r["unknown"]:
            more.append(f"{r['unknown']} not known yet")
        if r["misses"]:
            more.append(f"misses: {r['repeated']} asked again, {r['told']} said it was told before")
        echo(
            f"{r['week']:<11} {r['prompts']:>7} {r['injections']:>8} {used:>6} {silent:>6} {r['misses']:>6}"
            + (f"  ({'; '.join(more)})" if more else "")
        )
    echo(
        "used: share of injections the next reply used; silent: share of prompts (not trivial) that got nothing; "
        "misses: a question an earlier session answered asked again while recall stayed silent, or "
        "\"I already told you\". `recall log` shows each injection."
    )
    return 0


# sessions and show -------------------------------------------------------------------------
def sessions(project=None, since: str | None = None, limit: int = 20, as_json: bool = False) -> int:
    """``recall sessions``."""
    from recall.memory import sessions
    from recall.search.timespec import parse_since

    root = sessions.project_root(project)
    after = parse_since(since) if since is not None else None
    if after is not None and after > time.time() + 60:
        from datetime import datetime

        raise UsageError(
            f"--since {since} is in the future ({datetime.fromtimestamp(after):%Y-%m-%d %H:%M}): "
            "give a past date or a span back, like 3d."
        )
    if limit < 1:
        raise UsageError(f"--limit takes a number of sessions >= 1, not {limit}.")
    rows = sessions.recent(root, after, limit)
    marks = _session_marks(rows)
    for r in rows:
        r["stale"] = marks.get(r["session_id"], [])
    if as_json:
        echo(json.dumps({"sessions": rows}, ensure_ascii=False))
        return 0
    if not rows:
        everything = sessions.recent(root, None, 1) if (after is not None) else []
        if everything:
            echo(
                f"No sessions{' of this project' if root else ''} active since {since}; the last one was "
                f"{(everything[0]['ended'] or everything[0]['started'] or '?')[:16].replace('T', ' ')} "
                "(widen --since)."
            )
        else:
            echo("No sessions indexed yet" + (" for this project" if root else "") + ": run `recall index`.")
        return 0
    import shutil  # (here: status need not load it, and bz2/lzma with it)

    width = shutil.get_terminal_size((120, 20)).columns
    for r in rows:
        when = (r["ended"] or r["started"] or "")[:16].replace("T", " ")
        name = os.path.basename((r["project"] or "?").rstrip("/")) or r["project"]
        text = r["summary"] or r["first_prompt"] or ""
        if r["summary"]:  # the goal line reads best in one line
            text = r["summary"].splitlines()[0]
        head = f"{when}  {r['session_id'][:8]}  {name[:20]:20}  {r['messages']:>5} msgs  "
        echo(head + one_line(text, max(30, width - len(head))))
        if r["stale"]:
            n = len(r["stale"])
            line = f"{' ' * 18}! {n} file{'s' if n != 1 else ''} it wrote changed since: " + ", ".join(
                f"{m['path']} ({m['state']})" for m in r["stale"]
            )
            echo(one_line(line, max(40, width)))
    return 0


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def _session_marks(rows: list[dict]) -> dict:
    """{session: the files it wrote that changed, moved or were deleted since it ended}."""
    from indexer.state import SessionInfo
    from recall.search.stale import epoch, session_marks

    infos = [
        SessionInfo(r["session_id"], project=r["project"] or "", ended=epoch(r["ended"]), started=epoch(r["started"]))
        for r in rows
    ]
    return session_marks(infos, _cwd())


def _file_rows(info) -> list[dict]:
    """What became of each file a session wrote (git adds the commits since and who made
    them, when the project is a repository)."""
    from recall.search.stale import session_files

    return session_files(info, _cwd())


def _file_lines(rows: list[dict]) -> list[str]:
    """``recall show``'s lines about the files a session wrote."""
    lines = []
    for r in rows:
        what = {
            "unchanged": "unchanged",
            "changed": "changed since",
            "deleted": "deleted",
            "renamed": f"renamed to {r.get('to')}",
        }.get(r["state"], r["state"])
        if r["op"] == "move" and r.get("to") and r["state"] == "unchanged":
            what = f"moved to {r['to']}"
        when = f" ({r['since'][:10]})" if r.get("since") and r["state"] != "unchanged" else ""
        line = f"    {r['path']}  [{r['op']}]  {what}{when}"
        commits = r.get("commits") or []
        if commits:
            who = sorted({c["author"] for c in commits})
            line += (
                f"; {len(commits)} commit{'s' if len(commits) != 1 else ''} since by {', '.join(who)}"
                f" (latest {commits[0]['commit']})"
            )
        lines.append(line)
    return lines


def show(session: str, pager: bool = True, as_json: bool = False) -> int:
    """``recall show SESSION``."""
    from recall.memory import sessions

    info = sessions.resolve(session)
    files = _file_rows(info)
    if as_json:
        echo(json.dumps(dict(sessions.show_json(info), files=files), ensure_ascii=False))
        return 0
    text = sessions.show_text(info, _file_lines(files))
    import shutil

    height = shutil.get_terminal_size((80, 24)).lines
    if pager and sys.stdout.isatty() and text.count("\n") > height - 2:
        import click

        click.echo_via_pager(text)
    else:
        echo(text, nl=False)
    return 0


# memories ----------------------------------------------------------------------------------
def memories(
    mtype: str | None = None, project=None, all_: bool = False, as_json: bool = False, stale: bool = False
) -> int:
    """``recall memories`` (the list; ``stale``: only those whose files changed since)."""
    from recall.cli.command_utils import check_type, included_root
    from recall.memory import TYPES, store
    from recall.memory.stale import mark_text

    t = check_type(mtype)
    root = included_root(project)
    store.fold_access()
    state = store.load(root)
    store.refresh_stale(root, state)
    now = time.time()
    mems = [m for m in state.memories if (all_ or m.active) and (t is None or m.type == t) and (not stale or m.stale)]
    mems.sort(key=lambda m: (TYPES.index(m.type), not m.active, -store.rank(m, now)))
    if as_json:
        out = []
        for m in mems:
            d = m.to_json()
            d["effectiveConfidence"] = round(store.effective_confidence(m, now), 4)
            out.append(d)
        echo(json.dumps({"project": root, "memories": out}, ensure_ascii=False))
        return 0
    if not mems:
        what = f"{t} memories" if t else "memories"
        if stale:
            echo(
                f"No {what} of {root} name a file that changed substantially, moved or was deleted "
                "since they were written."
            )
            return 0
        echo(
            f"No {what} for {root} yet. They are extracted when a session goes idle or ends "
            "(with a model backend); sessions from before recall was set up: `recall memories --backfill`; "
            "add one by hand with `recall memories add TYPE TEXT`."
        )
        return 0
    width = max(len(m.id) for m in mems)
    current = None
    for m in mems:
        if m.type != current:
            if current is not None:
                echo("")
            current = m.type
            echo(f"{m.type}:")
            echo(f"  {'ID':<{width}}  CONF  USED  MEMORY")
        conf = store.effective_confidence(m, now)
        flag = "" if m.active else f" [{m.status}]"
        faded = " (faded: not in the briefing)" if m.active and conf < store.BRIEFING_FLOOR else ""
        echo(f"  {m.id:<{width}}  {conf:.2f}  {m.access_count:>4}  {one_line(m.content, 110)}{flag}{faded}")
        if m.stale:
            echo(f"  {'':<{width}}              ! {mark_text(m)}")
    echo(
        "CONF: confidence now (it fades with age unless used); USED: times shown in a prompt or search. "
        "`recall memories show ID` tells the rest."
    )
    return 0
