"""Session summaries: storage, pending work, and their index documents.

One file per summarized session, ``$RECALL_HOME/summaries/<session>.json`` (atomic, 0600)::

    {"session_id", "project", "summary", "model", "created", "messages"}

A session whose summary is due but not written yet (the model failed, the daily cap was
reached) has a marker ``$RECALL_HOME/summaries/pending/<session>.json``
(``{"session_id", "transcript_path", "cwd", "attempts", "last_attempt", "problem"}``) so the
worker tries again later (``recall.memory.summarize.retry_pending``): summaries resume after
a failure. Each summary is also a memory document of type ``session-summary`` (key
``mem:sum-<session>``), so search finds it.

This module is the small API other parts use: ``get``, ``get_many``, ``put``, ``remove``
(``recall forget`` removes a session's summary with it).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import read_json

SUMMARY_TYPE = "session-summary"
_SID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def home() -> Path:
    return paths.recall_home() / "summaries"


def pending_dir() -> Path:
    return home() / "pending"


def _file(session_id: str, folder: Path | None = None) -> Path | None:
    if not isinstance(session_id, str) or not _SID.match(session_id):
        return None
    return (folder or home()) / f"{session_id}.json"


def read_record(path: Path | None) -> dict | None:
    if path is None:
        return None
    return read_json(path, None, dict)


def get(session_id: str) -> dict | None:
    """The stored summary record of a session, or None."""
    rec = read_record(_file(session_id))
    return rec if rec and isinstance(rec.get("summary"), str) else None


def get_many(session_ids) -> dict[str, dict]:
    out = {}
    for sid in session_ids:
        rec = get(sid)
        if rec is not None:
            out[sid] = rec
    return out


def doc_id(session_id: str) -> str:
    return f"sum-{session_id}"


def index_doc(rec: dict) -> dict:
    from indexer.schema import ECHO_TAG

    return {
        "id": doc_id(rec["session_id"]),
        "project": rec.get("project") or "",
        "type": SUMMARY_TYPE,
        "content": f"Session summary: {rec['summary']}",
        "tags": ["session-summary", *([ECHO_TAG] if rec.get("echo") else [])],
        "updated": float(rec.get("created") or time.time()),
        "session_ids": [rec["session_id"]],
    }


def put(session_id: str, project: str, summary: str, *, model: str = "", messages: int = 0, echo: bool = False) -> dict:
    """Store a session's summary (replacing any), clear its pending marker, index it.
    ``echo``: the session mostly restated recall's own output (its summary is tagged so,
    and ranks below the sessions it came from)."""
    path = _file(session_id)
    if path is None:
        raise ValueError(f"not a session id: {session_id!r}")
    rec = {
        "session_id": session_id,
        "project": project,
        "summary": summary.strip(),
        "model": model,
        "created": time.time(),
        "messages": int(messages),
        **({"echo": True} if echo else {}),
    }
    paths.atomic_write(path, json.dumps(rec, ensure_ascii=False))
    clear_pending(session_id)
    from recall.memory import index_docs

    index_docs.deliver([index_doc(rec)], [])
    return rec


def rewrite(session_id: str, summary: str) -> dict:
    """The stored summary of a session with new text (``recall forget --secret``), everything
    else kept; the caller writes its index document."""
    rec = dict(get(session_id) or {})
    rec["summary"] = summary
    rec.setdefault("session_id", session_id)
    paths.atomic_write(_file(session_id), json.dumps(rec, ensure_ascii=False))
    return rec


def forgotten(session_id: str) -> bool:
    """Whether ``recall forget`` removed this session's summary."""
    rec = read_record(_file(session_id))
    return bool(rec and rec.get("forgotten"))


def remove(session_ids, ix=None) -> int:
    """Delete the summaries (and pending markers and index documents) of these sessions.
    Given ``ix`` (an open ``Indexer``: ``recall forget`` holds one), the documents are deleted
    with it, the archive's memory log compacted so a rebuild cannot bring them back, and
    committed; else they go the usual way (``recall.memory.index_docs.deliver``)."""
    removed, keys = 0, []
    for sid in session_ids or ():
        for folder in (home(), pending_dir()):
            path = _file(str(sid), folder)
            if path is not None and path.exists():
                try:
                    if folder == home() and get(str(sid)) is not None:
                        # what is left says it was forgotten (`recall show`), not "never written"
                        paths.atomic_write(path, json.dumps({"session_id": str(sid), "forgotten": time.time()}))
                        removed += 1
                    elif folder != home():
                        path.unlink()
                except OSError:
                    pass
        keys.append(f"mem:{doc_id(str(sid))}")
    if keys and ix is not None:
        ix.delete_keys(keys)
        ix.archive.compact_memory()
        ix.commit()
    elif keys:
        from recall.memory import index_docs

        index_docs.deliver([], keys)
    return removed


# pending --------------------------------------------------------------------------------------
def mark_pending(session_id: str, transcript_path: str = "", cwd: str = "", problem: str = "") -> dict | None:
    path = _file(session_id, pending_dir())
    if path is None:
        return None
    rec = read_record(path) or {"session_id": session_id, "attempts": 0}
    rec.update(
        {
            "transcript_path": transcript_path or rec.get("transcript_path", ""),
            "cwd": cwd or rec.get("cwd", ""),
            "problem": problem,
        }
    )
    if problem:
        rec["attempts"] = int(rec.get("attempts") or 0) + 1
        rec["last_attempt"] = time.time()
    paths.atomic_write(path, json.dumps(rec))
    return rec


def clear_pending(session_id: str) -> None:
    path = _file(session_id, pending_dir())
    if path is not None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def pending() -> list[dict]:
    try:
        names = sorted(n for n in os.listdir(pending_dir()) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    out = []
    for n in names:
        rec = read_record(pending_dir() / n)
        if rec and isinstance(rec.get("session_id"), str):
            out.append(rec)
    return out
