"""Shared test set-up: every test gets its own RECALL_HOME, Claude config dir and HOME,
no Anthropic credentials unless it asks for a stand-in, and no Claude Code on PATH unless it
asks for one.

What a test assumes about the machine is pinned here, not left to the machine: a developer's
or CI's `claude` on PATH (logged in or not) would otherwise become the model backend of every
test that means "no backend" (``model.backend = auto`` picks Claude Code when no key is found).
``PATH`` keeps every tool but ``claude``: a folder holding one is replaced by a shadow folder
of links to everything else in it. A test that wants Claude Code asks for it: the
``claude_logged_out`` fixture (a `claude` that answers as the real one does when nobody is
logged in), a fake of its own, or the real binary (``claude_env``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _path_without(name: str, path: str, shadow_root: Path) -> str:
    """``path`` with every folder that holds an executable ``name`` replaced by a folder of
    links to the rest of its entries."""
    out = []
    for i, d in enumerate(p for p in path.split(os.pathsep) if p):
        exe = os.path.join(d, name)
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            out.append(d)
            continue
        shadow = shadow_root / f"{i}"
        shadow.mkdir(parents=True, exist_ok=True)
        try:
            entries = os.listdir(d)
        except OSError:
            entries = []
        for entry in entries:
            if entry != name and not (shadow / entry).exists():
                try:
                    os.symlink(os.path.join(d, entry), shadow / entry)
                except OSError:
                    pass
        out.append(str(shadow))
    return os.pathsep.join(out)


@pytest.fixture(scope="session", autouse=True)
def _run_cache(tmp_path_factory) -> None:
    """The installed Claude Code, the wheelhouse, pip's cache: in this run's temporary folder
    (unless ``$RECALL_TEST_CACHE`` names one), never in the account's home."""
    from tests.support.claude import use_run_cache

    use_run_cache(tmp_path_factory.getbasetemp() / "cache")


@pytest.fixture(scope="session")
def _path_without_claude(tmp_path_factory) -> str:
    return _path_without("claude", os.environ.get("PATH", os.defpath), tmp_path_factory.mktemp("path-no-claude"))


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch, _path_without_claude):
    monkeypatch.setenv("PATH", _path_without_claude)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "recall-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME"):  # the other agents' folders: under the test's HOME
        monkeypatch.delenv(var, raising=False)
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "RECALL_MODEL"):
        monkeypatch.delenv(var, raising=False)
    # caches keyed on the filesystem must not leak between tests
    from indexer.project import canonical_project, worktree_top

    canonical_project.cache_clear()
    worktree_top.cache_clear()
    # the last hook's credentials a service in this process remembered (recall.core.caller): a
    # test's own, never an earlier test's
    import sys

    caller = sys.modules.get("recall.core.caller")
    if caller is not None:
        caller._remembered.clear()
    yield


@pytest.fixture
def claude_logged_out(tmp_path, monkeypatch) -> Path:
    """A `claude` on PATH that nobody is logged in to: it answers ``--version``, ``--help``,
    ``auth status`` and a headless ``-p`` call the way Claude Code 2.1.197 does then."""
    from tests.support.claude import fake_logged_out_claude

    path = fake_logged_out_claude(tmp_path / "claude-bin")
    monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}{os.environ['PATH']}")
    return path


@pytest.fixture
def no_service_manager(tmp_path, monkeypatch) -> Path:
    """systemctl/launchctl on PATH that cannot reach a user bus: the service runs detached."""
    from tests.support.fakes import unreachable_service_manager

    folder = unreachable_service_manager(tmp_path / "nomanager")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


@pytest.fixture
def claude_projects(tmp_path):
    """The transcript root Claude Code would write to under the isolated CLAUDE_CONFIG_DIR."""
    root = tmp_path / "claude" / "projects"
    root.mkdir(parents=True)
    return root


@pytest.fixture
def project(tmp_path) -> Path:
    """A project the tests work in: ``<tmp>/work/shop``, a git checkout (``.git/info``), its
    resolved path. A test that wants it as a ``str`` or as the working directory narrows it in a
    fixture of the same name that takes this one."""
    from tests.support.memory import make_project

    return make_project(tmp_path / "work", "shop")


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
