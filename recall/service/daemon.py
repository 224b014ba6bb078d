"""The background indexer service (``recall serve``): keeps the index current while you work.

One instance per ``RECALL_HOME`` (``service.lock``, flock, holds the pid). It owns the
only ``Indexer`` (the index writer) and:

* watches every transcript root recursively with watchdog (new project directories, new
  session files, subagent files); an event marks a file dirty;
* drains dirty files every ``TICK`` seconds, reading what each gained since its saved
  byte offset (a partial last line waits for its newline; a truncated or replaced file
  is re-read, upserts by uuid keep that free of duplicates; a deleted file loses
  nothing), and commits when anything is new, at most every ``COMMIT_INTERVAL``
  seconds — a line written is searchable by another process well within a second,
  without a commit per line;
* saves offsets only after the commit that holds their lines (``Indexer.commit``), so
  ``kill -9`` at any moment loses and duplicates nothing;
* backfills at start (replaying the archive first when the index had to be rebuilt),
  keeping live files fresh between backfilled files;
* re-redacts history stored under older redaction rules once, a slice at a time between
  its other work (``recall.privacy.redaction_pass``; resumable, shown by ``recall status``);
* rescans the roots every ``RESCAN_INTERVAL`` seconds as a safety net for missed events;
* runs its other background jobs from one declared table, ``JOBS`` (every N seconds: this
  method, when that holds), walked by the loop; the threads beside the loop (the memory
  worker, the team sync) are started by their op modules' ``start(service)``
  (``recall.service.registry.start_modules``), the page of ``recall ui`` by its op (which
  ``recall serve`` adds: ``registry.add_module``);
* answers ops on a unix socket (``recall.service.socket_server``) with a warm ``Searcher`` that is
  reloaded after each commit; writes from ops (memory documents, forget, index,
  rebuild) run on the writer thread via ``run_in_writer``;
* keeps ``service.json`` fresh (pid, uptime, roots, counts, last commit, lag, recent
  errors) for ``recall status``;
* stops cleanly on SIGTERM/SIGINT: a final drain and commit, the socket removed.
  It starts no child processes (but one interpreter, once, to check that a new install imports).
* restarts itself when the installed code changes under it (an upgrade, a reinstall, the
  test command's editable install): the same new fingerprint twice, a few seconds apart
  (``recall.core.code_version``), then a clean stop and ``exec`` of the same command line on
  the new code; the memory queue is on disk, so nothing queued is lost.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import signal
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from indexer import sources as agent_sources
from indexer.ingest import Indexer, Progress, Summary, discover, read_error
from indexer.transcripts import NotRegularFile, path_text
from recall import __version__
from recall.core import paths, process
from recall.core import service_client as client
from recall.core.errors import IndexBusy, RecallError, StorageError
from recall.core.service_state import lock_path, status_path
from recall.core.text import counted
from recall.privacy import redaction_pass
from recall.privacy.forget import attach as attach_privacy
from recall.service import registry
from recall.setup import plugin_runtime  # at import: an uninstall deletes the runtime's files before the service stops

TICK = float(os.environ.get("RECALL_TICK_SECONDS", "0.1"))
COMMIT_INTERVAL = float(os.environ.get("RECALL_COMMIT_SECONDS", "0.25"))
BACKFILL_COMMIT_INTERVAL = 1.0
RESCAN_INTERVAL = float(os.environ.get("RECALL_RESCAN_SECONDS", "30"))
NATIVE_DELAY = 0.3  # seconds after a memory-file event before re-reading them
STATUS_INTERVAL = 1.0
HEARTBEAT_INTERVAL = 5.0
SEMANTIC_SLICE = 2.0  # seconds of embedding per turn of the semantic job (a thread of its own)
ROOT_CHECK_INTERVAL = 1.0
AGENT_LIVE_SECONDS = 3600.0  # another agent's lines this recent are a live session's (due a memory capture)
REDACTION_PAUSE = 0.02  # between two slices of the re-redaction pass
CACHE_PRUNE_INTERVAL = 3600.0  # expired synthesis-cache entries deleted this often
MAX_ERRORS = 20
CODE_CHECK_INTERVAL = float(os.environ.get("RECALL_CODE_CHECK_SECONDS", "5"))  # is the installed code still ours?
CODE_SETTLE = float(os.environ.get("RECALL_CODE_SETTLE_SECONDS", "2"))  # a changed install must hold still this long
MEMORY_JOIN_SECONDS = 60.0  # a restart waits this long for the memory worker to finish its session
RETRY_FIRST, RETRY_MAX = 2.0, 60.0  # after a failed write (a full disk): seconds to the next try
# One read of a file takes at most this many bytes (~0.1-0.3 s of work) before the other
# dirty files get their turn: a 200 MB transcript does not hold up the others' freshness.
READ_SLICE_BYTES = 4 << 20
BACKFILL_NICE = 10  # the backfill's CPU priority (the writer thread and Tantivy's threads it starts)
BACKFILL_SWITCH_INTERVAL = float(os.environ.get("RECALL_SWITCH_INTERVAL", "0.0005"))
# RSS budget: the writer heap (RECALL_WRITER_HEAP_MB, default 48: indexer.ingest.writer_heap) is split
# across its threads.
WRITER_THREADS = int(os.environ.get("RECALL_WRITER_THREADS", "2"))


class AlreadyRunning(RecallError):
    exit_code = 0

    def __init__(self, pid: str) -> None:
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"the service already runs for {paths.recall_home()} ({who}); nothing to do "
            "(`recall status` shows it, `recall service stop` stops it)."
        )


# locking and status, also used by the CLI ----------------------------------------------------
def acquire_lock() -> int:
    try:
        paths.home_dir()
        fd, holder = process.hold_pid_lock(lock_path())
    except OSError as exc:
        raise RecallError(
            f"Cannot write to {paths.recall_home()} ({exc.strerror or exc}): fix its "
            "permissions, or point RECALL_HOME at a writable directory."
        ) from None
    if fd is None:
        raise AlreadyRunning(holder)
    return fd


def uninstalled() -> bool:
    """Whether the recall this service runs is uninstalled: the Python it runs on is gone (its
    virtualenv was deleted, e.g. by `claude plugin uninstall`, which removes the plugin's
    runtime), or it is the service of recall's Claude Code plugin (started by the plugin's
    hooks: ``RECALL_PLUGIN_DATA``) and Claude Code no longer lists the plugin as installed
    (`claude plugin uninstall --keep-data`). The service then stops: nothing of an uninstalled
    recall keeps capturing."""
    if sys.executable and not os.path.exists(sys.executable):
        return True
    if os.environ.get("RECALL_PLUGIN_DATA"):
        from recall.core.wiring import plugin_installed

        return plugin_installed() is False
    return False


def new_code_problem(timeout: float = 60.0) -> str:
    """ "" when a fresh interpreter imports the installed service and CLI, else why not."""
    import subprocess

    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import recall.service.daemon, recall.cli.app"],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode == 0:
        return ""
    lines = (proc.stderr.strip() or f"exit status {proc.returncode}").splitlines()
    return lines[-1][:200]


# watchdog -------------------------------------------------------------------------------------
def _event_handler(service: "Service"):
    from watchdog.events import FileSystemEventHandler

    from indexer.sources import is_session_file

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event) -> None:
            kind = event.event_type
            if kind in ("opened", "closed_no_write", "attrib"):
                return
            path = os.fsdecode(event.dest_path if kind == "moved" and event.dest_path else event.src_path)
            if event.is_directory:
                if kind in ("created", "moved"):
                    service.mark_scan(path)
                return
            if path.endswith((".jsonl", ".json", ".zst")) and is_session_file(path):  # indexer.sources
                service.mark_dirty(path)
            elif path.endswith(".md"):  # Claude Code's auto memory (indexer.native_memory)
                service.mark_native()

    return Handler()


def _event_filter():
    from watchdog import events as ev

    return [
        ev.FileCreatedEvent,
        ev.FileModifiedEvent,
        ev.FileMovedEvent,
        ev.FileDeletedEvent,
        ev.FileClosedEvent,
        ev.DirCreatedEvent,
        ev.DirMovedEvent,
    ]


# the service ----------------------------------------------------------------------------------
class _Request:
    __slots__ = ("fn", "future", "heavy")

    def __init__(self, fn, heavy: bool) -> None:
        self.fn = fn
        self.future: Future = Future()
        self.heavy = heavy


class Service:
    def __init__(self, sources: list[Path] | tuple[Path, ...] = (), log: logging.Logger | None = None) -> None:
        self.home = paths.recall_home()
        self.log = log or logging.getLogger("recall.service")
        self.roots: list[Path] = agent_sources.all_roots(list(sources))  # Claude Code's, --source, other agents
        self.agents_off: set[str] = set(agent_sources.NAMES) - set(agent_sources.enabled())
        # the other agents have no hooks: their live sessions' memories and summaries are queued
        # by the service once a session goes quiet (session -> (file, cwd, monotonic of its last line))
        self.agent_activity: dict[str, tuple[str, str, float]] = {}
        self.watched: dict[str, Any] = {}  # root -> ObservedWatch
        self.observer = None
        self.ix: Indexer | None = None
        self.server = None
        self.stop_event = threading.Event()
        self.wake = threading.Event()
        self._mu = threading.Lock()
        self.dirty: dict[str, float] = {}  # path -> monotonic time of its first unhandled event
        self.scan_dirs: set[str] = set()
        self.uncommitted_since: float | None = None
        self.seen: dict[str, tuple[int, int]] = {}  # path -> (size, inode) when last read
        self.requests: "queue.Queue[_Request]" = queue.Queue()
        self.generation = 0
        self._search_lock = threading.Lock()
        self._searcher = None
        self._searcher_gen = -1
        self._vectors = None  # the semantic channel's store (recall.search.semantic), once it runs
        self._backlog = None
        self._semantic_busy = False
        self.semantic_status: dict | None = None  # `recall status`: vectors, waiting, or why off
        # vectors.db found damaged: set aside and being rebuilt (why, where it went, since when);
        # the hook finds by words until the job has embedded everything again
        self.semantic_rebuild: dict | None = None
        self.state = "starting"
        self.started = time.time()
        self.started_mono = time.monotonic()
        self.errors: collections.deque = collections.deque(maxlen=MAX_ERRORS)
        self.indexed = 0  # messages indexed by this process
        self.last_commit_mono = 0.0
        self.last_commit = 0.0
        self.commits = 0
        self.backfill_progress: dict | None = None
        self.priority: dict = {}  # what lower_priority did (shown in the status)
        self.last_backfill: dict | None = None
        self.peak_anon_mb = 0.0  # sampled at each status update
        self._status_cache: dict = {}
        self._last_status_write = 0.0
        self._last_counts = 0.0
        # when each job of JOBS last ran: one period from now, or at the loop's first turn
        self._job_last = {job.name: (float("-inf") if job.at_start else time.monotonic()) for job in JOBS}
        self._lock_fd: int | None = None
        self._live_waiting = False
        self.more_left = False  # the last read of a file stopped at its slice with more to read
        self.caught_up = False  # the backfill finished (not interrupted by a stop)
        self.native_due: float | None = None  # when to re-read Claude Code's memory files
        self.main_thread = threading.current_thread()
        self.unreadable: dict[str, str] = {}  # path -> why it could not be read (retried by rescans)
        self.storage_problem = ""  # why the last write failed, until one succeeds
        self.retry_at: float | None = None  # when to reopen the writer and read again
        self._retry_wait = RETRY_FIRST
        # history stored under older redaction rules is re-redacted a slice at a time between
        # the other work (recall.privacy.redaction_pass): set after a backfill, cleared when done
        self.redaction_due = False
        self.touches_due = False  # touches of history archived before they were recorded (once)
        self.redaction_progress: dict | None = None
        # the installed code this process runs (recall.core.code_version): when an install or
        # upgrade changes it, the service restarts itself on the new code (``exec_new_code``)
        from recall.core import code_version

        self.code_dirs = code_version.package_dirs()
        self.code_record = code_version.record_file()
        self.code = code_version.fingerprint(self.code_dirs, self.code_record)
        self._code_seen: tuple[str, float] | None = None  # a new fingerprint, and since when
        self.restart_requested = ""  # why the service stopped to restart itself ("" when it did not)

    # events (watchdog thread) -------------------------------------------------------------
    def mark_dirty(self, path: str) -> None:
        now = time.monotonic()
        with self._mu:
            self.dirty.setdefault(path, now)
        self.wake.set()

    def mark_native(self) -> None:
        """A memory file changed: re-read them shortly (a save often comes as several events)."""
        if self.native_due is None:
            self.native_due = time.monotonic() + NATIVE_DELAY
        self.wake.set()

    def sync_native(self) -> dict | None:
        """Index Claude Code's own memory files that changed (``indexer.native_memory``)."""
        self.native_due = None
        if self.ix is None:
            return None
        try:
            from indexer import native_memory

            out = native_memory.sync(
                self.ix, [r for r in self.roots if agent_sources.agent_of(r / "x") == agent_sources.DEFAULT]
            )
        except Exception as exc:  # never stops the service: the next rescan tries again
            self.error(f"Claude Code's memory files could not be indexed: {type(exc).__name__}: {exc}")
            return None
        said = [
            f"{counted(out[k], 'file')} {what}"
            for k, what in (("indexed", "re-indexed"), ("removed", "removed"))
            if out[k]
        ]
        if said:  # a pass that changed nothing says nothing (issue 44)
            self.log.info("Claude Code memory files: %s", ", ".join(said))
        return out

    def mark_scan(self, directory: str) -> None:
        with self._mu:
            self.scan_dirs.add(directory)
        self.wake.set()

    def _take_dirty(self) -> list[tuple[str, float]]:
        with self._mu:
            scan, self.scan_dirs = self.scan_dirs, set()
        found = [str(p) for d in sorted(scan) for p in discover([Path(d)])]
        now = time.monotonic()
        with self._mu:
            for p in found:
                self.dirty.setdefault(p, now)
            taken, self.dirty = self.dirty, {}
        if taken:
            first = min(taken.values())
            if self.uncommitted_since is None or first < self.uncommitted_since:
                self.uncommitted_since = first
        return sorted(taken.items())

    # errors -------------------------------------------------------------------------------
    def error(self, message: str) -> None:
        self.log.error(message)
        self.errors.append({"time": time.time(), "message": message})

    def _storage_failed(self, exc: StorageError) -> None:
        """A write of the index, archive or offsets failed (a full disk...): nothing of the
        batch was marked done (``Indexer.commit``). Stop reading until ``retry_at``, then
        reopen the writer and read everything not marked done again (``_recover``)."""
        message = str(exc)
        if message != self.storage_problem:
            self.error(message)
        self.storage_problem = message
        self.retry_at = time.monotonic() + self._retry_wait
        self._retry_wait = min(self._retry_wait * 2, RETRY_MAX)
        self.state = "retrying"

    def _index_lost(self) -> bool:
        """The index directory (or its schema file) was deleted under the running service:
        reopen now, which rebuilds it from the archive (see ``Indexer._check_identity``)."""
        if self.ix is None or not self.ix.index_lost():
            return False
        self.error(f"The index at {self.ix.index_path} was deleted: rebuilding it from the archive (nothing is lost).")
        self.retry_at = time.monotonic()
        return True

    def _recover(self) -> None:
        """Reopen the writer (its identity checked again: an index deleted meanwhile is
        rebuilt from the archive) and backfill what is not marked done."""
        self.retry_at = None
        self._drop_searcher()
        if self.ix is not None:
            try:
                self.ix.close(commit=False)
            except Exception as exc:  # the writer may be unusable: its lock goes with it
                self.log.warning("closing the writer after a failed write: %s", exc)
            self.ix = None
        self.ix = self._open_indexer()
        if self.ix is None:
            return
        self.seen.clear()
        self.state = "watching"
        self.backfill(self.roots)
        self._writing_works()

    def _writing_works(self) -> None:
        """After a backfill: a write problem that did not come back is over."""
        if self.retry_at is None and self.storage_problem:
            self.log.info("writing works again: every file not marked done was read again")
            self.storage_problem = ""
            self._retry_wait = RETRY_FIRST
            self._write_status(force=True)

    # requests from ops (server threads) ----------------------------------------------------
    def run_in_writer(self, fn: Callable[[Indexer], Any], timeout: float | None = 60.0, heavy: bool = False):
        """Run ``fn(indexer)`` on the writer thread and return its result."""
        if threading.current_thread() is self.main_thread:
            return fn(self.ix)
        if self.stop_event.is_set():
            raise RecallError("The recall service is stopping: try again in a moment.")
        req = _Request(fn, heavy)
        self.requests.put(req)
        self.wake.set()
        try:
            return req.future.result(timeout)
        except TimeoutError:
            raise RecallError("The recall service is busy (backfilling): try again in a minute.") from None

    def _run_requests(self, light_only: bool = False) -> None:
        if self.ix is None:
            return
        deferred = []
        while True:
            try:
                req = self.requests.get_nowait()
            except queue.Empty:
                break
            if light_only and req.heavy:
                deferred.append(req)
                continue
            if not req.future.set_running_or_notify_cancel():
                continue
            try:
                req.future.set_result(req.fn(self.ix))
            except BaseException as exc:  # handed to the waiting op
                req.future.set_exception(exc)
        for req in deferred:
            self.requests.put(req)

    def _fail_requests(self) -> None:
        while True:
            try:
                req = self.requests.get_nowait()
            except queue.Empty:
                return
            if req.future.set_running_or_notify_cancel():
                req.future.set_exception(RecallError("The recall service stopped: try again."))

    # the warm searcher (server threads) ---------------------------------------------------
    def searcher(self):
        from recall.search.searcher import Searcher

        with self._search_lock:
            if self.state == "rebuilding":
                raise RecallError("The service is rebuilding the index: searching in-process meanwhile.")
            if self._searcher is None:
                self._searcher = Searcher()
                self._searcher_gen = self.generation
            elif self._searcher_gen != self.generation:
                self._searcher.refresh()
                self._searcher_gen = self.generation
            return self._searcher

    # the semantic channel (recall.search.semantic) ------------------------------------------
    def _semantic_due(self) -> bool:
        """Nothing waits to be indexed (a backfill, a dirty file): words come first."""
        return (
            self.ix is not None
            and not self.backfill_progress
            and not self.dirty
            and not self.scan_dirs
            and not self._semantic_busy
        )

    def _semantic_kick(self) -> None:
        """Embed a slice of what is new, in a thread of its own at a low priority, while
        ``hook.semantic`` is on and the encoder is installed."""
        from recall.core import config
        from recall.prompt.settings import hook_settings
        from recall.search import semantic

        hook = hook_settings(config.load())
        if not semantic.enabled(hook):
            semantic.attach(None)
            why = "hook.semantic is false" if not hook.semantic else "the encoder is not installed"
            self.semantic_status = {"on": False, "why": why}
            return
        self._semantic_busy = True
        threading.Thread(target=self._semantic_slice, name="recall-semantic", daemon=True).start()

    def _semantic_store(self) -> None:
        """The store the job writes and the hook reads, opened once (its pages read once:
        ``VectorStore.check``). One found damaged, at that open, by the job or by a hook op
        (``VectorStore.damaged``), is set aside (``indexer.vectors.set_aside``: one log line)
        and a new one built by the job from the index (``semantic_rebuild``); so is one a
        forget deleted because it could not read it (``moved``)."""
        from indexer import vectors
        from recall.search import semantic

        store = self._vectors
        if store is not None and not store.damaged and not store.moved():
            return
        why = store.damaged if store is not None else None
        semantic.attach(None)
        aside = None
        if store is not None:
            store.close()
            self._vectors = None
            if why:
                aside = vectors.set_aside()
        fresh = None
        try:
            fresh = vectors.VectorStore()
            if store is None:  # the service's first open: every page read once
                fresh.check()
        except vectors.Damaged as exc:
            if fresh is not None:
                fresh.close()
            why, aside = str(exc), vectors.set_aside()
            fresh = vectors.VectorStore()
        self._vectors = fresh
        self._backlog = semantic.Backlog()
        if store is None and not why:
            return
        if why:
            where = f"set aside as {aside.name}" if aside is not None else "removed"
            self.log.warning(
                "semantic channel: vectors.db is damaged (%s): %s; rebuilding it in the background "
                "(prompts find by words meanwhile)",
                why[:200],
                where,
            )
        else:  # a forget that could not read it removed it (``indexer.vectors.forget_vectors``)
            why = "removed while the service had it open"
            self.log.warning("semantic channel: vectors.db was %s; rebuilding it in the background", why)
        self.semantic_rebuild = {"why": why[:200], "aside": aside.name if aside else None, "since": time.time()}

    def _semantic_slice(self) -> None:
        from indexer.vectors import Damaged
        from recall.search import semantic

        try:
            process.lower_priority(10)
            self._semantic_store()
            if self.semantic_rebuild is None:
                semantic.attach(self._vectors)
            n = semantic.embed_step(
                self.searcher(), self._vectors, self._backlog, semantic.projects_by_activity(), SEMANTIC_SLICE
            )
            if n:
                self.log.info("semantic channel: %d messages embedded, %d left", n, len(self._backlog.pending))
            # rebuilt: every project looked at under the store's epoch, and nothing left to embed
            if self.semantic_rebuild is not None and self._backlog.epoch is not None and not self._backlog.pending:
                self.log.info("semantic channel: vectors.db rebuilt (%d messages embedded)", self._vectors.count())
                self.semantic_rebuild = None
                semantic.attach(self._vectors)
            self.semantic_status = {"on": True, "vectors": self._vectors.count(), "waiting": len(self._backlog.pending)}
        except Damaged:  # said once when it is set aside, at the next turn (``_semantic_store``)
            semantic.attach(None)
        except Exception as exc:  # noqa: BLE001 - the lexical path does not depend on it
            self.log.warning("semantic channel: %s: %s", type(exc).__name__, str(exc)[:300])
        finally:
            self._semantic_busy = False

    def semantic_report(self) -> dict | None:
        """``semantic`` in the status: vectors and waiting, or why off, or being rebuilt."""
        sem = self.semantic_status
        store = self._vectors
        rebuild = self.semantic_rebuild
        if rebuild is None and store is not None and store.damaged:  # found by a hook op: set aside next turn
            rebuild = {"why": store.damaged[:200], "aside": None, "since": time.time()}
        if rebuild is None:
            return sem
        return {**(sem or {}), "on": True, "rebuilding": rebuild}

    def _drop_searcher(self) -> None:
        with self._search_lock:
            self._searcher = None

    # indexing (writer thread) -------------------------------------------------------------
    def _open_indexer(self, rebuild: bool = False) -> Indexer | None:
        waited = False
        while not self.stop_event.is_set():
            try:
                ix = Indexer(rebuild=rebuild, threads=WRITER_THREADS)
                ix.after_commit.append(self._committed)
                ix.listeners.append(self._note_agent_lines)
                attach_privacy(ix)
                return ix
            except IndexBusy as exc:
                if not waited:
                    self.log.warning("%s Waiting for it.", exc)
                    waited = True
                self.stop_event.wait(1.0)
            except StorageError as exc:  # a full disk at start: wait for space, keep answering
                if str(exc) != self.storage_problem:
                    self.error(str(exc))
                self.storage_problem = str(exc)
                self.stop_event.wait(self._retry_wait)
                self._retry_wait = min(self._retry_wait * 2, RETRY_MAX)
        return None

    def _index(self, path: str, budget: int | None = None) -> int:
        assert self.ix is not None
        self.more_left = False
        if self.retry_at is not None:  # writing failed: everything waits for the retry
            return 0
        p = Path(path)
        if self.agents_off and agent_sources.agent_of(p) in self.agents_off:
            return 0  # `recall sources NAME off`: its new sessions are not read
        try:
            st = p.stat()
            added = self.ix.index_file(p, budget=budget)
            self.more_left = self.ix.more_left()
        except FileNotFoundError:
            self.seen.pop(path, None)
            self.ix.forget_file(path)
            self.unreadable.pop(path_text(path), None)
            return 0
        except StorageError as exc:
            self._storage_failed(exc)
            return 0
        except NotRegularFile:
            if path_text(path) not in self.unreadable:
                self.unreadable[path_text(path)] = "not a regular file (a FIFO, socket or device): skipped"
                self.log.warning("%s: %s", path_text(path), self.unreadable[path_text(path)])
            self.seen[path] = (st.st_size, st.st_ino)  # looked at again only when it changes
            return 0
        except (OSError, UnicodeError, ValueError) as exc:
            # not marked seen: the next rescan tries again (a permission fixed, a disk back)
            self.seen.pop(path, None)
            why = read_error(exc)
            if self.unreadable.get(path_text(path)) != why:
                self.error(f"cannot read {path_text(path)}: {why} (retried every {RESCAN_INTERVAL:g} s)")
            self.unreadable[path_text(path)] = why
            return 0
        if self.unreadable.pop(path_text(path), None) is not None:
            self.log.info("%s is readable again", path_text(path))
        self.seen[path] = (st.st_size, st.st_ino)
        self.indexed += added
        return added

    def _pending(self) -> bool:
        return self.ix is not None and self.ix.has_pending()

    def _committed(self) -> None:
        """Called by the Indexer after every commit (ours, a backfill's, an op's)."""
        self.generation += 1
        self.commits += 1
        self.last_commit = time.time()

    def _commit(self) -> bool:
        assert self.ix is not None
        try:
            committed = self.ix.commit()
        except StorageError as exc:  # nothing of the batch marked done: read again after the retry
            self._storage_failed(exc)
            return False
        except Exception as exc:  # a failed commit: keep running, the offsets were not saved
            self.error(f"commit failed: {type(exc).__name__}: {exc}")
            self.last_commit_mono = time.monotonic() + 1.0  # retry, not in a tight loop
            return False
        self.last_commit_mono = time.monotonic()
        with self._mu:
            self.uncommitted_since = min(self.dirty.values()) if self.dirty else None
        return committed

    def _drain(self) -> int:
        """Read every dirty file, each at most READ_SLICE_BYTES at a time: a file with more
        left is marked dirty again (keeping its first event's time) and read on the next
        round, after the others."""
        added = 0
        for path, first in self._take_dirty():
            added += self._index(path, budget=READ_SLICE_BYTES)
            if self.more_left:
                with self._mu:
                    self.dirty.setdefault(path, first)
                self.wake.set()
        return added

    def _maybe_commit(self, interval: float) -> None:
        if self._pending() and time.monotonic() - self.last_commit_mono >= interval:
            self._commit()
            self._write_status()

    def _between_files(self) -> None:
        """During a backfill: keep live files fresh (a commit at most every
        BACKFILL_COMMIT_INTERVAL when they gained lines) and answer light requests."""
        self._run_requests(light_only=True)
        if self.dirty or self.scan_dirs:
            if self._drain():
                self._live_waiting = True
        if self._live_waiting and time.monotonic() - self.last_commit_mono >= BACKFILL_COMMIT_INTERVAL:
            self._commit()
            self._live_waiting = False
        self._write_status()  # every second: the progress `recall status` and a search show

    def backfill(self, roots: list[Path]) -> Summary:
        """Index everything not indexed yet below ``roots`` (after a rebuild, the archive
        first), staying responsive to live writes and requests."""
        assert self.ix is not None
        ix = self.ix
        t0 = time.perf_counter()
        summary = Summary(rebuilt=ix.rebuilt)
        indexed_before = self.indexed
        prev_state = self.state
        self.state = "backfilling"
        ix.begin_backfill()
        # the backfill holds the GIL between its native calls; a search thread waiting for it
        # gets it within this interval (Python's default, 5 ms, adds up over a search's handoffs)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(BACKFILL_SWITCH_INTERVAL)
        try:
            if not self._replay_archive(summary):
                return summary
            self._backfill_files(roots, summary, indexed_before)
        except StorageError as exc:  # read again from what is marked done, at the retry
            self._storage_failed(exc)
        finally:
            sys.setswitchinterval(switch)
            ix.end_backfill()
            self.backfill_progress = None
            self.state = (
                "retrying"
                if self.retry_at is not None
                else prev_state
                if prev_state not in ("starting", "backfilling", "retrying")
                else "watching"
            )
        summary.seconds = time.perf_counter() - t0
        process.trim_memory()
        self.last_backfill = dict(summary.as_dict(), finished=time.time(), complete=self.caught_up)
        self.log.info(
            "backfill done: %d messages from %d files in %.1f s%s",
            summary.messages,
            summary.changed,
            summary.seconds,
            f", {summary.replayed} replayed from the archive" if summary.replayed else "",
        )
        self._write_status(force=True)
        return summary

    def _replay_archive(self, summary: Summary) -> bool:
        """After a rebuild: the archive replayed into the new index first. False when a stop or a
        failed write ended it (the backfill stops there)."""
        ix = self.ix
        if not ix.needs_replay:
            return True
        if summary.rebuilt:
            self.log.warning("index rebuilt: %s", summary.rebuilt)
        self.log.info("replaying the archive into the rebuilt index")
        for n in ix.replay_batches():
            summary.replayed += n
            self.backfill_progress = {"replayed": summary.replayed}
            self._between_files()
            if self.stop_event.is_set() or self.retry_at is not None:
                return False
        return True

    def _backfill_files(self, roots: list[Path], summary: Summary, indexed_before: int) -> None:
        """The files below ``roots`` not indexed yet, the most recently modified first, with live
        files and requests between them; then the final commit and Claude Code's memory files."""
        ix = self.ix
        files, todo = ix.plan(roots)  # the most recently modified first
        summary.files = len(files)
        for path in files:
            try:
                st = path.stat()
                self.seen.setdefault(str(path), (st.st_size, st.st_ino))
            except OSError:
                pass
        prog = Progress(files_total=len(todo), bytes_total=sum(max(n, 0) for _, n in todo))
        self.backfill_progress = prog.as_dict()
        if todo:
            self.log.info("backfilling %d files (%.1f MB), newest first", len(todo), prog.bytes_total / 1e6)
        for p, why in ix.not_regular.items():
            if p not in self.unreadable:
                self.log.warning("%s: %s", p, why)
                self.unreadable[p] = why
        for path, nbytes in todo:
            if self.stop_event.is_set() or self.retry_at is not None:
                break
            self._backfill_file(path, summary, prog, indexed_before)
            summary.changed += 1
            prog.files_done += 1
            prog.bytes_done += max(nbytes, 0)
            self.backfill_progress = prog.as_dict()
        if not self.stop_event.is_set() and self.retry_at is None:
            ix.forget_replayed()
        self._commit()
        if not self.stop_event.is_set():
            self.sync_native()
        summary.messages = self.indexed - indexed_before
        summary.bad_lines = ix.bad_lines[:20]
        self.caught_up = not self.stop_event.is_set() and self.retry_at is None

    def _backfill_file(self, path: Path, summary: Summary, prog: Progress, indexed_before: int) -> None:
        """One file of the backfill, a slice at a time (a huge file does not hold up live files
        and requests, answered between slices); the newest session is searchable right away."""
        ix = self.ix
        with self._mu:
            self.dirty.pop(str(path), None)
        while True:
            self._index(str(path), budget=READ_SLICE_BYTES)
            more = self.more_left
            summary.messages = self.indexed - indexed_before  # live lines drained meanwhile too
            prog.messages = summary.messages
            self.backfill_progress = prog.as_dict()
            if prog.files_done == 0 and not more:
                self._commit()  # the newest session searchable right away
            elif ix.commit_due():
                self._commit()
            self._between_files()
            if not more or self.stop_event.is_set():
                break

    def _redaction_step(self) -> None:
        """One slice (~``indexer.reredact_archive.STEP_SECONDS``) of the re-redaction pass, on the writer
        thread between drains: searches and the hook keep being answered, live lines keep being
        indexed, and a kill -9 only repeats the slice under way."""
        if not self.redaction_due or self.ix is None or self.retry_at is not None:
            return
        try:
            outcome = redaction_pass.step(self.ix)
        except StorageError as exc:  # resumed from its last committed slice after the retry
            self._storage_failed(exc)
            return
        except Exception as exc:  # noqa: BLE001 - never the service; `recall doctor` still warns
            self.error(f"re-redaction pass stopped: {type(exc).__name__}: {exc} (it resumes at the next start)")
            self.redaction_due = False
            self.redaction_progress = None
            return
        if outcome == "running":
            if self.redaction_progress is None:
                self.log.info("re-redacting history stored under older redaction rules (in the background)")
            self.redaction_progress = self.ix.redaction_progress()
            return
        self.redaction_due = False
        self.redaction_progress = None
        if outcome == "done":
            self._write_status(force=True)

    def _prune_cache(self) -> None:
        """Expired synthesis-cache entries are deleted (hourly), not only skipped."""
        try:
            from recall.llm.synthesis import prune

            gone = prune()
        except Exception as exc:  # noqa: BLE001 - the next hour tries again
            self.log.warning("the synthesis cache was not pruned: %s", exc)
            return
        if gone:
            self.log.info("synthesis cache: %d expired entries deleted", gone)
        from recall.prompt.turns import prune as prune_turns

        prune_turns()  # the marks of conversations older than two days (never raises)

    def _touches_step(self) -> None:
        """One slice of recording the touches of history archived before recall kept them
        (``Indexer.backfill_touches``): once per home, on the writer thread between drains."""
        if not self.touches_due or self.ix is None or self.retry_at is not None:
            return
        try:
            self.touches_due = not self.ix.backfill_touches(budget=0.2)
        except Exception as exc:  # noqa: BLE001 - never the service: marks then rest on file times
            self.error(f"recording the files past sessions touched stopped: {type(exc).__name__}: {exc}")
            self.touches_due = False

    def apply_pending_memory(self) -> int:
        """Memory-document changes queued while another process held the writer
        (``recall.memory.index_docs``): apply and commit them."""
        try:
            from recall.memory import index_docs as memory_index
        except Exception:  # the memory feature is optional here
            return 0
        try:
            if not memory_index.pending_path().exists():
                return 0
            n = memory_index.apply_pending(self.ix)
        except Exception as exc:
            self.error(f"queued memory documents could not be applied: {type(exc).__name__}: {exc}")
            return 0
        if n:
            self._commit()
        return n

    def rescan(self) -> int:
        """Mark every file whose size or inode changed since it was read (missed events)."""
        marked = 0
        now = time.monotonic()
        current = set()
        for path in discover(self.roots):
            key = str(path)
            current.add(key)
            try:
                st = path.stat()
            except OSError:
                continue
            if self.seen.get(key) != (st.st_size, st.st_ino):
                with self._mu:
                    self.dirty.setdefault(key, now)
                marked += 1
        for gone in [k for k in self.seen if k not in current]:
            self.seen.pop(gone, None)
            if self.ix is not None:
                self.ix.forget_file(gone)
        return marked

    # watching -----------------------------------------------------------------------------
    def _start_observer(self) -> None:
        try:
            from watchdog.observers import Observer

            self.observer = Observer(timeout=0.2)
            self.observer.daemon = True
            self.observer.start()
        except Exception as exc:
            self.observer = None
            self.error(f"file watching unavailable ({exc}); rescanning every 2 s instead")
        self._watch_roots(initial=True)

    def _watch_roots(self, initial: bool = False) -> None:
        for root in self.roots:
            key = str(root)
            if key in self.watched or not root.is_dir():
                continue
            if self.observer is None:
                self.watched[key] = None
                continue
            try:
                self.watched[key] = self.observer.schedule(
                    _event_handler(self), key, recursive=True, event_filter=_event_filter()
                )
                self.log.info("watching %s", key)
            except Exception as exc:
                self.watched[key] = None
                self.error(
                    f"cannot watch {key} ({exc}); it is rescanned every {RESCAN_INTERVAL:g} s "
                    "(raise fs.inotify.max_user_watches for instant updates)"
                )
            if not initial:  # a root that appeared later: its files predate the watch
                self.mark_scan(key)

    def _note_agent_lines(self, messages: list) -> None:
        """A listener of the writer: the other agents' sessions written in the last hour (not a
        backfill of old ones: `recall memories --backfill` is for those) are due a capture."""
        recent = time.time() - AGENT_LIVE_SECONDS
        for m in messages:
            if m.agent != agent_sources.DEFAULT and m.timestamp >= recent:
                self.agent_activity[m.session_id] = (m.source, m.cwd, time.monotonic())

    def queue_agent_captures(self, now: float | None = None) -> list[str]:
        """Queue the memory capture (extraction and summary: a session end's) of each other
        agent's session quiet for ``memory.idle_seconds``; returns their ids."""
        if not self.agent_activity:
            return []
        from recall.core import config

        cfg = config.load()
        from recall.core.settings import MemorySettings

        mem = MemorySettings.from_config(cfg)
        idle = mem.idle_seconds
        now = time.monotonic() if now is None else now
        due = [sid for sid, (_f, _c, t) in self.agent_activity.items() if now - t >= idle]
        if not due:
            return []
        queued = []
        from recall.memory import queue as memory_queue
        from recall.memory.worker import has_key

        usable = mem.enabled and has_key()
        for sid in due:
            source, cwd, _t = self.agent_activity.pop(sid)
            if usable:
                memory_queue.enqueue("session-end", sid, source, cwd)
                queued.append(sid)
        if queued:
            from recall.service.ops import memory as memory_ops

            memory_ops.wake()
        return queued

    def refresh_sources(self) -> None:
        """Follow ``recall sources NAME on|off``: a source turned on has its folders watched and
        read (the rescan finds its files), one turned off has its new lines left unread."""
        try:
            on = set(agent_sources.enabled())
        except Exception:  # noqa: BLE001 - a damaged config: keep what is in effect
            return
        self.agents_off = set(agent_sources.NAMES) - on
        known = {str(r) for r in self.roots}
        for _name, root in agent_sources.agent_roots(sorted(on)):
            if str(root) not in known and root.is_dir():  # turned on, or installed since the start
                self.roots.append(root)
                known.add(str(root))
                self.mark_scan(str(root))

    def add_roots(self, sources: list[Path]) -> None:
        for root in agent_sources.all_roots(sources):
            if str(root) not in {str(r) for r in self.roots}:
                self.roots.append(root)
        self._watch_roots(initial=True)  # the backfill that follows reads their files

    # status -------------------------------------------------------------------------------
    def _counts(self) -> dict:
        out = dict(self._status_cache.get("counts") or {})
        try:
            import tantivy

            s = self.searcher()
            searcher = s.index.searcher()
            for dt, name in (("message", "messages"), ("session", "sessions_indexed"), ("memory", "memories")):
                q = tantivy.Query.term_query(s.schema, "doctype", dt, index_option="basic")
                out[name] = searcher.search(q, 1, count=True).count
        except Exception:
            pass
        if self.ix is not None:
            try:
                out.update(self.ix.counts())
            except Exception:
                pass
        return out

    def status(self) -> dict:
        """The status dict (also the "status" op's result); live fields recomputed."""
        now = time.time()
        mono = time.monotonic()
        with self._mu:
            firsts = list(self.dirty.values())
            backlog = len(self.dirty)
        if self.uncommitted_since is not None:
            firsts.append(self.uncommitted_since)
        if self._pending() and not firsts and self.last_commit_mono:
            firsts.append(self.last_commit_mono)
        lag = round(mono - min(firsts), 3) if firsts else 0.0
        rss, peak, anon = process.rss_mb()
        if anon is not None:
            self.peak_anon_mb = max(self.peak_anon_mb, anon)
        st = dict(self._status_cache)
        st.update(
            {
                "running": self.state != "stopped",
                "pid": os.getpid(),
                "version": __version__,
                "code": self.code,
                "protocol": client.PROTOCOL,
                "home": str(self.home),
                "socket": client.address(),
                "state": self.state,
                "started": self.started,
                "uptime": round(mono - self.started_mono, 1),
                "heartbeat": now,
                "roots": [
                    {
                        "path": str(r),
                        "watched": str(r) in self.watched and self.watched[str(r)] is not None,
                        "exists": r.is_dir(),
                    }
                    for r in self.roots
                ],
                "commits": self.commits,
                "last_commit": self.last_commit or None,
                "lag_seconds": lag,
                "backlog_files": backlog,
                "indexed_since_start": self.indexed,
                "backfill": self.backfill_progress,
                "last_backfill": self.last_backfill,
                "redaction": self.redaction_progress,
                "backfill_priority": self.priority or None,
                "errors": list(self.errors),
                "write_error": self.storage_problem or None,
                "unreadable_files": dict(list(self.unreadable.items())[:20]),
                "rss_mb": rss,
                "peak_rss_mb": peak,
                "anon_mb": anon,
                "peak_anon_mb": self.peak_anon_mb or None,
                "socket_requests": getattr(self.server, "requests", 0),
                "semantic": self.semantic_report(),
            }
        )
        return st

    def _write_status(self, force: bool = False, periodic: bool = False) -> None:
        import json

        now = time.monotonic()
        due = now - self._last_status_write >= (HEARTBEAT_INTERVAL if periodic else STATUS_INTERVAL)
        if not (force or due):
            return
        if force or now - self._last_counts >= STATUS_INTERVAL:
            self._status_cache["counts"] = self._counts()
            self._last_counts = now
        st = self.status()
        try:
            paths.atomic_write(status_path(), json.dumps(st, indent=1))
        except OSError as exc:
            self.log.error("cannot write %s: %s", status_path(), exc)
        self._last_status_write = now

    # lifecycle ----------------------------------------------------------------------------
    def _on_signal(self, signum, _frame) -> None:
        self.log.info("received %s: stopping", signal.Signals(signum).name)
        self.stop_event.set()
        self.wake.set()

    def stop(self) -> None:
        self.stop_event.set()
        self.wake.set()

    def run(self) -> int:
        """Run until SIGTERM/SIGINT (or ``stop()``). Raises AlreadyRunning when another
        service holds this RECALL_HOME."""
        from recall.service.registry import start_modules
        from recall.service.socket_server import SocketServer

        self._lock_fd = acquire_lock()
        process.limit_malloc_arenas()  # before our threads start: see recall.core.process
        try:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, self._on_signal)
                signal.signal(signal.SIGINT, self._on_signal)
            client.LOCAL_ONLY = True  # code running in here never calls the service
            registry.set_service(self)
            for name in registry.load_modules(self.log):
                self.error(f"op module {name} failed to import (see the log)")
            for name in start_modules(self, self.log):  # the memory worker, the team sync
                self.error(f"op module {name} failed to start (see the log)")
            self.log.info("recall %s serving %s (pid %d)", __version__, self.home, os.getpid())
            self.server = SocketServer(self.log)
            try:
                self.server.start()
            except client.Untrusted as exc:
                self.error(f"not listening: {exc}; callers search in-process")
                self.server = None
            except OSError as exc:
                self.error(f"cannot listen on {self.server.address} ({exc}); callers search in-process")
                self.server = None
            self._write_status(force=True)
            # the writer thread and the indexing threads Tantivy starts for it run the backfill at a
            # lower CPU and I/O priority; the socket threads (started above) answer at the normal one
            self.priority = process.lower_priority(BACKFILL_NICE)
            self.ix = self._open_indexer()
            if self.ix is None:
                return 0
            self._start_observer()
            self.backfill(self.roots)
            self._writing_works()
            process.restore_priority()  # live lines at the normal priority again, where the OS lets us
            self.apply_pending_memory()
            self.redaction_due = True  # a no-op when stored history is current
            self.touches_due = self.ix.touches_pending()
            self._loop()
            return 0
        finally:
            self._shutdown()

    def _loop(self) -> None:
        while not self.stop_event.is_set():
            if self.retry_at is not None:  # a write failed: wait, then reopen and read again
                self._run_requests()
                self._write_status(periodic=True)
                wait = self.retry_at - time.monotonic()
                if wait > 0:
                    self.stop_event.wait(min(wait, 0.5))
                    continue
                self._recover()
                continue
            if not self._run_jobs():
                continue
            # sleep until the next thing to do: a commit falling due, or a tick
            if self.redaction_due or self.touches_due:
                self.stop_event.wait(REDACTION_PAUSE)  # the pass goes on, live lines first
            elif self._pending():
                due_in = COMMIT_INTERVAL - (time.monotonic() - self.last_commit_mono)
                if due_in > 0:
                    self.stop_event.wait(min(due_in, TICK))
            else:
                self.wake.wait(min(HEARTBEAT_INTERVAL, self._rescan_every()))
                self.wake.clear()
                # batch events arriving together: a short pause before draining
                if not self.stop_event.is_set():
                    self.stop_event.wait(min(TICK, 0.05))

    def _run_jobs(self) -> bool:
        """One turn over ``JOBS``, in order: each job that is due and whose condition holds runs.
        False when one of them ended the turn (the service stops, or the index must be reopened)."""
        for job in JOBS:
            now = time.monotonic()
            if now - self._job_last[job.name] < job.every(self) or not job.when(self):
                continue
            self._job_last[job.name] = now
            if job.run(self) and job.ends_turn:
                return False
        return True

    def _rescan_every(self) -> float:
        return RESCAN_INTERVAL if self.observer is not None else min(RESCAN_INTERVAL, 2.0)

    def _rescan_and_read(self) -> None:
        """The safety net for missed events: read what changed, and Claude Code's memory files."""
        self.rescan()
        if self.dirty:
            self._drain()
        self.sync_native()

    def _native_due(self) -> bool:
        return self.native_due is not None and time.monotonic() >= self.native_due

    def _queue_agent_captures(self) -> None:
        try:
            self.queue_agent_captures()
        except Exception as exc:  # noqa: BLE001 - memories must never stop the indexing
            self.error(f"queueing another agent's session for memories failed: {type(exc).__name__}: {exc}")

    def _stop_if_uninstalled(self) -> bool:
        if not uninstalled():
            return False
        self.log.info("recall was uninstalled (%s): stopping", sys.executable)
        if os.environ.get("RECALL_PLUGIN_DATA"):  # the plugin's `recall` link goes with it
            # (imported with this module: an uninstall deleted the runtime's files)
            if plugin_runtime.remove_command_link(Path(os.environ["RECALL_PLUGIN_DATA"])):
                self.log.info("removed the plugin's link to its `recall` command")
        self.stop_event.set()
        return True

    def _code_changed(self) -> bool:
        """Whether the installed code changed under this process and the new code is ready:
        the same new fingerprint twice, ``CODE_SETTLE`` seconds apart (an install in progress
        is not restarted into), and a fresh interpreter imports it. Then the service stops to
        restart itself (``restart_requested``)."""
        from recall.core import code_version

        now_fp = code_version.fingerprint(self.code_dirs, self.code_record)
        if now_fp == self.code:
            self._code_seen = None
            return False
        if self._code_seen is None or self._code_seen[0] != now_fp:
            self._code_seen = (now_fp, time.monotonic())
            self.log.info("the installed code changed under the service: restarting once it settles")
            return False
        if self._code_seen[1] < 0:
            return False  # this new code did not import: wait for the next change (or a restart by hand)
        if time.monotonic() - self._code_seen[1] < CODE_SETTLE:
            return False
        problem = new_code_problem()
        if problem:
            self.error(
                f"the installed code changed, but the new code does not start ({problem}); the "
                "service keeps running the old code: reinstall recall, then `recall service restart`"
            )
            self._code_seen = (now_fp, -1.0)  # said once; checked again when the code changes again
            return False
        self.restart_requested = "the installed code changed"
        self.log.info("the installed code changed: stopping to restart on the new code")
        self.stop_event.set()
        return True

    def exec_new_code(self) -> None:
        """Replace this process with a fresh ``recall serve`` on the installed code (same pid,
        same arguments, so systemd, launchd or a shell still see their service). Called after
        ``run()`` returned (the final commit made, the socket and the lock released); the
        memory worker thread first finishes the session it is on, whatever is still queued
        stays on disk for the new process."""
        from recall.service.ops import memory as memory_ops

        memory_ops.join(MEMORY_JOIN_SECONDS)
        argv = (
            [sys.executable, *sys.orig_argv[1:]]
            if getattr(sys, "orig_argv", None)
            else [sys.executable, "-m", "recall.entry", *sys.argv[1:]]
        )
        self.log.info("restarting: %s", " ".join(argv))
        for h in logging.getLogger().handlers + logging.getLogger("recall").handlers:
            try:
                h.flush()
            except Exception:  # noqa: BLE001
                pass
        try:
            os.execv(sys.executable, argv)
        except OSError as exc:  # the interpreter is gone (recall uninstalled): the manager decides
            self.log.error("could not restart on the new code (%s): exiting", exc)
            raise SystemExit(75) from None

    def _shutdown(self) -> None:
        self.stop_event.set()
        if self.observer is not None:
            try:
                self.observer.stop()
                self.observer.join(timeout=5.0)
            except Exception:
                pass
        if self.ix is not None:
            try:
                self._run_requests(light_only=True)
                if self.caught_up:
                    self.rescan()  # lines whose events were still queued in the stopped watcher
                self._drain()
                self._commit()
                self.ix.close(commit=True)
                self.log.info("final commit done; %d messages indexed since start", self.indexed)
            except Exception as exc:
                self.error(f"final commit failed: {type(exc).__name__}: {exc}")
            self.ix = None
        self._fail_requests()
        if self.server is not None:
            self.server.stop()
        from recall.service.registry import stop_modules

        stop_modules()  # the page of `recall ui`, when it was asked for
        self.state = "stopped"
        try:
            st = self.status()
            st["running"] = False
            st["stopped"] = time.time()
            import json

            paths.atomic_write(status_path(), json.dumps(st, indent=1))
        except OSError:
            pass
        registry.set_service(None)
        process.release_pid_lock(self._lock_fd)
        self._lock_fd = None

    # writer-side operations used by ops ---------------------------------------------------
    def index_request(self, sources: list[Path], rebuild: bool) -> dict:
        if self.retry_at is not None:  # `recall index` must not say "nothing new" meanwhile
            raise StorageError(self.storage_problem)
        if sources:
            self.add_roots(sources)
        roots = self.roots
        if rebuild:
            self.state = "rebuilding"
            self._drop_searcher()
            self.ix.close(commit=True)
            self.ix = None
            self.seen.clear()
            try:
                self.ix = self._open_indexer(rebuild=True)
            finally:
                self.state = "watching"
            if self.ix is None:
                raise RecallError("The service stopped during the rebuild: run `recall index --rebuild` again.")
            self.caught_up = False
        summary = self.backfill(roots)
        if self.retry_at is not None:
            raise StorageError(self.storage_problem)
        self.redaction_due = True  # a rebuild may have replayed an archive of older rules
        return summary.as_dict()


