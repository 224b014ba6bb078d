"""``recall serve`` and ``recall service install|uninstall|status|start|stop|restart``.

The service manager: a systemd user unit on Linux, a launchd agent on macOS. Where the
manager is missing (or refuses, e.g. no user session bus), ``install`` still writes the
file and prints the one command to run. One unit per ``RECALL_HOME``: the default home is
``recall.service`` / ``dev.recall.service``; another home gets a suffix from its path.
``RECALL_SERVICE_PLATFORM=linux|darwin`` overrides the platform (to write the other kind
of file, e.g. for a dotfiles repository).

``recall index`` while the service runs asks the service to do it (op "index"), so the
one index writer stays the service: see ``index_via_service``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import List

import typer

from recall.core import paths
from recall.core.errors import RecallError, UsageError
from recall.cli.commands.status import _print_service_line, collect_status
import hashlib
import plistlib
import shlex
import shutil
import signal
import subprocess
import sys

commands = typer.Typer()  # merged into the app by recall.cli.app


service_app = typer.Typer(
    help="Run the indexer in the background: a systemd user unit (Linux) or launchd agent (macOS).",
    no_args_is_help=True, add_completion=False, rich_markup_mode=None,
)
commands.add_typer(service_app, name="service")

START_TIMEOUT = 20.0
STOP_TIMEOUT = 40.0


# ------------------------------------------------------------------------------ helpers
def _check_sources(source: List[Path]) -> list[Path]:
    out = []
    for s in source:
        p = s.expanduser()
        if not p.is_dir():
            raise UsageError(f"--source {s} is not a directory: pass a folder of Claude Code transcripts.")
        out.append(p.resolve())
    return out


def live_service(timeout: float = 1.0) -> dict | None:
    """{"pid", "version", ...} of the service answering on this RECALL_HOME's socket."""
    from recall.core import service_client as client

    return client.ping(timeout=timeout)


def service_pid() -> int | None:
    info = live_service()
    if info and info.get("pid"):
        return int(info["pid"])
    from recall.service.daemon import lock_holder

    return lock_holder()


# ------------------------------------------------------------------------------ recall serve
@commands.command("serve", help="Run the indexer service in the foreground: watch transcripts, keep the "
                                "index current, answer searches on a local socket. Stops on Ctrl-C/SIGTERM.")
def serve_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    import logging

    from recall.core import log

    sources = _check_sources(source)
    logger = log.setup(stderr=True)
    if not any(isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
               for h in logger.handlers):
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(h)
    from recall.service.daemon import Service

    service = Service(sources, log=logging.getLogger("recall.service"))
    service.run()
    if service.restart_requested:  # the installed code changed: the same command on the new code
        service.exec_new_code()


# ------------------------------------------------------------------------------ unit files
def _platform() -> str:
    forced = os.environ.get("RECALL_SERVICE_PLATFORM", "").strip().lower()
    if forced in ("linux", "darwin"):
        return forced
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "darwin"
    raise RecallError(f"`recall service` supports Linux (systemd) and macOS (launchd), not {sys.platform}: "
                      "run `recall serve` under your own supervisor instead.")


def _suffix() -> str:
    if not os.environ.get("RECALL_HOME"):
        return ""
    return "-" + hashlib.sha1(str(paths.recall_home()).encode()).hexdigest()[:8]


def unit_name() -> str:
    return f"recall{_suffix()}.service"


def launchd_label() -> str:
    return f"dev.recall.service{_suffix().replace('-', '.')}"


def unit_path(platform: str | None = None) -> Path:
    platform = platform or _platform()
    if platform == "darwin":
        return Path.home() / "Library" / "LaunchAgents" / f"{launchd_label()}.plist"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "systemd" / "user" / unit_name()


def _serve_argv(sources: list[Path]) -> list[str]:
    from recall.cli.install import recall_executable

    argv = [*recall_executable(), "serve"]
    for s in sources:
        argv += ["--source", str(s)]
    return argv


def _service_env() -> dict[str, str]:
    env = {"RECALL_HOME": str(paths.recall_home())}
    for var in ("CLAUDE_CONFIG_DIR", "RECALL_WRITER_HEAP_MB", "XDG_DATA_HOME"):
        if os.environ.get(var):
            env[var] = os.environ[var]
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "/._-+=:@," for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(sources: list[Path]) -> str:
    exec_start = " ".join(_systemd_quote(a) for a in _serve_argv(sources))
    env = "\n".join(f"Environment={_systemd_quote(f'{k}={v}')}" for k, v in _service_env().items())
    return f"""[Unit]
Description=recall: keeps the Claude Code memory index current ({paths.recall_home()})

[Service]
Type=simple
ExecStart={exec_start}
{env}
Restart=on-failure
RestartSec=5
KillSignal=SIGTERM
TimeoutStopSec={int(STOP_TIMEOUT)}
Nice=5

[Install]
WantedBy=default.target
"""


