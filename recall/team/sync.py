"""Push, pull and index: the team sync, one idempotent step at a time.

**Push** (``push``): for every team project this machine shares, or still has items on
the server of, the distilled layer now (``recall.team.items.collect``) is compared with
what was pushed (``team.db``'s ``pushed``): new and changed items are upserted, items no
longer there (forgotten, superseded, unshared, excluded, switched off) become tombstones.
Batches of ``BATCH`` rows, one server transaction each; ``pushed`` records a batch only
after the server committed it. A crash or a dead server in between repeats the batch:
items are keyed by id and an unchanged upsert changes nothing, so nothing is lost and
nothing is duplicated.

**Pull** (``pull``): per shared project, the rows with ``seq`` above this machine's cursor,
in ``seq`` order (row-level security shows only granted projects), written to ``team.db``
with the new cursor in one SQLite transaction. This machine's own items are skipped; a
tombstone deletes the local copy; an item ``recall forget`` removed here stays gone.

**Index** (``index``): what ``team.db`` holds and the index lacks is written with the index
writer (the service's, through ``run_in_writer``), then marked done; a rebuilt index (a
new index id) gets every team item again.

``Sync.cycle`` runs the three; ``recall.service.ops.team`` runs it in the service, on a
local change (a ``stat`` each second), a ``NOTIFY recall_team`` from the server, or every
``POLL`` seconds.
"""

from __future__ import annotations

import time
from typing import Callable

from recall.core import log, paths
from recall.core.errors import RecallError
from recall.core.text import counted
from recall.team import local
from recall.team.items import Item, Keeper, collect, sources_stamp

BATCH = 200
PULL_BATCH = 1000
LOCK_TIMEOUT = 120.0

UPSERT = """
INSERT INTO recall_team.items (id, project, origin, kind, mtype, content, tags, created, updated, digest, deleted)
VALUES (%(id)s, %(project)s, %(origin)s, %(kind)s, %(mtype)s, %(content)s, %(tags)s,
        to_timestamp(%(created)s), to_timestamp(%(updated)s), %(digest)s, false)
ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, mtype = excluded.mtype, content = excluded.content,
    tags = excluded.tags, created = excluded.created, updated = excluded.updated, digest = excluded.digest,
    deleted = false
WHERE items.digest IS DISTINCT FROM excluded.digest OR items.deleted
"""
TOMBSTONE = """
UPDATE recall_team.items SET deleted = true, digest = 'deleted' WHERE id = ANY(%s) AND NOT deleted
"""
# What a pull reads of a row: never more than a valid item can hold (a hostile row's huge
# text or tag list stays on the server: its clipped form fails ``check_pulled``).
PULL = """
SELECT id, author, origin, kind, left(mtype, 200), left(content, 20001),
       CASE WHEN cardinality(tags) <= 100 AND length(array_to_string(tags, ' ')) <= 10000 THEN tags END,
       extract(epoch FROM created)::float8, extract(epoch FROM updated)::float8, deleted, seq
FROM recall_team.items WHERE project = %s AND seq > %s ORDER BY seq LIMIT %s
"""
# this machine's rows: its origin, written as this role (a teammate's row claiming the same
# origin is hers: pulled as hers, never withdrawn from here)
MINE = "SELECT id, project, kind, digest, deleted FROM recall_team.items WHERE origin = %s AND author = current_user"

# What a pulled item may hold (``check_pulled``): anything else is a hostile or broken row.
TS_MIN, TS_MAX = 0.0, 32503680000.0  # 1970 .. 3000
MAX_TAGS, MAX_TAG, MAX_MTYPE, MAX_TEXT = 100, 200, 64, 20000
KINDS = ("memory", "summary", "rule")

Writer = Callable[[Callable], object]  # writer(fn) runs fn(indexer) with the index writer


