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
    from indexer.project import canonical_project

    canonical_project.cache_clear()
    yield


@pytest.fixture
def claude_projects(tmp_path):
    """The transcript root Claude Code would write to under the isolated CLAUDE_CONFIG_DIR."""
    root = tmp_path / "claude" / "projects"
    root.mkdir(parents=True)
    return root
