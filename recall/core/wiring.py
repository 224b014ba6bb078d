"""How recall is wired into Claude Code here: by ``recall setup`` (entries in Claude Code's
settings files), by recall's Claude Code plugin, or both.

Read-only and stdlib-only: the plugin's hooks call it on every prompt (the plugin stands
down for an event that setup's hooks already handle), ``recall setup`` calls it (setup stands
down while the plugin is enabled) and ``recall doctor`` reports what it finds.

* ``ours(hook)``: the ``recall hook`` name a settings hook entry runs (any recall executable:
  the console script, ``python -m recall.entry``, the plugin's ``hooks/recall`` launcher);
* ``setup_hooks(project)``: recall's hook entries in the settings Claude Code loads for a
  session started in ``project`` (user, project and local settings);
* ``setup_mcp(project)``: where an MCP server of recall's named ``recall`` is registered;
* ``setup_commands(project)``: where ``recall setup`` installed its ``/recall`` command;
* ``plugin(project)``: recall's plugin when it is installed and enabled (``enabledPlugins``,
  ``plugins/installed_plugins.json``), with its install path, version and data folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import read_json

PLUGIN_NAME = "recall"
MCP_NAME = "recall"

HOOK_COMMAND = r"(?:^|[\s/\\'\"])(?:recall(?:\.exe)?|recall\.entry)['\"]?\s+hook\s+([a-z][a-z-]*)"
MCP_COMMAND = r"(?:^|[\s/\\])(?:recall(?:\.exe)?|recall\.entry)['\"]?\s+mcp\b"


def hook_name(event: str) -> str:
    """The ``recall hook`` name that handles a Claude Code hook event (``UserPromptSubmit`` ->
    ``user-prompt-submit``): what setup and the plugin both wire."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", event).lower()


def ours(hook) -> str | None:
    """The ``recall hook`` name a settings hook entry runs, or None if it is not recall's."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    m = re.search(HOOK_COMMAND, str(hook.get("command") or ""))  # compiled once, on first use (re's cache)
    return m.group(1) if m else None


def is_our_mcp(entry) -> bool:
    """Whether an ``mcpServers`` entry runs ``recall mcp``."""
    if not isinstance(entry, dict):
        return False
    cmd = " ".join([str(entry.get("command") or ""), *map(str, entry.get("args") or [])])
    return bool(re.search(MCP_COMMAND, cmd))


def user_settings() -> Path:
    return paths.claude_config_dir() / "settings.json"


def settings_files(project: Path | str | None) -> list[Path]:
    """The settings files Claude Code loads for a session started in ``project`` (managed
    policy settings aside: recall never writes those), most specific first."""
    out = []
    if project:
        root = Path(project)
        out += [root / ".claude" / "settings.local.json", root / ".claude" / "settings.json"]
    out.append(user_settings())
    return out


def session_project(payload: dict | None = None) -> str | None:
    """The folder Claude Code was started in, as a hook sees it."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env:
        return env
    cwd = (payload or {}).get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def setup_hooks(project: Path | str | None) -> dict[str, tuple[Path, dict]]:
    """event -> (settings file, hook entry) for each of recall's hooks found in the settings
    Claude Code loads for ``project`` (the first one per event)."""
    found: dict[str, tuple[Path, dict]] = {}
    for path in settings_files(project):
        hooks = read_json(path, {}, dict).get("hooks")
        for event, groups in hooks.items() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) and event not in found else ():
                for h in (group.get("hooks") if isinstance(group, dict) else None) or ():
                    if ours(h) == hook_name(event) and event not in found:
                        found[event] = (path, h)
    return found


def claude_json() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def setup_mcp(project: Path | str | None) -> Path | None:
    """Where an MCP server named ``recall`` that runs ``recall mcp`` is registered for
    ``project`` (its ``.mcp.json``, or ``~/.claude.json``: user or local scope), else None."""
    if project:
        path = Path(project) / ".mcp.json"
        if is_our_mcp((read_json(path, {}, dict).get("mcpServers") or {}).get(MCP_NAME)):
            return path
    data = read_json(claude_json(), {}, dict)
    servers = data.get("mcpServers") if isinstance(data.get("mcpServers"), dict) else {}
    if is_our_mcp(servers.get(MCP_NAME)):
        return claude_json()
    if project:
        proj = (data.get("projects") or {}).get(str(project)) if isinstance(data.get("projects"), dict) else None
        local = proj.get("mcpServers") if isinstance(proj, dict) else None
        if isinstance(local, dict) and is_our_mcp(local.get(MCP_NAME)):
            return claude_json()
    return None


