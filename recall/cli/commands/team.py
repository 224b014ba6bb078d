"""``recall team ...``: team memory on the team's PostgreSQL (see docs/team.md).

The owner sets the database up (``init``) and says which role may read and write which
project (``grant``, ``revoke``); each member joins once per machine (``join``), shares
projects one by one (``share``, ``unshare``), looks at the sync (``status``) and searches the
server itself (``search``); ``leave`` takes this machine out. Thin: options in,
``recall.team`` does the work; psycopg is imported by these commands and the service only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Optional

import typer

from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app
team_app = typer.Typer(help="Share memories, session summaries and rules with your team through PostgreSQL "
                            "(docs/team.md).", no_args_is_help=True)
commands.add_typer(team_app, name="team")

KIND_WORDS = {"memory": ("memory", "memories"), "summary": ("session summary", "session summaries"),
              "rule": ("rule", "rules")}


def _poke_service() -> bool:
    """Ask the running service to sync now; whether it runs."""
    from recall.core import service_client as client

    try:
        client.call("team_sync", {}, timeout=3.0)
        return True
    except (client.Unavailable, client.RemoteError):
        return False


def _owner_conn(url: str | None):
    """The owner's connection: --url, else the joined one."""
    from recall.team import conn, local

    if url is None:
        join = local.joined()
        if join is None:
            raise UsageError("Pass the owner's connection with --url URL (this machine has not joined a team to "
                             "default to).")
        return conn.connect(join.url, server=join.server)
    return conn.connect(url)


def _owner_error(exc: Exception, what: str) -> Exception:
    from recall.team.conn import NotGranted, TeamError

    if isinstance(exc, NotGranted):
        return TeamError(f"{what} needs the database owner's connection: pass it with --url "
                         "(the role that ran `recall team init`).")
    return exc


def _counts_text(counts: dict) -> str:
    parts = [f"{counts[k]:,} {words[counts[k] != 1]}" for k, words in KIND_WORDS.items() if counts.get(k)]
    return ", ".join(parts) if parts else "nothing yet"


# the owner ---------------------------------------------------------------------------------------
@team_app.command("init", help="Create recall's tables and row-level security policies (the database owner, once; "
                               "again changes nothing).")
def init_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The database owner's connection string."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    import psycopg

    from recall.team import conn as tc
    from recall.team import schema

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
            raise tc.TeamError(f"{server} refused to create recall's tables ({tc.scrub(str(exc), url, info)}): run "
                               "`recall team init` as the database's owner (docs/team.md).") from None
        raise err from None
    finally:
        c.close()
    if as_json:
        typer.echo(json.dumps({"server": server, "schema": schema.SCHEMA, "version": schema.VERSION,
                               "changed": changed}))
        return
    if changed:
        typer.echo(f"Set up recall's team tables in {server} (schema {schema.SCHEMA}, row-level security on). "
                   "Next: `recall team grant ROLE PROJECT` for each member's role.")
    else:
        typer.echo(f"recall's team tables are already set up in {server} (version {schema.VERSION}): nothing changed.")


def _grant_args(role: str, project: str) -> tuple[str, str]:
    from recall.team.identity import parse_project

    role = (role or "").strip()
    if not role:
        raise UsageError("ROLE is empty: pass the PostgreSQL role (or group role) of the member.")
    return role, parse_project(project)


