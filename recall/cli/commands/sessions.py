"""``recall sessions`` and ``recall show SESSION``: browse past sessions, their summaries and
what recall indexed of them. Thin: options in, ``recall.memory.sessions`` functions, output."""

from __future__ import annotations

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
    from recall.cli import everyday

    everyday.sessions(project, since, limit, as_json)


@commands.command("show")
def show_cmd(
    session: str = typer.Argument(..., metavar="SESSION", help="A session id (a unique prefix is enough)."),
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output on a terminal."),
    as_json: bool = typer.Option(False, "--json", help="Print the session as JSON (schema in docs/cli.md)."),
) -> None:
    """A session: its summary, then its transcript as recall indexed it (redacted)."""
    from recall.cli import everyday

    everyday.show(session, pager, as_json)
