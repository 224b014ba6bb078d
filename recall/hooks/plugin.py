"""What ``recall hook`` does differently when recall's Claude Code plugin runs it.

The plugin's launcher (``hooks/recall``) sets ``RECALL_PLUGIN_DATA`` (its
``${CLAUDE_PLUGIN_DATA}``) before it hands over to ``recall``. Then:

* ``stands_down(name, payload)``: the plugin's hook for an event stands down when the settings
  Claude Code loads for this session already run ``recall hook`` for it (``recall setup``
  wired it): one injection per prompt, never two (``recall.core.wiring``);
* ``ensure_service()``: at SessionStart the plugin starts the background service when none
  answers (``recall serve``, detached; a second session starting at the same moment finds the
  service's lock held and its ``recall serve`` leaves).

What the builder runs once a runtime is built (stop an older runtime's service, start this one's)
is ``recall.setup.plugin_service``, which no hook imports.

Import-light, like every hook module: stdlib and ``recall.core``.
"""

from __future__ import annotations

import os
import sys

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
        subprocess.Popen(
            [sys.executable, "-m", "recall.entry", "serve"],
            stdin=devnull_in,
            stdout=devnull_out,
            stderr=devnull_out,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd="/",
        )


def ensure_service() -> bool:
    """Start the service when none answers for this ``RECALL_HOME`` (unless none is wanted:
    ``RECALL_NO_SERVICE``). Returns whether it started one."""
    from recall.core import service_client as client

    if client.disabled() or client.ping(timeout=0.5):
        return False
    spawn_service()
    return True
