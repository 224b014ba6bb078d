"""recall's MCP server in the other agents (``recall setup --codex`` / ``--gemini``), taken out again
by ``recall setup --uninstall --codex|--gemini`` (and by the uninstall that removes recall), and
checked by ``recall doctor``.

Codex CLI reads ``$CODEX_HOME/config.toml`` (``~/.codex``): a user's TOML is never parsed and
written back (comments and layout would not survive). setup appends a marked block holding one
``[mcp_servers.recall]`` table, and uninstall removes exactly the lines between its markers. The
file with the block must still be valid TOML (checked with ``tomllib``); when it would not be
(``mcp_servers`` written as an inline table, say) setup says so and changes nothing.

Gemini CLI reads ``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``): setup adds the one
key ``mcpServers.recall`` (``{"command", "args"}``) and uninstall removes it only while it still
runs ``recall mcp``. A file setup created is deleted again once nothing else is in it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from recall.core.wiring import MCP_NAME, is_our_mcp
from recall.setup.install import (
    Report,
    SetupError,
    forget_created,
    load_json,
    mcp_entry,
    remember_created,
    remove_if_emptied,
    write_json,
)

AGENTS = ("codex", "gemini")
LABELS = {"codex": "Codex CLI", "gemini": "Gemini CLI"}
BEGIN = "# >>> recall: added by `recall setup --codex`; `recall setup --uninstall --codex` removes it >>>"
END = "# <<< recall <<<"


def codex_config() -> Path:
    from indexer.sources.codex import home

    return home() / "config.toml"


def gemini_settings() -> Path:
    from indexer.sources.gemini import gemini_dir

    return gemini_dir() / "settings.json"


def _toml_string(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def codex_block() -> str:
    entry = mcp_entry()
    args = ", ".join(_toml_string(a) for a in entry["args"])
    return (
        "\n".join(
            [BEGIN, f"[mcp_servers.{MCP_NAME}]", f"command = {_toml_string(entry['command'])}", f"args = [{args}]", END]
        )
        + "\n"
    )


def _split(text: str) -> tuple[str, str | None, str]:
    """(before, recall's block or None, after) of a config.toml's text."""
    start = text.find(BEGIN)
    if start < 0:
        return text, None, ""
    end = text.find(END, start)
    if end < 0:
        raise SetupError(
            f"{codex_config()} has recall's opening marker but not its closing one ({END!r}): "
            "put it back or remove the block by hand, then run again."
        )
    end += len(END)
    if text[end : end + 1] == "\n":
        end += 1
    return text[:start], text[start:end], text[end:]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"cannot read {path} ({exc}): fix it and run again.") from None


def _write_text(path: Path, text: str) -> None:
    from recall.core.paths import atomic_write

    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text, mode=mode, private_dir=False)


def _toml_problem(text: str) -> str | None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return str(exc)
    servers = data.get("mcp_servers")
    return None if isinstance(servers, dict) and isinstance(servers.get(MCP_NAME), dict) else "no [mcp_servers.recall]"


def install_codex(report: Report) -> None:
    path = codex_config()
    text = _read(path)
    created = text is None
    before, block, after = _split(text or "")
    want = codex_block()
    if block == want:
        report.unchanged.append(f"the recall MCP server is already registered in {path}")
        return
    if block is None:
        import tomllib

        try:
            current = tomllib.loads(before)
        except tomllib.TOMLDecodeError as exc:
            raise SetupError(
                f"{path} is not valid TOML ({exc}): fix it and run `recall setup --codex` again."
            ) from None
        servers = current.get("mcp_servers")
        if isinstance(servers, dict) and MCP_NAME in servers:
            raise SetupError(
                f'{path} already has an MCP server named "{MCP_NAME}" that recall did not add: '
                "remove it (or rename it), then run `recall setup --codex` again."
            )
        sep = "" if not before or before.endswith("\n\n") else ("\n" if before.endswith("\n") else "\n\n")
        new = before + sep + want
    else:
        new = before + want + after
    problem = _toml_problem(new)
    if problem:
        raise SetupError(
            f"{path} would not be valid TOML with recall's table added ({problem}); nothing was "
            f"changed. Add it yourself:\n{want}"
        )
    if created:
        if not path.parent.exists():
            remember_created(path.parent)
        remember_created(path)
    _write_text(path, new)
    report.changes.append(
        ("updated" if block else "registered") + f" the recall MCP server in {path} (a marked block at its end)"
    )


def uninstall_codex(report: Report) -> None:
    path = codex_config()
    text = _read(path)
    if text is None:
        return
    before, block, after = _split(text)
    if block is None:
        return
    rest = before.rstrip("\n") + ("\n" if before.strip() else "") + (("\n" + after) if after.strip() else "")
    if not rest.strip() and forget_created(path):
        path.unlink()
        report.changes.append(f"deleted {path} (setup had created it)")
        remove_if_emptied(path.parent, report)
        return
    _write_text(path, rest)
    report.changes.append(f"removed the recall MCP server from {path}")


def install_gemini(report: Report) -> None:
    path = gemini_settings()
    data = load_json(path)
    created = data is None
    data = dict(data or {})
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise SetupError(f'"mcpServers" in {path} is not an object: fix it and run `recall setup --gemini` again.')
    entry = mcp_entry()
    want = {"command": entry["command"], "args": entry["args"]}
    current = servers.get(MCP_NAME)
    if current == want:
        report.unchanged.append(f"the recall MCP server is already registered in {path}")
        return
    if current is not None and not is_our_mcp(current):
        raise SetupError(
            f'{path} already has an MCP server named "{MCP_NAME}" that is not recall\'s: '
            "rename or remove it, then run `recall setup --gemini` again."
        )
    servers[MCP_NAME] = want
    if created:
        if not path.parent.exists():
            remember_created(path.parent)
        remember_created(path)
    write_json(path, data)
    report.changes.append(("updated" if current else "registered") + f" the recall MCP server in {path}")


def uninstall_gemini(report: Report) -> None:
    path = gemini_settings()
    try:
        data = load_json(path)
    except SetupError as exc:
        report.notes.append(str(exc))
        return
    servers = (data or {}).get("mcpServers")
    if not isinstance(servers, dict) or not is_our_mcp(servers.get(MCP_NAME)):
        return
    del servers[MCP_NAME]
    if not servers:
        del data["mcpServers"]
    if not data and forget_created(path):
        path.unlink()
        report.changes.append(f"deleted {path} (setup had created it)")
        remove_if_emptied(path.parent, report)
        return
    write_json(path, data)
    report.changes.append(f"removed the recall MCP server from {path}")


INSTALL = {"codex": install_codex, "gemini": install_gemini}
UNINSTALL = {"codex": uninstall_codex, "gemini": uninstall_gemini}


def registered(agent: str) -> tuple[Path, dict | None]:
    """(the agent's config file, recall's server entry there or None)."""
    if agent == "codex":
        path = codex_config()
        text = _read(path) or ""
        try:
            _before, block, _after = _split(text)
        except SetupError:
            return path, None
        if block is None:
            return path, None
        import tomllib

        try:
            entry = tomllib.loads(block.replace(BEGIN, "").replace(END, ""))["mcp_servers"][MCP_NAME]
        except (tomllib.TOMLDecodeError, KeyError, TypeError):
            return path, {}
        return path, entry if isinstance(entry, dict) else {}
    path = gemini_settings()
    try:
        data = load_json(path) or {}
    except SetupError:
        return path, None
    servers = data.get("mcpServers") if isinstance(data.get("mcpServers"), dict) else {}
    entry = servers.get(MCP_NAME)
    return path, entry if is_our_mcp(entry) else None


def entry_problem(entry: dict) -> str | None:
    """Why a registered entry would not start recall's server (None: it would)."""
    command = str(entry.get("command") or "")
    if not command:
        return "it names no command"
    if os.sep in command:
        if not (os.path.isfile(command) and os.access(command, os.X_OK)):
            return f"its command {command} is not there any more"
    else:
        import shutil

        if shutil.which(command) is None:
            return f"its command {command} is not on PATH"
    return None
