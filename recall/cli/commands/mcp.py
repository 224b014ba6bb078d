"""``recall mcp``: serve recall's MCP tools over stdio (Claude Code starts it from ``.mcp.json``).

The mcp SDK is imported only when the command runs, so the rest of the CLI stays fast."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command(
    "mcp",
    help="Run the MCP server on stdio (memory_search, memory_related, memory_ask, "
    "recall_search). Claude Code starts it; `recall setup` registers it.",
)
def mcp_cmd(
    project: Optional[Path] = typer.Option(
        None, "--project", help="Default project directory (default: the working directory)."
    ),
) -> None:
    if project is not None and not project.expanduser().is_dir():
        raise UsageError(f"--project {project} is not a directory.")
    from recall.mcp.server import serve

    serve(str(project.expanduser().resolve()) if project is not None else None, stand_down=_stand_down())


def _stand_down() -> str | None:
    """Run by recall's Claude Code plugin where ``recall setup`` registered its own MCP server:
    why this one serves no tools."""
    import os

    if not os.environ.get("RECALL_PLUGIN_DATA"):
        return None
    from recall.core.wiring import session_project, setup_mcp

    where = setup_mcp(session_project())
    if where is None:
        return None
    return (
        f"recall's tools are served by the `recall` MCP server that `recall setup` registered in {where}; "
        "this one, recall's Claude Code plugin's, stands down so that they are not offered twice."
    )