@team_app.command("grant", help="Let a role (or a group role) read and write a project's team items (the owner).")
def grant_cmd(
    role: str = typer.Argument(..., metavar="ROLE", help="A PostgreSQL role, or a group role of members."),
    project: str = typer.Argument(..., metavar="PROJECT", help="A checkout's path, or its git remote."),
    url: Optional[str] = typer.Option(None, "--url", help="The owner's connection (default: the joined one)."),
) -> None:
    import psycopg
    from psycopg import sql

    from recall.team import conn as tc
    from recall.team.schema import ROLE_PRIVILEGES

    role, remote = _grant_args(role, project)
    c = _owner_conn(url)
    try:
        if c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            raise UsageError(f"The database has no role {role!r}: create it first (CREATE ROLE {role} LOGIN; then "
                             "\\password in psql), then grant again.")
        with c.transaction():
            new = c.execute("INSERT INTO recall_team.grants (role, project) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                            (role, remote)).rowcount
            for statement in ROLE_PRIVILEGES:
                c.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
    except psycopg.Error as exc:
        raise _owner_error(tc.explain(exc, "the team server"), "Granting") from None
    finally:
        c.close()
    typer.echo(f"{role} may now read and write {remote}'s team items." if new else
               f"{role} already had {remote}: nothing changed.")


@team_app.command("revoke", help="Take a project back from a role (the owner); its items stay for the others.")
def revoke_cmd(
    role: str = typer.Argument(..., metavar="ROLE", help="The role (or group role) granted."),
    project: str = typer.Argument(..., metavar="PROJECT", help="A checkout's path, or its git remote."),
    url: Optional[str] = typer.Option(None, "--url", help="The owner's connection (default: the joined one)."),
) -> None:
    import psycopg
    from psycopg import sql

    from recall.team import conn as tc
    from recall.team.schema import ROLE_REVOKE

    role, remote = _grant_args(role, project)
    c = _owner_conn(url)
    try:
        with c.transaction():
            gone = c.execute("DELETE FROM recall_team.grants WHERE role = %s AND project = %s",
                             (role, remote)).rowcount
            left = c.execute("SELECT count(*) FROM recall_team.grants WHERE role = %s", (role,)).fetchone()[0]
            exists = c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None
            if not left and exists:
                for statement in ROLE_REVOKE:
                    c.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
    except psycopg.Error as exc:
        raise _owner_error(tc.explain(exc, "the team server"), "Revoking") from None
    finally:
        c.close()
    if not gone:
        typer.echo(f"{role} had no grant of {remote}: nothing changed.")
        return
    typer.echo(f"{role} can no longer read or write {remote}'s team items"
               + (" (nor any team table: it has no grant left)." if not left else "."))


# a member ------------------------------------------------------------------------------------------
@team_app.command("join", help="Join a team on this machine, as your own PostgreSQL role (once per machine).")
def join_cmd(
    url: str = typer.Argument(..., metavar="URL", help="postgresql://ROLE@HOST:PORT/DATABASE (the password comes "
                                                       "from ~/.pgpass or PGPASSWORD)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    import psycopg

    from recall.team import conn as tc
    from recall.team import local
    from recall.team.sync import granted

    info = tc.parse(url, allow_password=False)
    c = tc.connect(url)
    try:
        role = c.execute("SELECT current_user").fetchone()[0]
        server = tc.server_label(info, role)
        if not c.execute("SELECT to_regnamespace('recall_team') IS NOT NULL").fetchone()[0]:
            raise tc.TeamError(f"The database {server} has no recall tables yet: its owner runs "
                               "`recall team init URL` once (see docs/team.md).")
        usable = c.execute("SELECT has_schema_privilege('recall_team', 'USAGE')").fetchone()[0]
        projects = granted(c) if usable else []
    except psycopg.Error as exc:
        raise tc.explain(exc, tc.server_label(info), url, info) from None
    finally:
        c.close()
    old = local.joined()
    join = local.save_join(url.strip(), server, role)
    running = _poke_service()
    if as_json:
        typer.echo(json.dumps({"server": server, "role": role, "granted": projects, "service": running,
                               "rejoined": old is not None}))
        return
    typer.echo(f"Joined the team at {server} as {role}.")
    if projects:
        typer.echo("Projects granted to you: " + ", ".join(projects) + ". Share one with `recall team share` "
                   "in its checkout (or --project PATH).")
    else:
        typer.echo(f"No project is granted to {role} yet: ask the owner to run `recall team grant {role} PROJECT`.")
    if not running:
        typer.echo("The team sync runs in the recall service, which is not running: `recall service start`.")


def _resolve_share(project: Optional[Path]) -> tuple[str, str]:
    from recall.team.identity import project_identity

    return project_identity(project if project is not None else os.getcwd())


@team_app.command("share", help="Share a project's memories, session summaries and rules with the team.")
def share_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="A checkout of the project (default: here)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from indexer.ledger import excluded_by, exclusions

    from recall.team import conn as tc
    from recall.team import local
    from recall.team.sync import Sync, granted

    from recall.team.sync import direct_writer, index_pending

    join = local.require_join()
    path, remote = _resolve_share(project)
    if excluded_by(path, path, exclusions()):
        raise UsageError(f"{path} is excluded from recall (`recall exclude list`): nothing of it is kept, so "
                         "nothing of it can be shared.")
    with local.TeamDB() as db:
        db.add_share(path, remote)
    result: dict = {"path": path, "project": remote, "server": join.server}
    try:
        c = tc.connect(join.url, server=join.server)
        try:
            ok = remote in granted(c)
            result["granted"] = ok
            if ok:
                sync = Sync(join, direct_writer)
                result["sent"] = sync.push(c, remotes={remote})["sent"]
                result["service"] = _poke_service()
                if not result["service"]:  # no service to receive the team's items: once, now
                    result["pulled"] = sync.pull(c)["pulled"]
        finally:
            c.close()
    except tc.TeamError as exc:
        result["pending"] = str(exc)
    with local.TeamDB() as db:
        result["shared"] = _live_counts(db, remote)
    if "service" not in result:
        result["service"] = _poke_service()
    if not result["service"] and result.get("pulled"):
        try:
            index_pending(direct_writer)
        except Exception as exc:  # noqa: BLE001 - an index in use or missing: the service writes them later
            result["index"] = str(exc)
    if as_json:
        typer.echo(json.dumps(result))
        return
    where = f"{_short(path)} as {remote}"
    if "pending" in result:
        typer.echo(f"Sharing {where}; the server cannot be reached now ({result['pending']}) — what it gives the "
                   "team is sent when it can.")
    elif not result.get("granted"):
        typer.echo(f"Sharing {where}, but {join.role} has no grant of {remote} yet: nothing was sent. Ask the "
                   f"owner to run `recall team grant {join.role} {remote}`; sharing starts by itself then.")
    else:
        typer.echo(f"Sharing {where} with {join.server}: {_counts_text(result['shared'])} on the server "
                   f"({result.get('sent', 0):,} sent now, each redacted again before it left).")
        if "pulled" in result:
            typer.echo(f"{result['pulled']:,} teammates' items pulled for it.")
    if not result["service"]:
        typer.echo("Teammates' later items arrive through the recall service, which is not running: "
                   "`recall service start`.")


def _live_counts(db, remote: str) -> dict:
    out: dict = {}
    for kind, n in db.conn.execute("SELECT kind, count(*) FROM pushed WHERE remote=? AND deleted=0 GROUP BY kind",
                                   (remote,)):
        out[kind] = n
    return out


def _short(path: str) -> str:
    from recall.cli.output import short_project

    return short_project(path)


@team_app.command("unshare", help="Stop sharing a project: what this machine shared is withdrawn (teammates' copies "
                                  "go too), and the team's items leave this machine.")
def unshare_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="A checkout of the project (default: here)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import conn as tc
    from recall.team import local
    from recall.team.identity import local_project
    from recall.team.sync import Sync, direct_writer, index_pending

    join = local.require_join()
    raw = project if project is not None else Path(os.getcwd())
    path = local_project(raw)
    with local.TeamDB() as db:
        remote = db.remove_share(path)
        if remote is None:
            shared = ", ".join(_short(p) for p in db.shares()) or "none"
            raise UsageError(f"{_short(path)} is not shared (shared here: {shared}).")
        still = remote in db.remotes()
        dropped = 0 if still else db.drop_remote(remote)
    result: dict = {"path": path, "project": remote, "withdrawn": 0, "removed_here": dropped}
    if not still:
        try:
            c = tc.connect(join.url, server=join.server)
            try:
                result["withdrawn"] = Sync(join).push(c, remotes={remote})["withdrawn"]
            finally:
                c.close()
        except tc.TeamError as exc:
            result["pending"] = str(exc)
    result["service"] = _poke_service()
    if not result["service"]:
        try:
            index_pending(direct_writer)
        except Exception as exc:  # noqa: BLE001 - the service does it at its next start
            result["index"] = str(exc)
    if as_json:
        typer.echo(json.dumps(result))
        return
    if still:
        typer.echo(f"Stopped sharing {_short(path)}; another checkout here still shares {remote}, so nothing was "
                   "withdrawn.")
    elif "pending" in result:
        typer.echo(f"Stopped sharing {_short(path)} ({remote}); the server cannot be reached now, so what this "
                   "machine shared is withdrawn at the next sync (the service retries by itself).")
    else:
        typer.echo(f"Stopped sharing {_short(path)} ({remote}): {result['withdrawn']:,} items withdrawn from the team "
                   f"server (teammates' copies go too); {dropped:,} team items removed from this machine.")


@team_app.command("leave", help="Take this machine out of the team: withdraw what it shared, remove the team's items "
                                "here, forget the connection.")
def leave_cmd(
    keep_shared: bool = typer.Option(False, "--keep-shared", help="Leave what this machine shared on the server."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import conn as tc
    from recall.team import local
    from recall.team.sync import Sync, direct_writer, index_pending

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
            raise tc.TeamError(f"{exc} Nothing was changed: try again once it is reachable, or "
                               "`recall team leave --keep-shared` to leave what you shared on the server.") from None
    with local.TeamDB() as db:
        removed = len(db.clear())
    local.drop_join()
    running = _poke_service()
    if not running:
        try:
            index_pending(direct_writer)
        except Exception:  # noqa: BLE001 - the service does it at its next start
            pass
    if as_json:
        typer.echo(json.dumps({"left": join.server, "withdrawn": withdrawn, "removed_here": removed,
                               "kept_shared": keep_shared}))
        return
    kept = " What you shared stays on the server (--keep-shared)." if keep_shared else \
        f" {withdrawn:,} items you shared were withdrawn (teammates' copies go too)."
    typer.echo(f"Left the team at {join.server}: {removed:,} team items removed from this machine.{kept}")


# looking -----------------------------------------------------------------------------------------
def status_info() -> dict:
    from recall.core import service_client as client
    from recall.team import conn as tc
    from recall.team import local
    from recall.team.sync import granted, server_state

    join = local.joined()
    if join is None:
        return {"joined": False}
    info: dict = {"joined": True, "server": join.server, "role": join.role, "machine": join.origin}
    try:
        info["service"] = client.call("team_status", {}, timeout=3.0)
    except (client.Unavailable, client.RemoteError):
        info["service"] = None
    now = time.time()
    with local.TeamDB() as db:
        shares = db.shares()
        cursors = db.cursors()
        counts = db.counts()
        info["shared_last_day"] = db.shared_since(now - 86400)
        info["on_server"] = db.live_pushed()
        info["last_push"] = float(db.get("last_push", "0")) or None
        info["last_pull"] = float(db.get("last_pull", "0")) or None
        pulled = dict(db.conn.execute("SELECT remote, count(*) FROM items GROUP BY remote"))
    info.update(items=counts["items"], not_indexed=counts["not_indexed"])
    projects = [{"path": p, "project": r, "pulled": pulled.get(r, 0)} for p, r in shares.items()]
    try:
        c = tc.connect(join.url, timeout=5, server=join.server)
        try:
            mine = set(granted(c))
            state = server_state(c, sorted(set(shares.values()) & mine), cursors)
        finally:
            c.close()
        info["reachable"] = True
        for p in projects:
            p["granted"] = p["project"] in mine
            p.update(state.get(p["project"], {"behind": None, "lag_seconds": None}))
        info["granted"] = sorted(mine)
    except tc.TeamError as exc:
        info["reachable"] = False
        info["error"] = str(exc)
    info["projects"] = projects
    return info


def _ago(ts: float | None) -> str:
    if not ts:
        return "never"
    from recall.cli.output import duration

    return f"{duration(time.time() - ts)} ago"


@team_app.command("status", help="The team server, the sync's lag, and what this machine shared in the last day.")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print the status as JSON.")) -> None:
    info = status_info()
    if as_json:
        typer.echo(json.dumps(info))
        return
    if not info["joined"]:
        typer.echo("Not in a team: `recall team join URL` joins one (docs/team.md).")
        return
    typer.echo(f"Team server: {info['server']} as {info['role']}"
               + ("" if info["reachable"] else f" — unreachable: {info['error']}"))
    svc = info.get("service")
    if svc is None:
        typer.echo("Sync: paused — the recall service is not running (`recall service start`); "
                   "everything local works meanwhile.")
    elif svc.get("connected"):
        typer.echo(f"Sync: connected; last push {_ago(info['last_push'])}, last pull {_ago(info['last_pull'])}.")
    else:
        typer.echo(f"Sync: not connected ({svc.get('error') or 'starting'}); it retries by itself.")
    if svc and svc.get("refused"):
        typer.echo(f"  refused: {svc['refused']}")
    if not info["projects"]:
        typer.echo("Shared projects: none (`recall team share` in a checkout).")
    for p in info["projects"]:
        line = f"  {_short(p['path'])} -> {p['project']}: {p['pulled']:,} team items here"
        if p.get("granted") is False:
            line += f"; not granted to {info['role']} (nothing is sent or received)"
        elif p.get("behind"):
            line += f"; {p['behind']:,} not pulled yet (lag {p['lag_seconds']:.0f} s)"
        elif p.get("behind") == 0:
            line += "; up to date"
        typer.echo(line)
    day = info["shared_last_day"]
    sent = sum(v for k, v in day.items() if k != "withdrawn")
    typer.echo(f"This machine, last 24 h: {sent:,} items sent ({_counts_text(day)}), {day.get('withdrawn', 0):,} "
               f"withdrawn; {info['on_server']:,} of its items on the server.")
    if info["not_indexed"]:
        typer.echo(f"{info['not_indexed']:,} team changes wait for the index (the service writes them).")


@team_app.command("search", help="Search the team's items on the server (what is not pulled here too).")
def search_cmd(
    query: list[str] = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=100, help="How many hits."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (the hits' usual shape, plus pulled)."),
) -> None:
    import psycopg

    from recall.cli import output as fmt
    from recall.search.hit import Hit
    from recall.team import conn as tc
    from recall.team import local
    from recall.team.search import search

    join = local.require_join()
    text = " ".join(query)
    with local.TeamDB() as db:
        pulled = {r[0] for r in db.conn.execute("SELECT id FROM items")}
    c = tc.connect(join.url, server=join.server)
    try:
        hits = search(c, text, limit=limit, pulled=pulled)
    except psycopg.Error as exc:
        raise tc.explain(exc, join.server, join.url) from None
    finally:
        c.close()
    if as_json:
        typer.echo(json.dumps({"query": text, "hits": hits}, ensure_ascii=False))
        return
    if not hits:
        typer.echo(f"No team item on {join.server} matches {text!r} in the projects granted to {join.role}.")
        return
    shown = [Hit(**{k: v for k, v in h.items() if k not in ("type", "pulled")}) for h in hits]
    fmt.print_hits(shown, text, team=True)