#: a line of the /recall command `recall setup` writes (recall/setup/install.py SLASH_COMMANDS)
SETUP_COMMAND_MARK = "description: Answer from past sessions and memories (recall)\n"


def setup_commands(project: Path | str | None) -> Path | None:
    """Where ``recall setup`` installed its ``/recall`` command for a session in ``project``
    (the project's ``.claude/commands`` or the user's), else None."""
    folders = [Path(project) / ".claude" / "commands"] if project else []
    folders.append(paths.claude_config_dir() / "commands")
    for folder in folders:
        path = folder / "recall.md"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if SETUP_COMMAND_MARK in text and " ask --or-hits " in text and "CLAUDE_PLUGIN_ROOT" not in text:
            return path
    return None


# ------------------------------------------------------------------------------ the plugin
def plugins_dir() -> Path:
    """Claude Code's plugin folder (``CLAUDE_CODE_PLUGIN_CACHE_DIR``, else ``~/.claude/plugins``)."""
    env = os.environ.get("CLAUDE_CODE_PLUGIN_CACHE_DIR")
    return Path(env).expanduser() if env else paths.claude_config_dir() / "plugins"


def plugin_data_dir(plugin_id: str) -> Path:
    """``${CLAUDE_PLUGIN_DATA}`` of a plugin: Claude Code names it after the id, every character
    but letters, digits, ``-`` and ``_`` made a ``-`` (``recall@recall`` -> ``recall-recall``)."""
    return plugins_dir() / "data" / re.sub(r"[^a-zA-Z0-9\-_]", "-", plugin_id)


def plugin_installed() -> bool | None:
    """Whether Claude Code lists recall's plugin as installed (any marketplace, any scope);
    None when ``installed_plugins.json`` cannot be read (missing, or caught mid-write)."""
    listed = read_json(plugins_dir() / "installed_plugins.json", {}, dict).get("plugins")
    if not isinstance(listed, dict):
        return None
    return any(isinstance(k, str) and k.split("@", 1)[0] == PLUGIN_NAME for k in listed)


class Plugin:
    """recall's plugin as Claude Code would load it (a plain class: a dataclass costs the hook
    ~15 ms of imports)."""

    __slots__ = ("id", "scope", "settings", "install_path", "version", "data_dir")

    def __init__(
        self, id: str, scope: str, settings: Path, install_path: Path | None, version: str | None, data_dir: Path
    ) -> None:
        self.id = id  # "recall@<marketplace>"
        self.scope = scope  # the settings that enable it: user, project or local
        self.settings = settings  # that settings file
        self.install_path = install_path
        self.version = version
        self.data_dir = data_dir  # ${CLAUDE_PLUGIN_DATA}: the runtime, its build log and status

    def __repr__(self) -> str:
        return f"Plugin({self.id!r}, scope={self.scope!r}, version={self.version!r}, data_dir={str(self.data_dir)!r})"


def plugin(project: Path | str | None = None) -> Plugin | None:
    """recall's plugin when Claude Code would load it for a session in ``project``: enabled
    in the most specific settings that name it (local, then project, then user), else None."""
    enabled: dict[str, tuple[bool, str, Path]] = {}
    for path, scope in zip(settings_files(project), ("local", "project", "user") if project else ("user",)):
        entries = read_json(path, {}, dict).get("enabledPlugins")
        for key, on in entries.items() if isinstance(entries, dict) else ():
            if isinstance(key, str) and key.split("@", 1)[0] == PLUGIN_NAME and "@" in key and key not in enabled:
                enabled[key] = (on is True, scope, path)
    installed = read_json(plugins_dir() / "installed_plugins.json", {}, dict).get("plugins")
    installed = installed if isinstance(installed, dict) else {}
    for key, (on, scope, path) in enabled.items():
        if not on:
            continue
        records = installed.get(key) if isinstance(installed.get(key), list) else []
        record = next(
            (r for r in records if isinstance(r, dict) and r.get("scope") == scope),
            records[0] if records and isinstance(records[0], dict) else None,
        )
        if record is None:
            continue  # enabled but not installed: Claude Code loads nothing
        install = record.get("installPath")
        return Plugin(
            id=key,
            scope=scope,
            settings=path,
            install_path=Path(install) if isinstance(install, str) and install else None,
            version=record.get("version") if isinstance(record.get("version"), str) else None,
            data_dir=plugin_data_dir(key),
        )
    return None
