"""``recall setup`` / ``recall setup --uninstall``: wiring recall into Claude Code.

What setup writes (and uninstall removes, exactly):
  * hook entries in ``<project>/.claude/settings.json`` (``~/.claude/settings.json`` with
    ``--global``): ``UserPromptSubmit`` (recall's per-prompt context) and the capture events
    ``SessionStart``, ``Stop``, ``PreCompact``, ``SessionEnd``, each a command hook
    ``<recall> hook <name>`` with an explicit ``timeout`` in seconds. Other hooks and keys
    are left alone; running it twice changes nothing.
  * the MCP server: ``mcpServers.recall`` in ``<project>/.mcp.json`` (approved for this user
    in ``.claude/settings.local.json``'s ``enabledMcpjsonServers``), or with ``--global``
    in the user-scope ``mcpServers`` of ``~/.claude.json``.
  * slash commands: ``/recall``, ``/recall-search``, ``/remember`` and ``/ui`` as
    ``<project>/.claude/commands/NAME.md`` (``~/.claude/commands`` with ``--global``); each
    runs recall in a ``!`` bash line its ``allowed-tools`` permits, so the output reaches
    the model in the same turn. Uninstall deletes exactly these files (not one the user
    changed since: it says so instead).
Files that setup had to create are remembered in ``$RECALL_HOME/setup.json`` so that
uninstall deletes them again once nothing else is in them.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from recall.control.units import recall_executable
from recall.core import config, paths
from recall.core.errors import RecallError
from recall.core.jsonio import read_json
from recall.core.wiring import MCP_NAME, is_our_mcp, ours

#: event -> (``recall hook`` name, timeout in seconds; None: from the hook budget)
HOOK_EVENTS: dict[str, tuple[str, int | None]] = {
    "UserPromptSubmit": ("user-prompt-submit", None),
    "SessionStart": ("session-start", 15),
    "Stop": ("stop", 30),
    "PreCompact": ("pre-compact", 60),
    "SessionEnd": ("session-end", 30),
}


class SetupError(RecallError):
    pass


@dataclass
class Report:
    changes: list[str] = field(default_factory=list)  # what was written
    unchanged: list[str] = field(default_factory=list)  # already as wanted
    notes: list[str] = field(default_factory=list)  # steps skipped or failed, with the fix

    def lines(self) -> list[str]:
        return [*self.changes, *self.unchanged, *self.notes]


# ------------------------------------------------------------------------------ locations
def hook_command(name: str) -> str:
    return " ".join(shlex.quote(p) for p in [*recall_executable(), "hook", name])


def hook_timeout(event: str, cfg: dict | None = None) -> int:
    name, timeout = HOOK_EVENTS[event]
    if timeout is not None:
        return timeout
    from recall.prompt.settings import hook_settings

    # Claude Code must never cut the hook off before its own deadline does.
    return int(math.ceil(hook_settings(cfg).budget_seconds)) + 5


def project_root(project: Path | str | None) -> Path:
    from indexer.project import canonical_project

    start = os.path.abspath(os.path.expanduser(str(project))) if project else os.getcwd()
    if not os.path.isdir(start):
        raise SetupError(f"--project {start} is not a directory: pass the folder you run Claude Code in.")
    return Path(canonical_project(start))


def settings_file(root: Path | None, global_: bool) -> Path:
    if global_:
        return paths.claude_config_dir() / "settings.json"
    return root / ".claude" / "settings.json"


def local_settings_file(root: Path) -> Path:
    return root / ".claude" / "settings.local.json"


def mcp_file(root: Path | None, global_: bool) -> Path:
    if global_:
        env = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"
    return root / ".mcp.json"


def mcp_entry() -> dict:
    exe = recall_executable()
    return {"type": "stdio", "command": exe[0], "args": [*exe[1:], "mcp"]}


def claude_mcp_entry() -> dict:
    """Claude Code's entry: ``mcp_entry`` with ``alwaysLoad``, so its tools are offered in every
    request (Claude Code 2.1.332 otherwise defers an MCP server's tools behind its tool search;
    2.1.197 knows the key too)."""
    return {**mcp_entry(), "alwaysLoad": True}


# ------------------------------------------------------------------------------ JSON files
def load_json(path: Path) -> dict | None:
    """The object in ``path``; None if it does not exist. Raises SetupError for a bad file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SetupError(f"cannot read {path} ({exc.strerror or exc}): fix its permissions and run again.") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SetupError(f"{path} is not valid JSON ({exc}): fix it (or move it away) and run again.") from None
    if not isinstance(data, dict):
        raise SetupError(f"{path} does not hold a JSON object: fix it (or move it away) and run again.")
    return data


