"""``recall index [--rebuild] [--source DIR]``: index new transcript lines. While the service
runs it does the work (it holds the one index writer: ``recall.control.index``); otherwise
``indexer.ingest.index_all`` runs here, and re-redacts once what older redaction rules stored.
Thin: options in, a summary out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import typer

from recall.core.errors import RecallError

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("index", help="Index new transcript lines (incremental; --rebuild starts over).")
def index_cmd(
    rebuild: bool = typer.Option(False, "--rebuild", help="Drop the index and build it again."),
    source: List[Path] = typer.Option([], "--source", help="Another transcript root (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    from indexer.ingest import index_all
    from recall.cli import output as fmt
    from recall.cli.command_utils import index_through_service

    for s in source:
        if not s.is_dir():
            raise RecallError(f"--source {s} is not a directory: pass a folder of Claude Code transcripts.")
    summary = index_through_service(source, rebuild, quiet=as_json)  # the running service holds the writer
    redacted: dict = {}
    if summary is None:
        with fmt.progress("Indexing", enabled=not as_json) as update:
            from recall.privacy import redaction_pass
            from recall.privacy.forget import attach

            def after(ix) -> None:  # history stored under older redaction rules: once
                redacted.update(redaction_pass.run(ix) or {})

            summary = index_all(source, rebuild=rebuild, progress=update, on_open=attach, after=after)
    if as_json:
        typer.echo(json.dumps(dict(summary.as_dict(), **({"reredacted": redacted} if redacted else {}))))
    else:
        if summary.replayed:
            typer.echo(f"Restored {fmt.counted(summary.replayed, 'message')} from the archive.")
        if redacted:
            typer.echo(fmt.reredact_line(redacted))
        fmt.print_index_summary(summary)
