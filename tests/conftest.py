"""Shared test set-up: every test gets its own RECALL_HOME, Claude config dir and HOME,
and no Anthropic credentials unless it asks for a stand-in."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "recall-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "RECALL_MODEL"):
        monkeypatch.delenv(var, raising=False)
    # caches keyed on the filesystem must not leak between tests
    from indexer.project import canonical_project, worktree_top

    canonical_project.cache_clear()
    worktree_top.cache_clear()
    yield


@pytest.fixture
def claude_projects(tmp_path):
    """The transcript root Claude Code would write to under the isolated CLAUDE_CONFIG_DIR."""
    root = tmp_path / "claude" / "projects"
    root.mkdir(parents=True)
    return root


@pytest.fixture
def standin():
    """A loopback stand-in for the Anthropic Messages API (tests/support/standin.py)."""
    from tests.support.standin import StandIn

    with StandIn() as s:
        yield s


@pytest.fixture
def claude_env(tmp_path, standin):
    """One fake Claude Code user (temp HOME, a trusted project) talking to ``standin``."""
    from tests.support.claude import ClaudeEnv, require_claude

    return ClaudeEnv.create(tmp_path / "cc", standin.url, binary=require_claude())
