"""``recall forget``: delete a session or a whole project from the index and the archive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from recall.core.errors import RecallError, UsageError
from recall.cli.commands.status import _short

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("forget", help="Delete a session or a whole project from the index and the archive "
                                 "(Claude Code's own transcript files are left alone).")
def forget_cmd(
    session: Optional[str] = typer.Option(None, "--session", help="The session id to forget."),
    project: Optional[Path] = typer.Option(None, "--project", help="The project (a path inside it) to forget."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.core import service_client as client

    if (session is None) == (project is None):
        raise UsageError("Say what to forget: `recall forget --session ID` or `recall forget --project PATH`.")
    args: dict = {}
    if session is not None:
        session = session.strip()
        if not session or len(session) > 200 or any(c in session for c in "/\\\0\n"):
            raise UsageError(f"{session!r} is not a session id: copy one from `recall --json QUERY` output.")
        args["session"] = session
    else:
        from recall.search.run import resolve_project

        args["project"] = resolve_project(project)
    try:
        result = client.call("forget", args, timeout=300.0)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        from indexer.ingest import Indexer
        from indexer.ingest import forget

        with Indexer() as ix:
            result = forget(ix, args.get("session"), args.get("project"))
    if as_json:
        typer.echo(json.dumps(result))
        return
    what = f"session {args['session']}" if session is not None else f"project {_short(args['project'])}"
    if not result.get("index") and not result.get("archive"):
        typer.echo(f"Nothing indexed for {what}; recall will not index its past messages from now on.")
        return
    typer.echo(f"Forgot {what}: {result.get('index', 0):,} messages removed from the index, "
               f"{result.get('archive', 0):,} from the archive. Claude Code's own transcript files were "
               "not touched.")