# the loop's background jobs -------------------------------------------------------------------
def _every_turn(_svc: Service) -> float:
    return 0.0


def _heartbeat(_svc: Service) -> float:
    return HEARTBEAT_INTERVAL


def _always(_svc: Service) -> bool:
    return True


@dataclass(frozen=True)
class Job:
    """Every ``every(service)`` seconds (0: every turn; read each turn, so the environment and
    tests tune it), ``run(service)`` when ``when(service)`` holds. The first run is one period
    after the service started, or at the loop's first turn (``at_start``). When ``ends_turn``,
    a true result of ``run`` ends that turn of the loop (the service stops, or the index must
    be reopened first)."""

    name: str
    every: Callable[[Service], float]
    run: Callable[[Service], Any]
    when: Callable[[Service], bool] = _always
    at_start: bool = False
    ends_turn: bool = False


#: What the service's loop does, in order, on each turn between two sleeps (the writer thread;
#: the backfill and a failed write's retry run before it, ``Service.run`` and ``_loop``).
JOBS: tuple[Job, ...] = (
    Job("ops' writes", _every_turn, Service._run_requests),
    Job("read dirty files", _every_turn, Service._drain, when=lambda s: bool(s.dirty or s.scan_dirs)),
    Job("rescan the roots", Service._rescan_every, Service._rescan_and_read),
    Job("Claude Code's memory files", _every_turn, Service.sync_native, when=Service._native_due),
    Job(
        "watch roots that appeared",
        lambda s: ROOT_CHECK_INTERVAL,
        Service._watch_roots,
        when=lambda s: len(s.watched) < len(s.roots),
        at_start=True,
    ),
    Job("follow `recall sources`", _heartbeat, Service.refresh_sources),
    Job("other agents' quiet sessions", _heartbeat, Service._queue_agent_captures),
    Job("stop once uninstalled", _heartbeat, Service._stop_if_uninstalled, ends_turn=True),
    Job("rebuild a deleted index", _heartbeat, Service._index_lost, ends_turn=True),
    Job("queued memory documents", _heartbeat, Service.apply_pending_memory),
    Job("prune the synthesis cache", lambda s: CACHE_PRUNE_INTERVAL, Service._prune_cache, at_start=True),
    Job("new index files 0600", _heartbeat, lambda s: s.ix.secure_new_files(), when=lambda s: s.ix is not None),
    Job("restart on new code", lambda s: CODE_CHECK_INTERVAL, Service._code_changed, ends_turn=True),
    Job("re-redaction slice", _every_turn, Service._redaction_step, when=lambda s: s.redaction_due),
    Job("touches slice", _every_turn, Service._touches_step, when=lambda s: s.touches_due),
    Job("semantic vectors slice", _heartbeat, Service._semantic_kick, when=Service._semantic_due),
    Job("commit", _every_turn, lambda s: s._maybe_commit(COMMIT_INTERVAL)),
    Job("status file", _every_turn, lambda s: s._write_status(periodic=True)),
)
