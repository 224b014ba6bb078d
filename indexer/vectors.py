"""The semantic channel's vectors: one per embedded message, in ``$RECALL_HOME/vectors.db``
(SQLite, 0600). Written by the service's background job (``recall.search.semantic``), read by
the prompt hook's model path; never the source of any text (a hit is read from the index and
the archive, through the ledger's gate, and only when the text it was embedded from is still
the text there: ``hash``).

  vec(key, project, session, ts, hash, v)   key "m:<uuid>" as in the index; v: 384 float16

Forgetting goes through here too: ``indexer.forgetting.remove_from_index`` drops the vectors of
every session it touches and of a whole forgotten project, once the index no longer holds what
it removed; the re-redaction pass drops those of the messages it rewrote once their redacted
text is committed (a secret the newer rules catch leaves no vector behind); ``recall exclude
add`` drops an excluded project's. Each such drop changes ``meta.epoch`` in its transaction, and
the job writes nothing it read before (``VectorStore.put``), whatever the timing. ``recall
purge`` and uninstall remove the file with the rest of ``$RECALL_HOME``.
A file that cannot be opened or read (``Damaged``) is set aside (``set_aside``) and rebuilt by
the service's job; a forget deletes it, and any copy set aside, whole.
A model change (``MODEL``) empties the table: vectors of two encoders never mix.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path

from recall.core import paths

MODEL = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
ASIDE = ".corrupt-"  # vectors.db.corrupt-<UTC time>: a damaged store set aside (the newest one kept)


class Damaged(Exception):
    """vectors.db cannot be opened or read (not a database, corrupt, truncated, of another
    shape): set aside and rebuilt (``set_aside``); never shown to anyone as such."""


def db_path() -> Path:
    return paths.recall_home() / "vectors.db"


def text_hash(text: str) -> str:
    """What a vector was embedded from, to tell whether the text is still the same."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_DAMAGE_WORDS = ("malformed", "not a database", "no such table", "no such column", "has no column", "columns but")


