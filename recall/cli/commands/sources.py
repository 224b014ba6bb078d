"""``recall sources [NAME on|off]``: which agents' sessions recall reads (Claude Code's, Codex
CLI's, Gemini CLI's: ``indexer.sources``), each with its folders and what the index holds of it;
turn one off or on (config ``sources``, kept in ``config.json``). Thin: the registry and the
config do the work; ``recall.cli.everyday.source_rows`` counts."""

from __future__ import annotations

import json
from typing import Optional

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("sources", help="List the agents whose sessions are read; `recall sources codex off` turns one off.")
def sources_cmd(
    name: Optional[str] = typer.Argument(None, help="A source: claude-code, codex or gemini."),
    state: Optional[str] = typer.Argument(None, help="on or off."),
    as_json: bool = typer.Option(False, "--json", help="Print the sources as JSON."),
) -> None:
    from indexer import sources
    from recall.cli.everyday import print_sources, source_rows
    from recall.core import config
    from recall.core.errors import UsageError

    if name is not None:
        if name not in sources.NAMES:
            raise UsageError(
                f"No source {name!r}: the sources are {', '.join(sources.NAMES)} (`recall sources` lists them)."
            )
        if state not in ("on", "off"):
            raise UsageError(f"Say on or off: `recall sources {name} off` or `recall sources {name} on`.")
        if name == sources.DEFAULT and state == "off":
            raise UsageError(
                "Claude Code's sessions are what recall is for and cannot be turned off; "
                "`recall pause` stops all capture, `recall exclude` keeps a project out."
            )
        config.set_value(f"sources.{name}", state == "on")  # the running service follows within seconds
        if not as_json:
            label = sources.label(name)
            typer.echo(
                f"{label}: {state}. "
                + (
                    "Its sessions are read from now on (the service reads the past ones too; `recall index` "
                    "does it without the service)."
                    if state == "on"
                    else "Its new sessions are no longer read; what is indexed stays searchable (`recall forget` "
                    "removes it)."
                )
            )
    rows = source_rows()
    if as_json:
        typer.echo(json.dumps({"sources": rows}))
    elif name is None:
        print_sources(rows)
