"""Ops "search" and "ping" (see recall.service.registry, recall.core.service_client).

search args (all optional but ``text``):
    text              str    what to look for
    limit             int    1..1000 (default 10)
    since             float  epoch seconds, or a --since string ("3d", "2026-11-01")
    project           str    an ABSOLUTE path; resolved to its canonical project
    messages          bool   rank single messages instead of sessions
    exclude_session   str    leave this session out
    doctypes          list   e.g. ["message"], ["memory"], ["message", "session"], ["team"]
    cwd               str    the caller's folder: files are judged there for the stale marks
    agent             str    only this agent's messages and sessions (claude-code, codex, gemini)
result: a list of ``Hit.as_json()`` dicts, best first, each with its ``stale`` marks; fused with the
semantic channel's nearest sessions where it applies (``recall.search.fused``: each hit's ``channel``).
"""

from __future__ import annotations

import os

from recall import __version__
from recall.core import service_client as client
from recall.core.errors import UsageError
from recall.service.registry import op, searcher

DOCTYPES = ("message", "session", "memory", "team")


def _since(value) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        from recall.search.timespec import parse_since

        return parse_since(value)
    raise UsageError(f"since must be epoch seconds or a span like 3d; got {value!r}.")


def search_args(args: dict) -> dict:
    """Validate search args into ``Searcher.search`` keyword arguments."""
    if not isinstance(args, dict):
        raise UsageError("search takes an object of arguments.")
    text = args.get("text")
    if not isinstance(text, str):
        raise UsageError("search needs 'text': the words to look for.")
    try:
        limit = int(args.get("limit") or 10)
    except (TypeError, ValueError):
        raise UsageError(f"limit must be a whole number; got {args.get('limit')!r}.") from None
    project = args.get("project")
    proj = None
    if project:
        if not isinstance(project, str) or not os.path.isabs(os.path.expanduser(project)):
            raise UsageError("project must be an absolute path.")
        from recall.search.run import resolve_project

        proj = resolve_project(project)
    doctypes = args.get("doctypes")
    if doctypes is not None:
        if isinstance(doctypes, str):
            doctypes = [doctypes]
        if not isinstance(doctypes, list) or not doctypes or any(d not in DOCTYPES for d in doctypes):
            raise UsageError(f"doctypes must be a list drawn from {', '.join(DOCTYPES)}.")
        doctypes = tuple(doctypes)
    exclude = args.get("exclude_session") or None
    from recall.search.run import check_agent

    agent = check_agent(args.get("agent") if isinstance(args.get("agent"), str) else None)
    return {
        "agent": agent,
        "text": text,
        "limit": max(1, min(limit, 1000)),
        "messages": bool(args.get("messages")),
        "project": proj,
        "since": _since(args.get("since")),
        "exclude_session": str(exclude) if exclude else None,
        "doctypes": doctypes,
    }


@op("search")
def search(args: dict) -> list[dict]:
    kw = search_args(args)
    text = kw.pop("text")
    cwd = args.get("cwd") if isinstance(args.get("cwd"), str) and os.path.isabs(args["cwd"]) else None
    from recall.search.fused import fused_search
    from recall.search.stale import mark_hits

    # words and meaning in one ranking: the service holds the semantic channel's vectors
    return [h.as_json() for h in mark_hits(fused_search(searcher(), text, kw, cwd), cwd)]


@op("ping")
def ping(args: dict) -> dict:
    from recall.service import registry

    svc = registry.service()
    return {
        "pid": os.getpid(),
        "version": __version__,
        "protocol": client.PROTOCOL,
        "home": str(svc.home) if svc is not None else "",
        "ops": sorted(registry.OPS),
        "code": getattr(svc, "code", None),
        "started": getattr(svc, "started", None),
    }
