"""``recall log``: what the prompt hook did with the last prompts (``recall.prompt.injections``)."""

from __future__ import annotations

from typing import Optional

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("log", help="What the prompt hook injected for the last prompts (newest first).")
def log_cmd(
    limit: int = typer.Option(20, "--limit", "-n", help="How many prompts to list."),
    show: Optional[int] = typer.Option(
        None, "--show", help="Print the exact text injected for prompt N (1 = the newest, as numbered by `recall log`)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the records as JSON (newest first)."),
) -> None:
    from recall.cli import everyday

    everyday.log(limit, show, as_json)
