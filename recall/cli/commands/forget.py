"""``recall forget``: remove sessions, a project, old messages, messages containing a text or a
secret from every store at once (archive, index, offsets, memories, the CLAUDE.md block).
Thin: options in, ``recall.privacy.forget`` does the work (on the service's writer when it
runs), the result out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from recall.cli.command_utils import confirm_or_stop, run_forget
from recall.cli.output import short_project
from recall.core.errors import UsageError
from recall.core.text import counted

commands = typer.Typer()  # merged into the app by recall.cli.app


def plan_lines(plan: dict) -> list[str]:
    sessions = len(plan.get("sessions") or [])
    whole = len(plan.get("emptied") or [])
    lines = [
        f"sessions: {sessions:,}" + (f" ({whole:,} entirely)" if whole and whole != sessions else ""),
        f"messages: {plan.get('messages', 0):,}"
        + (f" removed, {plan['rewritten']:,} with the secret cut out" if plan.get("rewritten") else ""),
        f"memories: {plan.get('memories', 0):,}"
        + (
            f" removed, {plan['memories_rewritten']:,} with the secret cut out"
            if plan.get("memories_rewritten")
            else ""
        ),
        f"session summaries: {plan.get('summaries', 0):,}",
    ]
    if plan.get("team_items"):
        lines.append(f"teammates' items pulled here: {plan['team_items']:,}")
    return lines


def finish_interrupted(quiet: bool = False) -> list[dict]:
    """Finish the forgets an interruption (Ctrl-C, kill -9, a restart) left unfinished,
    saying what each removed; what they removed."""
    from recall.privacy.forget import describe_selection, pending

    if not pending():
        return []
    done = run_forget({"resume": True}).get("resumed") or []
    for res in done if not quiet else []:
        what = describe_selection(res.get("selection") or {})
        if res.get("kind") == "off":
            what = "a session switched off by `recall: off` (" + what + ")"
        typer.echo(
            f"Finished an interrupted forget of {what}: {res.get('messages', 0):,} messages, "
            f"{res.get('memories', 0):,} memories, {res.get('summaries', 0):,} session summaries removed."
        )
    return done


@commands.command(
    "forget",
    help="Remove sessions, a project, old messages, messages containing a text, or a "
    "secret from every store at once: archive, index, memories, the CLAUDE.md block "
    "(Claude Code's own transcript files are left alone).",
)
def forget_cmd(
    session: Optional[str] = typer.Option(None, "--session", help="A session id, or a unique prefix of one."),
    project: Optional[Path] = typer.Option(
        None, "--project", help="The project (a path inside it) to forget, or to limit the other options to."
    ),
    before: Optional[str] = typer.Option(
        None, "--before", metavar="DATE", help="The messages dated before DATE (2026-10-01, or 30d / 6w ago)."
    ),
    match: Optional[str] = typer.Option(
        None, "--match", metavar="TEXT", help="The messages containing TEXT (case-insensitive)."
    ),
    secret: Optional[str] = typer.Option(
        None,
        "--secret",
        metavar="VALUE",
        help="Replace VALUE by the redaction mark wherever it appears; the rest of each message is kept.",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask first."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from indexer.forgetting import Selection, resolve_session
    from recall.privacy.forget import plan as plan_forget

    if not any((session, project, before, match, secret)):
        raise UsageError(
            "Say what to forget: `recall forget --session ID`, `recall forget --project PATH`, "
            "--before DATE, --match TEXT or --secret VALUE."
        )
    finished = finish_interrupted(as_json)
    sel = Selection()
    if session is not None:
        sel.sessions = [resolve_session(session)]
    if project is not None:
        from recall.search.run import resolve_project

        sel.project = resolve_project(project)
    if before is not None:
        from recall.search.timespec import parse_since

        sel.before = parse_since(before, option="--before")
    sel.match = match if match is not None else None
    sel.secret = secret if secret is not None else None
    sel.check()
    what = describe(sel)
    if not sel.whole:
        plan = plan_forget(sel)
        if (
            not plan["messages"]
            and not plan["rewritten"]
            and not plan["memories"]
            and not plan["memories_rewritten"]
            and not plan.get("team_items")
        ):
            if as_json:
                typer.echo(json.dumps({**plan, "removed": False, "finished": finished}))
            elif not finished:
                typer.echo(f"Nothing to forget: no message or memory holds {what}.")
            return
    else:
        plan = plan_forget(sel) if not yes else {}
    if not yes and not confirm_or_stop(what, plan_lines(plan), yes, "recall forget"):
        typer.echo("Nothing was removed.")
        return
    result = run_forget(sel.as_args())
    if as_json:
        typer.echo(json.dumps(result))
        return
    if sel.whole and not result.get("messages") and not result.get("index") and not result.get("memories"):
        typer.echo(f"Nothing indexed for {what}; recall will not index its past messages from now on.")
        return
    bits = [
        f"{counted(result.get('index', 0), 'message')} removed from the index, {result.get('messages', 0):,} "
        f"from the archive"
    ]
    if result.get("rewritten"):
        bits.append(f"the secret cut out of {counted(result['rewritten'], 'message')}")
    if result.get("memories") or result.get("memories_rewritten"):
        bits.append(
            f"{counted(result.get('memories', 0), 'memory')} deleted"
            + (f", {result['memories_rewritten']:,} rewritten" if result.get("memories_rewritten") else "")
        )
    if result.get("summaries"):
        bits.append(f"{counted(result['summaries'], 'session summary')} deleted")
    if result.get("team_items"):
        bits.append(f"{counted(result['team_items'], 'teammate item')} deleted here")
    typer.echo(
        f"Forgot {what}: {'; '.join(bits)}. Claude Code's own transcript files were not touched; "
        "a rebuild will not bring it back."
    )
    team = str(result.get("team") or "")
    if team.startswith("pending"):
        typer.echo(
            "The team server could not be reached: what this machine shared of it is withdrawn at the "
            "next sync (the service retries by itself; `recall team status` shows it)."
        )
    elif team == "queued":
        typer.echo("Whatever of it this machine shared is being withdrawn from the team server too.")
    elif team.startswith("sent") and team != "sent 0":
        n = int(team.split()[1])
        typer.echo(
            f"{counted(n, 'item')} this machine shared {'was' if n == 1 else 'were'} withdrawn from the team server too."
        )


def describe(sel) -> str:
    parts = []
    if sel.sessions:
        parts.append(f"session {sel.sessions[0]}")
    if sel.project:
        parts.append(f"project {short_project(sel.project)}")
    if sel.before is not None:
        from datetime import datetime

        parts.append(f"messages before {datetime.fromtimestamp(sel.before).strftime('%Y-%m-%d %H:%M')}")
    if sel.match is not None:
        parts.append(f"messages containing {sel.match!r}")
    if sel.secret is not None:
        parts.append("the secret")
    return ", ".join(parts)
