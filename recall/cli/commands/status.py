"""``recall status``: the service, the index, the archive, memory and cost, in one screen."""

from __future__ import annotations

import json
import os
import time

import typer

from recall.core import paths
from recall.core.errors import RecallError

commands = typer.Typer()  # merged into the app by recall.cli.app


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


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def collect_status() -> dict:
    """Everything ``recall status`` shows, as a dict."""
    from recall.core import service_client as client

    live = None
    try:
        live = client.call("status", {}, timeout=1.5)
    except client.Unavailable:
        live = None
    from recall.service.daemon import lock_holder, read_status

    saved = read_status() or {}
    out: dict = {"home": str(paths.recall_home())}
    if live:
        svc = dict(live)
        svc["running"] = True
    else:
        pid = lock_holder()
        svc = {k: saved.get(k) for k in ("pid", "started", "stopped", "roots", "errors", "last_commit",
                                          "commits", "version", "state")}
        svc["running"] = False
        if pid is not None and saved.get("pid") == pid and saved.get("running"):
            svc["running"] = True
            svc["answering"] = False
        for r in svc.get("roots") or []:
            r["watched"] = bool(svc["running"] and r.get("watched"))
    out["service"] = svc
    counts = dict((live or {}).get("counts") or {})
    if not live:
        counts.update(_index_counts())
    out["index"] = counts
    out["index"]["path"] = str(paths.index_dir())
    out["archive"] = _archive_stats()
    from indexer.reredact import progress as redaction_progress

    out["redaction"] = redaction_progress(paths.archive_dir())  # a re-redaction pass under way, or None
    if not svc.get("roots"):
        out["service"]["roots"] = [{"path": str(r), "watched": False, "exists": r.is_dir()}
                                   for r in paths.transcript_roots()]
    out["capture"] = capture_status()
    try:
        from recall.llm import messages_api as llm

        out["model_usage"] = llm.usage_summary()
    except Exception:
        pass
    return out


def capture_status() -> dict:
    """Whether capture is paused (since, until), the exclusions, the sessions switched off."""
    from indexer.ledger import current_pause, exclusions, off_sessions, read_controls

    data = read_controls()
    p = current_pause(data)
    return {"paused": p is not None, "since": p["since"] if p else None, "until": p["until"] if p else None,
            "excluded": exclusions(), "sessions_off": len(off_sessions(data))}


def capture_line(cap: dict, now: float) -> str:
    if cap.get("paused"):
        from recall.cli.commands.pause import until_text

        return (f"Capture: paused since {_ago(now - cap['since'])}, {until_text(cap.get('until'), now)} "
                "(nothing is captured or injected; `recall resume` ends it)")
    bits = []
    if cap.get("excluded"):
        bits.append(f"{len(cap['excluded'])} exclusions (`recall exclude list`)")
    if cap.get("sessions_off"):
        bits.append(f"{cap['sessions_off']} sessions switched off by `recall: off`")
    return "Capture: on" + (f"; {', '.join(bits)}" if bits else "")


def _index_counts() -> dict:
    out: dict = {}
    try:
        import tantivy

        from recall.search.searcher import Searcher

        s = Searcher()
        searcher = s.index.searcher()
        for dt, name in (("message", "messages"), ("session", "sessions_indexed"), ("memory", "memories")):
            q = tantivy.Query.term_query(s.schema, "doctype", dt, index_option="basic")
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


def _archive_stats() -> dict:
    root = paths.archive_dir() / "sessions"
    n = size = 0
    if root.is_dir():
        for p in root.glob("*/*.jsonl"):
            try:
                size += p.stat().st_size
                n += 1
            except OSError:
                pass
    return {"path": str(paths.archive_dir()), "sessions": n, "bytes": size}


def _print_service_line(info: dict) -> None:
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
        typer.echo(f"Service: running ({', '.join(bits)})")
    else:
        last = ""
        if svc.get("pid") and svc.get("stopped"):
            last = f" (last: pid {svc['pid']}, stopped {_ago(now - svc['stopped'])})"
        elif svc.get("pid"):
            last = f" (last: pid {svc['pid']}, ended without a clean stop)"
        typer.echo(f"Service: not running{last}; `recall service start` starts it")


