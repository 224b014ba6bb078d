"""The service's unit file and its manager: a systemd user unit on Linux, a launchd agent on
macOS. One unit per ``RECALL_HOME``: the default home is ``recall.service`` /
``dev.recall.service``; another home gets a suffix from its path.
``RECALL_SERVICE_PLATFORM=linux|darwin`` overrides the platform (to write the other kind of
file, e.g. for a dotfiles repository)."""

from __future__ import annotations

import hashlib
import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from recall.core import paths
from recall.core.errors import RecallError

#: seconds the manager may take to stop the service (its final commit); also the unit's TimeoutStopSec
STOP_TIMEOUT = 40.0


def recall_executable() -> list[str]:
    """argv prefix that runs this recall: the console script beside this Python, else on PATH,
    else ``python -m recall.entry``. Always absolute."""
    here = Path(sys.executable).parent / ("recall.exe" if os.name == "nt" else "recall")
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    found = shutil.which("recall")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "recall.entry"]


def platform() -> str:
    forced = os.environ.get("RECALL_SERVICE_PLATFORM", "").strip().lower()
    if forced in ("linux", "darwin"):
        return forced
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "darwin"
    raise RecallError(
        f"`recall service` supports Linux (systemd) and macOS (launchd), not {sys.platform}: "
        "run `recall serve` under your own supervisor instead."
    )


def _suffix() -> str:
    if not os.environ.get("RECALL_HOME"):
        return ""
    return "-" + hashlib.sha1(str(paths.recall_home()).encode()).hexdigest()[:8]


def unit_name() -> str:
    return f"recall{_suffix()}.service"


def launchd_label() -> str:
    return f"dev.recall.service{_suffix().replace('-', '.')}"


def unit_path(platform_: str | None = None) -> Path:
    platform_ = platform_ or platform()
    if platform_ == "darwin":
        return Path.home() / "Library" / "LaunchAgents" / f"{launchd_label()}.plist"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "systemd" / "user" / unit_name()


def installed() -> bool:
    """Whether this home's unit / agent file exists (False on a platform without a manager)."""
    try:
        return unit_path().exists()
    except RecallError:
        return False


def serve_argv(sources: list[Path]) -> list[str]:
    """The command the unit (or a detached start) runs: ``recall serve [--source DIR]...``."""
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
    exec_start = " ".join(_systemd_quote(a) for a in serve_argv(sources))
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
    return plistlib.dumps(
        {
            "Label": launchd_label(),
            "ProgramArguments": serve_argv(sources),
            "EnvironmentVariables": _service_env(),
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "ProcessType": "Background",
            "Nice": 5,
            "StandardOutPath": str(logs / "launchd.out.log"),
            "StandardErrorPath": str(logs / "launchd.err.log"),
        }
    )


def unit_text(sources: list[Path], platform_: str) -> str | bytes:
    """What the unit / agent file of ``platform_`` holds."""
    return launchd_plist(sources) if platform_ == "darwin" else systemd_unit(sources)


# ------------------------------------------------------------------------------ the manager
def run(cmd: list[str], timeout: float = 30.0) -> tuple[bool, str]:
    """Run a service-manager command: (succeeded, its last line of output)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    text = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return proc.returncode == 0, (text[-1] if text else f"exit status {proc.returncode}")


def manager_commands(platform_: str, path: Path) -> dict[str, list[list[str]]]:
    """The manager's commands by verb ("tool" names the manager's program)."""
    if platform_ == "darwin":
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


def one_line(cmds: list[list[str]]) -> str:
    """The commands as one shell line a user can paste."""
    return " && ".join(" ".join(shlex.quote(a) for a in c) for c in cmds)


def manager(platform_: str, verb: str) -> tuple[bool | None, str]:
    """Run the manager's commands for ``verb``: (None when the tool is missing | ok, detail)."""
    cmds = manager_commands(platform_, unit_path(platform_))
    if shutil.which(cmds["tool"][0][0]) is None:
        return None, one_line(cmds[verb])
    for cmd in cmds[verb]:
        ok, line = run(cmd)
        if not ok:
            return False, line
    return True, ""


def manager_state(platform_: str, path: Path) -> str | None:
    """What systemd says of the installed unit (``active``, ``inactive``...), or None."""
    if path.exists() and platform_ == "linux" and shutil.which("systemctl"):
        return run(["systemctl", "--user", "is-active", unit_name()], timeout=10)[1]
    return None
