"""The plugin's service after a runtime build: ``python -m recall.setup.plugin_service after-build``
is what the builder (``recall/setup/plugin_runtime.py``) runs from a freshly built runtime. It
stops a service that an older runtime of this plugin runs, then starts this one's (unless
``recall setup``'s hooks handle the project: then the plugin starts none).

What the plugin's hooks do on every event (stand down, start a service when none answers) is the
hook's side, in ``recall.hooks.plugin``; this module is run once per build, never by a hook.
"""

from __future__ import annotations

import os
import sys
import time

from recall.hooks.plugin import data_dir, spawn_service, stands_down


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        pass
    import subprocess

    try:  # no /proc (macOS)
        return subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, timeout=5
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def replace_older_service(data: str, timeout: float = 40.0) -> str:
    """Stop a service that another runtime of this plugin (under ``data``) runs, so this one
    can start its own. Services started any other way are left alone."""
    from recall import __version__
    from recall.core.service_state import lock_holder, pid_alive, read_status

    pid = lock_holder()
    if pid is None:
        return "no service runs"
    st = read_status() or {}
    runtime = os.path.dirname(os.path.dirname(sys.executable))  # <data>/runtime/<version>
    command = _command_line(pid)
    if runtime + os.sep in command:
        return f"the service (pid {pid}) already runs from this runtime"
    if os.path.join(data, "runtime") not in command:
        return f"the service (pid {pid}) was not started by this plugin: left alone"
    import signal

    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return f"stopped the service of version {st.get('version', '?')} (pid {pid}) for {__version__}'s"


def after_build() -> int:
    data = data_dir()
    if stands_down("session-start", None):
        print("recall setup's hooks handle this project: the plugin starts no service")
        return 0
    if data:
        print(replace_older_service(data))
    from recall.core import service_client as client

    deadline = time.monotonic() + 20.0
    started = False
    while time.monotonic() < deadline:
        info = client.ping(timeout=1.0)
        if info:
            print(f"the service runs (pid {info.get('pid')}, version {info.get('version')})")
            return 0
        if not started:
            spawn_service()
            started = True
        time.sleep(0.3)
    print("the service did not answer within 20 s: see recall's log; the next session start tries again")
    return 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["after-build"]:
        return after_build()
    print("usage: python -m recall.setup.plugin_service after-build", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