def write_json(path: Path, data: dict) -> None:
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o600 if path.name == ".claude.json" else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)  # Claude Code's folders: their usual mode, never 0700
    paths.atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode, private_dir=False)


def _manifest_path() -> Path:
    return paths.recall_home() / "setup.json"


def _manifest() -> dict:
    return read_json(_manifest_path(), {}, dict)


def remember_created(*created: Path) -> None:
    data = _manifest()
    files = set(data.get("created") or [])
    files.update(str(p) for p in created)
    data["created"] = sorted(files)
    paths.home_dir()
    paths.atomic_write(_manifest_path(), json.dumps(data, indent=2) + "\n")


def remove_if_emptied(folder: Path, report) -> None:
    """Delete a folder setup created, once nothing is left in it (and say so in ``report``)."""
    if folder.is_dir() and not any(folder.iterdir()) and forget_created(folder):
        try:
            folder.rmdir()
            report.changes.append(f"deleted {folder} (setup had created it)")
        except OSError:
            pass


def forget_created(path: Path) -> bool:
    """Whether setup created ``path`` (and forget it)."""
    data = _manifest()
    files = list(data.get("created") or [])
    if str(path) not in files:
        return False
    files.remove(str(path))
    data["created"] = files
    try:
        paths.atomic_write(_manifest_path(), json.dumps(data, indent=2) + "\n")
    except OSError:
        pass
    return True


def _save(path: Path, before: dict | None, after: dict, created: list[Path]) -> None:
    if before is None:
        if not path.parent.exists():
            created.append(path.parent)
        created.append(path)
    write_json(path, after)


# ------------------------------------------------------------------------------ hooks
def merge_hooks(settings: dict, where: str, cfg: dict | None = None) -> tuple[dict, list[str], list[str]]:
    """``settings`` with recall's hook entries (added or brought up to date). Returns
    (new settings, changes, unchanged)."""
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SetupError(f'"hooks" in {where} is not an object: fix it and run `recall setup` again.')
    changes, unchanged = [], []
    for event, (name, _) in HOOK_EVENTS.items():
        want = {"type": "command", "command": hook_command(name), "timeout": hook_timeout(event, cfg)}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SetupError(f'"hooks.{event}" in {where} is not a list: fix it and run `recall setup` again.')
        found = []
        for gi, group in enumerate(groups):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for hi, h in enumerate(group["hooks"]):
                    if ours(h) == name:
                        found.append((gi, hi))
        if not found:
            groups.append({"hooks": [want]})
            changes.append(f"added the {event} hook to {where}")
            continue
        gi, hi = found[0]
        current = groups[gi]["hooks"][hi]
        if {k: current.get(k) for k in want} != want:
            groups[gi]["hooks"][hi] = {**current, **want}
            changes.append(f"updated the {event} hook in {where}")
        else:
            unchanged.append(f"the {event} hook in {where} is already set")
        for gi2, hi2 in reversed(found[1:]):  # duplicates of ours
            del groups[gi2]["hooks"][hi2]
            changes.append(f"removed a duplicate {event} hook from {where}")
        _prune_groups(hooks, event)
    return out, changes, unchanged


def _prune_groups(hooks: dict, event: str) -> None:
    groups = hooks.get(event)
    if isinstance(groups, list):
        groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not groups:
            del hooks[event]


