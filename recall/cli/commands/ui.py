"""``recall ui``: print the address of recall's local web page and open it in the browser. The
running service serves it (it starts the page's server on first ask, ``recall.ui.op``); without
a service this command serves it itself until Ctrl-C. Always on 127.0.0.1 (``recall.ui.guard``).

The printed address holds a one-time code; the browser is opened on a local file only this user
can read (``UIServer.open_file``) that holds another, so no command line (``/proc/*/cmdline``,
readable by every local user) ever holds a code."""

from __future__ import annotations

from typing import Optional

import typer

from recall.core.errors import RecallError

commands = typer.Typer()  # merged into the app by recall.cli.app


NO_BROWSER = "(no browser could be opened here: open the address above in yours)"


def _open(path: str | None) -> None:
    """Open the browser on the server's local file (its ``file://`` address: the command line
    holds a path, never a code); a file no browser took is removed at once."""
    import os
    import webbrowser
    from pathlib import Path

    if not path:  # a service older than the one-time codes: its address would put a secret on a command line
        typer.echo(
            "(the running service is older than this recall: restart it with `recall service restart` "
            "to have the page opened here; the address above opens it)",
            err=True,
        )
        return
    try:
        opened = bool(webbrowser.open(Path(path).as_uri(), new=2))
    except Exception:  # noqa: BLE001 - no browser here: the printed address is enough
        opened = False
    if not opened:
        try:
            os.unlink(path)
        except OSError:
            pass
        typer.echo(NO_BROWSER, err=True)


@commands.command(
    "ui",
    help="Open recall's local web page: the prompts and what was injected, search, sessions, "
    "memories, status and charts (served on 127.0.0.1 only).",
)
def ui_cmd(
    no_open: bool = typer.Option(False, "--no-open", help="Print the URL without opening a browser."),
    port: Optional[int] = typer.Option(
        None, "--port", min=1, max=65535, help="Serve on this port (default: a free one)."
    ),
    no_serve: bool = typer.Option(
        False,
        "--no-serve",
        hidden=True,
        help="Only print the URL of the service's page; never serve from this process (the /ui slash command).",
    ),
) -> None:
    from recall.core import service_client as client

    try:
        info = client.call("ui", {"port": port, "open": not no_open}, timeout=15.0)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        info = None
    if info is not None:
        typer.echo(info["url"])
        if not no_open:
            _open(info.get("open_file"))
        return
    if no_serve:  # the slash command: its output must reach the model, so this is said, not failed
        typer.echo(
            "No recall service runs to serve the page: start it with `recall service start`, "
            "or run `recall ui` in a terminal to serve the page from there."
        )
        return
    _serve_here(port, no_open)


def _serve_here(port: Optional[int], no_open: bool) -> None:
    """No service: serve the page from this process until Ctrl-C."""
    import time

    from recall.ui import server

    try:
        srv = server.start(port or 0)
    except OSError as exc:
        raise RecallError(
            f"cannot serve the page on 127.0.0.1:{port or 0} ({exc.strerror or exc}): pick another port with --port."
        ) from None
    typer.echo(srv.url())
    typer.echo(
        "No recall service runs: this command serves the page until Ctrl-C "
        "(`recall service start` serves it in the background).",
        err=True,
    )
    if not no_open:
        _open(srv.open_file())
    try:
        while srv.thread is not None and srv.thread.is_alive():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
