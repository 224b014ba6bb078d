"""The first hour, round two (issue 36): messages that say what is true."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recall.core import paths
from tests.memory_support import make_project
from tests.support.cli import cli
from tests.test_sessions import two_sessions  # noqa: F401 (fixture)


@pytest.fixture
def project(tmp_path, monkeypatch):
    p = make_project(tmp_path)
    monkeypatch.chdir(p)
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    return p


# item 13 -------------------------------------------------------------------------------------------------------
def test_ask_with_a_logged_out_claude_names_the_ways_out(project, capsys, claude_logged_out):
    cli(capsys, "memories", "add", "decision", "We picked pgbouncer in transaction mode")
    code, out, err = cli(capsys, "ask", "which pooler did we pick?")
    assert code == 1
    assert "Claude Code answered with an error: Not logged in" in err
    assert "Ways out: `recall ask --or-hits ...` prints the best matches without a model; give recall an API key " \
           "(export ANTHROPIC_API_KEY or `recall config set api_key KEY`); or log Claude Code in (`claude /login`)." \
           in err
    assert len(err.strip().splitlines()) == 1
    code, out, _ = cli(capsys, "ask", "--or-hits", "which pooler did we pick?")
    assert code == 0 and "pgbouncer" in out


def test_a_backfill_stopped_by_a_logged_out_claude_says_to_log_in_first(two_sessions, capsys, claude_logged_out):
    from recall.core import config

    config.save({"memory": {"idle_seconds": 0, "timeout_seconds": 5}})
    code, out, err = cli(capsys, "memories", "--backfill", "--all-projects", "--yes")
    assert code == 1 and "Backfill stopped (" in err and "Not logged in" in err
    assert "Log Claude Code in (`claude /login`) or give recall an API key" in err
    assert "then run the same command again: it goes on where it stopped." in err


# item 14 -------------------------------------------------------------------------------------------------------
def test_ask_outside_any_project_says_so_and_fails(tmp_path, capsys, monkeypatch, claude_logged_out):
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    monkeypatch.chdir(nowhere)
    code, out, err = cli(capsys, "ask", "what did we decide?")
    assert code == 2 and out == ""
    assert f"No past session ran in {nowhere.resolve()} and it has no memories" in err
    assert "--all-projects" in err and "Nothing" not in err
