"""This machine's side of the team: the join, the shares, what was pushed, what was pulled.

``$RECALL_HOME/team/team.json`` (0600) is the join: the server's URL (never with a
password: libpq reads it from ``~/.pgpass`` or ``PGPASSWORD``), the role, and this
machine's ``origin`` (a random id: the items it shares carry it, so it never pulls back
its own). ``$RECALL_HOME/team/team.db`` (SQLite, WAL, 0600) holds:

``shares``   the checkouts this machine shares (path -> normalized remote);
``pushed``   every item this machine has on the server, with the digest sent (a withdrawn
             one stays, ``deleted``, so ``recall team status`` can count it): the push
             compares the distilled layer with it and sends only the difference;
``items``    the team's items pulled for the shared projects (others' and this member's
             other machines'), the copy the index is rebuilt from; ``indexed`` says whether
             the index has it yet;
``unindex``  pulled items deleted here whose index documents are not yet deleted;
``gone``     team items ``recall forget`` removed on this machine: never pulled back;
``cursors``  per project, the last ``seq`` pulled;
``stuck``    this machine's items the server refused (the rest were sent): which, and why;
``skipped``  pulled rows that could not be kept (``recall.team.sync.check_pulled``: a date
             that is no date, a tag list that is not one...), and why: counted, never kept;
``meta``     the sync's bookkeeping (last push and pull, the last error, the index id).

Everything a step changes here is written after the server or the index confirmed it,
so a crash anywhere repeats a step, and every step is idempotent (items are keyed by id).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from recall.core import paths
from recall.core.errors import UsageError
from recall.core.jsonio import read_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS shares(path TEXT PRIMARY KEY, remote TEXT NOT NULL, since REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pushed(id TEXT PRIMARY KEY, remote TEXT NOT NULL, kind TEXT NOT NULL,
    ref TEXT NOT NULL, digest TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS pushed_remote ON pushed(remote, deleted);
CREATE INDEX IF NOT EXISTS pushed_at ON pushed(at);
CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY, remote TEXT NOT NULL, author TEXT NOT NULL,
    kind TEXT NOT NULL, mtype TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL,
    created REAL NOT NULL, updated REAL NOT NULL, seq INTEGER NOT NULL, indexed INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS items_remote ON items(remote);
CREATE INDEX IF NOT EXISTS items_indexed ON items(indexed);
CREATE TABLE IF NOT EXISTS unindex(id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS gone(id TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cursors(remote TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stuck(id TEXT PRIMARY KEY, remote TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,
    why TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS skipped(id TEXT PRIMARY KEY, remote TEXT NOT NULL, why TEXT NOT NULL, at REAL NOT NULL);
"""


def team_dir() -> Path:
    return paths.recall_home() / "team"


def config_path() -> Path:
    return team_dir() / "team.json"


def db_path() -> Path:
    return team_dir() / "team.db"


# the join -----------------------------------------------------------------------------------
@dataclass
class Join:
    url: str  # the connection string, without a password
    server: str  # what to call the server in output and logs: role@host:port/db
    role: str
    origin: str  # this machine's id
    joined: float

    def as_json(self) -> dict:
        return {"url": self.url, "server": self.server, "role": self.role, "origin": self.origin, "joined": self.joined}


def joined() -> Join | None:
    """The join of this RECALL_HOME, or None (never joined, or left)."""
    data = read_json(config_path(), None, dict)
    if data is None:
        return None
    try:
        return Join(
            url=str(data["url"]),
            server=str(data.get("server") or "the team server"),
            role=str(data.get("role") or ""),
            origin=str(data["origin"]),
            joined=float(data.get("joined") or 0),
        )
    except (ValueError, KeyError, TypeError):
        return None


def require_join() -> Join:
    j = joined()
    if j is None:
        raise UsageError(
            "This machine has not joined a team: run `recall team join URL` first "
            "(the URL of your team's PostgreSQL database, as your own role)."
        )
    return j


def save_join(url: str, server: str, role: str) -> Join:
    old = joined()
    j = Join(
        url=url,
        server=server,
        role=role,
        origin=old.origin if old else secrets.token_hex(8),
        joined=old.joined if old else time.time(),
    )
    paths.atomic_write(config_path(), json.dumps(j.as_json(), indent=1) + "\n")
    return j


def drop_join() -> None:
    for p in (config_path(),):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


