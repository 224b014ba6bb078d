"""Ingest bookkeeping in ``$RECALL_HOME/state.db`` (SQLite, 0600): per-file byte offsets
and per-session facts for the session documents.

Offsets are saved only after the index commit that holds their lines, so a crash at any
moment re-reads at most one batch; re-reading is harmless because every document is
upserted by its unique key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from recall.core.paths import ensure_dir

HEAD_BYTES = 1024
TAIL_BYTES = 4096  # checked before reading on from a saved offset: a file rewritten in place


def fingerprint(head: bytes) -> bytes:
    """A file's first bytes as (length, sha256): enough to notice a replaced file, and no
    transcript text is kept outside the redacted index and archive."""
    return len(head).to_bytes(4, "big") + hashlib.sha256(head).digest()


def fingerprint_length(fp: bytes) -> int:
    return int.from_bytes(fp[:4], "big") if len(fp) == 36 else 0


def tail_fingerprint(fd: int, offset: int) -> bytes:
    """A checksum of the (up to) TAIL_BYTES before ``offset`` -- the end of the last line
    read -- as (length, sha256). Read again before reading on from ``offset``: a file
    rewritten in place (same inode, same first kilobyte, longer) no longer matches."""
    start = max(0, offset - TAIL_BYTES)
    return fingerprint(os.pread(fd, offset - start, start))


@dataclass
class FileState:
    path: str
    offset: int = 0
    size: int = 0
    inode: int = 0
    head: bytes = b""
    tail: bytes = b""  # tail_fingerprint at offset (b"": not known, a state from before it)
    lines: int = 0  # lines before offset (to name a skipped line by its number)
    private_open: int = 0  # 1: a <private> block a prompt opened is still open at offset


@dataclass
class SessionInfo:
    session_id: str
    project: str = ""
    cwd: str = ""
    first_prompt: str = ""
    summaries: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    messages: int = 0
    agent: str = ""  # the agent of its messages (not stored in state.db: the index holds it)


def _read_only(path: Path, sql: str, args=()) -> list:
    """The rows of ``sql`` on state.db at ``path``, opened read-only without taking any lock;
    [] when there is no state yet or it cannot be read."""
    if not path.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return list(conn.execute(sql, args))
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def known_projects(path: Path) -> list[str]:
    """Projects with indexed sessions, read without taking any lock (empty if no state yet)."""
    return [r[0] for r in _read_only(path, "SELECT DISTINCT project FROM sessions") if r[0]]


def projects_by_activity(path: Path) -> list[str]:
    """Projects with indexed sessions, the one with the latest session first."""
    rows = _read_only(path, "SELECT project, max(ended) FROM sessions GROUP BY project ORDER BY 2 DESC")
    return [r[0] for r in rows if r[0]]


_SESSION_COLS = "session_id, project, cwd, first_prompt, summaries, files, started, ended, messages"


def _session_info(row) -> SessionInfo:
    return SessionInfo(
        row[0],
        row[1] or "",
        row[2] or "",
        row[3] or "",
        json.loads(row[4] or "[]"),
        json.loads(row[5] or "[]"),
        row[6] or 0.0,
        row[7] or 0.0,
        row[8] or 0,
    )


def list_sessions(
    path: Path | None = None,
    *,
    project: str | None = None,
    since: float | None = None,
    limit: int | None = None,
    prefix: str | None = None,
) -> list[SessionInfo]:
    """Indexed sessions, newest first (by their last message), read without taking any lock:
    of one ``project``, active after ``since``, whose id starts with ``prefix``."""
    from recall.core import paths as _paths

    path = path or _paths.state_db_path()
    where, args = [], []
    if project:
        where.append("project=?")
        args.append(project)
    if since is not None:
        where.append("MAX(COALESCE(ended, 0), COALESCE(started, 0)) >= ?")
        args.append(float(since))
    if prefix:
        where.append("substr(session_id, 1, ?) = ?")
        args += [len(prefix), prefix]
    sql = f"SELECT {_SESSION_COLS} FROM sessions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY MAX(COALESCE(ended, 0), COALESCE(started, 0)) DESC, session_id"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [_session_info(r) for r in _read_only(path, sql, args)]


def session_facts(path: Path | None = None) -> list[tuple[str, str, str, float, float, int]]:
    """Every indexed session as (session_id, project, cwd, started, ended, messages), in no
    particular order, read without taking any lock: the few columns a count over all sessions
    needs (``recall ui``'s charts), without parsing the rest."""
    from recall.core import paths as _paths

    path = path or _paths.state_db_path()
    sql = (
        "SELECT session_id, COALESCE(project, ''), COALESCE(cwd, ''), COALESCE(started, 0), COALESCE(ended, 0), "
        "COALESCE(messages, 0) FROM sessions"
    )
    return _read_only(path, sql)


def project_activity(path: Path | None = None) -> list[tuple[str, float]]:
    """(project, its last activity) of every project with indexed sessions, most recent first,
    read without taking any lock."""
    from recall.core import paths as _paths

    path = path or _paths.state_db_path()
    sql = (
        "SELECT project, MAX(MAX(COALESCE(ended, 0), COALESCE(started, 0))) AS last FROM sessions "
        "WHERE project IS NOT NULL AND project != '' GROUP BY project ORDER BY last DESC"
    )
    return _read_only(path, sql)


def session_row(session_id: str) -> dict | None:
    """One session's facts as a dict, or None (read-only, no lock)."""
    found = list_sessions(prefix=session_id, limit=2)
    exact = [s for s in found if s.session_id == session_id]
    if not exact:
        return None
    s = exact[0]
    return {
        "session_id": s.session_id,
        "project": s.project,
        "cwd": s.cwd,
        "first_prompt": s.first_prompt,
        "started": s.started,
        "ended": s.ended,
        "messages": s.messages,
    }


class StateDB:
    def __init__(self, path: Path) -> None:
        ensure_dir(path.parent)
        new = not path.exists()
        self.path = path
        self.conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        if new:
            os.chmod(path, 0o600)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS files(
                path TEXT PRIMARY KEY, offset INTEGER NOT NULL, size INTEGER NOT NULL,
                inode INTEGER NOT NULL, head BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS sessions(
                session_id TEXT PRIMARY KEY, project TEXT, cwd TEXT, first_prompt TEXT,
                summaries TEXT, files TEXT, started REAL, ended REAL, messages INTEGER);
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS touches(
                uuid TEXT NOT NULL, session_id TEXT NOT NULL, project TEXT NOT NULL, path TEXT NOT NULL,
                op TEXT NOT NULL, ts REAL NOT NULL, fp TEXT NOT NULL DEFAULT '', dest TEXT NOT NULL DEFAULT '',
                PRIMARY KEY(uuid, op, path)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS touches_by_session ON touches(session_id);
            CREATE INDEX IF NOT EXISTS touches_by_path ON touches(project, path, ts);
            """
        )
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(files)")}
        for col, decl in (
            ("tail", "BLOB NOT NULL DEFAULT x''"),
            ("lines", "INTEGER NOT NULL DEFAULT 0"),
            ("private_open", "INTEGER NOT NULL DEFAULT 0"),
        ):
            if col not in cols:  # a state.db from before these columns
                self.conn.execute(f"ALTER TABLE files ADD COLUMN {col} {decl}")

    def close(self) -> None:
        self.conn.close()

    # files ---------------------------------------------------------------------------
    def file(self, path: str) -> FileState | None:
        row = self.conn.execute(
            "SELECT path, offset, size, inode, head, tail, lines, private_open FROM files WHERE path=?", (path,)
        ).fetchone()
        return FileState(*row) if row else None

    def all_files(self) -> dict[str, FileState]:
        rows = self.conn.execute("SELECT path, offset, size, inode, head, tail, lines, private_open FROM files")
        return {r[0]: FileState(*r) for r in rows}

    # sessions ------------------------------------------------------------------------
    def session(self, session_id: str) -> SessionInfo | None:
        row = self.conn.execute(f"SELECT {_SESSION_COLS} FROM sessions WHERE session_id=?", (session_id,)).fetchone()
        return _session_info(row) if row else None

    def save(self, files: list[FileState], sessions: list[SessionInfo], touches=(), undo=()) -> None:
        """Persist offsets, session facts and the files the batch's tool calls touched
        (``(uuid, session_id, project, path, op, ts, fp, dest)`` rows, ``indexer.touches``;
        ``undo``: ``(uuid, op, path)`` of touches that failed calls take back) in one
        transaction (after the index commit)."""
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany(
                "INSERT OR REPLACE INTO files(path, offset, size, inode, head, tail, lines, private_open)"
                " VALUES(?,?,?,?,?,?,?,?)",
                [
                    (f.path, f.offset, f.size, f.inode, f.head, f.tail, f.lines, int(bool(f.private_open)))
                    for f in files
                ],
            )
            self.conn.executemany(
                "INSERT OR REPLACE INTO sessions VALUES(?,?,?,?,?,?,?,?,?)",
                [
                    (
                        s.session_id,
                        s.project,
                        s.cwd,
                        s.first_prompt,
                        json.dumps(s.summaries),
                        json.dumps(s.files),
                        s.started,
                        s.ended,
                        s.messages,
                    )
                    for s in sessions
                ],
            )
            if touches:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO touches(uuid, session_id, project, path, op, ts, fp, dest)"
                    " VALUES(?,?,?,?,?,?,?,?)",
                    touches,
                )
            if undo:
                self.conn.executemany("DELETE FROM touches WHERE uuid=? AND op=? AND path=?", undo)

    def forget_files(self, paths: list[str]) -> None:
        with self.conn:
            self.conn.executemany("DELETE FROM files WHERE path=?", [(p,) for p in paths])

    def forget_sessions(self, session_ids: list[str]) -> None:
        """A session's facts go, and with them the files its tool calls touched (every
        forgetting path -- `recall forget`, an exclusion's purge, `recall: off` -- comes here)."""
        with self.conn:
            self.conn.executemany("DELETE FROM sessions WHERE session_id=?", [(s,) for s in session_ids])
            self.conn.executemany("DELETE FROM touches WHERE session_id=?", [(s,) for s in session_ids])

    def redact_touches(self, redact) -> int:
        """Paths of touches re-redacted under the current rules (the re-redaction pass);
        returns how many rows changed."""
        rows = self.conn.execute("SELECT uuid, op, path, dest FROM touches").fetchall()
        changed = []
        for uuid, op, path, dest in rows:
            new_path, new_dest = redact(path), redact(dest) if dest else dest
            if new_path != path or new_dest != dest:
                changed.append((uuid, op, path, new_path, new_dest))
        if changed:
            with self.conn:
                self.conn.execute("BEGIN")
                for uuid, op, path, new_path, new_dest in changed:
                    self.conn.execute(
                        "UPDATE OR REPLACE touches SET path=?, dest=? WHERE uuid=? AND op=? AND path=?",
                        (new_path, new_dest, uuid, op, path),
                    )
        return len(changed)

    def sessions_of_project(self, project: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT session_id FROM sessions WHERE project=?", (project,))]

    def counts(self) -> dict[str, int]:
        files = self.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        sessions = self.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        return {"files": files, "sessions": sessions}

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES(?,?)", (key, value))

    def scrub(self) -> None:
        """Leave no bytes of replaced or deleted rows behind (free pages, the WAL): after the
        re-redaction pass rewrote session facts. VACUUM rewrites the file (seconds at most:
        offsets and session facts, no message text), the checkpoint empties the WAL."""
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def reset(self, replay: bool = False) -> None:
        """Forget every offset and session fact (and the index they described); ``replay``:
        in the same transaction, mark the archive to be replayed into the next index."""
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute("DELETE FROM files")
            self.conn.execute("DELETE FROM sessions")
            self.conn.execute("DELETE FROM touches")  # the replay writes them again
            self.conn.execute("DELETE FROM meta WHERE key='index_id'")
            if replay:
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES('replay_pending', '1')")
