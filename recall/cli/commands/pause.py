"""``recall pause [--for DURATION]`` / ``recall resume``: stop all capture and injection for a
while (``indexer.ledger``: what is said meanwhile is never archived, indexed or used for
memories, even by a rebuild). Thin: options in, the ledger does the work."""

from __future__ import annotations

import json
import time
from typing import Optional

import typer

from recall.cli.command_utils import parse_duration, until_text

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("pause", help="Stop all capture and injection (until `recall resume`, or --for a while).")
def pause_cmd(
    for_: Optional[str] = typer.Option(None, "--for", metavar="DURATION", help="How long: 30m, 2h, 1d, 1w."),
    as_json: bool = typer.Option(False, "--json", help="Print the pause as JSON."),
) -> None:
    from indexer.ledger import pause

    until = time.time() + parse_duration(for_) if for_ is not None else None
    p = pause(until)
    if as_json:
        typer.echo(json.dumps({"paused": True, **p}))
        return
    typer.echo(
        f"Capture and injection paused {until_text(p['until'])}: nothing said meanwhile is kept, "
        "nothing is injected; `recall resume` ends it."
    )


@commands.command("resume", help="End a pause: capture and injection start again.")
def resume_cmd(as_json: bool = typer.Option(False, "--json", help="Print the result as JSON.")) -> None:
    from indexer.ledger import resume

    window = resume()
    if as_json:
        typer.echo(json.dumps({"paused": False, "window": window}))
        return
    if window is None:
        typer.echo("recall was not paused: capture and injection are on.")
        return
    typer.echo("Capture and injection are on again; what was said during the pause stays out of recall.")
