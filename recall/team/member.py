"""A member's operations: ``recall team join``, ``share``, ``unshare``, ``leave``, ``status``
and ``search``. Each returns what it did as a dict (the CLI formats it); errors are one-line
``RecallError``s.

Without a running service, ``share`` pulls the team's items once itself and ``unshare``/
``leave`` take them out of the index themselves; with one, they ask it to sync now (op
``team_sync``).
"""

from __future__ import annotations

import os
import time

from recall.core.errors import UsageError
from recall.team import conn as tc
from recall.team import local
from recall.team.sync import Sync, direct_writer, granted, index_pending, server_state


def poke_service() -> bool:
    """Ask the running service to sync now; whether one runs."""
    from recall.core import service_client as client

    try:
        client.call("team_sync", {}, timeout=3.0)
        return True
    except (client.Unavailable, client.RemoteError):
        return False


def _index_here() -> str:
    """Write the pending team changes into the index ourselves (no service); "" or why not."""
    try:
        index_pending(direct_writer)
        return ""
    except Exception as exc:  # noqa: BLE001 - an index in use or missing: the service writes them later
        return str(exc)


def _not_joined(err: Exception) -> Exception:
    """A join that failed joined nothing: there is no sync to resume (issue 36)."""
    text = str(err)
    if tc.UNREACHABLE_TAIL not in text:
        return err
    return type(err)(
        text.replace(
            tc.UNREACHABLE_TAIL,
            "Nothing was joined: check the URL and that the server is up, then run `recall team join` again.",
        )
    )


def join(url: str) -> dict:
    """Check the server as this role and remember it: {"server", "role", "granted", "service",
    "rejoined"}."""
    import psycopg

    info = tc.parse(url, allow_password=False)
    try:
        c = tc.connect(url)
    except tc.TeamError as exc:
        raise _not_joined(exc) from None
    try:
        role = c.execute("SELECT current_user").fetchone()[0]
        server = tc.server_label(info, role)
        if not c.execute("SELECT to_regnamespace('recall_team') IS NOT NULL").fetchone()[0]:
            raise tc.TeamError(
                f"The database {server} has no recall tables yet: its owner runs "
                "`recall team init URL` once (see docs/team.md)."
            )
        usable = c.execute("SELECT has_schema_privilege('recall_team', 'USAGE')").fetchone()[0]
        projects = granted(c) if usable else []
    except psycopg.Error as exc:
        raise _not_joined(tc.explain(exc, tc.server_label(info), url, info)) from None
    finally:
        c.close()
    old = local.joined()
    local.save_join(url.strip(), server, role)
    return {"server": server, "role": role, "granted": projects, "service": poke_service(), "rejoined": old is not None}


def _live_counts(db: local.TeamDB, remote: str) -> dict:
    return dict(
        db.conn.execute("SELECT kind, count(*) FROM pushed WHERE remote=? AND deleted=0 GROUP BY kind", (remote,))
    )


def share(path: str | os.PathLike | None) -> dict:
    """Share the project of ``path`` (default: here): {"path", "project", "server", "granted",
    "sent", "shared", "pulled"?, "pending"?, "service"}."""
    from indexer.ledger import excluded_by, exclusions
    from recall.team.identity import project_identity

    join = local.require_join()
    project, remote = project_identity(path if path is not None else os.getcwd())
    if excluded_by(project, project, exclusions()):
        raise UsageError(
            f"{project} is excluded from recall (`recall exclude list`): nothing of it is kept, so "
            "nothing of it can be shared."
        )
    with local.TeamDB() as db:
        db.add_share(project, remote)
    out: dict = {"path": project, "project": remote, "server": join.server, "role": join.role}
    try:
        c = tc.connect(join.url, server=join.server)
        try:
            out["granted"] = remote in granted(c)
            if out["granted"]:
                sync = Sync(join, direct_writer)
                out["sent"] = sync.push(c, remotes={remote})["sent"]
                out["service"] = poke_service()
                if not out["service"]:  # nobody else will bring the team's items here: once, now
                    out["pulled"] = sync.pull(c)["pulled"]
        finally:
            c.close()
    except tc.TeamError as exc:
        out["pending"] = str(exc)
    with local.TeamDB() as db:
        out["shared"] = _live_counts(db, remote)
    if "service" not in out:
        out["service"] = poke_service()
    if out.get("pulled"):
        why = _index_here()
        if why:
            out["index"] = why
    return out


