"""``recall doctor``'s "wiring" check: which of ``recall setup`` and recall's Claude Code plugin
wires recall into Claude Code here, and, for the plugin, the state of its Python runtime (being
built, failed and why, ready)."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from recall.cli.checks import Check
from recall.core import plugin_runtime, wiring


def _runtime_check(found: wiring.Plugin) -> Check:
    st = plugin_runtime.status(found.data_dir, found.version)
    where = f"recall's Claude Code plugin {found.id} {found.version or ''} ({found.scope} settings)".replace("  ", " ")
    state = st["state"]
    if state == "ready":
        return Check("wiring", True, f"{where}: its hooks, MCP server and slash commands; runtime ready in "
                                     f"{st['runtime']} (Python {st.get('python_version', '?')})")
    since = time.strftime("%H:%M:%S", time.localtime(st["started"])) if st.get("started") else "?"
    if state == "building":
        return Check("wiring", False, f"{where}: its runtime is being built since {since} (log: {st['log']}); "
                                      "until it is ready its hooks do nothing",
                     "wait a minute or two", warn=True)
    if state == "interrupted":
        return Check("wiring", False, f"{where}: building its runtime was interrupted (log: {st['log']})",
                     "start a new Claude Code session: it builds the runtime again in the background", warn=True)
    if state == "failed":
        return Check("wiring", False, f"{where}: building its runtime failed: {st.get('error', '?')} "
                                      f"(log: {st['log']})",
                     st.get("fix") or "start a new Claude Code session to try again")
    return Check("wiring", False, f"{where}: its runtime is not built yet",
                 "start a Claude Code session: its SessionStart builds it in the background", warn=True)


def check_wiring(root: Path) -> tuple[list[Check], bool]:
    """The wiring checks, and whether the plugin is what wires recall here (then its hooks and
    MCP server replace the ones ``recall setup`` would have written)."""
    hooks = wiring.setup_hooks(root)
    found = wiring.plugin(root)
    if found is None:
        if hooks:
            files = ", ".join(sorted({str(p) for p, _ in hooks.values()}))
            return [Check("wiring", True, f"recall setup ({files}); recall's Claude Code plugin is not installed")], False
        return [], False  # the hooks check says what to do
    if not hooks:
        return [_runtime_check(found)], True
    files = sorted({str(p) for p, _ in hooks.values()})
    scope = " --global" if str(wiring.user_settings()) in files else f" --project {shlex.quote(str(root))}"
    return [Check("wiring", False, f"both: recall setup's hooks ({', '.join(files)}) are the active ones; recall's "
                                   f"Claude Code plugin {found.id} is installed too and stands down for the events "
                                   "they handle (one injection per prompt, one service)",
                  f"keep one: `recall setup --uninstall{scope}`, or `claude plugin uninstall {found.id}`",
                  warn=True)], False
