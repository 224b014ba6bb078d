"""Writing the index: transcript files -> parsed, redacted messages -> Tantivy documents.

``Indexer`` owns the only index writer of a ``RECALL_HOME`` (Tantivy allows one per index
across processes) and the offsets database. ``recall index`` and the background service
both drive it: ``index_file`` reads whatever a file gained since its saved byte offset,
``commit`` makes those documents visible and only then saves the offsets.

Every message indexed is also appended to the durable archive (``indexer.archive``)
before the commit that holds it, and its document keeps the position of its line there in
place of its text (read back for the hits shown). A rebuild (``--rebuild``, a schema
upgrade) replays the archive and then re-reads the live transcripts: sessions whose
transcript Claude Code deleted are never lost. Memory documents (doctype "memory", written by
``upsert_memory_docs``) are logged in the archive too and replayed the same way.
``forget_session`` / ``forget_project`` delete from the index and the archive and leave
a tombstone so a rebuild does not bring the messages back.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import stat
import time
from array import array
from bisect import bisect_left
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import tantivy

from indexer import sources
from indexer.archive import Archive
from indexer.documents import (
    check_memory_doc,
    memory_document,
    message_document,
    message_from_document,
    session_document,
)
from indexer.ledger import Gate, admit
from indexer.message import Message
from indexer.schema import IndexCorrupt, SchemaMismatch, assign_index_id, drop_index, index_exists, index_id, open_index
from indexer.state import HEAD_BYTES, FileState, SessionInfo, StateDB, fingerprint, fingerprint_length, tail_fingerprint
from indexer.transcripts import NotRegularFile, path_text
from recall.core import paths, process
from recall.core.errors import IndexBusy, StorageError, is_disk_full, storage_error

# Tantivy's indexing memory budget, shared by its threads. Peak RSS of the service's 1M-message
# backfill (same session): 64 MB 301 and 268 MB, 48 MB 254 and 253 MB, 32 MB 317 MB (more
# segments, more merging); CPU-seconds within the noise. With 128 MB, `recall index` peaked
# at 342 MB against 281 at 64. A smaller budget leaves more segments (13-14 against 6 at 1M),
# which costs search ~0.3-0.6 ms. One indexing thread instead of two peaked higher.
WRITER_HEAP_MB = 48


def writer_heap() -> int:
    """The writer's memory budget in bytes (``RECALL_WRITER_HEAP_MB`` overrides it; at
    least 32 MB: Tantivy wants 15 MB per indexing thread)."""
    try:
        return max(32, int(os.environ.get("RECALL_WRITER_HEAP_MB", WRITER_HEAP_MB))) * 1_000_000
    except ValueError:
        return WRITER_HEAP_MB * 1_000_000


COMMIT_EVERY = 100_000  # messages between commits during a backfill
# During a backfill the messages, documents and parse state are freed by reference counting;
# the cycle collector at Python's default (700, 10, 10) found little but scanned the growing
# heap over and over: 10-20% of a 1M-message backfill's CPU, more when the newest files come
# first (benchmarks.catchup.order_timing). Collected 140× less often while a backfill runs.
BACKFILL_GC_THRESHOLD = (100_000, 50, 1_000)
# During a backfill, progress is also committed by time: right after the first (newest) file,
# then every PROGRESS_COMMIT_MIN..MAX seconds (a quarter of the time the backfill has run), so
# the newest sessions are searchable within seconds and an interrupted backfill resumes where
# its last commit left it instead of from zero: about 20 commits over a 100-second backfill.
PROGRESS_COMMIT_MIN = 1.0
PROGRESS_COMMIT_MAX = 30.0
PARTIAL_SCAN_CHUNK = 1 << 20  # a partial last line: new bytes scanned for its newline this much at a time
MAX_SESSION_FILES = 200
ADDED_BITS = 1 << 26  # a 8 MB bitmap of the keys added since an empty index was opened
MAX_CONTEXTS = 256  # files whose parsing state stays in memory
MAX_CACHED_SESSIONS = 2_000  # session facts kept in memory between commits (the rest are in state.db)
TOUCHES_META = "touches"  # state.db meta: "done" once the touches cover the archive (else the last file read)


def _json_loads(raw: bytes):
    import json

    try:
        import orjson

        return orjson.loads(raw)
    except ImportError:  # pragma: no cover
        return json.loads(raw)


@dataclass
class Summary:
    files: int = 0  # transcript files seen
    changed: int = 0  # files that had new lines
    messages: int = 0  # messages indexed
    skipped: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    rebuilt: str = ""  # why the index was rebuilt, if it was
    errors: list[str] = field(default_factory=list)
    replayed: int = 0  # messages restored from the archive (rebuilds)
    bad_lines: list[str] = field(default_factory=list)  # "<file> line N: why" (the first ones)

    @property
    def nothing_new(self) -> bool:
        return self.changed == 0 and self.replayed == 0

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "changed": self.changed,
            "messages": self.messages,
            "skipped": dict(self.skipped),
            "seconds": round(self.seconds, 3),
            "rebuilt": self.rebuilt,
            "errors": self.errors,
            "replayed": self.replayed,
            "bad_lines": self.bad_lines,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Summary":
        return cls(
            files=int(d.get("files") or 0),
            changed=int(d.get("changed") or 0),
            messages=int(d.get("messages") or 0),
            skipped=Counter(d.get("skipped") or {}),
            seconds=float(d.get("seconds") or 0.0),
            rebuilt=str(d.get("rebuilt") or ""),
            errors=list(d.get("errors") or []),
            replayed=int(d.get("replayed") or 0),
            bad_lines=list(d.get("bad_lines") or []),
        )


@dataclass
class Progress:
    """How far a backfill is: files and bytes (newest file first) and messages done, the rate and
    the time left (from the bytes read so far). ``recall index``'s bar and ``recall status``."""

    files_total: int = 0
    files_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    messages: int = 0
    started: float = field(default_factory=time.monotonic)

    def as_dict(self) -> dict:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        left = max(self.bytes_total - self.bytes_done, 0)
        eta = round(left * elapsed / self.bytes_done, 1) if self.bytes_done else None
        return {
            "files_done": self.files_done,
            "files_total": self.files_total,
            "bytes_done": self.bytes_done,
            "bytes_total": self.bytes_total,
            "messages": self.messages,
            "rate": round(self.messages / elapsed),
            "elapsed_seconds": round(elapsed, 1),
            "eta_seconds": eta,
        }