def remove_hooks(settings: dict, where: str) -> tuple[dict, list[str]]:
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    changes: list[str] = []
    if not isinstance(hooks, dict):
        return out, changes
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                before = len(group["hooks"])
                group["hooks"] = [h for h in group["hooks"] if ours(h) is None]
                if len(group["hooks"]) != before:
                    changes.append(f"removed the {event} hook from {where}")
        _prune_groups(hooks, event)
    if not hooks:
        del out["hooks"]
    return out, changes


# ------------------------------------------------------------------------------ MCP
def merge_mcp(data: dict, where: str) -> tuple[dict, list[str], list[str]]:
    out = copy.deepcopy(data)
    servers = out.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise SetupError(f'"mcpServers" in {where} is not an object: fix it and run `recall setup` again.')
    want = claude_mcp_entry()
    current = servers.get(MCP_NAME)
    if current == want:
        return out, [], [f"the recall MCP server is already registered in {where}"]
    if current is not None and not is_our_mcp(current):
        raise SetupError(
            f'{where} already has an MCP server named "{MCP_NAME}" that is not recall\'s: '
            "rename or remove it, then run `recall setup` again."
        )
    servers[MCP_NAME] = want
    verb = "updated" if current is not None else "registered"
    return out, [f"{verb} the recall MCP server in {where}"], []


def remove_mcp(data: dict, where: str) -> tuple[dict, list[str]]:
    out = copy.deepcopy(data)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        if not servers:
            del out["mcpServers"]
        return out, [f"removed the recall MCP server from {where}"]
    return out, []


def _approve(data: dict, where: str) -> tuple[dict, list[str]]:
    out = copy.deepcopy(data)
    enabled = out.setdefault("enabledMcpjsonServers", [])
    if not isinstance(enabled, list):
        raise SetupError(f'"enabledMcpjsonServers" in {where} is not a list: fix it and run `recall setup` again.')
    if MCP_NAME in enabled:
        return out, []
    enabled.append(MCP_NAME)
    return out, [f"approved the project's recall MCP server in {where}"]


def _unapprove(data: dict, where: str) -> tuple[dict, list[str]]:
    out = copy.deepcopy(data)
    enabled = out.get("enabledMcpjsonServers")
    if isinstance(enabled, list) and MCP_NAME in enabled:
        enabled.remove(MCP_NAME)
        if not enabled:
            del out["enabledMcpjsonServers"]
        return out, [f"withdrew the recall MCP server's approval from {where}"]
    return out, []


# ------------------------------------------------------------------------------ slash commands
#: name -> (description, argument hint, recall arguments before the user's text, what the model is asked)
SLASH_COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "recall": (
        "Answer from past sessions and memories (recall)",
        "QUESTION",
        "ask --or-hits",
        "Above is what recall found in this project's past Claude Code sessions and memories for "
        "the question \"$ARGUMENTS\". Answer the question from it, briefly, and say when it does "
        "not cover something.",
    ),
    "recall-search": (
        "Search past sessions, raw hits (recall)",
        "QUERY",
        "--raw --limit 5",
        "Above are recall's raw hits from past Claude Code sessions for \"$ARGUMENTS\". Show "
        "them to the user as they are, one line each, and add nothing else.",
    ),
    "remember": (
        "Remember this in future sessions (recall)",
        "TEXT",
        "remember",
        "Above is what recall saved. Tell the user in one line, and do nothing else.",
    ),
    "ui": (
        "The address of recall's local web page (recall)",
        "",
        "ui --no-open --no-serve",
        "Above is the address of recall's web page, or why there is none. Give it to the user as it is, "
        "in one line, and do nothing else.",
    ),
}
_SLASH_MARK = re.compile(r"^allowed-tools: Bash\((?P<exe>.+) (?:ask|--raw|remember|ui):\*\)$", re.M)


