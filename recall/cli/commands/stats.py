"""``recall stats``: the prompt hook week by week (``recall.prompt.stats``)."""

from __future__ import annotations

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command(
    "stats", help="Per week: prompts, injections, the share the next reply used, the share left silent, and misses."
)
def stats_cmd(
    weeks: int = typer.Option(8, "--weeks", help="How many weeks back, this one included."),
    as_json: bool = typer.Option(False, "--json", help="Print the weeks as JSON (newest first)."),
) -> None:
    from recall.cli import everyday

    everyday.stats(weeks, as_json)