def launchd_plist(sources: list[Path]) -> bytes:
    logs = paths.log_dir()
    return plistlib.dumps({
        "Label": launchd_label(),
        "ProgramArguments": _serve_argv(sources),
        "EnvironmentVariables": _service_env(),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "Nice": 5,
        "StandardOutPath": str(logs / "launchd.out.log"),
        "StandardErrorPath": str(logs / "launchd.err.log"),
    })


def _run(cmd: list[str], timeout: float = 30.0) -> tuple[bool, str]:
    """Run a service-manager command: (succeeded, its last line of output)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    text = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return proc.returncode == 0, (text[-1] if text else f"exit status {proc.returncode}")


def _manager_commands(platform: str, path: Path) -> dict[str, list[list[str]]]:
    if platform == "darwin":
        domain = f"gui/{os.getuid()}"
        return {
            "tool": [["launchctl"]],
            "enable": [["launchctl", "bootstrap", domain, str(path)]],
            "disable": [["launchctl", "bootout", domain, str(path)]],
            "start": [["launchctl", "kickstart", f"{domain}/{launchd_label()}"]],
            "stop": [["launchctl", "kill", "SIGTERM", f"{domain}/{launchd_label()}"]],
        }
    name = unit_name()
    return {
        "tool": [["systemctl"]],
        "enable": [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", name]],
        "disable": [["systemctl", "--user", "disable", "--now", name], ["systemctl", "--user", "daemon-reload"]],
        "start": [["systemctl", "--user", "start", name]],
        "stop": [["systemctl", "--user", "stop", name]],
    }


def _one_line(cmds: list[list[str]]) -> str:
    return " && ".join(" ".join(shlex.quote(a) for a in c) for c in cmds)


def _manager(platform: str, verb: str) -> tuple[bool | None, str]:
    """Run the manager's commands for ``verb``: (None when the tool is missing | ok, detail)."""
    cmds = _manager_commands(platform, unit_path(platform))
    if shutil.which(cmds["tool"][0][0]) is None:
        return None, _one_line(cmds[verb])
    for cmd in cmds[verb]:
        ok, line = _run(cmd)
        if not ok:
            return False, line
    return True, ""


def _installed() -> bool:
    try:
        return unit_path().exists()
    except RecallError:
        return False


# ------------------------------------------------------------------------------ recall service ...
@service_app.command("install", help="Write the systemd user unit / launchd agent and start it.")
def install_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
    no_start: bool = typer.Option(False, "--no-start", help="Only write the file."),
) -> None:
    sources = _check_sources(source)
    platform = _platform()
    path = unit_path(platform)
    paths.ensure_dir(paths.log_dir())
    data = launchd_plist(sources) if platform == "darwin" else systemd_unit(sources)
    path.parent.mkdir(parents=True, exist_ok=True)
    paths.atomic_write(path, data, mode=0o644, private_dir=False)  # ~/.config/systemd/user is not ours
    cmds = _manager_commands(platform, path)
    if no_start:
        typer.echo(f"Wrote {path}. To start it: {_one_line(cmds['enable'])}")
        return
    if platform == "darwin" and shutil.which("launchctl"):
        _run(cmds["disable"][0])  # re-installing: unload the old definition first
    ok, detail = _manager(platform, "enable")
    if ok is None:
        typer.echo(f"Wrote {path}; {cmds['tool'][0][0]} is not available here. Run: {detail}")
    elif not ok:
        typer.echo(f"Wrote {path}, but the service manager refused ({detail}). "
                   f"Run: {_one_line(cmds['enable'])}  (or `recall service start` to run it without a manager)")
    else:
        info = _wait_until_up(START_TIMEOUT)
        state = f" (pid {info['pid']})" if info else " (still starting: `recall status` shows it)"
        typer.echo(f"Installed and started the recall service{state}: {path}")


def remove_service() -> str:
    """Stop the service (whether a manager or a shell started it) and remove its unit / agent
    file. Returns what was done, in one line."""
    try:
        platform = _platform()
        path = unit_path(platform)
    except RecallError:
        platform, path = None, None
    removed = ""
    note = ""
    if path is not None and path.exists():
        ok, detail = _manager(platform, "disable")
        path.unlink()
        if platform == "linux" and shutil.which("systemctl"):
            _run(["systemctl", "--user", "daemon-reload"])
        removed = f"Removed {path}; "
        note = f" The service manager did not answer ({detail})." if ok is False else ""
    pid = service_pid()
    if pid is not None and not _terminate(pid):
        raise RecallError(f"The service (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s: "
                          f"`kill -9 {pid}` is safe (nothing indexed is lost).")
    if not removed and pid is None:
        return f"No service installed ({path} does not exist) and none running; nothing to do." if path else \
            "No service running; nothing to do."
    stopped = f"the service is stopped{f' (pid {pid})' if pid else ''}."
    return (removed + stopped if removed else stopped[0].upper() + stopped[1:]) + note


@service_app.command("uninstall", help="Stop the service and remove its unit / agent file.")
def uninstall_cmd() -> None:
    typer.echo(remove_service())


