"""The semantic channel's vectors: one per embedded message, in ``$RECALL_HOME/vectors.db``
(SQLite, 0600). Written by the service's background job (``recall.search.semantic``), read by
the prompt hook's model path; never the source of any text (a hit is read from the index and
the archive, through the ledger's gate, and only when the text it was embedded from is still
the text there: ``hash``).

  vec(key, project, session, ts, hash, v)   key "m:<uuid>" as in the index; v: 384 float16

Forgetting goes through here too: ``indexer.forgetting.remove_from_index`` drops the vectors of
every session it touches and of a whole forgotten project, before the job may embed what is
left again; the re-redaction pass drops those of the messages it rewrote (a secret the newer
rules catch leaves no vector behind); ``recall purge`` and uninstall remove the file with the rest of ``$RECALL_HOME``.
A model change (``MODEL``) empties the table: vectors of two encoders never mix.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path

from recall.core import paths

MODEL = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384


def db_path() -> Path:
    return paths.recall_home() / "vectors.db"


def text_hash(text: str) -> str:
    """What a vector was embedded from, to tell whether the text is still the same."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class VectorStore:
    """The table, with an in-memory copy of each project's matrix for the process that reads
    it (the service), refreshed when the project's rows change."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        paths.ensure_dir(self.path.parent)
        new = not self.path.exists()
        self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        self.lock = threading.Lock()
        if new:
            os.chmod(self.path, 0o600)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA secure_delete=ON")  # a forgotten vector's bytes are overwritten
        self.conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS vec(
                key TEXT PRIMARY KEY, project TEXT NOT NULL, session TEXT NOT NULL,
                ts INTEGER NOT NULL, hash TEXT NOT NULL, v BLOB NOT NULL);
            CREATE INDEX IF NOT EXISTS vec_by_project ON vec(project);
            CREATE INDEX IF NOT EXISTS vec_by_session ON vec(session);
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
            """
        )
        row = self.conn.execute("SELECT value FROM meta WHERE key='model'").fetchone()
        if row is None or row[0] != MODEL:
            self.conn.execute("DELETE FROM vec")
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES('model', ?)", (MODEL,))
        self._secure()
        self._cache: dict[str, tuple] = {}
        self._writes = 0  # this connection's writes (PRAGMA data_version counts the others')

    def _secure(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            try:
                if p.exists() and (p.stat().st_mode & 0o777) != 0o600:
                    os.chmod(p, 0o600)
            except OSError:
                pass

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    # writing ------------------------------------------------------------------------------
    def put(self, rows: list[tuple[str, str, str, int, str, object]]) -> None:
        """``(key, project, session, ts, hash, vector)`` rows (vectors float32 or float16)."""
        import numpy as np

        with self.lock:
            self.conn.execute("BEGIN")
            self.conn.executemany(
                "INSERT OR REPLACE INTO vec VALUES(?,?,?,?,?,?)",
                [(k, p, s, int(ts), h, np.asarray(v, np.float16).tobytes()) for k, p, s, ts, h, v in rows],
            )
            self.conn.execute("COMMIT")
            self._writes += 1
        self._secure()

    def forget(self, sessions=(), project: str | None = None, keys=()) -> int:
        """Drop the vectors of ``sessions``, of a whole ``project``, or these ``keys``."""
        n = 0
        with self.lock:
            self.conn.execute("BEGIN")
            for sid in sessions:
                n += self.conn.execute("DELETE FROM vec WHERE session=?", (sid,)).rowcount
            if project:
                n += self.conn.execute("DELETE FROM vec WHERE project=?", (project,)).rowcount
            for key in keys:
                n += self.conn.execute("DELETE FROM vec WHERE key=?", (key,)).rowcount
            self.conn.execute("COMMIT")
            self._writes += 1
            if n:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # nor do they linger in the WAL
        if n:
            self._cache.clear()
        return n

    # reading ------------------------------------------------------------------------------
    def known(self, keys: list[str]) -> dict[str, str]:
        """Of ``keys``, those with a vector, and the hash of the text each was embedded from."""
        out: dict[str, str] = {}
        with self.lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, hash FROM vec WHERE key IN ({','.join('?' * len(chunk))})"
                out.update(self.conn.execute(q, chunk).fetchall())
        return out

    def count(self, project: str | None = None) -> int:
        with self.lock:
            if project is None:
                return self.conn.execute("SELECT count(*) FROM vec").fetchone()[0]
            return self.conn.execute("SELECT count(*) FROM vec WHERE project=?", (project,)).fetchone()[0]

    def matrix(self, project: str):
        """``(keys, sessions, hashes, float32 matrix)`` of ``project``'s vectors."""
        import numpy as np

        with self.lock:
            # no write since the last look (by this connection or another): the copy holds
            version = (self._writes, self.conn.execute("PRAGMA data_version").fetchone()[0])
            hit = self._cache.get(project)
            if hit is not None and hit[5] == version:
                return hit[1], hit[2], hit[3], hit[4]
            stamp = self.conn.execute("SELECT count(*), max(rowid) FROM vec WHERE project=?", (project,)).fetchone()
            if hit is not None and hit[0] == stamp:
                self._cache[project] = (*hit[:5], version)
                return hit[1], hit[2], hit[3], hit[4]
            since = 0
            if hit is not None and hit[0][1] is not None and stamp[1] is not None:
                # only rows added since (the background job appends): read those, keep the rest
                new = self.conn.execute(
                    "SELECT count(*) FROM vec WHERE project=? AND rowid>?", (project, hit[0][1])
                ).fetchone()[0]
                if hit[0][0] + new == stamp[0]:
                    since = hit[0][1]
            rows = self.conn.execute(
                "SELECT key, session, hash, v FROM vec WHERE project=? AND rowid>? ORDER BY rowid", (project, since)
            ).fetchall()
        keys = [r[0] for r in rows]
        sessions = [r[1] for r in rows]
        hashes = [r[2] for r in rows]
        m = (
            np.frombuffer(b"".join(r[3] for r in rows), np.float16).reshape(len(rows), DIM).astype(np.float32)
            if rows
            else np.zeros((0, DIM), np.float32)
        )
        if since:
            keys, sessions, hashes = hit[1] + keys, hit[2] + sessions, hit[3] + hashes
            m = np.concatenate([hit[4], m]) if len(m) else hit[4]
        if len(self._cache) >= 4:  # the projects prompts come from: a few at a time
            self._cache.pop(next(iter(self._cache)))
        self._cache[project] = (stamp, keys, sessions, hashes, m, version)
        return keys, sessions, hashes, m


def forget_vectors(sessions=(), project: str | None = None, keys=()) -> None:
    """The forget step of the vectors (``indexer.forgetting``; ``keys``: the messages the
    re-redaction pass rewrote, ``indexer.reredact_stages``): nothing to do when there is no
    vectors.db; a failure is raised (the forget is retried, nothing is left behind)."""
    if not db_path().exists() or not (sessions or project or keys):
        return
    store = VectorStore()
    try:
        store.forget(sessions=sessions, project=project, keys=keys)
    finally:
        store.close()
