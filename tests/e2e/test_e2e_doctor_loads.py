"""`recall doctor` asks the installed Claude Code whether it really runs recall's hooks and connects
its MCP server (issue 36, item 5): a headless run that fires SessionStart and UserPromptSubmit, no
model called. Settings that hold recall's hooks in a shape Claude Code skips make it fail; with no
Claude Code, or a fake one that starts no session, it says what it could not check (a warning)."""

from __future__ import annotations

import json

import pytest

from recall.core import config
from tests.support.cli import cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def doctor_lines(capsys, project) -> list[str]:
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    return [ln for ln in out.splitlines() if "Claude Code loads recall" in ln or ln.startswith("      fix:")]


def test_doctor_checks_with_the_real_claude_code_that_it_runs_recall(claude_env, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(claude_env.home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    config.set_value("model.claude_path", str(claude_env.binary))
    project = claude_env.project
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code == 0, err
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    line = next(ln for ln in out.splitlines() if "Claude Code loads recall" in ln)
    assert (
        line.startswith("ok    Claude Code loads recall: Claude Code 2.1.")
        and "ran recall's SessionStart and UserPromptSubmit hooks and connected its MCP server" in line
    ), out
    assert not list((claude_env.home / ".claude" / "projects").rglob("*.jsonl"))  # no session kept

    # the settings still hold recall's hooks and MCP server as recall wrote them, but this Claude Code
    # does not run them (here a setting switches them off; an update rejecting a format does the same)
    local = project / ".claude" / "settings.local.json"
    data = json.loads(local.read_text()) if local.exists() else {}
    data["disableAllHooks"] = True
    local.write_text(json.dumps(data))
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    line = next(ln for ln in out.splitlines() if "Claude Code loads recall" in ln)
    assert (
        line.startswith("FAIL  Claude Code loads recall:")
        and "did not run recall's SessionStart and UserPromptSubmit hooks" in line
    ), out
    assert code == 1


def test_doctor_says_what_it_could_not_check_without_a_usable_claude(tmp_path, capsys, claude_logged_out):
    project = tmp_path / "proj"
    project.mkdir()
    assert cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")[0] == 0
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    line = next(ln for ln in out.splitlines() if "Claude Code loads recall" in ln)
    assert line.startswith("warn  Claude Code loads recall: not checked:"), out
