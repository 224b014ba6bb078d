"""``recall sessions`` and ``recall show SESSION``: browse past sessions, their summaries and
what recall indexed of them. Thin: options in, ``recall.memory.sessions`` functions, output."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("sessions")
def sessions_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="Only the project PATH belongs to."),
    since: Optional[str] = typer.Option(None, "--since", help="Only sessions active after: 2h, 3d, 1w, or a date."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=10000, help="How many sessions."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (schema in docs/cli.md)."),
) -> None:
    """Recent sessions, newest first: date, project, summary (or first prompt), messages."""
    from recall.memory import sessions
    from recall.search.timespec import parse_since

    root = sessions.project_root(project)
    after = parse_since(since) if since is not None else None
    rows = sessions.recent(root, after, limit)
    marks = _session_marks(rows)
    for r in rows:
        r["stale"] = marks.get(r["session_id"], [])
    if as_json:
        typer.echo(json.dumps({"sessions": rows}, ensure_ascii=False))
        return
    if not rows:
        typer.echo("No sessions indexed yet" + (" for this project" if root else "")
                   + ": run `recall index`, or widen --since.")
        return
    width = shutil.get_terminal_size((120, 20)).columns
    for r in rows:
        when = (r["ended"] or r["started"] or "")[:16].replace("T", " ")
        name = os.path.basename((r["project"] or "?").rstrip("/")) or r["project"]
        text = r["summary"] or r["first_prompt"] or ""
        if r["summary"]:  # the goal line reads best in one line
            text = r["summary"].splitlines()[0]
        head = f"{when}  {r['session_id'][:8]}  {name[:20]:20}  {r['messages']:>5} msgs  "
        typer.echo(head + sessions.one_line(text, max(30, width - len(head))))
        if r["stale"]:
            n = len(r["stale"])
            line = (f"{' ' * 18}! {n} file{'s' if n != 1 else ''} it wrote changed since: "
                    + ", ".join(f"{m['path']} ({m['state']})" for m in r["stale"]))
            typer.echo(sessions.one_line(line, max(40, width)))


def _session_marks(rows: list[dict]) -> dict:
    """{session: the files it wrote that changed, moved or were deleted since it ended}."""
    from indexer.state import SessionInfo
    from recall.search.stale import epoch, session_marks

    infos = [SessionInfo(r["session_id"], project=r["project"] or "", ended=epoch(r["ended"]),
                         started=epoch(r["started"])) for r in rows]
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    return session_marks(infos, cwd)


@commands.command("show")
def show_cmd(
    session: str = typer.Argument(..., metavar="SESSION", help="A session id (a unique prefix is enough)."),
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output on a terminal."),
) -> None:
    """A session: its summary, then its transcript as recall indexed it (redacted)."""
    from recall.memory import sessions

    info = sessions.resolve(session)
    text = sessions.show_text(info, _file_lines(info))
    height = shutil.get_terminal_size((80, 24)).lines
    if pager and sys.stdout.isatty() and text.count("\n") > height - 2:
        import click

        click.echo_via_pager(text)
    else:
        typer.echo(text, nl=False)


def _file_lines(info) -> list[str]:
    """``recall show``'s lines about the files a session wrote: what became of each since
    (git adds the commits since and who made them, when the project is a repository)."""
    from recall.search.stale import epoch, session_files

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    rows = session_files(info, cwd)
    lines = []
    for r in rows:
        what = {"unchanged": "unchanged", "changed": "changed since", "deleted": "deleted",
                "renamed": f"renamed to {r.get('to')}"}.get(r["state"], r["state"])
        if r["op"] == "move" and r.get("to") and r["state"] == "unchanged":
            what = f"moved to {r['to']}"
        when = f" ({r['since'][:10]})" if r.get("since") and r["state"] != "unchanged" else ""
        line = f"    {r['path']}  [{r['op']}]  {what}{when}"
        commits = r.get("commits") or []
        if commits:
            who = sorted({c["author"] for c in commits})
            line += (f"; {len(commits)} commit{'s' if len(commits) != 1 else ''} since by {', '.join(who)}"
                     f" (latest {commits[0]['commit']})")
        lines.append(line)
    return lines
