"""Purging: the bytes of deleted documents leave the index's files.

Tantivy never rewrites a segment: a deleted document (forgotten, re-redacted, or an older
version of an upserted one) only gets a bit in the segment's delete bitmap, and its terms,
stored fields and positions stay in the segment's files until a merge copies the segment.
Merges of old, large segments may never come (the merge policy only merges segments of a
similar size), and tantivy-py has no call to force one.

So ``purge_deleted_documents`` rewrites every segment that holds a deleted document itself:
each of its live documents is built again from what it stores (a message's text read back from
the archive at its position, a session's facts from state.db, a memory document from its stored
fields) and upserted. The old segment then holds no live document; Tantivy drops it at the
commit and its files are deleted. A document whose message is no longer in the archive, or
that the tombstones cover, is not added again (an orphan left by an older, interrupted forget).

The searcher's segment ordinals are the order of ``meta.json``'s segments (checked against the
live documents counted per ordinal before anything is rewritten; a merge that finished
meanwhile is waited out by looking again).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from pathlib import Path

import tantivy

from indexer.archive_files import iter_lines
from indexer.documents import memory_document, message_document, session_document, team_document, team_from_document
from indexer.ingest import secure_files
from indexer.message import Message
from indexer.schema import stored_value
from indexer.state import SessionInfo
from recall.core.jsonio import read_json

PAGE = 50_000  # live documents listed per search
COMMIT_EVERY = 100_000  # documents rewritten between two commits
ROUNDS = 4


def segment_meta(index_path: Path) -> list[tuple[int, int]]:
    """(max_doc, deleted documents) of each committed segment, in ``meta.json``'s order."""
    out = []
    for s in read_json(index_path / "meta.json", {}, dict).get("segments") or []:
        deletes = s.get("deletes") or {}
        out.append((int(s.get("max_doc") or 0), int(deletes.get("num_deleted_docs") or 0)))
    return out


def segment_ids(index_path: Path) -> list[str]:
    """The committed segments' ids, in ``meta.json``'s order (the searcher's ordinals)."""
    return [str(s.get("segment_id") or "") for s in read_json(index_path / "meta.json", {}, dict).get("segments") or []]


def segments_holding(ix, field: str, values: list[str]) -> set[str] | None:
    """The ids of the segments that hold a document with one of ``values`` in ``field``
    (before they are deleted: a later purge need rewrite only those); None when the
    searcher's segments do not match ``meta.json`` (a merge meanwhile)."""
    ix.index.reload()
    searcher = ix.index.searcher()
    ids = segment_ids(ix.index_path)
    if searcher.num_segments != len(ids):
        return None
    out: set[str] = set()
    for v in values:
        q = tantivy.Query.term_query(ix.index.schema, field, v, index_option="basic")
        for _, a in searcher.search(q, 100, count=False).hits:
            out.add(ids[a.segment_ord])
    return out


def deleted_documents(index_path: Path) -> int:
    """How many deleted documents the index's segments still hold (their bytes included)."""
    return sum(d for _, d in segment_meta(index_path))


def _live(searcher) -> dict[int, array] | None:
    """Segment ordinal -> the segment-local ids of its live documents; None when the listing
    came out inconsistent."""
    q = tantivy.Query.all_query()
    total = searcher.num_docs
    out: dict[int, array] = {}
    offset = seen = 0
    while offset < total:
        hits = searcher.search(q, PAGE, count=False, offset=offset).hits
        if not hits:
            break
        for _, a in hits:
            out.setdefault(a.segment_ord, array("q")).append(a.doc)
        seen += len(hits)
        offset += len(hits)
    if seen != total or sum(len(set(v)) for v in out.values()) != total:
        return None
    return out


class _Files:
    """The archive files the purge reads, parsed once each (the documents of one segment come
    in the order they were indexed: a session's messages together), a few kept at a time."""

    KEEP = 16

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: OrderedDict[str, dict[str, tuple[int, dict]]] = OrderedDict()

    def get(self, project: str, session_id: str, uuid: str) -> tuple[Message, int] | None:
        """The archived message ``uuid`` and its position; None when it left the archive."""
        from indexer.archive_files import session_relpath

        rel = session_relpath(project, session_id)
        known = self.cache.get(rel)
        if known is None:
            known = {str(rec.get("uuid")): (pos, rec) for pos, rec in iter_lines(self.root / rel)}
            self.cache[rel] = known
            while len(self.cache) > self.KEEP:
                self.cache.popitem(last=False)
        else:
            self.cache.move_to_end(rel)
        found = known.get(uuid)
        if found is None:
            return None
        try:
            return Message.from_record(found[1]), found[0]
        except (TypeError, ValueError):
            return None


