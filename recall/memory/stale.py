"""Typed memories that describe code age with it.

When a memory is written (extracted, added by hand, said again), the project files it names
that exist are fingerprinted (``snapshot``)::

    "files": [{"path": "src/lib/refunds.ts", "fp": "<sha256 prefix>:<bytes>",
               "sketch": "<MinHash of its lines>", "at": ISO}]

``refresh`` compares them with the files as they are now and sets each memory's ``stale``
(``[{"path", "state": "changed" | "deleted" | "renamed", "since": ISO, "to"?}]``, empty when
nothing changed): a file is *changed* when its content changed substantially (less than
``SUBSTANTIAL`` of its distinct lines left, by the line sketches: an added import is not a
rewrite), *renamed* when it is gone and a later session moved it, *deleted* when it is gone.
A stat answers most of it; a file is read only when its size or time changed, and a verdict
is remembered per (path, time, size) in the process.

``recall.memory.store.refresh_stale`` runs ``refresh`` and writes the marks that changed back
(the store imports this module, never the other way round).

What follows from ``stale``: the briefing and ``recall memories`` mark the memory, it fades
over ``store.STALE_DECAY_DAYS`` (``store.effective_confidence``), ``recall memories --stale``
lists it, and consolidation asks the model to re-check it against the newer sessions that
touched the same files (``recall.memory.consolidate``). Saying a memory again takes a new
snapshot and clears its marks.

Files are judged at the project root (where the briefing is), never a worktree's.
"""

from __future__ import annotations

import os
import time

from indexer.touches import (
    content_fingerprint,
    fingerprint_size,
    line_sketch,
    paths_in_text,
    relative,
    sketch_similarity,
)

SUBSTANTIAL = 0.5  # line-sketch similarity below this: changed substantially
MAX_FILES = 8  # files fingerprinted per memory
MAX_BYTES = 2 << 20  # a larger file is fingerprinted by its first 2 MB

_verdicts: dict[tuple[str, float, int], tuple[str, float | None]] = {}  # (path, mtime, size) -> (fp, similarity)


def _iso(ts: float | None) -> str | None:
    if not ts:
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES)
    except OSError:
        return None


def named_files(content: str, project: str) -> list[str]:
    """The project-relative paths ``content`` names (absolute ones under the project)."""
    out = []
    for tok in paths_in_text(content):
        rel = relative(tok, project, project) if os.path.isabs(tok) else os.path.normpath(tok).replace(os.sep, "/")
        if rel and not rel.startswith("..") and rel not in out:
            out.append(rel)
    return out


def snapshot(content: str, project: str, now: float | None = None) -> list[dict]:
    """Fingerprints of the files ``content`` names that exist in ``project`` now."""
    if not project or project == "/" or not os.path.isdir(project):
        return []
    now = time.time() if now is None else now
    out = []
    for rel in named_files(content, project)[:MAX_FILES]:
        path = os.path.join(project, rel)
        if not os.path.isfile(path):
            continue
        data = _read(path)
        if data is None:
            continue
        out.append({"path": rel, "fp": content_fingerprint(data), "sketch": line_sketch(data), "at": _iso(now)})
    return out


def _changed(f: dict, path: str, st) -> tuple[bool, float | None]:
    """(changed substantially, the file's time) of one snapshot against the file at ``path``."""
    size = fingerprint_size(f.get("fp", ""))
    key = (path, st.st_mtime, st.st_size)
    got = _verdicts.get(key)
    if got is None:
        if size == st.st_size and st.st_mtime <= _epoch(f.get("at")):
            return False, None  # untouched since the snapshot
        data = _read(path)
        if data is None:
            return False, None
        fp = content_fingerprint(data)
        sim = 1.0 if fp == f.get("fp") else sketch_similarity(line_sketch(data), f.get("sketch", ""))
        got = (fp, sim)
        if len(_verdicts) > 4096:
            _verdicts.clear()
        _verdicts[key] = got
    fp, sim = got
    if fp == f.get("fp"):
        return False, None
    return (sim is not None and sim < SUBSTANTIAL), st.st_mtime


def _epoch(value) -> float:
    if not isinstance(value, str) or not value:
        return 0.0
    from datetime import datetime

    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def check(m, project: str, touches=None) -> list[dict]:
    """The stale marks of memory ``m`` now (earlier marks keep their ``since``: its decay
    counts from when the change was first seen). ``touches``: ``indexer.touches.Touches`` of
    the project (a later move names the file's new path)."""
    if not m.files or not project or not os.path.isdir(project):
        return list(m.stale) if m.files else []
    before = {x.get("path"): x for x in m.stale}
    marks = []
    for f in m.files:
        rel = f.get("path")
        if not rel:
            continue
        path = os.path.join(project, rel)
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None:
            changed, mtime = _changed(f, path, st)
            if changed:
                old = before.get(rel)
                since = old.get("since") if old and old.get("state") == "changed" else _iso(mtime)
                marks.append({"path": rel, "state": "changed", "since": since})
            continue
        old = before.get(rel)
        mark = {"path": rel, "state": "deleted", "since": (old or {}).get("since") or _iso(time.time())}
        if touches is not None:
            _known, later = touches.history([rel], _epoch(f.get("at")))
            gone = [r for r in later.get(rel, ()) if r[2] in ("delete", "move")]
            if gone:
                ts, _sid, op, dest = gone[-1]
                mark["since"] = _iso(ts)
                if op == "move" and dest:
                    mark.update(state="renamed", to=dest)
        marks.append(mark)
    return marks


class _LazyTouches:
    """``indexer.touches.Touches`` of a project, opened on first use (only a file that is gone
    needs state.db: the SessionStart hook does not import sqlite3 otherwise)."""

    def __init__(self, project: str) -> None:
        self.project = project
        self._db = None

    def history(self, paths, after):
        if self._db is None:
            from indexer.touches import Touches, state_connection

            self._db = Touches(state_connection(), self.project)
        return self._db.history(paths, after)


def refresh(state, now: float | None = None) -> set[str]:
    """Recompute ``stale`` of every active memory with files; the ids whose marks changed."""
    project = state.project
    if not project or not os.path.isdir(project):
        return set()
    touches = _LazyTouches(project)
    changed: set[str] = set()
    for m in state.active():
        if not m.files:
            continue
        marks = check(m, project, touches)
        if marks != m.stale:
            m.stale = marks
            changed.add(m.id)
    return changed


def mark_text(m) -> str:
    """``(src/lib/refunds.ts changed 3 days later)`` for a stale memory, else ""."""
    if not m.stale:
        return ""
    from indexer.touches import describe

    at = min((_epoch(f.get("at")) for f in m.files if f.get("at")), default=0.0) or m.updated
    return describe(m.stale, at)
