"""What ``recall status`` and ``recall doctor`` say about memory (``memory_status``): whether extraction is on
(and the one thing to do when it is not), calls today against the daily cap, the running
cost estimate, the current project's memories and the worker's last problem."""

from __future__ import annotations

import os
import time

from recall.core import config
from recall.core.text import counted
from recall.llm.usage import calls_today, usage_summary

NO_KEY = "memory extraction is off: {why}"
DISABLED = "memory extraction is off: memory.enabled is false (turn it on with `recall config set memory.enabled true`)"


def memory_status(cwd: str | None = None, cfg: dict | None = None) -> dict:
    from indexer.project import canonical_project
    from recall.memory import briefing, queue, store

    cfg = cfg or config.load()
    from recall.core.settings import MemorySettings
    from recall.llm import backend

    mem = MemorySettings.from_config(cfg)
    choice = backend.choose(cfg)
    key, where = choice.name != "off", choice.source
    enabled = mem.enabled
    usage = usage_summary()
    cap = mem.daily_call_cap
    calls = calls_today()
    project = canonical_project(os.path.abspath(cwd or os.getcwd()))
    out = {
        "enabled": bool(key) and enabled,
        "key": bool(key),
        "key_source": where,
        "configured": enabled,
        "backend": choice.name,
        "backend_why": choice.why,
        "calls_today": calls,
        "daily_call_cap": cap,
        "cap_reached": cap is not None and calls >= int(cap),
        "cost_today": round(usage.get("today_cost", 0.0), 4),
        "cost_total": round(usage.get("cost", 0.0), 4),
        "briefing": briefing.mode(cfg),
        "project": project,
        "active": 0,
        "total": 0,
        "problem": "",
        "queued": len(queue.pending()),
        "worker": queue.holder() if not queue.lock_free() else "",
        "retrying": [],
    }
    if out["queued"]:
        from recall.memory import worker

        out["retrying"] = worker.retrying()
    try:
        state = store.load(project)
        out["active"] = len(state.active())
        out["total"] = len(state.memories)
    except store.StateError as exc:
        out["problem"] = str(exc)
    last = _worker_status()
    out["last_run"] = last.get("last_run")
    out["last_problem"] = last.get("last_problem") or ""
    return out


def memory_projects(also: tuple[str, ...] = ()) -> list[str]:
    """Every project recall may hold typed memories for: those with indexed sessions, and
    ``also`` (the working directory's, which may have memories added by hand)."""
    from indexer.state import known_projects
    from recall.core import paths

    return sorted(set(known_projects(paths.state_db_path())) | {p for p in also if p})


def typed_memories(also: tuple[str, ...] = ()) -> dict:
    """What ``recall memories`` lists, across projects: ``{"memories": active typed memories,
    "projects": projects holding one}``. Not the index's memory documents: those count session
    summaries, rules and Claude Code's own memory files too (issue 44: status said 23 for 5)."""
    from recall.memory import store

    total = held = 0
    for project in memory_projects(also):
        if not os.path.isfile(store.state_path(project)):
            continue
        try:
            n = len(store.load(project).active())
        except store.StateError:
            continue
        total += n
        held += 1 if n else 0
    return {"memories": total, "projects": held}


def _worker_status() -> dict:
    """The worker's last run (``recall.memory.worker.read_status``), without importing it."""
    from recall.core.jsonio import read_json
    from recall.memory import memory_home

    return read_json(memory_home() / "status.json", {}, dict)


def status_lines(cwd: str | None = None, cfg: dict | None = None, s: dict | None = None) -> list[str]:
    """Lines for ``recall status`` (each starts with "Memory:" or is indented under it);
    ``s``: a ``memory_status`` already taken."""
    s = s if s is not None else memory_status(cwd, cfg)
    pad = " " * 9
    if not s["key"]:
        head = NO_KEY.format(why=s["backend_why"])
    elif not s["configured"]:
        head = DISABLED
    else:
        head = f"extraction on ({s['backend']})"
    cap = s["daily_call_cap"]
    lines = [f"Memory:  {head}"]
    if s["key"] and s["configured"] or s["calls_today"] or s["cost_total"]:
        lines[0] += (
            f"; {s['calls_today']}/{cap if cap is not None else '∞'} extraction calls today; "
            f"est. cost ${s['cost_today']:.2f} today, ${s['cost_total']:.2f} in all"
        )
    if s["cap_reached"]:
        lines.append(
            f"{pad}the daily cap is reached: extraction resumes at midnight UTC "
            "(raise it with `recall config set memory.daily_call_cap N`)"
        )
    where = {"claude_md": "CLAUDE.md", "local": "CLAUDE.local.md", "none": "SessionStart context"}[s["briefing"]]
    lines.append(f"{pad}{counted(s['active'], 'active memory')} in {s['project']} (briefing: {where})")
    if s["problem"]:
        lines.append(f"{pad}{s['problem']}")
    if s["queued"]:
        lines.append(
            f"{pad}{counted(s['queued'], 'capture')} queued" + (f", worker pid {s['worker']}" if s["worker"] else "")
        )
    if s["retrying"]:
        first = min(s["retrying"], key=lambda r: r["retry_at"])
        wait = max(0, int(first["retry_at"] - time.time()))
        lines.append(
            f"{pad}{counted(len(s['retrying']), 'session')} kept for another try after an error (next in "
            f"{wait // 60} min: {first['error'][:120]})"
        )
    if s["last_problem"] and s["last_run"] and time.time() - float(s["last_run"]) < 86400:
        lines.append(f"{pad}last run: {s['last_problem']}")
    return lines
