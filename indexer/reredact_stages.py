"""The re-redaction pass's steps on the index writer (``ix``: an ``indexer.ingest.Indexer``):
``messages_step`` re-redacts archive files in order and replaces their messages' index
documents and session facts; ``facts_step`` re-redacts every session's facts and the
archive's memory log. The version record and the work on one file are ``indexer.reredact_archive``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from indexer.documents import message_document
from indexer.redact import redact
from indexer.reredact_archive import FileResult, redact_file, save


def _rel(root: Path, path: Path) -> str:
    return str(path.relative_to(root))


def reindex_file(ix, res: FileResult) -> int:
    """Replace the index documents of a rewritten file's messages (new text, new positions)
    and the session facts its changed messages fed; returns how many sessions' facts changed."""
    from indexer.ledger import admit

    if not res.messages:
        return 0
    keep, _ = admit(res.messages, ix.gate, ix.archive.tombstones, ix.stats, replay=True)
    writer = ix.writer
    if writer is None:
        raise ix._no_writer()
    for i in keep:
        m = res.messages[i]
        writer.delete_documents_by_term("key", "m:" + m.uuid)
        writer.add_document(message_document(m, res.positions[i]))
    ix.pending_messages += len(keep)
    sessions: set[str] = set()
    for old, new in res.changed:
        s = ix.sessions.get(old.session_id) or ix.state.session(old.session_id)
        if s is None:
            continue
        touched = False
        if s.first_prompt and s.first_prompt == old.text[:500]:
            s.first_prompt = new.text[:500]
            touched = True
        if old.text[:300] in s.summaries:
            s.summaries = [new.text[:300] if x == old.text[:300] else x for x in s.summaries]
            touched = True
        files = [redact(f) for f in s.files]
        if files != s.files:
            s.files = list(dict.fromkeys(files))
            touched = True
        if touched:
            ix.sessions[s.session_id] = s
            ix.dirty_sessions.add(s.session_id)
            sessions.add(s.session_id)
    return len(sessions)


def messages_step(ix, st: dict, budget: float | None) -> bool:
    """Stage ``messages`` for about ``budget`` seconds (None: to the end; at least one file);
    True when every archive file is done."""
    root = ix.archive.root
    p = st["pass"]
    files = sorted(((_rel(root, f), f) for f in ix.archive.session_files()), key=lambda t: t[0])
    todo = [(r, f) for r, f in files if r > p["after"]]
    p["files_total"] = int(p.get("files_done") or 0) + len(todo)
    working = set(p.get("working") or [])
    resumed = set(working)  # files an interrupted slice was rewriting
    committed = json.loads(json.dumps(st))  # what the saved record may say until the commit
    t0 = time.monotonic()
    done = 0
    rewritten: list[str] = []  # the keys of the messages rewritten in this slice
    for rel, path in todo:
        if done and budget is not None and time.monotonic() - t0 >= budget:
            break

        def note_working(rel=rel) -> None:
            working.add(rel)
            committed["pass"]["working"] = sorted(working)
            save(root, committed)

        ix.archive._drop_cache(path)  # its positions change
        res = redact_file(path, before_rewrite=note_working)
        if res.changed or rel in working:
            p["sessions"] = int(p.get("sessions") or 0) + reindex_file(ix, res)
            # a file taken up again after an interruption: its rewrite is done, its vectors maybe not
            gone = res.messages if rel in resumed else [old for old, _new in res.changed]
            rewritten += ["m:" + m.uuid for m in gone]
        p["after"] = rel
        p["files_done"] = int(p.get("files_done") or 0) + 1
        p["messages"] = int(p.get("messages") or 0) + len(res.messages)
        p["rewritten"] = int(p.get("rewritten") or 0) + len(res.changed)
        done += 1
    if ix.pending_messages or ix.dirty_sessions:
        ix.commit()
    if rewritten:  # embedded from the text before: once the new text is committed, their vectors
        # go (and the job's queue, filled before, with them); the job embeds the redacted text
        from indexer.vectors import forget_vectors

        forget_vectors(keys=rewritten)
    p["working"] = []
    finished = done >= len(todo)
    if finished:
        p["stage"] = "facts"
    save(root, st)
    return finished


def facts_step(ix, st: dict) -> None:
    """Stage ``facts``: every session's facts in state.db and the archive's memory log."""
    from indexer.state import list_sessions

    n = 0
    for s in list_sessions(ix.state.path):
        s = ix.sessions.get(s.session_id, s)
        first = redact(s.first_prompt)
        summaries = [redact(x) for x in s.summaries]
        files = [redact(f) for f in s.files]
        cwd = redact(s.cwd)
        if (
            first is s.first_prompt
            and cwd is s.cwd
            and all(a is b for a, b in zip(summaries, s.summaries))
            and all(a is b for a, b in zip(files, s.files))
        ):
            continue
        s.first_prompt, s.summaries, s.files, s.cwd = first, summaries, list(dict.fromkeys(files)), cwd
        ix.sessions[s.session_id] = s
        ix.dirty_sessions.add(s.session_id)
        n += 1
    ix.state.redact_touches(redact)  # the paths of the files sessions touched (state.db only)
    docs = []
    for d in ix.archive.memory_docs().values():
        content = str(d.get("content") or "")
        tags = [str(t) for t in d.get("tags") or []]
        new_content, new_tags = redact(content), [redact(t) for t in tags]
        if new_content is not content or any(a is not b for a, b in zip(new_tags, tags)):
            docs.append(dict(d, content=new_content, tags=new_tags))
    if docs:
        ix.upsert_memory_docs(docs)
        ix.archive.compact_memory()  # the log keeps every version: only the redacted ones stay
    if n or docs:
        ix.pending_other = True
        ix.commit()
    if docs:  # the memories' vectors were embedded from the text before (see ``messages_step``)
        from indexer.vectors import forget_vectors

        forget_vectors(keys=["mem:" + str(d.get("id")) for d in docs if d.get("id")])
    ix.state.scrub()  # the old facts' bytes leave state.db's free pages and WAL too
    p = st["pass"]
    p["sessions"] = int(p.get("sessions") or 0) + n
    p["memories"] = int(p.get("memories") or 0) + len(docs)
    p["stage"] = "memories"
    save(ix.archive.root, st)