@commands.command("status", help="Service state (pid, uptime, lag), roots watched, what is indexed, recent errors.")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    from recall.memory.status import memory_status, status_lines

    from recall.llm import backend
    from recall.prompt import injections

    info = collect_status()
    info["memory"] = memory_status()
    info["backends"] = backend.describe()
    info["prompts_today"] = injections.day_summary()
    if as_json:
        typer.echo(json.dumps(info, default=str))
        return
    now = time.time()
    svc = info["service"]
    _print_service_line(info)
    typer.echo(capture_line(info["capture"], now))
    roots = svc.get("roots") or []
    for i, r in enumerate(roots):
        state = "watched" if r.get("watched") else ("missing" if not r.get("exists", True) else "not watched")
        typer.echo(f"{'Roots:' if i == 0 else '':8} {_short(r['path'])} ({state})")
    idx = info["index"]
    if idx.get("problem"):
        typer.echo(f"Index:   {idx['problem']}")
    else:
        parts = [f"{idx.get('messages', 0):,} messages", f"{idx.get('sessions_indexed', idx.get('sessions', 0)):,} sessions"]
        if idx.get("memories"):
            parts.append(f"{idx['memories']:,} memories")
        if idx.get("files") is not None:
            parts.append(f"from {idx['files']:,} transcript files")
        typer.echo(f"Index:   {', '.join(parts)}")
    last = svc.get("last_commit") or idx.get("last_commit")
    line = f"Last commit: {_ago(now - last)}" if last else "Last commit: never"
    if svc.get("running") and "lag_seconds" in svc:
        line += f"; lag {svc['lag_seconds']:.1f} s, {svc.get('backlog_files', 0)} files waiting"
    typer.echo(line)
    if svc.get("backfill"):
        from recall.cli.output import backfill_text

        typer.echo(f"Backfill: {backfill_text(svc['backfill'])}, newest sessions first")
    arch = info["archive"]
    typer.echo(f"Archive: {arch['sessions']:,} sessions, {arch['bytes'] / 1e6:.1f} MB ({_short(arch['path'])})")
    if info.get("redaction"):
        from recall.cli.output import redaction_status_line

        typer.echo(redaction_status_line(info["redaction"]))
    usage = info.get("model_usage")
    if usage and usage.get("calls"):
        typer.echo(f"Model:   {usage['today_calls']} calls today (${usage['today_cost']:.2f}), "
                   f"{usage['calls']} in all (${usage['cost']:.2f})")
        for name, b in sorted((usage.get("today_by_backend") or {}).items(), key=lambda kv: -kv[1]["calls"]):
            what = ", ".join(f"{p} {n}" for p, n in sorted(b["purposes"].items(), key=lambda kv: -kv[1]))
            failed = f"; {b['failed']} failed: {b['last_error']}" if b.get("failed") else ""
            typer.echo(f"         today on {name}: {b['calls']} ({what}){failed}")
    b = info["backends"]
    features = b["features"]
    if len({(f["backend"], f["why"]) for f in features.values()}) == 1:
        typer.echo(f"Backend: model.backend = {b['setting']}: {b['backend']} for every feature ({b['why']})")
    else:
        typer.echo(f"Backend: model.backend = {b['setting']}")
        for feature, label in backend.FEATURES.items():
            typer.echo(f"         {label}: {features[feature]['backend']} ({features[feature]['why']})")
    p = info["prompts_today"]
    if p["prompts"]:
        o = p["outcomes"]
        why = ", ".join(f"{n} {k}" for k, n in sorted(p["raw_why"].items(), key=lambda kv: -kv[1]))
        typer.echo(f"Prompts: last 24 h: {o['synthesized']} synthesized, {o['raw']} raw"
                   f"{f' ({why})' if why else ''}, {o['nothing']} nothing found, {o['trivial']} trivial; "
                   f"~{p['injected_tokens']:,} tokens injected (`recall log` lists them)")
    else:
        typer.echo("Prompts: none in the last 24 h")
    for line in status_lines():
        typer.echo(line)
    errors = svc.get("errors") or []
    if errors:
        typer.echo("Recent errors:")
        for e in errors[-5:]:
            typer.echo(f"  {_ago(now - e.get('time', now))}: {e.get('message')}")
