"""Service ops of the memory feature, and the service's memory worker thread.

``capture``  args ``{"event": "stop"|"pre-compact"|"session-end", "session_id", "transcript_path",
             "cwd"}`` (sent with the hook's credentials, ``recall.core.caller``) ->
             ``{"queued": true}``, or ``{"queued": false, "reason"}`` when not even the
             hook's environment has a model backend. The worker thread runs with the last
             caller's environment, kept in memory only. Writes the trigger to the queue (durable: a
             service that stops before it runs leaves it for the next worker) and wakes the
             worker thread, which drains the queue under the same lock a detached worker
             would take, so the two never extract a session twice.
``memory_fold``  args ``{}`` -> ``{"folded": {project: hits}}``: fold the access log now.

The worker thread also wakes every ``TICK`` seconds to fold access counts and deliver
memory documents that were queued while the index was busy.
"""

from __future__ import annotations

import threading

from recall.core import caller, log
from recall.core.errors import UsageError
from recall.memory import queue as q
from recall.service.registry import op, service

TICK = 30.0

_wake = threading.Event()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def _stop_event() -> threading.Event | None:
    svc = service()
    return getattr(svc, "stop_event", None)


def _loop() -> None:
    from recall.memory import index_docs, worker

    stop = _stop_event() or threading.Event()
    logger = log.get("memory")
    while not stop.is_set():
        try:
            with caller.use(caller.remembered()):  # the last hook's credentials (memory only)
                worker.run(wait=True, stop=stop)
            if index_docs.pending_path().exists():
                index_docs.deliver([], [])
        except Exception:  # noqa: BLE001 - the thread must survive one bad run
            logger.exception("memory worker thread: run failed")
        _wake.wait(TICK)
        _wake.clear()


def join(timeout: float) -> None:
    """Wait up to ``timeout`` s for the worker thread to end (the service's stop event is set:
    it finishes the session it is on and leaves the rest of the queue on disk)."""
    t = _thread
    if t is not None and t.is_alive():
        _wake.set()
        t.join(timeout)


def ensure_thread() -> None:
    global _thread
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_loop, name="recall-memory", daemon=True)
            _thread.start()


@op("capture")
def capture(args: dict) -> dict:
    sid = args.get("session_id")
    if not isinstance(sid, str) or not sid:
        raise UsageError("capture needs a session_id (the hook's session_id field).")
    event = args.get("event") if args.get("event") in q.EVENTS else "stop"
    from recall.memory.worker import has_key

    if not has_key():  # with the caller's environment (recall.core.caller) and config
        return {"queued": False, "reason": "no model backend for this caller"}
    q.enqueue(event, sid, str(args.get("transcript_path") or ""), str(args.get("cwd") or ""))
    ensure_thread()
    _wake.set()
    return {"queued": True}


@op("memory_fold")
def memory_fold(args: dict) -> dict:
    from recall.memory import store

    return {"folded": store.fold_access()}


def wake() -> None:
    """Nudge the worker thread (starting it if needed)."""
    ensure_thread()
    _wake.set()


def _service_writer():
    """How ``recall.memory.index_docs.deliver`` writes inside the service: on its writer thread,
    after which the warm searcher reloads (None once the service has stopped)."""
    svc = service()
    if svc is None:
        return None

    def run(fn):
        def work(ix):
            out = fn(ix)
            svc.generation += 1
            return out

        return svc.run_in_writer(work, timeout=60.0)

    return run


def start(svc) -> None:
    """Called by the service at its start (``registry.start_modules``): memory documents are
    written on its writer thread from now on, and the worker thread drains what queued up
    meanwhile."""
    from recall.memory import index_docs as memory_index

    memory_index.use_service_writer(_service_writer)
    ensure_thread()