def damage(exc: BaseException) -> str | None:
    """Why ``exc`` says the file is damaged (not merely busy or locked), or None."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc)
    if (code is not None and code & 0xFF in _DAMAGE_CODES) or any(w in text for w in _DAMAGE_WORDS):
        return text or type(exc).__name__
    return None


def _new_epoch() -> str:
    return uuid.uuid4().hex[:16]


def set_aside(path: Path | None = None) -> Path | None:
    """Move a damaged store out of the way (``vectors.db.corrupt-<time>``, 0600, the newest one
    kept for a look), its WAL and shared memory removed; where it went (None: no file)."""
    path = path or db_path()
    for old in path.parent.glob(path.name + ASIDE + "*"):
        try:
            old.unlink()
        except OSError:
            pass
    aside = path.with_name(path.name + ASIDE + time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    try:
        os.replace(path, aside)
        os.chmod(aside, 0o600)
    except FileNotFoundError:
        aside = None
    for suffix in ("-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass
    return aside


def drop_set_aside(path: Path | None = None) -> int:
    """Delete every set-aside copy (a forget cannot take its rows out of a damaged file)."""
    path = path or db_path()
    n = 0
    for old in path.parent.glob(path.name + ASIDE + "*"):
        try:
            old.unlink()
            n += 1
        except OSError:
            pass
    return n


class VectorStore:
    """The table, with an in-memory copy of each project's matrix for the process that reads
    it (the service), refreshed when the project's rows change.

    ``meta.epoch`` changes with every forget, in the transaction that drops the vectors; the
    job writes a batch only while the epoch it read before reading the index is still the
    table's (``put``), so what a forget removed is never written back from a queue filled
    before it. A damaged file raises ``Damaged`` from any method (``damaged`` says why)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        self.lock = threading.Lock()
        self.damaged: str | None = None
        self._cache: dict[str, tuple] = {}
        self._writes = 0  # this connection's writes (PRAGMA data_version counts the others')
        paths.ensure_dir(self.path.parent)
        new = not self.path.exists()
        self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
        if new:
            os.chmod(self.path, 0o600)
        try:
            self._prepare()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            why = damage(exc)
            if why is None:
                raise
            raise Damaged(why) from None
        try:
            self.ino: int | None = os.stat(self.path).st_ino
        except OSError:
            self.ino = None

    def _prepare(self) -> None:
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
        self.conn.execute("SELECT key, project, session, ts, hash, v FROM vec LIMIT 0").fetchall()
        row = self.conn.execute("SELECT value FROM meta WHERE key='model'").fetchone()
        if row is None or row[0] != MODEL:
            self.conn.execute("DELETE FROM vec")
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES('model', ?)", (MODEL,))
        if self.conn.execute("SELECT value FROM meta WHERE key='epoch'").fetchone() is None:
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES('epoch', ?)", (_new_epoch(),))
        self._secure()

    def _failed(self, exc: BaseException) -> None:
        """A read or write failed: a damaged file is said so (``Damaged``); the rest is raised."""
        why = damage(exc)
        if why is None:
            raise exc
        self.damaged = self.damaged or why
        raise Damaged(why) from None

    def moved(self) -> bool:
        """The file is no longer the one this connection opened (set aside, deleted)."""
        try:
            return os.stat(self.path).st_ino != self.ino
        except OSError:
            return True

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
            try:
                self.conn.close()
            except sqlite3.Error:
                pass

    def epoch(self) -> str:
        """The table's forget epoch (read before the index, checked again by ``put``)."""
        with self.lock:
            try:
                row = self.conn.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
        return row[0] if row else ""

    # writing ------------------------------------------------------------------------------
    def put(self, rows: list[tuple[str, str, str, int, str, object]], epoch: str | None = None) -> bool:
        """``(key, project, session, ts, hash, vector)`` rows (vectors float32 or float16).
        With ``epoch``: written only while it is still the table's (no forget since it was
        read), in the same transaction; False when nothing was written for that reason."""
        import numpy as np

        data = [(k, p, s, int(ts), h, np.asarray(v, np.float16).tobytes()) for k, p, s, ts, h, v in rows]
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    if epoch is not None:
                        row = self.conn.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
                        if (row[0] if row else "") != epoch:
                            self.conn.execute("ROLLBACK")
                            return False
                    self.conn.executemany("INSERT OR REPLACE INTO vec VALUES(?,?,?,?,?,?)", data)
                    self.conn.execute("COMMIT")
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
            self._writes += 1
        self._secure()
        return True

    def forget(self, sessions=(), project: str | None = None, keys=(), bump: bool = True) -> int:
        """Drop the vectors of ``sessions``, of a whole ``project``, or these ``keys``; with
        ``bump`` (every forget), a new epoch in the same transaction: whatever the job queued
        before is not written (``put``)."""
        n = 0
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    for sid in sessions:
                        n += self.conn.execute("DELETE FROM vec WHERE session=?", (sid,)).rowcount
                    if project:
                        n += self.conn.execute("DELETE FROM vec WHERE project=?", (project,)).rowcount
                    for key in keys:
                        n += self.conn.execute("DELETE FROM vec WHERE key=?", (key,)).rowcount
                    if bump:
                        self.conn.execute("INSERT OR REPLACE INTO meta VALUES('epoch', ?)", (_new_epoch(),))
                    self.conn.execute("COMMIT")
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
                self._writes += 1
                if n:
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # nor do they linger in the WAL
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
        if n:
            self._cache.clear()
        return n

    # reading ------------------------------------------------------------------------------
    def known(self, keys: list[str]) -> dict[str, str]:
        """Of ``keys``, those with a vector, and the hash of the text each was embedded from."""
        out: dict[str, str] = {}
        with self.lock:
            try:
                for i in range(0, len(keys), 500):
                    chunk = keys[i : i + 500]
                    q = f"SELECT key, hash FROM vec WHERE key IN ({','.join('?' * len(chunk))})"
                    out.update(self.conn.execute(q, chunk).fetchall())
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
        return out

    def count(self, project: str | None = None) -> int:
        with self.lock:
            try:
                if project is None:
                    return self.conn.execute("SELECT count(*) FROM vec").fetchone()[0]
                return self.conn.execute("SELECT count(*) FROM vec WHERE project=?", (project,)).fetchone()[0]
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
        raise AssertionError("unreachable")

    def check(self) -> None:
        """Read every page once (``PRAGMA quick_check``): ``Damaged`` when a page is not sound."""
        with self.lock:
            try:
                rows = self.conn.execute("PRAGMA quick_check").fetchall()
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
        if rows != [("ok",)]:
            self.damaged = self.damaged or "database disk image is malformed"
            raise Damaged(f"quick_check: {str(rows[0][0])[:200] if rows else 'no answer'}")

    def matrix(self, project: str):
        """``(keys, sessions, hashes, float32 matrix)`` of ``project``'s vectors."""
        with self.lock:
            try:
                return self._matrix(project)
            except sqlite3.DatabaseError as exc:
                self._failed(exc)
            except ValueError as exc:  # a vector of another size: not a table this code wrote
                self.damaged = self.damaged or f"a vector of another size ({exc})"
                raise Damaged(self.damaged) from None
        raise AssertionError("unreachable")

    def _matrix(self, project: str):
        import numpy as np

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


def remove(path: Path | None = None) -> None:
    """Delete the store whole (with its WAL and shared memory): what a forget does to a file
    it cannot read, since it cannot take the forgotten rows out of it."""
    path = path or db_path()
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


def forget_vectors(sessions=(), project: str | None = None, keys=()) -> None:
    """The forget step of the vectors (``indexer.forgetting``; ``keys``: the messages the
    re-redaction pass rewrote, ``indexer.reredact_stages``; a deleted memory), run once what
    it removes is gone from the index (committed): the rows go and the epoch changes in one
    transaction, so the job's queue, filled before, writes nothing back (``VectorStore.put``).
    A damaged copy set aside earlier goes whole, and so does a vectors.db that cannot be read
    (the service rebuilds it). Nothing to do when there is no vectors.db; any other failure
    is raised (the forget is retried, nothing is left behind)."""
    if not (sessions or project or keys):
        return
    drop_set_aside()
    if not db_path().exists():
        return
    try:
        store = VectorStore()
    except Damaged:
        remove()
        return
    try:
        store.forget(sessions=sessions, project=project, keys=keys)
    except Damaged:
        store.close()
        remove()
    finally:
        store.close()
