"""Install, start, stop, remove and look at the service, from outside it: through the service
manager when its unit is installed (``recall.control.units``), else as a detached ``recall
serve``. Each step returns the one line to show; failures are ``RecallError``s that name the
next step."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from recall.control import units
from recall.core import paths
from recall.core.errors import RecallError
from recall.core.service_state import lock_holder, pid_alive

START_TIMEOUT = 20.0
STOP_TIMEOUT = units.STOP_TIMEOUT


def live_service(timeout: float = 1.0) -> dict | None:
    """{"pid", "version", ...} of the service answering on this RECALL_HOME's socket."""
    from recall.core import service_client as client

    return client.ping(timeout=timeout)


def service_pid() -> int | None:
    """The running service's pid: the one answering, else the holder of its lock."""
    info = live_service()
    if info and info.get("pid"):
        return int(info["pid"])
    return lock_holder()


def wait_until_up(timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = live_service(timeout=0.5)
        if info:
            return info
        time.sleep(0.2)
    return None


def terminate(pid: int, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM, then wait for the process to end: whether it did within ``timeout``."""
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


def _did_not_stop(pid: int) -> RecallError:
    return RecallError(
        f"The service (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s: "
        f"`kill -9 {pid}` is safe (nothing indexed is lost)."
    )


def install_service(sources: list[Path], start: bool = True) -> str:
    """Write the unit / agent file and (unless ``start`` is False) have the manager start it."""
    platform = units.platform()
    path = units.unit_path(platform)
    paths.ensure_dir(paths.log_dir())
    path.parent.mkdir(parents=True, exist_ok=True)
    paths.atomic_write(
        path, units.unit_text(sources, platform), mode=0o644, private_dir=False
    )  # ~/.config/systemd/user is not ours
    cmds = units.manager_commands(platform, path)
    if not start:
        return f"Wrote {path}. To start it: {units.one_line(cmds['enable'])}"
    if platform == "darwin" and shutil.which("launchctl"):
        units.run(cmds["disable"][0])  # re-installing: unload the old definition first
    ok, detail = units.manager(platform, "enable")
    if ok is None:
        return f"Wrote {path}; {cmds['tool'][0][0]} is not available here. Run: {detail}"
    if not ok:
        return (
            f"Wrote {path}, but the service manager refused ({detail}). "
            f"Run: {units.one_line(cmds['enable'])}  (or `recall service start` to run it without a manager)"
        )
    info = wait_until_up(START_TIMEOUT)
    state = f" (pid {info['pid']})" if info else " (still starting: `recall status` shows it)"
    return f"Installed and started the recall service{state}: {path}"


def remove_service() -> str:
    """Stop the service (whether a manager or a shell started it) and remove its unit / agent
    file. Returns what was done, in one line."""
    try:
        platform = units.platform()
        path = units.unit_path(platform)
    except RecallError:
        platform, path = None, None
    removed = ""
    note = ""
    if path is not None and path.exists():
        ok, detail = units.manager(platform, "disable")
        path.unlink()
        if platform == "linux" and shutil.which("systemctl"):
            units.run(["systemctl", "--user", "daemon-reload"])
        removed = f"Removed {path}; "
        note = f" The service manager did not answer ({detail})." if ok is False else ""
    pid = service_pid()
    if pid is not None and not terminate(pid):
        raise _did_not_stop(pid)
    if not removed and pid is None:
        return (
            f"No service installed ({path} does not exist) and none running; nothing to do."
            if path
            else "No service running; nothing to do."
        )
    stopped = f"the service is stopped{f' (pid {pid})' if pid else ''}."
    return (removed + stopped if removed else stopped[0].upper() + stopped[1:]) + note


def start_service(sources: list[Path] = ()) -> tuple[str, int | None]:
    """Start the service (through the manager when installed, else detached). Returns
    (what happened, pid)."""
    info = live_service()
    if info:
        return f"The recall service already runs (pid {info.get('pid')}).", info.get("pid")
    how = "detached"
    if units.installed():
        ok, _ = units.manager(units.platform(), "start")
        how = "manager" if ok else how
    if how == "detached":
        log_path = paths.log_dir()
        paths.ensure_dir(log_path)
        with open(os.devnull, "rb") as devnull_in, open(os.devnull, "wb") as devnull_out:
            subprocess.Popen(
                units.serve_argv(list(sources)),
                stdin=devnull_in,
                stdout=devnull_out,
                stderr=devnull_out,
                start_new_session=True,
                close_fds=True,
                env={**os.environ, "RECALL_HOME": str(paths.recall_home())},
            )
    info = wait_until_up(START_TIMEOUT)
    if not info:
        from recall.core import log

        raise RecallError(
            f"The service did not come up within {START_TIMEOUT:.0f} s: "
            f"see {log.log_file()} (or run `recall serve` to watch it start)."
        )
    return f"Started the recall service (pid {info.get('pid')}).", info.get("pid")


def stop_service() -> str:
    """Stop the service (the manager's stop when installed, and SIGTERM): the one line to show."""
    pid = service_pid()
    if pid is None:
        return "The recall service is not running; nothing to stop."
    if units.installed():
        units.manager(units.platform(), "stop")
    if terminate(pid):
        return f"Stopped the recall service (pid {pid})."
    raise _did_not_stop(pid)


def unit_status() -> dict:
    """{"installed", "unit", "manager_state"}: the unit file and what the manager says of it."""
    platform = units.platform()
    path = units.unit_path(platform)
    return {"installed": path.exists(), "unit": str(path), "manager_state": units.manager_state(platform, path)}