def _wait_until_up(timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = live_service(timeout=0.5)
        if info:
            return info
        time.sleep(0.2)
    return None


def _terminate(pid: int, timeout: float = STOP_TIMEOUT) -> bool:
    from recall.service.daemon import pid_alive

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    except PermissionError:
        raise RecallError(f"Not allowed to stop pid {pid}: stop it as the user that started it.") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


def start_service(sources: list[Path] = ()) -> tuple[str, int | None]:
    """Start the service (through the manager when installed, else detached). Returns
    (what happened, pid)."""
    info = live_service()
    if info:
        return f"The recall service already runs (pid {info.get('pid')}).", info.get("pid")
    how = "detached"
    if _installed():
        ok, _ = _manager(_platform(), "start")
        how = "manager" if ok else how
    if how == "detached":
        log_path = paths.log_dir()
        paths.ensure_dir(log_path)
        with open(os.devnull, "rb") as devnull_in, open(os.devnull, "wb") as devnull_out:
            subprocess.Popen(_serve_argv(list(sources)), stdin=devnull_in, stdout=devnull_out,
                             stderr=devnull_out, start_new_session=True, close_fds=True,
                             env={**os.environ, "RECALL_HOME": str(paths.recall_home())})
    info = _wait_until_up(START_TIMEOUT)
    if not info:
        from recall.core import log

        raise RecallError(f"The service did not come up within {START_TIMEOUT:.0f} s: "
                          f"see {log.log_file()} (or run `recall serve` to watch it start).")
    return f"Started the recall service (pid {info.get('pid')}).", info.get("pid")


@service_app.command("start", help="Start the service (via systemd/launchd when installed, else detached).")
def start_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    msg, _ = start_service(_check_sources(source))
    typer.echo(msg)


def stop_service() -> str:
    pid = service_pid()
    if pid is None:
        return "The recall service is not running; nothing to stop."
    if _installed():
        _manager(_platform(), "stop")
    if _terminate(pid):
        return f"Stopped the recall service (pid {pid})."
    raise RecallError(f"The service (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s: "
                      f"`kill -9 {pid}` is safe (nothing indexed is lost).")


@service_app.command("stop", help="Stop the service (a final commit first).")
def stop_cmd() -> None:
    typer.echo(stop_service())


@service_app.command("restart", help="Stop the service, then start it (after an upgrade, say; it also restarts itself when its installed code changes).")
def restart_cmd() -> None:
    stop_service()
    msg, _ = start_service()
    typer.echo(msg)


@service_app.command("status", help="Whether the service is installed and running.")
def service_status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    platform = _platform()
    path = unit_path(platform)
    info = collect_status()
    manager_state = None
    if path.exists() and platform == "linux" and shutil.which("systemctl"):
        _, manager_state = _run(["systemctl", "--user", "is-active", unit_name()], timeout=10)
    out = {"installed": path.exists(), "unit": str(path), "manager_state": manager_state,
           "running": info["service"]["running"], "pid": info["service"].get("pid")}
    if as_json:
        typer.echo(json.dumps(out))
        return
    inst = f"installed ({path})" if out["installed"] else f"not installed (`recall service install` writes {path})"
    typer.echo(f"Unit:    {inst}" + (f"; systemd says: {manager_state}" if manager_state else ""))
    _print_service_line(info)


# ------------------------------------------------------------------------------ recall index
def index_via_service(sources: list[Path], rebuild: bool, quiet: bool = False):
    """``recall index`` while the service runs: the service does it (it holds the only
    index writer). Returns the Summary, or None when no service answers."""
    from indexer.ingest import Summary
    from recall.core import service_client as client

    info = live_service()
    if not info:
        return None
    if not quiet:
        verb = "rebuilding the index" if rebuild else "indexing"
        typer.echo(f"The recall service (pid {info.get('pid')}) keeps the index current; it is {verb} now…",
                   err=True)
    args = {"sources": [str(Path(s).expanduser().resolve()) for s in sources], "rebuild": rebuild}
    try:
        result = _call_with_progress(args, show=not quiet)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        return None
    return Summary.from_dict(result)


def _call_with_progress(args: dict, show: bool) -> dict:
    """The service's "index" op; on a terminal, its backfill's progress (polled from its status
    every half second) as the same bar ``recall index`` shows without the service."""
    import threading

    from recall.cli import output as fmt
    from recall.core import service_client as client

    box: dict = {}

    def call() -> None:
        try:
            box["result"] = client.call("index", args, timeout=24 * 3600.0)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    with fmt.progress("Indexing", enabled=show) as update:
        while worker.is_alive():
            worker.join(0.5)
            if not worker.is_alive():
                break
            try:
                bf = (client.call("status", {}, timeout=2.0) or {}).get("backfill")
            except client.Unavailable:
                bf = None
            if bf:
                update(bf)
    if "error" in box:
        raise box["error"]
    return box["result"]