def _replay_key(m: Message, pos: int) -> int:
    # Python's hash is salted per process: fine, the keys never leave the process
    return hash((m.uuid, m.session_id, m.project, pos))


def discover(roots: Iterable[Path]) -> list[Path]:
    """Every session file below the roots, sorted for a stable order: ``*.jsonl`` in Claude
    Code's (sessions, subagents), each other agent's own names in its folders (``indexer.sources``)."""
    return sources.discover(roots)


TRIM_EVERY_BYTES = 16 << 20


def _lock_path() -> Path:
    return paths.recall_home() / "writer.lock"


def acquire_writer_lock() -> int:
    """Hold ``$RECALL_HOME/writer.lock`` for as long as this process writes the index;
    raises IndexBusy naming the holder's pid."""
    fd, holder = process.hold_pid_lock(_lock_path())
    if fd is None:
        raise IndexBusy(f"pid {holder}" if holder else "")
    return fd


def seed_archive(archive: Archive, index_path: Path) -> None:
    """An index older than the archive: copy what it holds into the archive once, so a
    later rebuild keeps it (its stored fields are the whole message). Best effort."""
    try:
        index = open_index(index_path)
    except (FileNotFoundError, SchemaMismatch, ValueError, OSError):
        return
    _seed(archive, index)


def _seed(archive: Archive, index: tantivy.Index) -> None:
    searcher = index.searcher()
    if searcher.num_docs == 0:
        return
    schema = index.schema
    Q, Must = tantivy.Query, tantivy.Occur.Must
    is_msg = Q.term_query(schema, "doctype", "message", index_option="basic")
    ends = []
    for order in (tantivy.Order.Asc, tantivy.Order.Desc):
        hits = searcher.search(is_msg, 1, order_by_field="ts", order=order).hits
        ends.append(int(hits[0][0]) if hits else None)
    if ends[0] is not None:
        step = 86400
        lo = ends[0]
        while lo <= ends[1]:
            rng = Q.range_query(schema, "ts", tantivy.FieldType.Integer, lo, lo + step - 1)
            q = Q.boolean_query([(Must, is_msg), (Must, rng)])
            n = searcher.search(q, 1, count=True).count
            if n:
                hits = searcher.search(q, n).hits
                docs = (searcher.doc(addr) for _, addr in hits)
                # a document with an archive position has its text in an archive that is gone
                archive.append([message_from_document(d) for d in docs if d.get_first("apos") is None])
            lo += step
    mem = Q.term_query(schema, "doctype", "memory", index_option="basic")
    n = searcher.search(mem, 1, count=True).count
    if n:
        docs = []
        for _, addr in searcher.search(mem, n).hits:
            d = searcher.doc(addr)
            m = message_from_document(d)
            docs.append(
                {
                    "id": str(d.get_first("key"))[4:],
                    "project": m.project,
                    "type": d.get_first("mtype") or "",
                    "content": m.text,
                    "tags": (d.get_first("tags") or "").split(),
                    "updated": m.timestamp,
                    "session_ids": [m.session_id] if m.session_id else [],
                }
            )
        archive.log_memory(upserts=docs)
    archive.sync()


