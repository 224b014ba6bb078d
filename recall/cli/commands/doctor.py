"""``recall doctor``: check every piece and print the fix for each problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from recall.core.errors import RecallError
from recall.core.text import counted

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command(
    "doctor", help="Check every piece (hooks, service, index, API key, MCP) and print the fix for each failure."
)
def doctor_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="The project (default: the working directory)."),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
    no_shell_checks: bool = typer.Option(
        False,
        "--no-shell-checks",
        hidden=True,
        help="Leave out the checks whose answer depends on this process's PATH and variables (the page's).",
    ),
) -> None:
    from recall.cli.checks import doctor

    checks = doctor(project, shell=not no_shell_checks)
    failed = [c for c in checks if not c.ok and not c.warn]
    if as_json:
        typer.echo(json.dumps([c.__dict__ for c in checks]))
    else:
        for c in checks:
            mark = "ok  " if c.ok else ("warn" if c.warn else "FAIL")
            typer.echo(f"{mark}  {c.name}: {c.detail}")
            if not c.ok and c.fix:
                typer.echo(f"      fix: {c.fix}")
        if not failed:
            warned = sum(1 for c in checks if not c.ok)
            typer.echo(
                "All good."
                if not warned
                else f"No problems; {counted(warned, 'optional piece')} off (see the warn lines)."
            )
    if failed:
        raise RecallError(f"{counted(len(failed), 'problem')} found: each one's fix is printed above.")
