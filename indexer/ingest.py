"""Writing the index: transcript files -> parsed, redacted messages -> Tantivy documents.

``Indexer`` owns the only index writer of a ``RECALL_HOME`` (Tantivy allows one per index
across processes) and the offsets database. ``recall index`` and the background service
both drive it: ``index_file`` reads whatever a file gained since its saved byte offset,
``commit`` makes those documents visible and only then saves the offsets.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import tantivy

from indexer.schema import SchemaMismatch, drop_index, open_index, prepare_content
from indexer.state import HEAD_BYTES, FileState, SessionInfo, StateDB
from indexer.transcripts import FileContext, Message, read_lines
from recall import paths
from recall.errors import IndexBusy

WRITER_HEAP = int(os.environ.get("RECALL_WRITER_HEAP_MB", "128")) * 1_000_000
COMMIT_EVERY = 100_000  # messages between commits during a backfill
MAX_SESSION_FILES = 200


@dataclass
class Summary:
    files: int = 0           # transcript files seen
    changed: int = 0         # files that had new lines
    messages: int = 0        # messages indexed
    skipped: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    rebuilt: str = ""        # why the index was rebuilt, if it was
    errors: list[str] = field(default_factory=list)

    @property
    def nothing_new(self) -> bool:
        return self.changed == 0

    def as_dict(self) -> dict:
        return {"files": self.files, "changed": self.changed, "messages": self.messages,
                "skipped": dict(self.skipped), "seconds": round(self.seconds, 3),
                "rebuilt": self.rebuilt, "errors": self.errors}


def message_document(m: Message) -> tantivy.Document:
    doc = tantivy.Document(
        key="m:" + m.uuid, doctype="message", session_id=m.session_id, project=m.project,
        role=m.role, ts=int(m.timestamp), text=m.text.encode("utf-8", "replace"),
        cwd=m.cwd.encode("utf-8", "replace"), branch=m.branch.encode("utf-8", "replace"),
        content=prepare_content(m.text),
    )
    if m.files:
        doc.add_text("files", "\n".join(m.files))
    if m.tools:
        doc.add_text("tools", " ".join(m.tools))
    return doc


def session_document(s: SessionInfo) -> tantivy.Document:
    body = "\n".join([s.first_prompt, *s.summaries])
    doc = tantivy.Document(
        key="s:" + s.session_id, doctype="session", session_id=s.session_id, project=s.project,
        role="session", ts=int(s.ended or s.started), text=body.encode("utf-8", "replace"),
        cwd=s.cwd.encode("utf-8", "replace"), branch=b"",
        content=prepare_content(body + "\n" + " ".join(s.files)),
    )
    if s.files:
        doc.add_text("files", "\n".join(s.files))
    return doc


def discover(roots: Iterable[Path]) -> list[Path]:
    """Every ``*.jsonl`` below the roots (sessions, subagents), sorted for a stable order."""
    found: list[Path] = []
    for root in roots:
        if not root.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if name.endswith(".jsonl"):
                    found.append(Path(dirpath) / name)
    found.sort()
    return found


def _head(path: Path, n: int) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


class Indexer:
    """The single writer of one RECALL_HOME's index. Use as a context manager."""

    def __init__(self, rebuild: bool = False, heap: int = WRITER_HEAP, threads: int = 0) -> None:
        paths.home_dir()
        self.index_path = paths.index_dir()
        self.state = StateDB(paths.state_db_path())
        self.rebuilt = ""
        if rebuild:
            self._start_over("asked for")
        try:
            self.index = open_index(self.index_path, create=True)
        except SchemaMismatch as exc:
            self._start_over(f"schema changed ({exc})")
            self.index = open_index(self.index_path, create=True)
        try:
            self.writer = self.index.writer(heap, threads)
        except ValueError as exc:
            self.state.close()
            if "LockBusy" in str(exc) or "lock" in str(exc).lower():
                raise IndexBusy() from exc
            raise
        self.contexts: dict[str, FileContext] = {}
        self.pending_files: dict[str, FileState] = {}
        self.sessions: dict[str, SessionInfo] = {}
        self.dirty_sessions: set[str] = set()
        self.pending_messages = 0
        self.listeners: list[Callable[[list[Message]], None]] = []
        self.stats: Counter = Counter()

    # lifecycle -----------------------------------------------------------------------
    def _start_over(self, why: str) -> None:
        drop_index(self.index_path)
        self.state.reset()
        self.rebuilt = why

    def __enter__(self) -> "Indexer":
        return self

    def __exit__(self, *exc) -> None:
        self.close(commit=exc[0] is None)

    def close(self, commit: bool = True) -> None:
        if getattr(self, "writer", None) is None:
            return
        try:
            if commit:
                self.commit()
            else:
                self.writer.rollback()
            self.writer.wait_merging_threads()
        finally:
            self.writer = None
            self.state.close()

    # reading -------------------------------------------------------------------------
    def index_file(self, path: Path) -> int:
        """Index what ``path`` gained since its saved offset. Returns messages added.

        A file that shrank, was replaced (new inode) or whose first bytes changed is read
        again from the start; upserts by uuid keep that free of duplicates.
        """
        key = str(path)
        try:
            st = path.stat()
        except FileNotFoundError:
            return 0  # deleted: everything already indexed stays
        known = self.pending_files.get(key) or self.state.file(key)
        offset = 0
        if known is not None:
            offset = known.offset
            if st.st_ino != known.inode or st.st_size < known.offset:
                offset = 0
            elif st.st_size == known.offset:
                return 0
            elif known.head and _head(path, len(known.head)) != known.head:
                offset = 0
        if offset == 0:
            self.contexts.pop(key, None)
        ctx = self.contexts.get(key)
        if ctx is None:
            ctx = self.contexts[key] = FileContext(path)
        added = 0
        for batch, new_offset in read_lines(path, offset, ctx, self.stats):
            self._add(batch)
            added += len(batch)
            head = known.head if known is not None and offset and len(known.head) >= HEAD_BYTES else b""
            if len(head) < HEAD_BYTES:
                head = _head(path, min(HEAD_BYTES, new_offset))
            self.pending_files[key] = FileState(key, new_offset, st.st_size, st.st_ino, head)
            if self.pending_messages >= COMMIT_EVERY:
                self.commit()
        return added

    def _add(self, messages: list[Message]) -> None:
        if not messages:
            return
        writer = self.writer
        for m in messages:
            writer.delete_documents_by_term("key", "m:" + m.uuid)
            writer.add_document(message_document(m))
            self._note_session(m)
        self.pending_messages += len(messages)
        for listener in self.listeners:
            listener(messages)

    def add_messages(self, messages: list[Message]) -> None:
        """Index already-parsed messages (the archive replay and tests use this)."""
        self._add(messages)

    def _note_session(self, m: Message) -> None:
        s = self.sessions.get(m.session_id)
        if s is None:
            s = self.state.session(m.session_id) or SessionInfo(m.session_id)
            self.sessions[m.session_id] = s
        if not s.project:
            s.project, s.cwd = m.project, m.cwd
        if m.role == "user" and not s.first_prompt:
            s.first_prompt = m.text[:500]
        elif m.role == "summary" and len(s.summaries) < 20 and m.text[:300] not in s.summaries:
            s.summaries.append(m.text[:300])
        for f in m.files:
            if f not in s.files and len(s.files) < MAX_SESSION_FILES:
                s.files.append(f)
        if m.timestamp:
            s.started = min(s.started, m.timestamp) if s.started else m.timestamp
            s.ended = max(s.ended, m.timestamp)
        s.messages += 1
        self.dirty_sessions.add(m.session_id)

    # committing ----------------------------------------------------------------------
    def commit(self) -> bool:
        """Make pending documents visible, then save offsets. Returns whether anything was pending."""
        if not self.pending_files and not self.dirty_sessions and not self.pending_messages:
            return False
        writer = self.writer
        dirty = [self.sessions[s] for s in self.dirty_sessions if s in self.sessions]
        for s in dirty:
            writer.delete_documents_by_term("key", "s:" + s.session_id)
            writer.add_document(session_document(s))
        writer.commit()
        self.state.save(list(self.pending_files.values()), dirty)
        self.pending_files.clear()
        self.dirty_sessions.clear()
        self.pending_messages = 0
        if len(self.sessions) > 10_000:
            self.sessions.clear()
        return True

    def delete_sessions(self, session_ids: list[str]) -> None:
        for sid in session_ids:
            self.writer.delete_documents_by_term("session_id", sid)
            self.sessions.pop(sid, None)
            self.dirty_sessions.discard(sid)
        self.writer.commit()
        self.state.forget_sessions(session_ids)

    # whole runs ----------------------------------------------------------------------
    def run(self, roots: Iterable[Path], progress: Callable[[int, int], None] | None = None) -> Summary:
        """Index every transcript below ``roots`` incrementally; commit; return a summary."""
        t0 = time.perf_counter()
        files = discover(roots)
        summary = Summary(files=len(files), rebuilt=self.rebuilt)
        known = self.state.all_files()
        todo: list[tuple[Path, int]] = []
        for path in files:
            try:
                st = path.stat()
            except OSError:
                continue
            k = known.get(str(path))
            if k is None or k.size != st.st_size or k.inode != st.st_ino or k.offset != st.st_size:
                todo.append((path, st.st_size - (k.offset if k and k.inode == st.st_ino and st.st_size >= k.offset else 0)))
        total = sum(max(n, 0) for _, n in todo)
        done = 0
        before = Counter(self.stats)
        for path, nbytes in todo:
            try:
                added = self.index_file(path)
            except OSError as exc:
                summary.errors.append(f"{path}: {exc.strerror or exc}")
                continue
            summary.messages += added
            summary.changed += 1
            done += max(nbytes, 0)
            if progress:
                progress(done, total)
        self.commit()
        summary.skipped = self.stats - before
        summary.seconds = time.perf_counter() - t0
        return summary


def index_all(extra_sources: Iterable[Path] = (), rebuild: bool = False,
              progress: Callable[[int, int], None] | None = None) -> Summary:
    """``recall index``: backfill every transcript root incrementally."""
    roots = paths.transcript_roots(list(extra_sources))
    with Indexer(rebuild=rebuild) as ix:
        return ix.run(roots, progress=progress)