def commands_dir(root: Path | None, global_: bool) -> Path:
    if global_:
        return paths.claude_config_dir() / "commands"
    return root / ".claude" / "commands"


def slash_command_text(name: str) -> str:
    """The Markdown of one slash command: its ``!`` line runs recall with the user's text."""
    description, hint, args, ask = SLASH_COMMANDS[name]
    exe = " ".join(shlex.quote(p) for p in recall_executable())
    first = args.split()[0]
    # Claude Code pastes $ARGUMENTS into the bash line as typed: inside double quotes an
    # apostrophe is fine ("what's"); backticks and $( ) would be run by the shell
    hint_line = f"argument-hint: {hint}\n" if hint else ""  # no hint: the command takes no text
    return (
        f"---\ndescription: {description}\n{hint_line}"
        f"allowed-tools: Bash({exe} {first}:*)\n---\n"
        f"!`{exe} {args}{_arguments(hint)}`\n\n{ask}\n"
    )


def _arguments(hint: str) -> str:
    return ' "$ARGUMENTS"' if hint else ""


def is_our_slash_command(text: str) -> bool:
    """Whether a command file is one setup wrote (for any recall executable), unchanged."""
    m = _SLASH_MARK.search(text or "")
    if not m:
        return False
    for name in SLASH_COMMANDS:
        description, hint, args, _ = SLASH_COMMANDS[name]
        if f"description: {description}\n" in text and f" {args}{_arguments(hint)}`" in text:
            exe = m.group("exe")
            first = args.split()[0]
            want = slash_command_text(name).replace(" ".join(shlex.quote(p) for p in recall_executable()), exe)
            return text == want and f"Bash({exe} {first}:*)" in text
    return False


def install_slash_commands(root: Path | None, global_: bool, report: "Report", created: list[Path]) -> None:
    d = commands_dir(root, global_)
    for name in SLASH_COMMANDS:
        path = d / f"{name}.md"
        want = slash_command_text(name)
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        except OSError as exc:
            raise SetupError(
                f"cannot read {path} ({exc.strerror or exc}): fix its permissions and run again."
            ) from None
        if current == want:
            report.unchanged.append(f"the /{name} command in {path} is already set")
            continue
        if current is not None and not is_our_slash_command(current):
            report.notes.append(f"left {path} alone: it is not recall's (rename it to get recall's /{name})")
            continue
        if current is None:
            if not d.exists():
                created.append(d)
            created.append(path)
        d.mkdir(parents=True, exist_ok=True)
        paths.atomic_write(path, want, mode=0o644, private_dir=False)
        report.changes.append(f"{'updated' if current is not None else 'added'} the /{name} command ({path})")


def uninstall_slash_commands(root: Path | None, global_: bool, report: "Report") -> None:
    d = commands_dir(root, global_)
    for name in SLASH_COMMANDS:
        path = d / f"{name}.md"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if is_our_slash_command(text):
            path.unlink(missing_ok=True)
            forget_created(path)
            report.changes.append(f"removed the /{name} command ({path})")
        elif forget_created(path):
            report.notes.append(f"left {path}: it was changed after setup wrote it")
    remove_if_emptied(d, report)


# ------------------------------------------------------------------------------ install / uninstall
def install_files(
    project: Path | str | None = None, global_: bool = False, mcp: bool = True, commands: bool = True
) -> Report:
    """Merge recall's hooks (and MCP server, slash commands) into Claude Code's settings. Idempotent."""
    report = Report()
    root = None if global_ else project_root(project)
    created: list[Path] = []
    cfg = config.load()

    spath = settings_file(root, global_)
    before = load_json(spath)
    after, changes, unchanged = merge_hooks(before or {}, str(spath), cfg)
    if changes:
        _save(spath, before, after, created)
    report.changes += changes
    report.unchanged += unchanged

    if mcp:
        mpath = mcp_file(root, global_)
        mbefore = load_json(mpath)
        mafter, changes, unchanged = merge_mcp(mbefore or {}, str(mpath))
        if changes:
            _save(mpath, mbefore, mafter, created)
        report.changes += changes
        report.unchanged += unchanged
        if not global_:
            lpath = local_settings_file(root)
            lbefore = load_json(lpath)
            lafter, changes = _approve(lbefore or {}, str(lpath))
            if changes:
                _save(lpath, lbefore, lafter, created)
            report.changes += changes
    if commands:
        install_slash_commands(root, global_, report, created)
    remember_installed()
    link_command(report, created)
    warning = install_location_warning()
    if warning:
        report.notes.append(warning)
    if created:
        remember_created(*created)
    if root is not None:
        remember_project(root)
    return report