def check_pulled(item: dict) -> str:
    """Why a pulled item (from the server, or from ``team.db``) cannot be kept, or "".
    Pulled rows are a teammate's (or anyone with the grant's) writing: nothing in them is
    trusted as it is; one bad row is skipped and counted, and never stops a sync."""
    import math

    item_id = item.get("id")
    if not isinstance(item_id, str) or not 8 <= len(item_id) <= 80:
        return "its id is not an id"
    if item.get("kind") not in KINDS:
        return f"its kind is not one of {', '.join(KINDS)}"
    mtype = item.get("mtype")
    if not isinstance(mtype, str) or len(mtype) > MAX_MTYPE:
        return "its type is not a short text"
    content = item.get("content")
    if not isinstance(content, str) or len(content) > MAX_TEXT:
        return f"its text is not a text of at most {MAX_TEXT:,} characters"
    tags = item.get("tags")
    if (
        not isinstance(tags, list)
        or len(tags) > MAX_TAGS
        or not all(isinstance(t, str) and len(t) <= MAX_TAG for t in tags)
    ):
        return f"its tags are not a list of at most {MAX_TAGS} short texts"
    if not isinstance(item.get("author"), str):
        return "its author is not a role name"
    for field in ("created", "updated"):
        value = item.get(field)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not TS_MIN <= value <= TS_MAX
        ):
            return f"its {field} date is not a date between 1970 and 3000 ({value!r})"
    for text in (content, mtype, item["author"], *tags):
        if "\0" in text or not _encodable(text):
            return "it holds a NUL or an unpaired surrogate"
    return ""


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class Busy(RecallError):
    def __init__(self, what: str) -> None:
        super().__init__(
            f"Another recall process has been syncing the team ({what}) for {LOCK_TIMEOUT:.0f} s: "
            "try again in a minute (`recall team status` shows the sync)."
        )


def _lock(name: str, timeout: float = LOCK_TIMEOUT):
    return paths.file_lock(local.team_dir() / f"{name}.lock", timeout, lambda: Busy(name))


def direct_writer(fn):
    """``fn(indexer)`` with an index writer of our own (no service running)."""
    from indexer.ingest import Indexer

    with Indexer(heap=20_000_000, threads=1) as ix:
        return fn(ix)


