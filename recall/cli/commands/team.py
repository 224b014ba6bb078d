"""``recall team ...``: team memory on the team's PostgreSQL (see docs/team.md).

The owner sets the database up (``init``) and says which role may read and write which
project (``grant``, ``revoke``); each member joins once per machine (``join``), shares
projects one by one (``share``, ``unshare``), looks at the sync (``status``), searches the
server itself (``search``), and ``leave``s. Thin: options in, ``recall.team.admin`` and
``recall.team.member`` do the work, output here. psycopg is imported by these commands and
the service only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import List, Optional

import typer

from recall.cli.output import short_project

commands = typer.Typer()  # merged into the app by recall.cli.app
team_app = typer.Typer(
    help="Share memories, session summaries and rules with your team through PostgreSQL (docs/team.md).",
    no_args_is_help=True,
)
commands.add_typer(team_app, name="team")

KIND_WORDS = {
    "memory": ("memory", "memories"),
    "summary": ("session summary", "session summaries"),
    "rule": ("rule", "rules"),
}
NO_SERVICE = "The team sync runs in the recall service, which is not running: `recall service start`."


def counts_text(counts: dict) -> str:
    parts = [f"{counts[k]:,} {words[counts[k] != 1]}" for k, words in KIND_WORDS.items() if counts.get(k)]
    return ", ".join(parts) if parts else "nothing yet"


def _ago(ts: float | None) -> str:
    if not ts:
        return "never"
    from recall.cli.output import duration

    return f"{duration(time.time() - ts)} ago"


def _echo_json(data: dict) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False))


# the owner ---------------------------------------------------------------------------------------
@team_app.command(
    "init",
    help="Create recall's tables and row-level security policies (the database owner, once; again changes nothing).",
)
def init_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The database owner's connection string."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import admin

    out = admin.init(url)
    if as_json:
        return _echo_json(out)
    if out["changed"]:
        typer.echo(
            f"Set up recall's team tables in {out['server']} (schema {out['schema']}, row-level security "
            "on). Next: `recall team grant ROLE PROJECT` for each member's role."
        )
    else:
        typer.echo(
            f"recall's team tables are already set up in {out['server']} (version {out['version']}): nothing changed."
        )


@team_app.command("grant", help="Let a role (or a group role) read and write a project's team items (the owner).")
def grant_cmd(
    role: str = typer.Argument(..., metavar="ROLE", help="A PostgreSQL role, or a group role of members."),
    project: str = typer.Argument(..., metavar="PROJECT", help="A checkout's path, or its git remote."),
    url: Optional[str] = typer.Option(None, "--url", help="The owner's connection (default: the joined one)."),
) -> None:
    from recall.team import admin

    out = admin.grant(role, project, url)
    typer.echo(
        f"{out['role']} may now read and write {out['project']}'s team items."
        if out["new"]
        else f"{out['role']} already had {out['project']}: nothing changed."
    )


@team_app.command("revoke", help="Take a project back from a role (the owner); its items stay for the others.")
def revoke_cmd(
    role: str = typer.Argument(..., metavar="ROLE", help="The role (or group role) granted."),
    project: str = typer.Argument(..., metavar="PROJECT", help="A checkout's path, or its git remote."),
    url: Optional[str] = typer.Option(None, "--url", help="The owner's connection (default: the joined one)."),
) -> None:
    from recall.team import admin

    out = admin.revoke(role, project, url)
    if not out["revoked"]:
        typer.echo(f"{out['role']} had no grant of {out['project']}: nothing changed.")
        return
    typer.echo(
        f"{out['role']} can no longer read or write {out['project']}'s team items"
        + (" (nor any team table: it has no grant left)." if not out["grants_left"] else ".")
    )


# a member ------------------------------------------------------------------------------------------
@team_app.command("join", help="Join a team on this machine, as your own PostgreSQL role (once per machine).")
def join_cmd(
    url: str = typer.Argument(
        ...,
        metavar="URL",
        help="postgresql://ROLE@HOST:PORT/DATABASE (the password comes from ~/.pgpass or PGPASSWORD).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import member

    out = member.join(url)
    if as_json:
        return _echo_json(out)
    typer.echo(f"Joined the team at {out['server']} as {out['role']}.")
    if out["granted"]:
        typer.echo(
            "Projects granted to you: " + ", ".join(out["granted"]) + ". Share one with `recall team share` "
            "in its checkout (or --project PATH)."
        )
    else:
        typer.echo(
            f"No project is granted to {out['role']} yet: ask the owner to run "
            f"`recall team grant {out['role']} PROJECT`."
        )
    if not out["service"]:
        typer.echo(NO_SERVICE)


@team_app.command("share", help="Share a project's memories, session summaries and rules with the team.")
def share_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="A checkout of the project (default: here)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import member

    out = member.share(project)
    if as_json:
        return _echo_json(out)
    where = f"{short_project(out['path'])} as {out['project']}"
    if "pending" in out:
        typer.echo(f"Sharing {where}. {out['pending']}")
    elif not out.get("granted"):
        typer.echo(
            f"Sharing {where}, but {out['role']} has no grant of {out['project']} yet: nothing was sent. Ask "
            f"the owner to run `recall team grant {out['role']} {out['project']}`; sharing starts by itself "
            "then."
        )
    else:
        typer.echo(
            f"Sharing {where} with {out['server']}: {counts_text(out['shared'])} on the server "
            f"({out.get('sent', 0):,} sent now, each redacted again before it left)."
        )
        if "pulled" in out:
            typer.echo(f"{out['pulled']:,} teammates' items pulled for it.")
    if not out["service"]:
        typer.echo(NO_SERVICE)


@team_app.command(
    "unshare",
    help="Stop sharing a project: what this machine shared is withdrawn (teammates' copies "
    "go too), and the team's items leave this machine.",
)
def unshare_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="A checkout of the project (default: here)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import member

    out = member.unshare(project)
    if as_json:
        return _echo_json(out)
    where = f"{short_project(out['path'])} ({out['project']})"
    if out["still_shared"]:
        typer.echo(f"Stopped sharing {where}; another checkout here still shares it, so nothing was withdrawn.")
    elif "pending" in out:
        typer.echo(
            f"Stopped sharing {where}; the server cannot be reached now, so what this machine shared is "
            "withdrawn at the next sync (the service retries by itself)."
        )
    else:
        typer.echo(
            f"Stopped sharing {where}: {out['withdrawn']:,} items withdrawn from the team server (teammates' "
            f"copies go too); {out['removed_here']:,} team items removed from this machine."
        )


@team_app.command(
    "leave",
    help="Take this machine out of the team: withdraw what it shared, remove the team's items "
    "here, forget the connection.",
)
def leave_cmd(
    keep_shared: bool = typer.Option(False, "--keep-shared", help="Leave what this machine shared on the server."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.team import member

    out = member.leave(keep_shared)
    if as_json:
        return _echo_json(out)
    kept = (
        " What you shared stays on the server (--keep-shared)."
        if keep_shared
        else f" {out['withdrawn']:,} items you shared were withdrawn (teammates' copies go too)."
    )
    typer.echo(f"Left the team at {out['left']}: {out['removed_here']:,} team items removed from this machine.{kept}")


# looking -----------------------------------------------------------------------------------------
@team_app.command("status", help="The team server, the sync's lag, and what this machine shared in the last day.")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print the status as JSON.")) -> None:
    from recall.team import member

    info = member.status()
    if as_json:
        return _echo_json(info)
    if not info["joined"]:
        typer.echo("Not in a team: `recall team join URL` joins one (docs/team.md).")
        return
    typer.echo(
        f"Team server: {info['server']} as {info['role']}"
        + ("" if info["reachable"] else f" (unreachable: {info['error']})")
    )
    svc = info.get("service")
    if svc is None:
        # (an unreachable server's line above said already that everything local keeps working)
        typer.echo(
            "Sync: paused, the recall service is not running (`recall service start`)"
            + ("; everything local works meanwhile." if info["reachable"] else ".")
        )
    elif svc.get("connected"):
        typer.echo(f"Sync: connected; last push {_ago(info['last_push'])}, last pull {_ago(info['last_pull'])}.")
    elif (
        not info["reachable"]
        and "Cannot reach" in (svc.get("error") or "")
        and "Cannot reach" in (info.get("error") or "")
    ):  # the same news as the line above: said once
        typer.echo("Sync: not connected (the server cannot be reached, as above); it retries by itself.")
    else:
        typer.echo(f"Sync: not connected ({svc.get('error') or 'starting'}); it retries by itself.")
    if svc and svc.get("refused"):
        typer.echo(f"  refused: {svc['refused']}")
    if not info["projects"]:
        typer.echo("Shared projects: none (`recall team share` in a checkout).")
    for p in info["projects"]:
        line = f"  {short_project(p['path'])} -> {p['project']}: {p['pulled']:,} team items here"
        if p.get("granted") is False:
            line += f"; not granted to {info['role']} (nothing is sent or received)"
        elif p.get("stuck"):
            line += f"; {p['stuck']:,} of this machine's items stuck, not sent (below)"
        elif p.get("behind"):
            line += f"; {p['behind']:,} not pulled yet (lag {p['lag_seconds']:.0f} s)"
        elif p.get("behind") == 0:
            line += "; up to date"
        typer.echo(line)
    day = info["shared_last_day"]
    sent = sum(v for k, v in day.items() if k != "withdrawn")
    typer.echo(
        f"This machine, last 24 h: {sent:,} item{'' if sent == 1 else 's'} sent ({counts_text(day)}), "
        f"{day.get('withdrawn', 0):,} withdrawn; {info['on_server']:,} of its items on the server."
    )
    for s in (info.get("stuck") or [])[:5]:
        typer.echo(
            f"  stuck: {s['kind']} {s['ref']} of {s['project']}, refused by the server: {s['why']} (the rest "
            "were sent; edit or forget it, and the next push sends it or withdraws it)"
        )
    skipped = info.get("skipped") or {}
    if skipped.get("count"):
        last = skipped["latest"] or {}
        typer.echo(
            f"{skipped['count']:,} teammates' items skipped, not kept here (latest: {last.get('id')} of "
            f"{last.get('project')}: {last.get('why')}); its author can fix it by sharing it again."
        )
    if info["not_indexed"]:
        typer.echo(f"{info['not_indexed']:,} team changes wait for the index (the service writes them).")


@team_app.command("search", help="Search the team's items on the server (what is not pulled here too).")
def search_cmd(
    query: List[str] = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=100, help="How many hits."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (the hits' usual shape, plus type and pulled)."),
) -> None:
    from recall.cli import output as fmt
    from recall.search.hit import Hit
    from recall.team import member

    out = member.search(" ".join(query), limit)
    if as_json:
        return _echo_json({"query": out["query"], "hits": out["hits"]})
    if not out["hits"]:
        typer.echo(
            f"No team item on {out['server']} matches {out['query']!r} in the projects granted to {out['role']}."
        )
        return
    fmt.print_hits(
        [Hit(**{k: v for k, v in h.items() if k not in ("type", "pulled")}) for h in out["hits"]],
        out["query"],
        team=True,
    )
