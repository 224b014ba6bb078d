"""The running service's traces on disk, readable without importing the service: its pid
lock (``service.lock``) and its status file (``service.json``). ``recall status`` reads them on
its fast path; ``recall.service.daemon`` writes them."""

from __future__ import annotations

import os
from pathlib import Path

from recall.core import paths


def lock_path() -> Path:
    return paths.recall_home() / "service.lock"


def status_path() -> Path:
    return paths.service_status_path()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) is not running
        with open(f"/proc/{pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                return False
    except (OSError, IndexError):
        pass
    return True


def lock_holder() -> int | None:
    """The pid in service.lock if that process is alive (the service, or a stale reuse)."""
    try:
        pid = int(lock_path().read_text().strip() or "0")
    except (OSError, ValueError):
        return None
    return pid if pid_alive(pid) else None


def read_status() -> dict | None:
    from recall.core.jsonio import read_json

    return read_json(status_path(), None, dict)