class Sync:
    """One member machine's sync with the team server."""

    def __init__(self, join: local.Join, writer: Writer | None = None) -> None:
        self.join = join
        self.writer = writer or direct_writer
        self.log = log.get("team")
        self._done: dict[str, tuple] = {}  # remote -> the sources' stamp its last push saw

    # push -----------------------------------------------------------------------------------
    @staticmethod
    def _stamps(db: local.TeamDB) -> dict[str, tuple]:
        """Per project to push (shared here, or with items of this machine still on the
        server): a fingerprint of its sources, one ``stat`` per file."""
        shared = db.remotes()
        return {
            r: (tuple(shared.get(r, [])), sources_stamp(shared.get(r, []))) for r in set(shared) | db.pushed_remotes()
        }

    def local_changed(self) -> bool:
        """Whether anything a push reads changed since the last push."""
        with local.TeamDB() as db:
            stamps = self._stamps(db)
        return any(self._done.get(r) != s for r, s in stamps.items())

    def push(
        self,
        conn,
        remotes: set[str] | None = None,
        on_batch: Callable[[int], None] | None = None,
        changed_only: bool = False,
    ) -> dict:
        """Send what changed (``changed_only``: in the projects whose sources changed since
        their last push); returns {"sent": n, "withdrawn": n, "refused": {remote: why}}."""
        from recall.team.conn import NotGranted, explain, reachable_error

        out: dict = {"sent": 0, "withdrawn": 0, "refused": {}}
        with _lock("push"), local.TeamDB() as db:
            shared = db.remotes()
            stamps = self._stamps(db)
            todo = sorted(r for r in stamps if remotes is None or r in remotes)
            if changed_only:
                todo = [r for r in todo if self._done.get(r) != stamps[r]]
            keeper = Keeper()
            for remote in todo:
                self._done[remote] = stamps[remote]  # refused or unreadable: tried again when it changes
                try:
                    desired = collect(self.join.origin, remote, shared.get(remote, []), keeper)
                except Exception as exc:  # noqa: BLE001 - unreadable source: leave its items as they are
                    self.log.warning("push of %s skipped: %s", remote, exc)
                    out["refused"][remote] = f"not read ({exc})"
                    continue
                current = db.pushed(remote)
                ups = [i for i in desired.values() if current.get(i.id) != (i.digest, 0)]
                dels = sorted(i for i, (_d, deleted) in current.items() if not deleted and i not in desired)
                try:
                    self._send(conn, db, remote, ups, dels, out, on_batch)
                except Exception as exc:  # noqa: BLE001
                    if reachable_error(exc):
                        self._done.pop(remote, None)
                        raise
                    err = explain(exc, self.join.server, self.join.url)
                    if not isinstance(err, NotGranted):
                        raise err from None
                    out["refused"][remote] = str(err)
            db.put(last_push=time.time(), **{"refused": "\n".join(f"{r}\t{w}" for r, w in out["refused"].items())})
        return out

    def _send(self, conn, db: local.TeamDB, remote: str, ups: list[Item], dels: list[str], out: dict, on_batch) -> None:
        """Withdrawals first (nothing waits on a new item), then the upserts in batches; a batch
        the server refuses (not a lost connection) is sent one item at a time, and an item
        refused alone is recorded as stuck (``team status`` names it) while the rest go on."""
        from recall.team.conn import reachable_error

        origin = self.join.origin
        for i in range(0, len(dels), BATCH):
            batch = dels[i : i + BATCH]
            with conn.transaction():
                conn.execute(TOMBSTONE, (batch,))
            db.mark_withdrawn(batch)
            out["withdrawn"] += len(batch)
        stuck: list[tuple[Item, str]] = []
        for i in range(0, len(ups), BATCH):
            batch = ups[i : i + BATCH]
            try:
                self._upsert(conn, db, remote, batch, origin)
            except Exception as exc:  # noqa: BLE001
                if reachable_error(exc) or len(batch) == 1 and not _item_error(exc):
                    raise
                batch = self._one_by_one(conn, db, remote, batch, origin, stuck)
            out["sent"] += len(batch)
            if on_batch:
                on_batch(out["sent"])
        db.record_stuck(remote, [(it.id, it.kind, it.ref, why) for it, why in stuck])
        if stuck:
            out.setdefault("stuck", []).extend(it.id for it, _why in stuck)
            self.log.warning(
                "team: %s of %s not sent, e.g. %s: %s",
                counted(len(stuck), "item"),
                remote,
                stuck[0][0].ref.split("\0")[-1],
                stuck[0][1],
            )

    def _upsert(self, conn, db: local.TeamDB, remote: str, batch: list[Item], origin: str) -> None:
        with conn.transaction():
            with conn.cursor() as cur:
                cur.executemany(UPSERT, [it.row(origin) for it in batch])
        db.record_pushed([(it.id, remote, it.kind, it.ref, it.digest, 0) for it in batch])

    def _one_by_one(self, conn, db, remote, batch, origin, stuck) -> list[Item]:
        from recall.team.conn import reachable_error

        sent = []
        for it in batch:
            try:
                self._upsert(conn, db, remote, [it], origin)
                sent.append(it)
            except Exception as exc:  # noqa: BLE001
                if reachable_error(exc) or not _item_error(exc):
                    raise
                stuck.append((it, _why(exc)))
        return sent

    def verify(self, conn) -> int:
        """Compare ``pushed`` with what the server holds of this machine (a server restored
        from an older backup, a lost ``team.db``): every record that differs is marked stale,
        so the next push sends the item again or withdraws it. Returns how many."""
        server = {r[0]: (r[1], r[2], r[3], bool(r[4])) for r in conn.execute(MINE, (self.join.origin,))}
        with local.TeamDB() as db:
            mine = db.pushed()
            stale = []
            for item_id, (digest, deleted) in mine.items():
                have = server.get(item_id)
                live_there = have is not None and not have[3]
                if deleted and live_there or not deleted and (not live_there or have[2] != digest):
                    stale.append(item_id)
            unknown = [
                (i, project, kind) for i, (project, kind, _d, dead) in server.items() if i not in mine and not dead
            ]
            if stale or unknown:
                db.mark_stale(stale, unknown)
        n = len(stale) + len(unknown)
        if n:
            self._done.clear()
            self.log.info(
                "team: %s of this machine %s on the server; the next push mends them",
                counted(n, "item"),
                "differs" if n == 1 else "differ",
            )
        return n

    # pull -----------------------------------------------------------------------------------
    def pull(self, conn) -> dict:
        """Fetch what the team changed in the shared projects; returns {"pulled", "deleted",
        "skipped"} (rows ``check_pulled`` refused: counted in ``team.db``, never kept)."""
        out = {"pulled": 0, "deleted": 0, "skipped": 0}
        with _lock("pull"), local.TeamDB() as db:
            shared = db.remotes()
            for remote in sorted(set(db.cursors()) - set(shared)):  # unshared here since
                db.drop_remote(remote)
            stale = {r[0] for r in db.conn.execute("SELECT DISTINCT remote FROM items")} - set(shared)
            for remote in stale:
                db.drop_remote(remote)
            for remote in sorted(shared):
                while True:
                    rows = conn.execute(PULL, (remote, db.cursor(remote), PULL_BATCH)).fetchall()
                    if not rows:
                        break
                    gone = db.gone_ids([r[0] for r in rows if isinstance(r[0], str)])
                    ups, dels, bad = [], [], []
                    for item_id, author, origin, kind, mtype, content, tags, created, updated, deleted, seq in rows:
                        if origin == self.join.origin and author == self.join.role:
                            continue  # this machine's own: its memories are already here
                        if deleted is True and isinstance(item_id, str) and item_id:
                            dels.append(item_id)  # a tombstone needs nothing but its id
                            continue
                        item = {
                            "id": item_id,
                            "remote": remote,
                            "author": author,
                            "kind": kind,
                            "mtype": mtype,
                            "content": content,
                            "tags": tags,
                            "created": created,
                            "updated": updated,
                            "seq": seq,
                        }
                        why = check_pulled(item)
                        if why:
                            bad.append((item_id, why))
                        elif item_id not in gone:
                            ups.append(item)
                    db.apply_pulled(remote, ups, dels, rows[-1][10], skipped=bad)
                    if bad:
                        self.log.warning(
                            "team: %s of %s skipped, e.g. %s: %s",
                            counted(len(bad), "item"),
                            remote,
                            str(bad[0][0])[:80],
                            bad[0][1],
                        )
                    out["pulled"] += len(ups)
                    out["deleted"] += len(dels)
                    out["skipped"] += len(bad)
                    if len(rows) < PULL_BATCH:
                        break
            db.put(last_pull=time.time())
        return out

    # index ----------------------------------------------------------------------------------
    def index(self) -> int:
        return index_pending(self.writer)

    def cycle(self, conn, pull: bool = True, force_push: bool = False) -> dict:
        out: dict = {}
        if force_push or self.local_changed():
            out.update(self.push(conn))
        if pull:
            out.update(self.pull(conn))
        out["indexed"] = self.index()
        return out