def document_from_stored(ix, d: tantivy.Document, files: _Files | None = None) -> tantivy.Document | None:
    """The document ``d`` (as the index stores it) built again, as its builder makes it;
    None when it must not come back (its message left the archive, or is forgotten)."""

    def get(name: str, default=""):
        return stored_value(d, name, default)

    key, doctype = str(get("key")), str(get("doctype"))
    sid, project = str(get("session_id")), str(get("project"))
    if doctype == "message":
        apos = get("apos", None)
        if apos is not None:
            found = (files or _Files(ix.archive.root)).get(project, sid, key[2:])
            if found is None:
                return None
            m, pos = found
        else:
            files = str(get("files"))
            m = Message(
                uuid=key[2:],
                session_id=sid,
                project=project,
                cwd=str(get("cwd")),
                branch=str(get("branch")),
                role=str(get("role")),
                timestamp=float(get("ts", 0) or 0),
                text=str(get("text")),
                tools=str(get("tools")).split(),
                files=files.split("\n") if files else [],
            )
            pos = None
        if ix.archive.tombstones and ix.archive.tombstones.covers(m, replay=pos is not None):
            return None
        return message_document(m, pos)
    if doctype == "session":
        s = ix.sessions.get(sid) or ix.state.session(sid)
        if s is None:
            files = str(get("files"))
            ts = float(get("ts", 0) or 0)
            s = SessionInfo(
                session_id=sid,
                project=project,
                cwd=str(get("cwd")),
                first_prompt=str(get("text")),
                files=files.split("\n") if files else [],
                started=ts,
                ended=ts,
            )
        return session_document(s)
    if doctype == "memory":
        tags = str(get("tags"))
        return memory_document(
            {
                "id": key[4:],
                "project": project,
                "type": str(get("mtype")),
                "content": str(get("text")),
                "tags": tags.split() if tags else [],
                "updated": float(get("ts", 0) or 0),
                "session_ids": [sid] if sid else [],
            }
        )
    if doctype == "team":  # a teammate's item: everything it is made of is stored
        return team_document(*team_from_document(d))
    return None


def purge_deleted_documents(ix, only: set[str] | None = None) -> dict:
    """Rewrite every segment of ``ix``'s index that holds deleted documents (see the module
    docstring), or only those of ``only`` (segment ids: ``segments_holding``); ``{"segments":
    n, "documents": n rewritten, "deleted_left": n}``."""
    ix.commit()
    segments = rewritten = 0
    for _ in range(ROUNDS):
        meta = segment_meta(ix.index_path)
        if only is not None:
            ids = segment_ids(ix.index_path)
            meta = [(m, dl if i < len(ids) and ids[i] in only else 0) for i, (m, dl) in enumerate(meta)]
        if not any(dl for _, dl in meta):
            break
        ix.index.reload()
        searcher = ix.index.searcher()
        full = segment_meta(ix.index_path)
        if [m for m, _ in full] != [m for m, _ in meta]:
            continue  # a merge finished meanwhile: look again
        live = _live(searcher)
        if (
            live is None
            or searcher.num_segments != len(meta)
            or any(len(live.get(i, ())) != m - dl for i, (m, dl) in enumerate(full))
        ):
            continue
        if ix.writer is None:
            raise ix._no_writer()
        pending = 0
        files = _Files(ix.archive.root)
        for i, (_, dl) in enumerate(meta):
            if not dl:
                continue
            segments += 1
            for doc_id in live.get(i, ()):
                stored = searcher.doc(tantivy.DocAddress(i, int(doc_id)))
                key = str(stored_value(stored, "key"))
                new = document_from_stored(ix, stored, files)
                ix.writer.delete_documents_by_term("key", key)
                if new is not None:
                    ix.writer.add_document(new)
                rewritten += 1
                pending += 1
                if pending >= COMMIT_EVERY:
                    ix.pending_other = True
                    ix.commit()
                    pending = 0
        ix.pending_other = True
        ix.commit()
    if ix.writer is not None:
        try:
            ix.writer.garbage_collect_files()
        except (OSError, ValueError):
            pass
    secure_files(ix.index_path)
    return {"segments": segments, "documents": rewritten, "deleted_left": deleted_documents(ix.index_path)}


def purge(ix) -> dict:
    """The end of a forget and of the re-redaction pass: no bytes of what was deleted stay in
    the index (``purge_deleted_documents``) or in state.db (vacuumed, its WAL emptied)."""
    out = purge_deleted_documents(ix)
    ix.state.scrub()
    return out
