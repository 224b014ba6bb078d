"""What several commands share: the ``--project`` option's folder, a memory type's check,
asking before removing, forgetting (on the service's writer or ours), pause durations, and
``recall index`` through the running service. The command modules of ``recall.cli.commands``
import these and never each other. Nothing here imports typer at module level: the fast paths
(``recall.cli.everyday``) use some of it too."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from recall.core.errors import RecallError, UsageError

PROJECT_HELP = "The project PATH belongs to (default: the current directory)."


# --project, memory types ---------------------------------------------------------------------
def project_root(project) -> str:
    """The canonical project ``--project PATH`` (default: the working directory) belongs to."""
    from indexer.project import canonical_project

    raw = os.path.abspath(os.path.expanduser(str(project))) if project else os.getcwd()
    if not os.path.isdir(raw):
        raise UsageError(f"--project {project} is not a directory: pass a folder of the project.")
    return canonical_project(raw)


def included_root(project) -> str:
    """``project_root(project)``, refused (one line, exit 1) for an excluded project: its
    memories are neither listed, shown, added, forgotten nor consolidated, on any face (the
    page refuses them too)."""
    import shlex

    from indexer.ledger import excluded_by, exclusions

    root = project_root(project)
    pattern = excluded_by(root, root, exclusions())
    if pattern is not None:
        raise RecallError(
            f"{root} is excluded from recall: its memories are neither shown nor changed. "
            f"`recall exclude remove {shlex.quote(pattern)}` takes it back in."
        )
    return root


def check_type(mtype: str | None) -> str | None:
    """A ``--type`` value as a memory type (lower case), None for None; UsageError otherwise."""
    from recall.memory import TYPES

    if mtype is None:
        return None
    t = mtype.strip().lower()
    if t not in TYPES:
        raise UsageError(f"{mtype!r} is not a memory type: use one of {', '.join(TYPES)}.")
    return t


def after_change(project: str, state) -> None:
    """Briefing file and index documents follow a change of the project's memories."""
    from recall.memory import briefing, index_docs

    briefing.write_briefing(project, state)
    index_docs.sync(project, state.changed, state.removed, state)


# asking, forgetting --------------------------------------------------------------------------
def interactive() -> bool:
    """Whether a person can be asked (stdin and stdout are terminals)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def confirm_or_stop(what: str, plan_lines: list[str], yes: bool, command: str) -> bool:
    """The confirmation rules shared by `forget`, `exclude add --purge` and `setup --uninstall
    --purge`: with --yes go on; with a terminal show what goes and ask; without one remove
    nothing and say how to confirm. Returns False when the user said no."""
    if yes:
        return True
    if not interactive():
        raise UsageError(
            f"Nothing removed: {what} ({'; '.join(plan_lines)}). There is no terminal to "
            f"ask: run the same `{command}` again with --yes to confirm."
        )
    import typer

    typer.echo(f"This removes {what}:")
    for line in plan_lines:
        typer.echo(f"  {line}")
    return typer.confirm("Remove it for good?", default=False)


def run_forget(args: dict) -> dict:
    """Forget on the service's writer when it runs, else on our own. ``{"resume": true}``:
    only finish the forgets an interruption left unfinished."""
    from recall.core import service_client as client

    try:
        return client.call("forget", args, timeout=600.0)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        from indexer.forgetting import Selection
        from indexer.ingest import Indexer
        from recall.privacy.forget import forget_everywhere, resume

        with Indexer() as ix:
            if args.get("resume"):
                return {"resumed": resume(ix)}
            return forget_everywhere(ix, Selection.from_args(args))


# pause ---------------------------------------------------------------------------------------
def parse_duration(value: str) -> float:
    """Seconds for ``30m``, ``2h``, ``1d``, ``1w``; UsageError otherwise."""
    from recall.search.timespec import SPAN, UNITS

    m = SPAN.match(value or "")
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"--for {value!r} is not a duration: use 30m, 2h, 1d or 1w.")
    return float(m.group(1)) * UNITS[m.group(2).lower()]


def until_text(until: float | None, now: float | None = None) -> str:
    """``until 14:30`` (a date too when a day or more away), or ``until `recall resume```."""
    if until is None:
        return "until `recall resume`"
    now = time.time() if now is None else now
    fmt = "%H:%M" if until - now < 86400 else "%Y-%m-%d %H:%M"
    return f"until {time.strftime(fmt, time.localtime(until))}"


# recall index through the service -------------------------------------------------------------
def index_through_service(sources: list[Path], rebuild: bool, quiet: bool = False):
    """``recall index`` while the service runs (``recall.control.index``): a line saying the
    service does it, then its backfill's progress as the same bar ``recall index`` shows
    without the service (both unless ``quiet``). The Summary, or None when no service answers."""
    import contextlib

    from recall.cli import output as fmt
    from recall.control.index import index_via_service

    with contextlib.ExitStack() as stack:
        bar: list = []

        def started(info: dict) -> None:
            if not quiet:
                verb = "rebuilding the index" if rebuild else "indexing"
                sys.stderr.write(
                    f"The recall service (pid {info.get('pid')}) keeps the index current; it is {verb} now…\n"
                )
                sys.stderr.flush()
            bar.append(stack.enter_context(fmt.progress("Indexing", enabled=not quiet)))

        return index_via_service(
            sources, rebuild, on_start=started, on_progress=None if quiet else (lambda bf: bar[0](bf))
        )
