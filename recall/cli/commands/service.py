"""``recall serve`` and ``recall service install|uninstall|status|start|stop|restart``.

Thin: options in, ``recall.control`` does the work (the unit files, the service manager,
start and stop), its one line out. ``recall serve`` runs ``recall.service``'s Service in the
foreground, with the page's op (``recall.ui.op``) added to the service's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import typer

from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


service_app = typer.Typer(
    help="Run the indexer in the background: a systemd user unit (Linux) or launchd agent (macOS).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(service_app, name="service")


def _check_sources(source: List[Path]) -> list[Path]:
    out = []
    for s in source:
        p = s.expanduser()
        if not p.is_dir():
            raise UsageError(f"--source {s} is not a directory: pass a folder of Claude Code transcripts.")
        out.append(p.resolve())
    return out


# ------------------------------------------------------------------------------ recall serve
@commands.command(
    "serve",
    help="Run the indexer service in the foreground: watch transcripts, keep the "
    "index current, answer searches on a local socket. Stops on Ctrl-C/SIGTERM.",
)
def serve_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    import logging

    from recall.core import log

    sources = _check_sources(source)
    logger = log.setup(stderr=True)
    if not any(
        isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler) for h in logger.handlers
    ):
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(h)
    from recall.service import registry
    from recall.service.daemon import Service
    from recall.ui import op as page_op

    registry.add_module(page_op)  # the page's op (`recall ui`): the service, a floor below, never names it
    service = Service(sources, log=logging.getLogger("recall.service"))
    service.run()
    if service.restart_requested:  # the installed code changed: the same command on the new code
        service.exec_new_code()


# ------------------------------------------------------------------------------ recall service ...
@service_app.command("install", help="Write the systemd user unit / launchd agent and start it.")
def install_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
    no_start: bool = typer.Option(False, "--no-start", help="Only write the file."),
) -> None:
    from recall.control.lifecycle import install_service

    typer.echo(install_service(_check_sources(source), start=not no_start))


@service_app.command("uninstall", help="Stop the service and remove its unit / agent file.")
def uninstall_cmd() -> None:
    from recall.control.lifecycle import remove_service

    typer.echo(remove_service())


@service_app.command("start", help="Start the service (via systemd/launchd when installed, else detached).")
def start_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    from recall.control.lifecycle import start_service

    msg, _ = start_service(_check_sources(source))
    typer.echo(msg)


@service_app.command("stop", help="Stop the service (a final commit first).")
def stop_cmd() -> None:
    from recall.control.lifecycle import stop_service

    typer.echo(stop_service())


@service_app.command(
    "restart",
    help="Stop the service, then start it (after an upgrade, say; it also restarts itself when its installed code changes).",
)
def restart_cmd() -> None:
    from recall.control.lifecycle import start_service, stop_service

    stop_service()
    msg, _ = start_service()
    typer.echo(msg)


@service_app.command("status", help="Whether the service is installed and running.")
def service_status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    from recall.cli.everyday import collect_status, print_service_line
    from recall.control.lifecycle import unit_status

    unit = unit_status()
    info = collect_status()
    out = {**unit, "running": info["service"]["running"], "pid": info["service"].get("pid")}
    if as_json:
        typer.echo(json.dumps(out))
        return
    path, manager_state = unit["unit"], unit["manager_state"]
    inst = f"installed ({path})" if out["installed"] else f"not installed (`recall service install` writes {path})"
    typer.echo(f"Unit:    {inst}" + (f"; systemd says: {manager_state}" if manager_state else ""))
    print_service_line(info)