def unshare(path: str | os.PathLike | None) -> dict:
    """Stop sharing the project of ``path``: {"path", "project", "still_shared", "withdrawn",
    "removed_here", "pending"?, "service"}."""
    from recall.team.identity import local_project

    join = local.require_join()
    project = local_project(path if path is not None else os.getcwd())
    with local.TeamDB() as db:
        remote = db.remove_share(project)
        if remote is None:
            shared = ", ".join(db.shares()) or "none"
            raise UsageError(f"{project} is not shared (shared here: {shared}).")
        still = remote in db.remotes()
        dropped = 0 if still else db.drop_remote(remote)
    out: dict = {"path": project, "project": remote, "still_shared": still, "withdrawn": 0, "removed_here": dropped}
    if not still:
        try:
            c = tc.connect(join.url, server=join.server)
            try:
                out["withdrawn"] = Sync(join).push(c, remotes={remote})["withdrawn"]
            finally:
                c.close()
        except tc.TeamError as exc:
            out["pending"] = str(exc)
    out["service"] = poke_service()
    if not out["service"]:
        why = _index_here()
        if why:
            out["index"] = why
    return out


def leave(keep_shared: bool = False) -> dict:
    """Take this machine out of the team: {"left", "withdrawn", "removed_here", "kept_shared"}.
    Withdrawing needs the server: unreachable, nothing changes (unless ``keep_shared``)."""
    join = local.require_join()
    withdrawn = 0
    with local.TeamDB() as db:
        shares = db.shares()
    if not keep_shared:
        with local.TeamDB() as db:
            for path in shares:
                db.remove_share(path)
        try:
            c = tc.connect(join.url, server=join.server)
            try:
                withdrawn = Sync(join).push(c)["withdrawn"]
            finally:
                c.close()
        except tc.TeamError as exc:
            with local.TeamDB() as db:
                for path, remote in shares.items():
                    db.add_share(path, remote)
            raise tc.TeamError(
                f"{exc} Nothing was changed: try again once it is reachable, or "
                "`recall team leave --keep-shared` to leave what you shared on the server."
            ) from None
    with local.TeamDB() as db:
        removed = len(db.clear())
    local.drop_join()
    if not poke_service():
        _index_here()
    return {"left": join.server, "withdrawn": withdrawn, "removed_here": removed, "kept_shared": keep_shared}


def status() -> dict:
    """The join, the service's sync, per shared project what is pulled and the lag, and what
    this machine shared in the last 24 hours (``recall team status --json``)."""
    from recall.core import service_client as client

    join = local.joined()
    if join is None:
        return {"joined": False}
    out: dict = {"joined": True, "server": join.server, "role": join.role, "machine": join.origin}
    try:
        out["service"] = client.call("team_status", {}, timeout=3.0)
    except (client.Unavailable, client.RemoteError):
        out["service"] = None
    with local.TeamDB() as db:
        shares = db.shares()
        cursors = db.cursors()
        counts = db.counts()
        out["shared_last_day"] = db.shared_since(time.time() - 86400)
        out["on_server"] = db.live_pushed()
        out["last_push"] = float(db.get("last_push", "0")) or None
        out["last_pull"] = float(db.get("last_pull", "0")) or None
        pulled = dict(db.conn.execute("SELECT remote, count(*) FROM items GROUP BY remote"))
        n_skipped, last_skipped = db.skipped()
        out["stuck"] = db.stuck()
    out["skipped"] = {"count": n_skipped, "latest": last_skipped}
    out.update(items=counts["items"], not_indexed=counts["not_indexed"])
    projects = [
        {
            "path": p,
            "project": r,
            "pulled": pulled.get(r, 0),
            "stuck": sum(1 for s in out["stuck"] if s["project"] == r),
        }
        for p, r in shares.items()
    ]
    try:
        c = tc.connect(join.url, timeout=5, server=join.server)
        try:
            mine = set(granted(c))
            lag = server_state(c, sorted(set(shares.values()) & mine), cursors, join.origin)
        finally:
            c.close()
        out["reachable"] = True
        out["granted"] = sorted(mine)
        for p in projects:
            p["granted"] = p["project"] in mine
            p.update(lag.get(p["project"], {"behind": None, "lag_seconds": None}))
    except tc.TeamError as exc:
        out["reachable"] = False
        out["error"] = str(exc)
    out["projects"] = projects
    return out


def search(text: str, limit: int = 10) -> dict:
    """``recall team search``: {"query", "server", "role", "hits"} (``recall.team.search``)."""
    import psycopg

    from recall.team.search import search as server_search

    join = local.require_join()
    with local.TeamDB() as db:
        pulled = {r[0] for r in db.conn.execute("SELECT id FROM items")}
    c = tc.connect(join.url, server=join.server)
    try:
        hits = server_search(c, text, limit=limit, pulled=pulled)
    except psycopg.Error as exc:
        raise tc.explain(exc, join.server, join.url) from None
    finally:
        c.close()
    return {"query": text, "server": join.server, "role": join.role, "hits": hits}
