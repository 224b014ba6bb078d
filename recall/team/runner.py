"""The sync loop the service runs (``recall.service.ops.team`` starts it on a thread).

While this machine has joined a team it keeps two connections: one that ``LISTEN``s on
``recall_team`` (a teammate's push wakes it at once) and one that works. Each turn:

* push when anything the push reads changed (a ``stat`` per file, every ``TICK``), when
  ``wake()`` was called (``recall forget``, ``recall team share``) or every ``REPUSH``
  seconds;
* pull on a notification, after a push, or every ``POLL`` seconds (the safety net for a
  notification lost with a dropped connection);
* write what was pulled into the index.

When the server is down or unreachable, everything local keeps working: the loop waits
(``RETRY_FIRST`` s, doubling to ``RETRY_MAX``, or until woken) and starts again where it
stopped; nothing is lost, because every step records its progress only after it was
committed. Errors are logged once per distinct message, naming the server by its label,
never the connection string. After ``recall team leave`` it only deletes the team's
documents from the index.
"""

from __future__ import annotations

import threading
import time

from recall.core import log
from recall.team import local

TICK = 1.0
POLL = 30.0
REPUSH = 300.0
VERIFY = 3600.0
RETRY_FIRST, RETRY_MAX = 2.0, 60.0

_wake = threading.Event()
_active = threading.Event()


def wake() -> None:
    """Ask the running loop (if this process has one) to push and pull now."""
    _wake.set()


def active() -> bool:
    """Whether a sync loop runs in this process (the service)."""
    return _active.is_set()


class Runner:
    def __init__(self, writer, stop: threading.Event) -> None:
        self.writer = writer
        self.stop = stop
        self.log = log.get("team")
        self._last_error = ""
        self.state: dict = {"connected": False}

    # bookkeeping ----------------------------------------------------------------------------
    def _note(self, **values) -> None:
        self.state.update(values)
        try:
            with local.TeamDB() as db:
                db.put(
                    **{f"sync_{k}": ("1" if v is True else "0" if v is False else v) for k, v in values.items()},
                    sync_heartbeat=time.time(),
                )
        except Exception as exc:  # noqa: BLE001 - bookkeeping must not stop the loop
            self.log.debug("team status not recorded: %s", exc)

    def _error(self, message: str) -> None:
        if message != self._last_error:
            self.log.warning("team sync: %s", message)
            self._last_error = message
        self._note(connected=False, error=message, error_at=time.time())

    def _wait(self, seconds: float) -> None:
        if _wake.wait(seconds):
            _wake.clear()

    # the loop -------------------------------------------------------------------------------
    def run(self) -> None:
        _active.set()
        backoff = RETRY_FIRST
        try:
            while not self.stop.is_set():
                join = local.joined()
                if join is None:
                    self._index_only()
                    self._wait(5.0)
                    continue
                try:
                    self._serve(join)
                    backoff = RETRY_FIRST
                except Exception as exc:  # noqa: BLE001 - the server is down, a bug: log, wait, retry
                    from recall.team.conn import TeamError, explain, scrub

                    if isinstance(exc, TeamError):
                        message = str(exc)
                    elif _driver_error(exc):
                        message = str(explain(exc, join.server, join.url))
                    else:
                        message = scrub(f"{type(exc).__name__}: {exc}", join.url)
                        self.log.exception("team sync failed")
                    self._error(message)
                    if self.stop.is_set():
                        break
                    self._wait(backoff)
                    backoff = min(RETRY_MAX, backoff * 2)
        finally:
            _active.clear()

    def _index_only(self) -> None:
        """Not joined (left): take the team's documents out of the index, if any remain."""
        if not local.db_path().exists():
            return
        try:
            with local.TeamDB() as db:
                ups, dels = db.to_index()
            if ups or dels:
                from recall.team.sync import index_pending

                index_pending(self.writer)
        except Exception as exc:  # noqa: BLE001
            self.log.warning("team documents not removed yet: %s", exc)

    def _serve(self, join: local.Join) -> None:
        from recall.team.conn import connect
        from recall.team.schema import CHANNEL
        from recall.team.sync import Sync

        work = connect(join.url, server=join.server)
        listen = None
        try:
            listen = connect(join.url, server=join.server)
            listen.execute(f"LISTEN {CHANNEL}")
            sync = Sync(join, self.writer)
            sync.verify(work)
            last_verify = last_pull = last_push = time.monotonic()
            if self._last_error:
                self.log.info("team sync: connected to %s again", join.server)
            self._last_error = ""
            self._note(connected=True, error="", since=time.time())
            pull = push = True
            refusals: dict[str, str] = {}
            while not self.stop.is_set():
                if local.joined() != join:
                    return  # left, or joined again elsewhere: start over
                now = time.monotonic()
                full = push or now - last_push >= REPUSH
                if full or sync.local_changed():
                    result = sync.push(work, changed_only=not full)
                    if full:
                        last_push = now
                        refusals = dict(result["refused"])  # a full push says what stands
                    else:
                        refusals = {**refusals, **result["refused"]}
                    pull = pull or bool(result.get("sent") or result.get("withdrawn"))
                    refused = "; ".join(refusals.values())
                    if refused != self.state.get("refused", ""):
                        if refused:
                            self.log.warning("team sync: %s", refused)
                        self._note(refused=refused)
                if pull or now - last_pull >= POLL:
                    sync.pull(work)
                    last_pull = now
                sync.index()
                if now - last_verify >= VERIFY:
                    sync.verify(work)
                    last_verify = now
                pull = push = False
                for _n in listen.notifies(timeout=TICK, stop_after=1):
                    pull = True
                if _wake.is_set():
                    _wake.clear()
                    pull = push = True
        finally:
            for c in (listen, work):
                if c is not None:
                    try:
                        c.close()
                    except Exception:  # noqa: BLE001
                        pass


def _driver_error(exc: BaseException) -> bool:
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error)
