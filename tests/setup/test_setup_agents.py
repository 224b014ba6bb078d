"""`recall setup --codex` / `--gemini`: recall's MCP server in the other agents' configuration,
reversibly (only what recall wrote), and `recall doctor`'s check of it."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from tests.support.cli import cli

USER_TOML = """# my Codex settings
model = "o3"   # the one I like

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "7"]
"""


def _codex() -> Path:
    return Path(os.environ["HOME"]) / ".codex" / "config.toml"


def _gemini() -> Path:
    return Path(os.environ["HOME"]) / ".gemini" / "settings.json"


def test_codex_block_is_appended_and_removed_to_the_byte(capsys):
    _codex().parent.mkdir(parents=True)
    _codex().write_text(USER_TOML)
    code, out, err = cli(capsys, "setup", "--codex")
    assert code == 0, err
    assert "registered the recall MCP server" in out
    text = _codex().read_text()
    assert text.startswith(USER_TOML)  # the user's lines, comments and layout untouched
    data = tomllib.loads(text)
    assert (
        data["mcp_servers"]["recall"]["args"][-1] == "mcp" and data["mcp_servers"]["docs"]["command"] == "docs-server"
    )
    code, out, _ = cli(capsys, "setup", "--codex")
    assert "already registered" in out and _codex().read_text() == text
    code, out, err = cli(capsys, "setup", "--uninstall", "--codex")
    assert code == 0, err
    assert "removed the recall MCP server" in out
    assert _codex().read_text() == USER_TOML


def test_codex_toml_it_cannot_extend_is_left_alone(capsys):
    _codex().parent.mkdir(parents=True)
    inline = 'mcp_servers = { docs = { command = "docs-server" } }\n'
    _codex().write_text(inline)
    code, _, err = cli(capsys, "setup", "--codex")
    assert code != 0 and "would not be valid TOML" in err and "[mcp_servers.recall]" in err
    assert _codex().read_text() == inline
    theirs = '[mcp_servers.recall]\ncommand = "someone-elses"\n'
    _codex().write_text(theirs)
    code, _, err = cli(capsys, "setup", "--codex")
    assert code != 0 and "that recall did not add" in err and _codex().read_text() == theirs
    _codex().write_text("model = \n")
    code, _, err = cli(capsys, "setup", "--codex")
    assert code != 0 and "is not valid TOML" in err


def test_codex_config_setup_created_is_deleted_again(capsys):
    code, _, err = cli(capsys, "setup", "--codex")
    assert code == 0, err
    assert _codex().is_file()
    code, out, _ = cli(capsys, "setup", "--uninstall", "--codex")
    assert not _codex().exists() and not _codex().parent.exists()


def test_gemini_key_added_and_removed(capsys):
    _gemini().parent.mkdir(parents=True)
    mine = {"theme": "dark", "mcpServers": {"docs": {"command": "docs-server"}}}
    _gemini().write_text(json.dumps(mine))
    code, out, err = cli(capsys, "setup", "--gemini")
    assert code == 0, err
    data = json.loads(_gemini().read_text())
    assert data["theme"] == "dark" and data["mcpServers"]["docs"] == {"command": "docs-server"}
    assert data["mcpServers"]["recall"]["args"][-1] == "mcp"
    code, out, err = cli(capsys, "setup", "--uninstall", "--gemini")
    assert code == 0, err
    assert json.loads(_gemini().read_text()) == mine
    _gemini().write_text(json.dumps({"mcpServers": {"recall": {"command": "not-ours"}}}))
    code, _, err = cli(capsys, "setup", "--gemini")
    assert code != 0 and "not recall's" in err


def test_uninstall_global_removes_them_too(capsys, no_service_manager):
    cli(capsys, "setup", "--codex", "--gemini")
    assert "recall" in _codex().read_text()
    code, out, err = cli(capsys, "setup", "--uninstall", "--global")
    assert code == 0, err
    assert not _codex().exists() and not _gemini().exists()


def test_doctor_checks_them(capsys):
    from recall.cli.checks import check_agents

    assert check_agents() == []  # neither agent on this machine: nothing said
    (Path(os.environ["HOME"]) / ".codex" / "sessions").mkdir(parents=True)
    [c] = check_agents()
    assert not c.ok and c.warn and "recall setup --codex" in c.fix
    cli(capsys, "setup", "--codex", "--gemini")
    assert [(c.name, c.ok) for c in check_agents()] == [
        ("MCP server in Codex CLI", True),
        ("MCP server in Gemini CLI", True),
    ]
    data = json.loads(_gemini().read_text())
    data["mcpServers"]["recall"]["command"] = "/nowhere/recall"
    _gemini().write_text(json.dumps(data))
    gem = [c for c in check_agents() if "Gemini" in c.name][0]
    assert not gem.ok and "not there any more" in gem.detail and "recall setup --gemini" in gem.fix