def _item_error(exc: BaseException) -> bool:
    """Whether the server refused an item for what it holds (a NUL, a check, a value out of
    range), as against the connection, a grant or a bug."""
    try:
        import psycopg
    except ImportError:
        return False
    if isinstance(exc, (psycopg.DataError, psycopg.IntegrityError)):
        return True
    return isinstance(exc, (ValueError, UnicodeError))  # the driver refuses a NUL before sending


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


def index_pending(writer: Writer) -> int:
    """Write what ``team.db`` holds and the index lacks (and delete what went); returns
    the items written or deleted."""
    from indexer.documents import team_session_key
    from indexer.purge import purge_deleted_documents, segments_holding
    from indexer.schema import index_id
    from recall.team import index_docs

    done = 0
    held: set[str] | None = None  # the segments that held what was deleted or replaced
    purge_known = False
    with local.TeamDB() as db:
        current = index_id(paths.index_dir()) or ""
        if not current:
            return 0  # no index yet: the first service start makes one, then this runs again
        if db.get("index_id") != current:
            db.reindex_all()
        while True:
            ups, dels = db.to_index()
            if not ups and not dels:
                break
            bad = [(u["id"], why) for u in ups for why in [check_pulled(u)] if why]
            if bad:  # kept by an older recall, which trusted pulled rows: dropped here
                db.drop_bad(bad)
                ups = [u for u in ups if u["id"] not in {b[0] for b in bad}]
                dels = [*dels, *(b[0] for b in bad)]
            checkouts = db.remotes()
            if dels or db.get("purge_due") == "1":  # where the old copies are, before they go
                gone = [team_session_key(i) for i in [*dels, *(u["id"] for u in ups)]]
                found = writer(lambda ix: segments_holding(ix, "session_id", gone))
                if found is None or (purge_known and held is None):
                    held = None  # a segment it could not place: every segment with deletions
                else:
                    held = (held or set()) | found
                purge_known = True
            writer(lambda ix: index_docs.write(ix, ups, dels, checkouts))
            db.mark_indexed([u["id"] for u in ups], dels)
            done += len(ups) + len(dels)
            if dels:
                db.put(purge_due="1")
        if db.get("purge_due") == "1":
            # a withdrawn item, or one a forget rewrote (--secret): its old bytes leave the
            # index's segments here too, as a local forget's do (only the segments that held
            # them, when known: not the whole index for each teammate's withdrawal)
            db.put(purge_due="0")  # first: a purge longer than the caller waits is not started again
            writer(lambda ix: purge_deleted_documents(ix, only=held if purge_known else None))
        db.put(index_id=current)
    return done


def server_state(conn, remotes: list[str], cursors: dict[str, int], origin: str = "") -> dict:
    """Per shared project: the items on the server this machine has not pulled, and how old
    the oldest of them is (the lag). Its own items (``origin``) are never pulled: not counted."""
    out = {}
    for remote in remotes:
        row = conn.execute(
            "SELECT count(*), extract(epoch FROM min(pushed_at))::float8 FROM recall_team.items "
            "WHERE project = %s AND seq > %s AND origin <> %s",
            (remote, cursors.get(remote, 0), origin),
        ).fetchone()
        n, oldest = int(row[0] or 0), row[1]
        out[remote] = {"behind": n, "lag_seconds": round(max(0.0, time.time() - oldest), 1) if n and oldest else 0.0}
    return out


def granted(conn) -> list[str]:
    """The projects granted to the connected role (directly or through a group role)."""
    return [r[0] for r in conn.execute("SELECT DISTINCT project FROM recall_team.grants ORDER BY 1")]
