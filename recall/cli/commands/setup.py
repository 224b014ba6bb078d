"""``recall setup``: wire recall into Claude Code (hooks, MCP server, service, first backfill)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from recall.core import paths
from recall.core.errors import RecallError, UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


def _service_step(report, start: bool) -> None:
    """Install the service (systemd user unit / launchd agent) and start it."""
    if not start:
        report.notes.append("skipped the service (--no-service): `recall service install` sets it up later")
        return
    import subprocess

    from recall.cli.install import recall_executable

    try:
        proc = subprocess.run([*recall_executable(), "service", "install"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        report.notes.append(f"could not run `recall service install` ({exc}): run it yourself")
        return
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    if proc.returncode != 0:
        report.notes.append(f"`recall service install` failed ({lines[-1] if lines else proc.returncode}): "
                            "`recall doctor` says what to do")
        return
    report.changes.append(f"installed the service ({lines[-1] if lines else 'done'})")
    from recall.cli.commands.service import start_service

    try:
        message, _pid = start_service()
    except RecallError as exc:
        report.notes.append(f"the service did not start: {exc}")
        return
    report.changes.append(message)


def _backfill_step(report, run: bool) -> None:
    if not run:
        report.notes.append("skipped the first backfill (--no-index): run `recall index`")
        return
    from indexer.ingest import index_all
    from recall.cli import output as fmt
    from recall.cli.commands.service import index_via_service
    from recall.core.errors import IndexBusy

    try:
        summary = index_via_service([], False, quiet=True)  # a running service holds the writer
        if summary is None:
            with fmt.progress("Indexing past sessions") as update:
                summary = index_all(progress=update)
    except IndexBusy as exc:
        report.notes.append(f"the first backfill did not run: {exc}")
        return
    report.changes.append(f"indexed {summary.messages} messages from {summary.changed} of {summary.files} "
                          f"transcript files in {summary.seconds:.1f} s")


@commands.command("setup", help="Wire recall into Claude Code: hooks in .claude/settings.json, the MCP server "
                                "in .mcp.json, the /recall, /recall-search and /remember slash commands, the "
                                "background service, the first backfill.")
def setup_cmd(
    global_: bool = typer.Option(False, "--global", help="Use ~/.claude/settings.json (every project)."),
    project: Optional[Path] = typer.Option(None, "--project", help="The project (default: the working directory)."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Remove exactly what setup added."),
    no_service: bool = typer.Option(False, "--no-service", help="Do not install or start the service."),
    no_index: bool = typer.Option(False, "--no-index", help="Do not run the first backfill."),
    no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not register the MCP server."),
    no_commands: bool = typer.Option(False, "--no-commands", help="Do not install the /recall, /recall-search "
                                                                  "and /remember slash commands."),
) -> None:
    from recall.cli import install as st

    if global_ and project is not None:
        raise UsageError("--global and --project exclude each other: pick one.")
    if uninstall:
        report = st.uninstall_files(project, global_)
        for line in report.lines():
            typer.echo(line)
        typer.echo("The service and the index are left as they are "
                   "(`recall service stop` stops it; the index is under " f"{paths.recall_home()}).")
        return
    report = st.install_files(project, global_, mcp=not no_mcp, commands=not no_commands)
    _backfill_step(report, not no_index)
    _service_step(report, not no_service)
    for line in report.changes:
        typer.echo(f"changed: {line}")
    for line in report.unchanged:
        typer.echo(f"ok:      {line}")
    for line in report.notes:
        typer.echo(f"note:    {line}")
    typer.echo("Done. `recall doctor` checks every piece.")
