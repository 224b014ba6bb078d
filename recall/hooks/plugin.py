"""What ``recall hook`` does differently when recall's Claude Code plugin runs it.

The plugin's launcher (``hooks/recall``) sets ``RECALL_PLUGIN_DATA`` (its
``${CLAUDE_PLUGIN_DATA}``) before it hands over to ``recall``. Then:

* ``stands_down(name, payload)``: the plugin's hook for an event stands down when the settings
  Claude Code loads for this session already run ``recall hook`` for it (``recall setup``
  wired it): one injection per prompt, never two (``recall.core.wiring``);
* ``ensure_service()``: at SessionStart the plugin starts the background service when none
  answers (``recall serve``, detached; a second session starting at the same moment finds the
  service's lock held and its ``recall serve`` leaves);
* ``python -m recall.hooks.plugin after-build``: what the builder
  (``recall/setup/plugin_runtime.py``) runs from a freshly built runtime: it stops a service
  that an older runtime of this plugin runs, then starts this one's.

Import-light, like every hook module: stdlib and ``recall.core``.
"""

from __future__ import annotations

import os
import sys
import time

from recall.core import paths, wiring


def data_dir() -> str | None:
    """The plugin's data folder when the plugin's launcher runs us, else None."""
    return os.environ.get("RECALL_PLUGIN_DATA") or None


def stands_down(name: str, payload: dict | None) -> bool:
    """Whether the plugin's hook ``name`` leaves this event to the one ``recall setup`` wired."""
    return any(wiring.hook_name(event) == name for event in wiring.setup_hooks(wiring.session_project(payload)))


def spawn_service() -> None:
    """``recall serve`` from this runtime, detached (its output goes to recall's log)."""
    import subprocess

    env = {**os.environ, "RECALL_HOME": str(paths.recall_home())}
    with open(os.devnull, "rb") as devnull_in, open(os.devnull, "wb") as devnull_out:
        subprocess.Popen([sys.executable, "-m", "recall.entry", "serve"], stdin=devnull_in, stdout=devnull_out,
                         stderr=devnull_out, start_new_session=True, close_fds=True, env=env, cwd="/")


def ensure_service() -> bool:
    """Start the service when none answers for this ``RECALL_HOME`` (unless none is wanted:
    ``RECALL_NO_SERVICE``). Returns whether it started one."""
    from recall.core import service_client as client

    if client.disabled() or client.ping(timeout=0.5):
        return False
    spawn_service()
    return True


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        pass
    import subprocess

    try:  # no /proc (macOS)
        return subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True,
                              timeout=5).stdout
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
    print("usage: python -m recall.hooks.plugin after-build", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
