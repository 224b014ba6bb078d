"""The capture queue: hook triggers waiting for the one memory worker.

Import-light (stdlib + recall.core.paths): the Stop / PreCompact / SessionEnd hooks use it and
must return within a few hundred milliseconds.

A trigger is one small JSON file in ``$RECALL_HOME/memory/queue/`` (written atomically,
0600): ``{"event", "session_id", "transcript_path", "cwd", "time"}``. One worker at a time
drains the queue: it holds an exclusive ``flock`` on ``$RECALL_HOME/memory/worker.lock`` —
either the warm service's worker thread or one detached ``python -m recall.memory.worker``.

Why no trigger is ever stranded: a hook writes its trigger FIRST, then starts a worker only
if the lock is free. A worker re-lists the queue after releasing the lock and takes the lock
again if anything is still there; so a trigger written while a worker held the lock is seen
either by that worker or by the next one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import time
from pathlib import Path

from recall.core import paths
from recall.memory import memory_home

EVENTS = ("stop", "pre-compact", "session-end", "manual")
PRIORITY = {"stop": 1, "pre-compact": 2, "session-end": 3, "manual": 3}


def queue_dir() -> Path:
    return memory_home() / "queue"


def worker_lock_path() -> Path:
    return memory_home() / "worker.lock"


def enqueue(
    event: str,
    session_id: str,
    transcript_path: str = "",
    cwd: str = "",
    now: float | None = None,
    retry: dict | None = None,
) -> Path:
    """Write one trigger file; returns its path. ``retry`` (``{"attempts", "retry_at",
    "error"}``) marks work that failed and waits for its next try (``recall.memory.worker``)."""
    now = time.time() if now is None else now
    rec = {
        "event": event if event in EVENTS else "stop",
        "session_id": str(session_id or ""),
        "transcript_path": str(transcript_path or ""),
        "cwd": str(cwd or ""),
        "time": now,
    }
    if retry:
        rec.update(
            {
                "attempts": int(retry.get("attempts") or 1),
                "retry_at": float(retry.get("retry_at") or 0),
                "error": str(retry.get("error") or "")[:300],
            }
        )
    name = f"{time.time_ns():020d}-{os.getpid()}-{rec['event']}.json"
    path = queue_dir() / name
    paths.atomic_write(path, json.dumps(rec))
    return path


def pending() -> list[tuple[Path, dict | None]]:
    """Queued triggers, oldest first; a file that cannot be read comes with None."""
    try:
        names = sorted(n for n in os.listdir(queue_dir()) if n.endswith(".json") and not n.startswith("."))
    except FileNotFoundError:
        return []
    out: list[tuple[Path, dict | None]] = []
    for n in names:
        p = queue_dir() / n
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(rec, dict) or not rec.get("session_id"):
                rec = None
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            rec = None
        out.append((p, rec))
    return out


def try_lock(path: Path | None = None) -> int | None:
    """An fd holding the worker lock, or None when another process holds it."""
    path = path or worker_lock_path()
    paths.ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return None
        raise
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError:
        pass
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def lock_free() -> bool:
    fd = try_lock()
    if fd is None:
        return False
    release(fd)
    return True


def holder() -> str:
    try:
        return worker_lock_path().read_text().strip()
    except OSError:
        return ""


def spawn_worker() -> bool:
    """Start one fully detached worker process (own session, no stdio) unless one runs."""
    if not lock_free():
        return False
    import subprocess  # (here: ``recall status`` reads the queue's state without it)

    try:
        subprocess.Popen(
            [sys.executable, "-m", "recall.memory.worker"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd="/",
        )
    except OSError:
        return False
    return True
