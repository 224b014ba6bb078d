"""Memory capture hooks: ``recall hook stop | pre-compact | session-end | session-start``.

Each capture hook only records the trigger and hands the work on, so it returns within a
few hundred milliseconds (SessionEnd hooks get 1.5 s by default):
  1. the service's ``capture`` op queues it for the service's worker thread; or, when no
     service answers (or the service has no API key of its own),
  2. the trigger is written to ``$RECALL_HOME/memory/queue/`` and ONE detached worker
     (``python -m recall.memory.worker``) is started unless one already holds the lock.
With no API key, or ``memory.enabled`` false, nothing is queued (no retry loops).

SessionStart (sources startup / resume / clear / compact) refreshes the briefing file
(decay moves on between sessions) and, with ``memory.claude_md = "none"``, returns the
briefing as ``additionalContext``.

Import-light: stdlib, recall.core (paths, config, service_client), recall.llm.errors
(the SDK loads lazily), recall.memory.queue / store / briefing. No anthropic, mcp, typer, pydantic or tantivy.
"""

from __future__ import annotations

import os

CAPTURE_OP_TIMEOUT = 1.0


def _enabled(cfg: dict) -> bool:
    from recall.core.settings import MemorySettings

    return MemorySettings.from_config(cfg).enabled


def _capture(event: str, payload: dict) -> None:
    from recall.core import config
    from recall.llm import backend

    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return None
    cfg = config.load()
    if not _enabled(cfg):
        return None
    if not backend.available(cfg):
        return None  # `recall status` / `recall doctor` say why memory extraction is off
    transcript = payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else ""
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else os.getcwd()
    args = {"event": event, "session_id": session_id, "transcript_path": transcript, "cwd": cwd}
    from recall.core import service_client as client

    try:
        reply = client.call("capture", args, timeout=CAPTURE_OP_TIMEOUT, credentials=True)
        if isinstance(reply, dict) and reply.get("queued"):
            return None
    except client.Unavailable:
        pass
    from recall.memory import queue

    queue.enqueue(event, session_id, transcript, cwd)
    queue.spawn_worker()
    return None


def stop(payload: dict) -> dict | None:
    from recall.prompt.turns import mark_stop

    mark_stop(payload.get("session_id"))  # a briefing still being written for this turn now stays out
    return _capture("stop", payload)


def pre_compact(payload: dict) -> dict | None:
    return _capture("pre-compact", payload)


def session_end(payload: dict) -> dict | None:
    return _capture("session-end", payload)


def session_start(payload: dict) -> dict | None:
    from recall.core import config
    from recall.memory import briefing

    cfg = config.load()
    if not _enabled(cfg):
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else os.getcwd()
    from recall.prompt.block import QUOTED, clean

    text = briefing.session_context(cwd, cfg=cfg)
    if not text:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": f'<recalled-context source="memory">\n{QUOTED}\n{clean(text)}\n</recalled-context>',
        }
    }