def secure_files(directory: Path, done: set[str] | None = None) -> None:
    """Tantivy creates its segment files with the process umask (0644 as a rule): make
    every file in the index directory 0600, like the rest of recall's state (the directory
    itself is 0700). Run after each commit, when the writer closes, and by the service every
    few seconds: a merge finishing in the background creates its files between commits.
    ``done``: names already made private (segment files are never rewritten), skipped."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if done is not None and entry.name in done:
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mode & 0o077:
                os.chmod(entry.path, 0o600)
            if done is not None and not entry.name.endswith(".json"):  # meta.json is replaced
                done.add(entry.name)
        except OSError:
            pass


def _head(path: Path, n: int) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def _tail(path: Path, offset: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return tail_fingerprint(fd, offset)
    finally:
        os.close(fd)


def _start_offset(path: Path, known: FileState | None, st: os.stat_result, whole: bool) -> int | None:
    """Where a read of ``path`` starts: its saved offset, or 0 when the file shrank, was replaced
    (new inode), is read whole, or its first bytes or the bytes just before the offset changed
    (rewritten in place); None when it did not grow."""
    if known is None:
        return 0
    if st.st_ino != known.inode or st.st_size < known.offset:
        return 0
    if st.st_size == known.offset:
        return None
    if whole:
        return 0
    if fingerprint_length(known.head) and fingerprint(_head(path, fingerprint_length(known.head))) != known.head:
        return 0
    if known.tail and _tail(path, known.offset) != known.tail:
        return 0  # rewritten in place
    return known.offset


class Indexer:
    """The single writer of one RECALL_HOME's index. Use as a context manager."""

    def __init__(self, rebuild: bool = False, heap: int | None = None, threads: int = 0) -> None:
        paths.home_dir()
        process.limit_malloc_arenas()
        self.index_path = paths.index_dir()
        self.writer = None
        self._lock_fd = acquire_writer_lock()  # before anything destructive (a rebuild)
        try:
            self._open(rebuild, writer_heap() if heap is None else heap, threads)
        except BaseException as exc:
            process.release_pid_lock(self._lock_fd)
            self._lock_fd = None
            if isinstance(exc, OSError) or (isinstance(exc, (ValueError, sqlite3.Error)) and is_disk_full(exc)):
                raise storage_error(exc, self.index_path) from None  # a full disk, a read-only one
            raise

    def _open(self, rebuild: bool, heap: int, threads: int) -> None:
        fresh_archive = not (paths.archive_dir() / "FORMAT").exists()
        self.archive = Archive(paths.archive_dir())
        if fresh_archive:
            seed_archive(self.archive, self.index_path)
            if self.archive.written:  # copied from an older index: redacted by older rules
                from indexer.reredact_archive import mark_version

                mark_version(self.archive.root, 1)
        self.state = StateDB(paths.state_db_path())
        self.rebuilt = ""
        self._heap, self._threads = heap, threads
        if rebuild:
            self._start_over("asked for")
        existed = index_exists(self.index_path)
        try:
            self.index = open_index(self.index_path, create=True)
        except IndexCorrupt as exc:
            self._start_over(f"the index was damaged: {exc}")
            self.index = open_index(self.index_path, create=True)
            existed = False
        except SchemaMismatch as exc:
            self._start_over(f"schema changed ({exc})")
            self.index = open_index(self.index_path, create=True)
            existed = False
        self._check_identity(existed)
        try:
            self.writer = self.index.writer(heap, threads)
        except ValueError as exc:
            self.state.close()
            if "LockBusy" in str(exc) or "lock" in str(exc).lower():
                raise IndexBusy() from exc
            raise
        self.failed_files: set[str] = set()  # files whose lines were in a failed commit
        self._secured: set[str] = set()  # index files already made 0600 (secure_files)
        self._memory_ops: list[tuple[str, list]] = []  # memory changes since the last commit
        self._vector_drops: list[str] = []  # keys deleted since the last commit: their vectors go after it
        # parsing state of recently read files (tool names, seen blocks), bounded: a backfill
        # of thousands of files must not keep all of them
        self.contexts: OrderedDict[str, object] = OrderedDict()  # each source's context(path)
        self.pending_files: dict[str, FileState] = {}
        self.sessions: dict[str, SessionInfo] = {}
        self.dirty_sessions: set[str] = set()
        self.pending_touches: list[tuple] = []  # state.db rows of the batch's touches (indexer.touches)
        self.pending_undo: list[tuple] = []  # (uuid, op, path) of touches failed calls take back
        self.pending_messages = 0
        self.listeners: list[Callable[[list[Message]], None]] = []
        self.stats: Counter = Counter()
        self.bad_lines: list[str] = []  # lines that could not be read, by file and line
        self.not_regular: dict[str, str] = {}  # *.jsonl that are FIFOs, sockets, devices (plan)
        self.pending_other = False  # memory docs / deletions waiting for a commit
        self._read_since_trim = 0
        self.commits = 0
        self.last_commit = 0.0
        self.after_commit: list[Callable[[], None]] = []  # e.g. the service's searcher reload
        # told the sessions a `recall: off` prompt dropped, once they left the archive and the
        # index (recall.privacy.forget removes what memories drew from them)
        self.on_drop: list[Callable[[list[str]], None]] = []
        self.gate = Gate()  # exclusions, the pause, sessions switched off (indexer.ledger)
        self._last_commit_mono = time.monotonic()
        self._backfill_started: float | None = None
        self._gc_threshold: tuple[int, int, int] | None = None  # Python's, while a backfill runs
        # files whose last line has no newline yet: path -> (offset, size scanned, inode): the bytes
        # between hold no newline, so a line growing without one is not read again and again
        self.partial: dict[str, tuple[int, int, int]] = {}
        self.left_over = False  # the last index_file stopped at its byte budget
        # An index that was empty when this writer opened it can only hold the messages this
        # writer added: a bitmap of their key hashes tells when an upsert needs its delete
        # (a false positive only costs a needless delete). A backfill into an empty index
        # then issues almost none; a delete per document costs ~10% of the backfill.
        self._added = bytearray(ADDED_BITS >> 3) if self.index.searcher().num_docs == 0 else None
        # a rebuild replays the archive; one interrupted (kill -9, Ctrl-C) resumes next time
        self.needs_replay = bool(self.rebuilt) or self.state.get_meta("replay_pending") == "1"
        # what the replay indexed, so that re-reading the live transcripts right after it does not
        # index the same messages again (a delete and an add each: ~40% of an upgrade's time, and
        # deleted documents left for merges to copy): a hash of (uuid, session, project, archive
        # position) per message, 8 bytes each, collected during the replay and sorted after it
        self._replaying: array | None = array("q") if self.needs_replay else None
        self._replayed: array | None = None
        if self.state.get_meta(TOUCHES_META) is None and (self.needs_replay or not self.archive.session_files()):
            self.state.set_meta(TOUCHES_META, "done")  # nothing archived yet, or the replay writes them

    # lifecycle -----------------------------------------------------------------------
    def _start_over(self, why: str) -> None:
        # offsets forgotten and the replay marked first (one transaction), then the index
        # dropped: a kill between the two leaves offsets describing no index, which the
        # identity check of the next open notices (see _check_identity)
        self.state.reset(replay=True)
        drop_index(self.index_path)
        self.rebuilt = why

    def _check_identity(self, existed: bool) -> None:
        """Tie the offsets in state.db to the index they describe. The index's id (in
        recall-schema.json) and the one saved beside the offsets must agree; when they do
        not -- the index was deleted, lost its schema file, or was dropped by a rebuild that
        was killed before it finished -- the offsets describe something that is gone: start
        over and replay the archive, instead of saying "nothing new" over an empty index."""
        ident = index_id(self.index_path)
        saved = self.state.get_meta("index_id")
        has_offsets = self.state.counts()["files"] > 0
        if self.rebuilt:
            mismatch = ""  # started over just now: a fresh index and no offsets
        elif not existed:
            mismatch = "the index was missing" if saved is not None or has_offsets else ""
        elif ident is None:
            mismatch = ""  # an index from before identities: it and its offsets belong together
        elif saved is None:
            mismatch = "the saved offsets belong to no known index" if has_offsets else ""
        else:
            mismatch = "the index is not the one the saved offsets describe" if saved != ident else ""
        if mismatch:
            self._start_over(mismatch)
            self.index = open_index(self.index_path, create=True)
            ident = index_id(self.index_path)
        if ident is None:
            ident = assign_index_id(self.index_path)
        if self.state.get_meta("index_id") != ident:
            self.state.set_meta("index_id", ident)

    def __enter__(self) -> "Indexer":
        return self

    def __exit__(self, *exc) -> None:
        # Ctrl-C keeps what was read: every pending document's offset is saved with it, and a
        # batch cut in half is read again and upserted. Any other error rolls back.
        self.close(commit=exc[0] is None or exc[0] is KeyboardInterrupt)

    def close(self, commit: bool = True) -> None:
        if getattr(self, "_lock_fd", None) is None:
            return  # closed already
        try:
            if self.writer is not None:  # None: lost to a failed write (see _reopen_writer)
                if commit:
                    self.commit()
                else:
                    self.writer.rollback()
                self.writer.wait_merging_threads()
                secure_files(self.index_path)  # the files of merges that ended since the last commit
        finally:
            self.writer = None
            try:
                self.archive.sync()
            except OSError:
                pass  # appends are in the page cache already; sync is for power loss
            try:
                self.state.close()
            finally:
                process.release_pid_lock(self._lock_fd)
                self._lock_fd = None

    def index_lost(self) -> bool:
        """Whether the index directory (or its schema file) was deleted under this writer:
        reopening rebuilds it from the archive (``_check_identity``)."""
        return not index_exists(self.index_path)

    def secure_new_files(self) -> None:
        """Make the index files a background merge created since the last look 0600."""
        secure_files(self.index_path, self._secured)

    def counts(self) -> dict:
        """What the offsets database counts (files, sessions, ...), for ``recall status``."""
        return self.state.counts()

    def redaction_progress(self) -> dict | None:
        """How far a re-redaction pass under way is (``indexer.reredact_archive.progress``), or None."""
        from indexer.reredact_archive import progress

        return progress(self.archive.root)

    # reading -------------------------------------------------------------------------
    def index_file(self, path: Path, budget: int | None = None) -> int:
        """Index what ``path`` gained since its saved offset. Returns messages added.

        A file that shrank, was replaced (new inode), whose first bytes changed, or whose
        bytes just before the saved offset changed (rewritten in place: a restore from a
        backup, ``cp`` over it) is read again from the start; upserts by uuid keep that free
        of duplicates. A FIFO, socket or device named ``*.jsonl`` is never opened
        (``NotRegularFile``). A failed read raises OSError; a failed write of recall's own
        state raises StorageError (and nothing of this file is marked done). With ``budget``
        (bytes), stop after about that much and set ``left_over`` when more is left to read:
        the service reads a huge transcript in slices, other files' lines between. A partial
        last line is not read again until a newline arrives after it.
        """
        key = path_text(path)
        self.left_over = False
        src = sources.source_of(path)
        if src.NAME != sources.DEFAULT and not sources.safe_file(path):
            self.partial.pop(key, None)
            return 0  # another agent's folders are read through their own files: a link is never followed
        try:
            st = path.stat()
        except FileNotFoundError:
            self.partial.pop(key, None)
            return 0  # deleted: everything already indexed stays
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(0, "not a regular file: skipped", key)
        known = self.pending_files.get(key) or self.state.file(key)
        whole = src.whole(path.name)  # read whole each time, not from the last offset (indexer.sources)
        offset = _start_offset(path, known, st, whole)
        if offset is None:
            return 0  # nothing new
        if offset == 0:
            self.contexts.pop(key, None)
        if not whole and self._still_partial(key, path, offset, st):
            return 0
        ctx = self._context(key, path, src, known if offset else None)
        added = 0
        last = offset
        step = min(8 << 20, budget) if budget else 8 << 20
        try:
            for batch, new_offset in src.read(path, offset, ctx, self.stats, max_bytes=step):
                try:
                    added += self._add(batch)
                except OSError as exc:  # the archive could not be written
                    raise storage_error(exc, paths.archive_dir(), "the archive") from None
                except ValueError as exc:  # the index writer failed (a full disk killed it...)
                    raise storage_error(exc, self.index_path) from None
                head = (
                    known.head if known is not None and offset and fingerprint_length(known.head) >= HEAD_BYTES else b""
                )
                if fingerprint_length(head) < HEAD_BYTES:
                    head = fingerprint(_head(path, min(HEAD_BYTES, new_offset)))
                self.pending_files[key] = FileState(
                    key,
                    new_offset,
                    st.st_size,
                    st.st_ino,
                    head,
                    _tail(path, new_offset),
                    ctx.line,
                    int(ctx.private_open),
                )
                self._read_since_trim += new_offset - last
                last = new_offset
                if self.pending_messages >= COMMIT_EVERY or self.commit_due():
                    self.commit()
                if budget and last - offset >= budget and last < st.st_size:
                    self.left_over = True
                    break
        except BaseException:
            # the parsing state went past what is marked done: the next read starts afresh
            self.contexts.pop(key, None)
            raise
        finally:
            if ctx.bad:
                self._note_bad_lines(key, ctx.bad)
                ctx.bad = []
        self._note_partial(key, whole, last, st)
        if self._read_since_trim >= TRIM_EVERY_BYTES:
            self._read_since_trim = 0
            process.trim_memory()
        return added

    def _context(self, key: str, path: Path, src, known: FileState | None):
        """The parsing state of ``path`` (its source's ``context(path)``): kept from the last read when it stopped
        where this one starts, else new, carried on from ``known`` (None: read from the start)."""
        ctx = self.contexts.get(key)
        if ctx is None or ctx.line != (known.lines if known is not None else 0):
            ctx = self.contexts[key] = src.context(path)
            ctx.line = known.lines if known is not None else 0
            ctx.private_open = bool(known.private_open) if known is not None else False
            while len(self.contexts) > MAX_CONTEXTS:
                self.contexts.popitem(last=False)
        else:
            self.contexts.move_to_end(key)
        return ctx

    def _note_partial(self, key: str, whole: bool, last: int, st: os.stat_result) -> None:
        """After a read: a last line without its newline (yet) is remembered (``_still_partial``)."""
        if whole:
            self.partial.pop(key, None)  # a whole file caught half written: read again when it changes
        elif not self.left_over and last < st.st_size:
            # a last line without its newline (yet): remember how far it has no newline
            self.partial[key] = (last, st.st_size, st.st_ino)
        else:
            self.partial.pop(key, None)

    def more_left(self) -> bool:
        """Whether the last ``index_file`` stopped at its byte budget with more of the file to read."""
        return self.left_over

    def forget_file(self, path) -> None:
        """A transcript file is gone: drop its parsing state. What was indexed of it stays, and
        so do its saved offsets."""
        self.contexts.pop(path_text(path), None)

    def _note_bad_lines(self, key: str, bad: list[tuple[int, str]]) -> None:
        """Name each line that could not be read by file and line, in the log and the summary."""
        from recall.core import log

        logger = log.get("ingest")
        for line, why in bad:
            logger.warning("skipped line %d of %s: %s", line, key, why)
            if len(self.bad_lines) < 50:
                self.bad_lines.append(f"{key} line {line}: {why}")

    def _still_partial(self, key: str, path: Path, offset: int, st: os.stat_result) -> bool:
        """Whether the file's unread bytes are still one line without a newline: only the
        bytes appended since the last look are scanned (a line growing to 64 MB is not
        read whole on every append)."""
        known = self.partial.get(key)
        size = st.st_size
        if known is None or known[0] != offset or size < known[1] or known[2] != st.st_ino:
            self.partial.pop(key, None)
            return False
        scanned = known[1]
        try:
            with open(path, "rb") as fh:
                fh.seek(scanned)
                while scanned < size:
                    chunk = fh.read(min(PARTIAL_SCAN_CHUNK, size - scanned))
                    if not chunk:
                        break
                    if b"\n" in chunk:
                        self.partial.pop(key, None)
                        return False
                    scanned += len(chunk)
        except OSError:
            self.partial.pop(key, None)
            return False
        self.partial[key] = (offset, scanned, st.st_ino)
        return True

    def _add(self, messages: list[Message], archive: bool = True, positions: list[int] | None = None) -> int:
        """Index ``messages``: archived first (``archive``), or already archived at
        ``positions``; with neither, their text is stored in the index. Returns how many
        were indexed (not those the replay before it already indexed)."""
        keep, switched_off = admit(
            messages,
            self.gate,
            self.archive.tombstones,
            self.stats,
            replay=not archive,
            session_facts=self._session_facts,
            upgrade=True,
        )
        if len(keep) < len(messages):
            messages = [messages[i] for i in keep]
            positions = [positions[i] for i in keep] if positions is not None else None
        if switched_off:
            self.drop_sessions(switched_off)
        if not messages:
            return 0
        if archive:
            positions = self.archive.store(messages)  # before the commit that holds them
            if self._replayed is not None:
                keep = [i for i, m in enumerate(messages) if not self._was_replayed(m, positions[i])]
                if len(keep) < len(messages):
                    messages = [messages[i] for i in keep]
                    positions = [positions[i] for i in keep]
                    if not messages:
                        return 0
        elif positions is not None and self._replaying is not None:
            self._replaying.extend(_replay_key(m, p) for m, p in zip(messages, positions))
        writer = self.writer
        if writer is None:
            raise self._no_writer()
        added = self._added
        for i, m in enumerate(messages):
            key = "m:" + m.uuid
            if added is None:
                writer.delete_documents_by_term("key", key)
            else:
                h = hash(key) & (ADDED_BITS - 1)
                bit = 1 << (h & 7)
                if added[h >> 3] & bit:
                    writer.delete_documents_by_term("key", key)
                else:
                    added[h >> 3] |= bit
            writer.add_document(message_document(m, positions[i] if positions is not None else None))
            self._note_session(m)
        self.pending_messages += len(messages)
        for listener in self.listeners:
            listener(messages)
        return len(messages)

    def _was_replayed(self, m: Message, pos: int) -> bool:
        key = _replay_key(m, pos)
        i = bisect_left(self._replayed, key)
        return i < len(self._replayed) and self._replayed[i] == key

    def forget_replayed(self) -> None:
        """The live transcripts have been re-read after a replay: drop what it indexed."""
        self._replayed = None

    def add_messages(self, messages: list[Message], archive: bool = True, positions: list[int] | None = None) -> None:
        """Index already-parsed messages (the archive replay and tests use this)."""
        self._add(messages, archive=archive, positions=positions)
        if self.pending_messages >= COMMIT_EVERY or self.commit_due():
            self.commit()

    def replay_archive(self, progress: Callable[[int], None] | None = None) -> int:
        """Index everything the archive holds (messages, then memory documents); returns
        messages replayed. Runs after a rebuild dropped the index."""
        n = 0
        for size in self.replay_batches():
            n += size
            if progress:
                progress(n)
        return n

    def replay_batches(self) -> Iterator[int]:
        """The replay of ``replay_archive`` a batch at a time (the service answers between
        batches): yields each batch's number of messages once it is indexed, and finishes the
        replay (``finish_replay``) when the archive is exhausted. Stopped early, the replay
        stays pending (``needs_replay``) and starts over next time."""
        for batch, positions in self.archive.replay_positions():
            self.add_messages(batch, archive=False, positions=positions)
            yield len(batch)
        self.finish_replay()

    def finish_replay(self) -> None:
        """The archive's memory documents, a commit, then the replay is done for good."""
        docs = list(self.archive.memory_docs().values())
        if docs:
            self.upsert_memory_docs(docs, log=False)
        self.pending_other = True
        self.commit()
        self.state.set_meta("replay_pending", "0")
        self.state.set_meta(TOUCHES_META, "done")  # the replay wrote every archived message's touches
        self.needs_replay = False
        if self._replaying is not None:
            self._replayed = array("q", sorted(self._replaying))
            self._replaying = None

    # touches of history archived before they were recorded --------------------------
    def touches_pending(self) -> bool:
        return self.state.get_meta(TOUCHES_META) != "done"

    def backfill_touches(self, budget: float | None = None) -> bool:
        """Record the touches (``indexer.touches``) of what was archived before recall kept
        them: once per home, from the archive's tool calls (their text says what they wrote;
        no fingerprint), archive file by archive file, resumable. ``budget``: stop after about
        that many seconds (at least one file). Returns True when every file is done."""
        from indexer.touches import rows, undone

        state = self.state.get_meta(TOUCHES_META)
        if state == "done":
            return True
        root = self.archive.root
        files = [p for p in self.archive.session_files() if str(p.relative_to(root)) > (state or "")]
        t0 = time.monotonic()
        for n, path in enumerate(files):
            if n and budget is not None and time.monotonic() - t0 >= budget:
                return False
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            found, back = [], []
            for raw in data.split(b"\n"):
                if b'"tool_use"' not in raw and b'"undo"' not in raw:
                    continue
                try:
                    m = Message.from_record(_json_loads(raw))
                except (ValueError, TypeError, AttributeError):
                    continue
                found.extend(
                    (m.uuid, m.session_id, m.project, p_, op, m.timestamp, fp, dest)
                    for op, p_, fp, dest in rows(m.touched)
                )
                back.extend(undone(m.touched))
            if back:
                gone = set(back)
                found = [t for t in found if (t[0], t[4], t[3]) not in gone]
            if found:
                self.state.save([], [], found)
            self.state.set_meta(TOUCHES_META, str(path.relative_to(root)))
        self.state.set_meta(TOUCHES_META, "done")
        return True

    # memory documents ----------------------------------------------------------------
    def upsert_memory_docs(self, docs: list[dict], log: bool = True) -> int:
        """Add or replace memory documents (key "mem:<id>"); visible after ``commit``."""
        checked = [check_memory_doc(d) for d in docs]
        if self.writer is None:
            raise self._no_writer()
        for d in checked:
            self.writer.delete_documents_by_term("key", "mem:" + d["id"])
            self.writer.add_document(memory_document(d))
        if checked:
            self._memory_ops.append(("upsert", checked))
        if log and checked:
            self.archive.log_memory(upserts=checked)
        self.pending_other = self.pending_other or bool(checked)
        return len(checked)

    def delete_keys(self, keys: list[str], log: bool = True) -> int:
        """Delete documents by key ("mem:<id>", "m:<uuid>", ...); visible after ``commit``."""
        keys = [str(k) for k in keys if k]
        if self.writer is None:
            raise self._no_writer()
        for k in keys:
            self.writer.delete_documents_by_term("key", k)
        if keys:
            self._memory_ops.append(("delete", keys))
        mem = [k for k in keys if k.startswith("mem:")]
        if mem and log:
            self.archive.log_memory(deletes=mem)
        self.pending_other = self.pending_other or bool(keys)
        # the semantic channel's vectors of them (a forgotten memory) go too, once the index no
        # longer holds them (``commit``): the job, reading it before, would embed them again
        self._vector_drops += keys
        return len(keys)

    def _drop_vectors(self) -> None:
        keys, self._vector_drops = self._vector_drops, []
        if not keys:
            return
        from indexer.vectors import forget_vectors

        try:
            forget_vectors(keys=keys)
        except Exception as exc:  # noqa: BLE001 - a vector holds no text; the search skips a key gone
            from recall.core import log

            log.get("ingest").warning("vectors of %d deleted documents kept for now: %s", len(keys), exc)

    # forgetting ----------------------------------------------------------------------
    def _count(self, query) -> int:
        self.index.reload()
        return self.index.searcher().search(query, 1, count=True).count

    def forget_session(self, session_id: str) -> dict:
        """Remove a session's messages from the index and the archive (memories stay: the
        whole forget is ``recall.privacy.forget``); its tombstone is recorded first."""
        from indexer import forgetting

        res = self._forget_ingest(forgetting.Selection(sessions=[session_id]))
        return {"session": session_id, "index": res["index"], "archive": res["messages"]}

    def forget_project(self, project: str) -> dict:
        """Remove a project's messages, sessions and memories from the index and the archive."""
        from indexer import forgetting

        res = self._forget_ingest(forgetting.Selection(project=project))
        return {"project": project, "index": res["index"], "archive": res["messages"], "sessions": len(res["sessions"])}

    def _forget_ingest(self, sel) -> dict:
        from indexer import forgetting

        intent = forgetting.begin(self, sel)
        out = forgetting.run_ingest_steps(self, intent)
        forgetting.end_intent(self.archive.root, intent)
        return out

    def drop_sessions(self, session_ids: list[str]) -> None:
        """Sessions switched off by a `recall: off` prompt: remove what is already indexed and
        archived of them (lines after the marker are kept out by the gate), once. The drop is
        a forget of its own (``indexer.forgetting``: its intent recorded before anything is
        removed); ``on_drop`` handlers (``recall.privacy.forget``) do the other stores' steps
        and end it. With none attached, it stays pending until a process that has them
        (`recall index`, the service, `recall forget`) finishes it."""
        from indexer import forgetting

        intent = forgetting.begin(self, forgetting.Selection(sessions=list(session_ids)), kind="off")
        forgetting.run_ingest_steps(self, intent)
        for fn in self.on_drop:
            fn(intent)

    def _session_facts(self, session_id: str) -> SessionInfo | None:
        """What is known of a session (its project, cwd, last time), for a line that names
        neither its cwd nor its time (``indexer.ledger.by_session``)."""
        s = self.sessions.get(session_id) or self.state.session(session_id)
        return s if s is not None and (s.cwd or s.ended) else None

    def _note_session(self, m: Message) -> None:
        s = self.sessions.get(m.session_id)
        if s is None:
            s = self.state.session(m.session_id) or SessionInfo(m.session_id)
            self.sessions[m.session_id] = s
        if not s.project:
            s.project, s.cwd = m.project, m.cwd
        s.agent = m.agent
        if m.role == "user" and not s.first_prompt:
            s.first_prompt = m.text[:500]
        elif m.role == "summary" and len(s.summaries) < 20 and m.text[:300] not in s.summaries:
            s.summaries.append(m.text[:300])
        for f in m.files:
            if f not in s.files and len(s.files) < MAX_SESSION_FILES:
                s.files.append(f)
        if m.touched:
            from indexer.touches import rows, undone

            self.pending_touches.extend(
                (m.uuid, m.session_id, m.project, path, op, m.timestamp, fp, dest)
                for op, path, fp, dest in rows(m.touched)
            )
            back = undone(m.touched)
            if back:  # the calls failed: what they would have written is taken back
                gone = set(back)
                self.pending_touches = [t for t in self.pending_touches if (t[0], t[4], t[3]) not in gone]
                self.pending_undo.extend(back)
        if m.timestamp:
            s.started = min(s.started, m.timestamp) if s.started else m.timestamp
            s.ended = max(s.ended, m.timestamp)
        s.messages += 1
        self.dirty_sessions.add(m.session_id)

    # committing ----------------------------------------------------------------------
    def has_pending(self) -> bool:
        """Whether anything read or changed waits for a commit (documents, offsets, session
        facts, memory documents or deletions)."""
        return bool(self.pending_files or self.pending_messages or self.dirty_sessions or self.pending_other)

    def commit(self) -> bool:
        """Make pending documents visible, then save offsets. Returns whether anything was pending."""
        if not self.has_pending():
            return False
        writer = self.writer
        if writer is None:
            raise self._no_writer()
        dirty = [self.sessions[s] for s in self.dirty_sessions if s in self.sessions]
        try:
            for s in dirty:
                writer.delete_documents_by_term("key", "s:" + s.session_id)
                writer.add_document(session_document(s))
            self._commit_writer()
        except (OSError, ValueError) as exc:
            # Nothing of this batch may be marked done: its offsets are dropped (the files are
            # read again from their last saved offsets), the writer is rolled back (or
            # reopened), and the memory changes of the batch are fed to it again.
            self._abandon_batch()
            raise storage_error(exc, self.index_path) from None
        self._memory_ops.clear()
        self._drop_vectors()
        secure_files(self.index_path, self._secured)
        try:
            self.state.save(list(self.pending_files.values()), dirty, self.pending_touches, self.pending_undo)
        except sqlite3.Error as exc:  # the index holds the batch; its offsets are saved next time
            raise storage_error(exc, paths.state_db_path(), "the offsets") from None
        self.failed_files.difference_update(self.pending_files)
        self.pending_files.clear()
        self.dirty_sessions.clear()
        self.pending_touches = []
        self.pending_undo = []
        self.pending_messages = 0
        self.pending_other = False
        self.commits += 1
        self.last_commit = time.time()
        self._last_commit_mono = time.monotonic()
        if len(self.sessions) > MAX_CACHED_SESSIONS:
            self.sessions.clear()
        for fn in self.after_commit:
            fn()
        return True

    def _no_writer(self) -> StorageError:
        return StorageError(
            f"The index writer at {self.index_path} was lost to a failed write: nothing is lost; "
            "restart the service (`recall service restart`) or run `recall index` again."
        )

    def _commit_writer(self) -> None:
        self.writer.commit()

    def _abandon_batch(self) -> None:
        """After a failed commit: forget everything read since the last good one."""
        self.failed_files.update(self.pending_files)
        self.pending_files.clear()
        self.dirty_sessions.clear()
        self.pending_touches = []
        self.pending_undo = []
        self.sessions.clear()  # their counts included the lost batch: state.db has the last good ones
        self.contexts.clear()
        self.pending_messages = 0
        self.pending_other = False
        if self._replaying is not None:  # a replay in progress starts over (replay_pending stays 1)
            self._replaying = array("q")
        try:
            self.writer.rollback()
        except (OSError, ValueError):
            self._reopen_writer()
        ops, self._memory_ops = self._memory_ops, []
        for kind, items in ops:
            try:
                if kind == "upsert":
                    self.upsert_memory_docs(items, log=False)
                else:
                    self.delete_keys(items, log=False)
            except (OSError, ValueError):
                break  # the writer is unusable until space returns: the archive's log keeps them

    def _reopen_writer(self) -> None:
        try:
            self.writer.wait_merging_threads()  # gives the writer (and its lock) up
        except (OSError, ValueError, RuntimeError):
            pass
        self.writer = None
        try:
            self.index = open_index(self.index_path)
            self.writer = self.index.writer(self._heap, self._threads)
        except (OSError, ValueError, SchemaMismatch) as exc:
            raise storage_error(exc, self.index_path) from None

    def delete_sessions(self, session_ids: list[str]) -> None:
        for sid in session_ids:
            self.writer.delete_documents_by_term("session_id", sid)
            self.sessions.pop(sid, None)
            self.dirty_sessions.discard(sid)
        gone = set(session_ids)
        self.pending_touches = [t for t in self.pending_touches if t[1] not in gone]
        self.writer.commit()
        self.state.forget_sessions(session_ids)
        from indexer.vectors import forget_vectors

        forget_vectors(sessions=session_ids)

    # whole runs ----------------------------------------------------------------------
    def plan(self, roots: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, int]]]:
        """(every transcript file, the ones with unread bytes and how many), the most recently
        modified first: a first backfill makes the last sessions searchable first."""
        files = discover(roots)
        known = self.state.all_files()
        todo: list[tuple[float, Path, int]] = []
        for path in files:
            try:
                st = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO, socket or device named *.jsonl: never opened
                self.not_regular[path_text(path)] = "not a regular file (a FIFO, socket or device): skipped"
                continue
            k = known.get(path_text(path))
            if k is None or k.size != st.st_size or k.inode != st.st_ino or k.offset != st.st_size:
                unread = st.st_size - (k.offset if k and k.inode == st.st_ino and st.st_size >= k.offset else 0)
                todo.append((st.st_mtime, path, unread))
        if os.environ.get("RECALL_BACKFILL_ORDER") != "path":  # "path": the old order, a benchmark's baseline
            todo.sort(key=lambda t: (-t[0], str(t[1])))
        return files, [(path, n) for _, path, n in todo]

    # progress commits during a backfill -----------------------------------------------
    def begin_backfill(self) -> None:
        """From now until ``end_backfill``, commit progress by time (``commit_due``), and
        run Python's cycle collector far less often (``BACKFILL_GC_THRESHOLD``)."""
        self._backfill_started = time.monotonic()
        if self._gc_threshold is None:
            self._gc_threshold = gc.get_threshold()
            gc.freeze()  # what is alive now (modules, the writer, caches) is not scanned meanwhile
            gc.set_threshold(*BACKFILL_GC_THRESHOLD)

    def end_backfill(self) -> None:
        self._backfill_started = None
        if self._gc_threshold is not None:
            gc.set_threshold(*self._gc_threshold)
            gc.unfreeze()  # collectable again: a long-lived service must not keep its cycles
            self._gc_threshold = None

    def commit_due(self) -> bool:
        """During a backfill: messages are pending and the progress interval has passed (a
        quarter of the backfill's age, between PROGRESS_COMMIT_MIN and _MAX seconds)."""
        if self._backfill_started is None or not self.pending_messages:
            return False
        now = time.monotonic()
        interval = min(PROGRESS_COMMIT_MAX, max(PROGRESS_COMMIT_MIN, (now - self._backfill_started) / 4))
        return now - self._last_commit_mono >= interval

    def run(self, roots: Iterable[Path], progress: Callable[[Progress], None] | None = None) -> Summary:
        """Index every transcript below ``roots`` incrementally, the most recently modified
        first; commit progress as it goes (``commit_due``); return a summary.

        After a rebuild the archive is replayed first, so sessions whose transcript is gone
        come back too."""
        t0 = time.perf_counter()
        roots = list(roots)
        summary = Summary(rebuilt=self.rebuilt)
        before = Counter(self.stats)
        self.begin_backfill()
        try:
            if self.needs_replay:
                summary.replayed = self.replay_archive()
            self.backfill_touches()  # once, for history archived before touches were recorded
            files, todo = self.plan(roots)
            summary.files = len(files)
            summary.errors.extend(f"{p}: {why}" for p, why in self.not_regular.items())
            prog = Progress(files_total=len(todo), bytes_total=sum(max(n, 0) for _, n in todo))
            for path, nbytes in todo:
                try:
                    added = self.index_file(path)
                except (OSError, UnicodeError, ValueError) as exc:  # this file only: never the rest
                    summary.errors.append(f"{path_text(path)}: {read_error(exc)}")
                    continue
                summary.messages += added
                summary.changed += 1
                prog.files_done += 1
                prog.bytes_done += max(nbytes, 0)
                prog.messages += added
                if prog.files_done == 1 or self.commit_due():  # the newest session first, then by time
                    self.commit()
                if progress:
                    progress(prog)
        finally:
            self.end_backfill()
        self.forget_replayed()
        self.commit()
        try:  # Claude Code's own memory files (MEMORY.md, CLAUDE.md): never fails the run
            from indexer import native_memory

            native_memory.sync(self, [r for r in roots if sources.agent_of(r / "x") == sources.DEFAULT])
        except Exception as exc:  # noqa: BLE001
            summary.errors.append(f"Claude Code memory files: {type(exc).__name__}: {exc}")
        summary.skipped = self.stats - before
        summary.bad_lines = self.bad_lines[:20]
        summary.seconds = time.perf_counter() - t0
        return summary


def read_error(exc: BaseException) -> str:
    """Why a transcript could not be read, in a few words."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {str(exc)[:160]}"


def index_all(
    extra_sources: Iterable[Path] = (),
    rebuild: bool = False,
    progress: Callable[[Progress], None] | None = None,
    on_open: Callable[[Indexer], None] | None = None,
    after: Callable[[Indexer], None] | None = None,
) -> Summary:
    """``recall index``: backfill every transcript root incrementally. ``on_open(ix)``: the
    caller's set-up of the writer (e.g. ``recall.privacy.forget.attach``); ``after(ix)``:
    its work once the transcripts are in (e.g. ``recall.privacy.redaction_pass.run``)."""
    roots = sources.all_roots(list(extra_sources))
    with Indexer(rebuild=rebuild) as ix:
        if on_open is not None:
            on_open(ix)
        summary = ix.run(roots, progress=progress)
        if after is not None:
            after(ix)
        return summary