def remember_installed() -> None:
    """When recall was first set up here: sessions before it never had recall's hooks
    (``recall show`` says so, and points at ``recall memories --backfill``)."""
    import time

    data = _manifest()
    if data.get("installed"):
        return
    data["installed"] = time.time()
    paths.home_dir()
    paths.atomic_write(_manifest_path(), json.dumps(data, indent=2) + "\n")


def remember_project(root: Path) -> None:
    """Note a project setup wired, so that a global uninstall unwires it too."""
    data = _manifest()
    projects = set(data.get("projects") or [])
    if str(root) in projects:
        return
    projects.add(str(root))
    data["projects"] = sorted(projects)
    paths.home_dir()
    paths.atomic_write(_manifest_path(), json.dumps(data, indent=2) + "\n")


# ------------------------------------------------------------------------------ `recall` on PATH
def bin_dir() -> Path:
    """Where a user's own commands go: ``$XDG_BIN_HOME``, else ``~/.local/bin`` (pipx and uv
    use it too)."""
    xdg = os.environ.get("XDG_BIN_HOME")
    return Path(xdg).expanduser() if xdg else Path.home() / ".local" / "bin"


def _on_path(folder: Path) -> bool:
    want = os.path.realpath(folder)
    return any(
        os.path.realpath(os.path.expanduser(d)) == want for d in os.environ.get("PATH", "").split(os.pathsep) if d
    )


def command_kind(path: str) -> str:
    """What a ``recall`` command file is: "plugin" (recall's Claude Code plugin's command),
    "recall" (a console script of recall, this package), or "other" (another program called
    recall: PyPI has several)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return "other"
    if b"recall's command for its Claude Code plugin" in head:
        return "plugin"
    if b"from recall.entry import main" in head or b"recall.entry" in head:
        return "recall"
    return "other"


def link_command(report: "Report", created: list[Path]) -> None:
    """Put ``recall`` on the user's PATH: a link in ``bin_dir()`` to this install's console
    script, unless ``recall`` on PATH already is this one; a PATH hint when that folder is
    not on PATH. Never replaces a ``recall`` that is not a link setup made."""
    exe = recall_executable()
    if len(exe) != 1:
        report.notes.append(
            f"no `recall` console script beside this Python: run recall as `{' '.join(shlex.quote(p) for p in exe)}`"
        )
        return
    target = exe[0]
    found = shutil.which("recall")
    link = bin_dir() / "recall"
    if (
        found
        and os.path.realpath(found) == os.path.realpath(target)
        and (os.path.abspath(found) != os.path.abspath(link) or link.is_symlink())
    ):
        report.unchanged.append(f"`recall` on your PATH is this install ({found})")
        return
    if link.is_symlink() or link.exists():
        current = os.readlink(link) if link.is_symlink() else None
        ours = str(link) in (_manifest().get("created") or [])
        if current == target:
            pass
        elif link.is_symlink() and (ours or _dangling_plugin_link(link)):
            link.unlink()
            link.symlink_to(target)
            report.changes.append(f"pointed {link} at this install ({target})")
        else:
            report.notes.append(f"{link} exists and is not recall setup's: left alone; this recall is {target}")
            return
    else:
        if found and command_kind(os.path.realpath(found)) == "other":
            # another program answers to `recall` here: a link of ours might shadow it (or be
            # shadowed by it, depending on PATH's order): never take a command from another tool
            report.notes.append(
                f"`recall` on your PATH is another program ({found}): setup did not link this "
                f"install over it; run this recall as {target} (an alias works: "
                f"alias recall={shlex.quote(target)})"
            )
            return
        if not link.parent.exists():
            created.append(link.parent)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        created.append(link)
        report.changes.append(f"linked {link} -> {target}: `recall` works from any shell")
    if not _on_path(link.parent):
        rc = "~/.zshrc" if os.environ.get("SHELL", "").endswith("zsh") else "~/.bashrc"
        report.notes.append(
            f"{link.parent} is not on your PATH: add `export PATH=\"{_home_short(link.parent)}:$PATH\"` "
            f"to {rc} (or run recall as {target})"
        )


def _dangling_plugin_link(link: Path) -> bool:
    """A link recall's Claude Code plugin made whose plugin data folder is gone (uninstalled)."""
    target = os.readlink(link)
    return not os.path.exists(link) and f"{os.sep}plugins{os.sep}data{os.sep}recall-" in target


