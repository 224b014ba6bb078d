"""The team sync in the service (``recall.team.runner``), and its ops.

``team_sync``    args ``{}`` -> ``{"running": bool}``: push and pull now (``recall team
                 share``/``unshare``/``join`` call it so a change is not left for the next tick).
``team_status``  args ``{}`` -> the loop's live state (connected, last error).

The service starts the loop's thread at its start (``start``, called by
``recall.service.registry.start_modules``); the loop imports
psycopg only once this machine has joined a team (``recall team join``).
"""

from __future__ import annotations

import threading

from recall.service.registry import op, service

_thread: threading.Thread | None = None
_runner = None
_start_lock = threading.Lock()


def _writer(fn):
    """``fn(indexer)`` on the service's writer thread; the warm searcher reloads after."""
    svc = service()
    if svc is None:
        from recall.core.errors import RecallError

        raise RecallError("The recall service stopped: the team sync resumes at its next start.")

    def work(ix):
        out = fn(ix)
        svc.generation += 1
        return out

    return svc.run_in_writer(work, timeout=120.0)


def ensure_thread() -> None:
    global _thread, _runner
    svc = service()
    if svc is None:
        return
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            from recall.team.runner import Runner

            _runner = Runner(_writer, svc.stop_event)
            _thread = threading.Thread(target=_runner.run, name="recall-team", daemon=True)
            _thread.start()


@op("team_sync")
def team_sync(args: dict) -> dict:
    from recall.team import runner

    ensure_thread()
    runner.wake()
    return {"running": runner.active()}


@op("team_status")
def team_status(args: dict) -> dict:
    from recall.team import runner

    state = dict(_runner.state) if _runner is not None else {}
    return {"running": runner.active(), **state}


def start(svc) -> None:
    """Called by the service at its start: the sync loop's thread."""
    ensure_thread()
