"""``recall status``: the service, the index, the archive, memory and cost, in one screen (the
work is ``recall.cli.everyday.status``, which the fast path calls without typer)."""

from __future__ import annotations

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("status", help="Service state (pid, uptime, lag), roots watched, what is indexed, recent errors.")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    from recall.cli import everyday

    everyday.status(as_json)