def unlink_command(report: "Report") -> None:
    link = bin_dir() / "recall"
    if link.is_symlink() and forget_created(link):
        link.unlink()
        report.changes.append(f"removed the link {link}")
        if link.parent.is_dir() and not any(link.parent.iterdir()) and forget_created(link.parent):
            try:
                link.parent.rmdir()
            except OSError:
                pass


def _home_short(path: Path) -> str:
    home = str(Path.home())
    return "$HOME" + str(path)[len(home) :] if str(path).startswith(home + os.sep) else str(path)


def temporary_folders() -> set[str]:
    """The folders the system cleans up: the temp dir Python uses, /tmp, /var/tmp, /dev/shm."""
    import tempfile

    return {os.path.realpath(t) for t in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(t)}


def install_location_warning(exe: str | None = None) -> str | None:
    """Why the install Claude Code's hooks will run may not stay where it is: it lives in a
    temporary folder, or inside a git checkout (a clone's .venv); None when neither."""
    exe = exe or recall_executable()[0]
    real = os.path.realpath(exe)
    for t in temporary_folders():
        if real.startswith(t.rstrip(os.sep) + os.sep):
            return (
                f"recall runs from {exe}, in a temporary folder ({t}): when it is cleaned up, every Claude Code "
                "prompt fails its hooks. Install it where it stays (`pipx install .` or `uv tool install .` "
                "from the checkout), then run `recall setup` again"
            )
    d = os.path.dirname(real)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return (
                f"recall runs from {exe}, inside the git checkout {d}: moving or deleting the checkout (or "
                "its .venv) breaks Claude Code's hooks on every prompt. For an install that stays put: "
                f"`pipx install {shlex.quote(d)}` or `uv tool install {shlex.quote(d)}`, then `recall setup` again"
            )
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def wired_projects() -> list[str]:
    return list(_manifest().get("projects") or [])


def uninstall_files(project: Path | str | None = None, global_: bool = False) -> Report:
    """Remove exactly what ``install_files`` added (files it created go once they are empty)."""
    report = Report()
    root = None if global_ else project_root(project)
    uninstall_slash_commands(root, global_, report)
    targets = [(settings_file(root, global_), remove_hooks), (mcp_file(root, global_), remove_mcp)]
    if not global_:
        targets.append((local_settings_file(root), _unapprove))
    for path, remove in targets:
        before = load_json(path)
        if before is None:
            continue
        after, changes = remove(before, str(path))
        if not changes:
            continue
        report.changes += changes
        if not after and forget_created(path):
            path.unlink(missing_ok=True)
            report.changes.append(f"deleted {path} (setup had created it)")
        else:
            write_json(path, after)
    for path, _ in targets:  # folders setup created, once nothing is left in them
        remove_if_emptied(path.parent, report)
    if not report.changes:
        report.unchanged.append("nothing of recall's was installed there")
    return report


# ------------------------------------------------------------------------------ doctor
