"""The database owner's operations: ``recall team init``, ``grant`` and ``revoke``.

Each takes a connection string and returns what it did as a dict; errors are one-line
``RecallError``s (``recall.team.conn``).
"""

from __future__ import annotations

import contextlib

from recall.core.errors import UsageError
from recall.team import conn as tc
from recall.team import schema


def init(url: str) -> dict:
    """Create recall's schema (tables, trigger, policies) unless this version is there:
    {"server", "schema", "version", "changed"}."""
    import psycopg

    info = tc.parse(url)
    server = tc.server_label(info)
    c = tc.connect(url, server=server)
    try:
        present = c.execute("SELECT to_regclass('recall_team.meta') IS NOT NULL").fetchone()[0]
        version = None
        if present:
            row = c.execute("SELECT value FROM recall_team.meta WHERE key = 'version'").fetchone()
            version = int(row[0]) if row else None
        changed = version != schema.VERSION
        if changed:
            with c.transaction():
                for statement in schema.INIT:
                    c.execute(statement)
                c.execute("UPDATE recall_team.meta SET value = %s WHERE key = 'version'", (str(schema.VERSION),))
        server = tc.server_label(info, c.execute("SELECT current_user").fetchone()[0])
    except psycopg.Error as exc:
        err = tc.explain(exc, server, url, info)
        if isinstance(err, tc.NotGranted):
            raise tc.TeamError(
                f"{server} refused to create recall's tables ({tc.scrub(str(exc), url, info)}): run "
                "`recall team init` as the database's owner (docs/team.md)."
            ) from None
        raise err from None
    finally:
        c.close()
    return {"server": server, "schema": schema.SCHEMA, "version": schema.VERSION, "changed": changed}


def _args(role: str, project: str) -> tuple[str, str]:
    from recall.team.identity import parse_project

    role = (role or "").strip()
    if not role:
        raise UsageError("ROLE is empty: pass the PostgreSQL role (or group role) of the member.")
    return role, parse_project(project)


def _owner(url: str | None):
    """The owner's connection: ``url``, else the joined one."""
    from recall.team import local

    if url is None:
        join = local.joined()
        if join is None:
            raise UsageError(
                "Pass the owner's connection with --url URL (this machine has not joined a team to default to)."
            )
        return tc.connect(join.url, server=join.server)
    return tc.connect(url)


def _refused(exc: Exception, what: str) -> Exception:
    err = tc.explain(exc, "the team server")
    if isinstance(err, tc.NotGranted):
        return tc.TeamError(
            f"{what} needs the database owner's connection: pass it with --url (the role that ran `recall team init`)."
        )
    return err


@contextlib.contextmanager
def _as_owner(url: str | None, what: str):
    """The owner's connection (``_owner``), closed after; a database error inside is the
    one-line error of ``what`` (``_refused``)."""
    import psycopg

    c = _owner(url)
    try:
        yield c
    except psycopg.Error as exc:
        raise _refused(exc, what) from None
    finally:
        c.close()


def grant(role: str, project: str, url: str | None = None) -> dict:
    """Let ``role`` read and write ``project``: {"role", "project", "new"}."""
    from psycopg import sql

    role, remote = _args(role, project)
    with _as_owner(url, "Granting") as c:
        if c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            raise UsageError(
                f"The database has no role {role!r}: create it first (CREATE ROLE {role} LOGIN; then "
                "\\password in psql), then grant again."
            )
        with c.transaction():
            new = c.execute(
                "INSERT INTO recall_team.grants (role, project) VALUES (%s, %s) ON CONFLICT DO NOTHING", (role, remote)
            ).rowcount
            for statement in schema.ROLE_PRIVILEGES:
                c.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
    return {"role": role, "project": remote, "new": bool(new)}


def revoke(role: str, project: str, url: str | None = None) -> dict:
    """Take ``project`` back from ``role``; a role left with no grant loses every right on the
    tables: {"role", "project", "revoked", "grants_left"}."""
    from psycopg import sql

    role, remote = _args(role, project)
    with _as_owner(url, "Revoking") as c:
        with c.transaction():
            gone = c.execute("DELETE FROM recall_team.grants WHERE role = %s AND project = %s", (role, remote)).rowcount
            left = c.execute("SELECT count(*) FROM recall_team.grants WHERE role = %s", (role,)).fetchone()[0]
            exists = c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None
            if not left and exists:
                for statement in schema.ROLE_REVOKE:
                    c.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
    return {"role": role, "project": remote, "revoked": bool(gone), "grants_left": int(left)}
