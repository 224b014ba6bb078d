"""Where a conversation's turn stands, for a briefing written in the background.

When the prompt hook lets the prompt go on at once and has the model write its briefing
meanwhile (``hook.background``), Claude Code attaches what the hook prints when it ends to the
model's next request: in the same turn when the hook is quick enough, but, when the turn has
already ended, to the first request of the user's NEXT prompt (Claude Code collects finished
background hooks at every request). A briefing written for one prompt must never reach
another, so before it prints, the background hook asks ``ended_since``: has this conversation's
turn ended (the Stop hook ran: ``mark_stop``) or has a newer prompt begun (its hook ran:
``mark_prompt``; an interrupted turn gets no Stop) since its own prompt began?

One empty file per conversation and kind under ``$RECALL_HOME/turns`` (0700), named by a hash
of Claude Code's session id; the file's modification time (nanoseconds, set explicitly) is the
mark. ``prune`` deletes marks older than ``KEEP_SECONDS`` (the service does, hourly). Stdlib
only, never raises: the prompt hook and the Stop hook import it.
"""

from __future__ import annotations

import hashlib
import os
import time

KEEP_SECONDS = 2 * 86400


def _dir() -> str:
    from recall.core import paths

    return os.path.join(str(paths.recall_home()), "turns")


def _path(session_id: str, kind: str) -> str:
    name = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:24]
    return os.path.join(_dir(), f"{name}.{kind}")


def _mark(session_id: str | None, kind: str) -> int | None:
    """Set the mark ``kind`` of ``session_id`` to now; the mark (ns), or None when it could not be set."""
    if not isinstance(session_id, str) or not session_id:
        return None
    path = _path(session_id, kind)
    now = time.time_ns()
    try:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        except FileNotFoundError:
            os.makedirs(_dir(), mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        os.utime(path, ns=(now, now))
    except OSError:
        return None
    return now


def mark_prompt(session_id: str | None) -> int | None:
    """A prompt of ``session_id`` begins (its hook runs); the mark, for ``ended_since``."""
    return _mark(session_id, "prompt")


def mark_stop(session_id: str | None) -> None:
    """The turn of ``session_id`` ended (the Stop hook runs)."""
    _mark(session_id, "stop")


def _mtime(session_id: str, kind: str) -> int | None:
    try:
        return os.stat(_path(session_id, kind)).st_mtime_ns
    except OSError:
        return None


def ended_since(session_id: str | None, prompt_mark: int | None, started: float) -> str | None:
    """Why a briefing for the prompt of ``session_id`` that began at ``started`` (epoch
    seconds; ``prompt_mark``: what ``mark_prompt`` returned for it) would reach another turn:
    "the turn ended" or "a newer prompt began"; None while its turn goes on (or nothing is known)."""
    if not isinstance(session_id, str) or not session_id:
        return None
    stop = _mtime(session_id, "stop")
    if stop is not None and stop >= int(started * 1e9):
        return "the turn ended"
    newer = _mtime(session_id, "prompt")
    if newer is not None and prompt_mark is not None and newer > prompt_mark:
        return "a newer prompt began"
    return None


def prune(now: float | None = None) -> int:
    """Delete marks older than ``KEEP_SECONDS``; how many went."""
    cutoff = (time.time() if now is None else now) - KEEP_SECONDS
    gone = 0
    try:
        entries = list(os.scandir(_dir()))
    except OSError:
        return 0
    for e in entries:
        try:
            if e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(e.path)
                gone += 1
        except OSError:
            continue
    return gone