# the database ---------------------------------------------------------------------------------
class TeamDB:
    """``team.db``, opened per use (``with TeamDB() as db``). Writes are transactions."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        paths.ensure_dir(self.path.parent)
        new = not self.path.exists()
        if new:  # created 0600 before SQLite opens it
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        for suffix in ("-wal", "-shm"):
            try:
                os.chmod(str(self.path) + suffix, 0o600)
            except OSError:
                pass

    def __enter__(self) -> "TeamDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def tx(self):
        """``with db.tx():`` one write transaction (BEGIN IMMEDIATE ... COMMIT)."""
        return _Tx(self.conn)

    # meta
    def get(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def put(self, **values) -> None:
        self.conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            [(k, str(v)) for k, v in values.items()],
        )

    # shares
    def shares(self) -> dict[str, str]:
        """path -> remote."""
        return dict(self.conn.execute("SELECT path, remote FROM shares ORDER BY path"))

    def remotes(self) -> dict[str, list[str]]:
        """remote -> the local paths sharing it."""
        out: dict[str, list[str]] = {}
        for path, remote in self.conn.execute("SELECT path, remote FROM shares ORDER BY since, path"):
            out.setdefault(remote, []).append(path)
        return out

    def add_share(self, path: str, remote: str) -> bool:
        with self.tx():
            cur = self.conn.execute(
                "INSERT INTO shares(path, remote, since) VALUES (?, ?, ?) ON CONFLICT(path) "
                "DO UPDATE SET remote=excluded.remote WHERE shares.remote != excluded.remote",
                (path, remote, time.time()),
            )
            return cur.rowcount > 0

    def remove_share(self, path: str) -> str | None:
        with self.tx():
            row = self.conn.execute("SELECT remote FROM shares WHERE path=?", (path,)).fetchone()
            self.conn.execute("DELETE FROM shares WHERE path=?", (path,))
        return row[0] if row else None

    # pushed
    def pushed(self, remote: str | None = None) -> dict[str, tuple[str, int]]:
        """id -> (digest, deleted) of what this machine pushed (of one remote)."""
        if remote is None:
            rows = self.conn.execute("SELECT id, digest, deleted FROM pushed")
        else:
            rows = self.conn.execute("SELECT id, digest, deleted FROM pushed WHERE remote=?", (remote,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def pushed_remotes(self) -> set[str]:
        """Remotes this machine still has live items on the server of."""
        return {r[0] for r in self.conn.execute("SELECT DISTINCT remote FROM pushed WHERE deleted=0")}

    def record_pushed(self, rows: list[tuple[str, str, str, str, str, int]]) -> None:
        """(id, remote, kind, ref, digest, deleted) rows the server committed."""
        now = time.time()
        with self.tx():
            self.conn.executemany(
                "INSERT INTO pushed(id, remote, kind, ref, digest, deleted, at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET digest=excluded.digest, deleted=excluded.deleted, at=excluded.at",
                [(*r, now) for r in rows],
            )

    def mark_withdrawn(self, ids: list[str]) -> None:
        """Tombstones the server committed."""
        now = time.time()
        with self.tx():
            self.conn.executemany(
                "UPDATE pushed SET deleted=1, digest='deleted', at=? WHERE id=?", [(now, i) for i in ids]
            )

    def mark_stale(self, ids: list[str], unknown: list[tuple[str, str, str]]) -> None:
        """Records that no longer match the server (``Sync.verify``): the next push compares
        them as changed, so it sends the item again or withdraws it. ``unknown``: (id,
        remote, kind) the server holds of this machine and this file does not."""
        with self.tx():
            self.conn.executemany("UPDATE pushed SET digest='stale', deleted=0 WHERE id=?", [(i,) for i in ids])
            self.conn.executemany(
                "INSERT OR IGNORE INTO pushed(id, remote, kind, ref, digest, deleted, at) "
                "VALUES (?, ?, ?, '', 'stale', 0, 0)",
                unknown,
            )

    def record_stuck(self, remote: str, stuck: list[tuple[str, str, str, str]]) -> None:
        """(id, kind, ref, why) of the items of ``remote`` the server refused in this push
        (every push tries them all again: what it did not refuse is not stuck any more)."""
        now = time.time()
        with self.tx():
            self.conn.execute("DELETE FROM stuck WHERE remote=?", (remote,))
            self.conn.executemany(
                "INSERT INTO stuck(id, remote, kind, ref, why, at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET why=excluded.why, at=excluded.at",
                [(i, remote, k, r, w, now) for i, k, r, w in stuck],
            )

    def stuck(self) -> list[dict]:
        """This machine's items the server refused: {"id", "project", "kind", "ref", "why"}."""
        rows = self.conn.execute("SELECT id, remote, kind, ref, why FROM stuck ORDER BY at DESC").fetchall()
        return [{"id": r[0], "project": r[1], "kind": r[2], "ref": r[3].split("\0")[-1], "why": r[4]} for r in rows]

    def shared_since(self, since: float) -> dict[str, int]:
        """What this machine sent since ``since``: {"memory": n, "summary": n, "rule": n, "withdrawn": n}."""
        out = {"memory": 0, "summary": 0, "rule": 0, "withdrawn": 0}
        for kind, deleted, n in self.conn.execute(
            "SELECT kind, deleted, count(*) FROM pushed WHERE at >= ? GROUP BY kind, deleted", (since,)
        ):
            key = "withdrawn" if deleted else kind
            out[key] = out.get(key, 0) + n
        return out

    def live_pushed(self) -> int:
        return self.conn.execute("SELECT count(*) FROM pushed WHERE deleted=0").fetchone()[0]

    # pulled items
    def cursor(self, remote: str) -> int:
        row = self.conn.execute("SELECT seq FROM cursors WHERE remote=?", (remote,)).fetchone()
        return int(row[0]) if row else 0

    def cursors(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.conn.execute("SELECT remote, seq FROM cursors")}

    def gone_ids(self, ids: list[str]) -> set[str]:
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            q = f"SELECT id FROM gone WHERE id IN ({','.join('?' * len(chunk))})"
            out.update(r[0] for r in self.conn.execute(q, chunk))
        return out

    def apply_pulled(
        self, remote: str, upserts: list[dict], deletes: list[str], seq: int, skipped: list[tuple[object, str]] = ()
    ) -> None:
        """Pulled rows, and the cursor after them, in one transaction; ``skipped``: (id, why)
        of the rows refused (an older copy of one goes too: its new version is not kept)."""
        now = time.time()
        bad = [(str(i)[:80], remote, why, now) for i, why in skipped]
        with self.tx():
            if bad:
                self.conn.executemany(
                    "INSERT INTO skipped(id, remote, why, at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET why=excluded.why, at=excluded.at",
                    bad,
                )
                deletes = [*deletes, *(b[0] for b in bad)]
            if any(_cut_since(self.conn, u) for u in upserts):
                self.put(purge_due="1")  # a forget rewrote it: the old text leaves the segments too
            fine = [u["id"] for u in upserts] + [d for d in deletes if d not in {b[0] for b in bad}]
            self.conn.executemany("DELETE FROM skipped WHERE id=?", [(i,) for i in fine])
            self.conn.executemany(
                "INSERT INTO items(id, remote, author, kind, mtype, content, tags, created, updated, seq, indexed) "
                "VALUES (:id, :remote, :author, :kind, :mtype, :content, :tags, :created, :updated, :seq, 0) "
                "ON CONFLICT(id) DO UPDATE SET author=excluded.author, kind=excluded.kind, mtype=excluded.mtype, "
                "content=excluded.content, tags=excluded.tags, created=excluded.created, "
                "updated=excluded.updated, seq=excluded.seq, indexed=0",
                [dict(u, tags=json.dumps(u["tags"])) for u in upserts],
            )
            if deletes:
                self.conn.executemany("DELETE FROM items WHERE id=?", [(d,) for d in deletes])
                self.conn.executemany("INSERT OR IGNORE INTO unindex(id) VALUES (?)", [(d,) for d in deletes])
            self.conn.execute(
                "INSERT INTO cursors(remote, seq) VALUES (?, ?) ON CONFLICT(remote) DO UPDATE "
                "SET seq=max(cursors.seq, excluded.seq)",
                (remote, seq),
            )

    def drop_bad(self, bad: list[tuple[str, str]]) -> None:
        """Pulled items found unusable after they were kept (by an older recall): recorded
        as skipped and deleted (their index documents with them)."""
        now = time.time()
        with self.tx():
            for item_id, why in bad:
                row = self.conn.execute("SELECT remote FROM items WHERE id=?", (item_id,)).fetchone()
                self.conn.execute(
                    "INSERT INTO skipped(id, remote, why, at) VALUES (?, ?, ?, ?) ON CONFLICT(id) "
                    "DO UPDATE SET why=excluded.why, at=excluded.at",
                    (item_id, row[0] if row else "", why, now),
                )
                self.conn.execute("DELETE FROM items WHERE id=?", (item_id,))
                self.conn.execute("INSERT OR IGNORE INTO unindex(id) VALUES (?)", (item_id,))

    def skipped(self) -> tuple[int, dict | None]:
        """How many pulled rows were refused, and the latest: {"id", "project", "why"}."""
        n = self.conn.execute("SELECT count(*) FROM skipped").fetchone()[0]
        row = self.conn.execute("SELECT id, remote, why FROM skipped ORDER BY at DESC LIMIT 1").fetchone()
        return n, ({"id": row[0], "project": row[1], "why": row[2]} if row else None)

    def drop_remote(self, remote: str) -> int:
        """Forget the pulled items of a project no longer shared here (and its cursor)."""
        with self.tx():
            ids = [r[0] for r in self.conn.execute("SELECT id FROM items WHERE remote=?", (remote,))]
            self.conn.executemany("INSERT OR IGNORE INTO unindex(id) VALUES (?)", [(i,) for i in ids])
            self.conn.execute("DELETE FROM items WHERE remote=?", (remote,))
            self.conn.execute("DELETE FROM cursors WHERE remote=?", (remote,))
            self.conn.execute("DELETE FROM skipped WHERE remote=?", (remote,))
        return len(ids)

    def forget_items(self, ids: list[str]) -> int:
        """Pulled items ``recall forget`` removed here: gone for good on this machine."""
        now = time.time()
        with self.tx():
            self.conn.executemany("INSERT OR IGNORE INTO gone(id, at) VALUES (?, ?)", [(i, now) for i in ids])
            self.conn.executemany("DELETE FROM items WHERE id=?", [(i,) for i in ids])
            self.conn.executemany("INSERT OR IGNORE INTO unindex(id) VALUES (?)", [(i,) for i in ids])
        return len(ids)

    def items(self, where: str = "", args: tuple = ()) -> list[dict]:
        q = "SELECT id, remote, author, kind, mtype, content, tags, created, updated, seq FROM items" + (
            f" WHERE {where}" if where else ""
        )
        out = []
        for r in self.conn.execute(q, args):
            out.append(
                {
                    "id": r[0],
                    "remote": r[1],
                    "author": r[2],
                    "kind": r[3],
                    "mtype": r[4],
                    "content": r[5],
                    "tags": _tags(r[6]),
                    "created": r[7],
                    "updated": r[8],
                    "seq": r[9],
                }
            )
        return out

    def to_index(self, limit: int = 2000) -> tuple[list[dict], list[str]]:
        """(items the index lacks, ids whose documents must go): the next batch."""
        ups = self.items("indexed=0 ORDER BY seq LIMIT ?", (limit,))
        dels = [r[0] for r in self.conn.execute("SELECT id FROM unindex LIMIT ?", (limit,))]
        return ups, dels

    def mark_indexed(self, ids: list[str], unindexed: list[str]) -> None:
        with self.tx():
            self.conn.executemany("UPDATE items SET indexed=1 WHERE id=?", [(i,) for i in ids])
            self.conn.executemany("DELETE FROM unindex WHERE id=?", [(i,) for i in unindexed])

    def reindex_all(self) -> None:
        """The index lost its team documents (rebuilt): write them all again."""
        with self.tx():
            self.conn.execute("UPDATE items SET indexed=0")

    def counts(self) -> dict[str, int]:
        n_items = self.conn.execute("SELECT count(*) FROM items").fetchone()[0]
        waiting = self.conn.execute("SELECT count(*) FROM items WHERE indexed=0").fetchone()[0]
        waiting += self.conn.execute("SELECT count(*) FROM unindex").fetchone()[0]
        return {"items": n_items, "not_indexed": waiting}

    def clear(self) -> list[str]:
        """Leave: every pulled item goes (its ids returned, to delete from the index), and the
        shares, cursors and push records with it."""
        ids = [r[0] for r in self.conn.execute("SELECT id FROM items")]
        ids += [r[0] for r in self.conn.execute("SELECT id FROM unindex")]
        with self.tx():
            for table in ("shares", "pushed", "items", "cursors", "meta", "skipped", "stuck"):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.executemany("INSERT OR IGNORE INTO unindex(id) VALUES (?)", [(i,) for i in ids])
        return ids


def _cut_since(conn: sqlite3.Connection, item: dict) -> bool:
    """Whether ``item`` is a copy held here with something cut out of it since (a forget's
    ``[redacted:forgotten]`` or a redaction marker it did not have)."""
    row = conn.execute("SELECT content FROM items WHERE id=?", (item["id"],)).fetchone()
    if row is None:
        return False
    new = str(item.get("content") or "")
    return new.count("[redacted:") > str(row[0]).count("[redacted:")


def _tags(value: str) -> list[str]:
    try:
        tags = json.loads(value)
    except ValueError:
        return []
    return [str(t) for t in tags] if isinstance(tags, list) else []


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind, exc, tb) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")
