"""The suite does not depend on what is installed or logged in on the machine (issue 27 item 2).

``model.backend = auto`` picks Claude Code when no key is found, so a `claude` on the
machine's PATH (every Claude Code user has one, logged in or not) used to become the backend
of every test that assumed "no key means no backend". tests/conftest.py pins that assumption:
PATH keeps every tool but ``claude``, and a test that wants Claude Code asks for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from recall.llm import backend, claude_code
from tests.support.claude import fake_logged_out_claude

ROOT = Path(__file__).resolve().parents[2]


def test_path_keeps_every_tool_but_claude():
    assert shutil.which("claude") is None
    assert shutil.which("sh") and shutil.which("git")  # the rest of the machine is still there
    assert backend.choose().name == "off"


def test_a_logged_out_claude_is_what_the_fixture_says(claude_logged_out):
    assert shutil.which("claude") == str(claude_logged_out)
    out = subprocess.run([str(claude_logged_out), "auth", "status"], capture_output=True, text=True)
    assert out.returncode == 1 and '"loggedIn": false' in out.stdout
    choice = backend.choose()  # auto still picks it: whether it is logged in is doctor's to say
    assert choice.name == "claude-code"
    import pytest

    with pytest.raises(Exception) as err:
        claude_code.complete("system", "prompt", purpose="test")
    assert "Not logged in" in str(err.value)


def test_tests_that_assume_no_backend_pass_with_a_logged_out_claude_on_path(tmp_path):
    """The tests that failed on machines with Claude Code (14 of them), run in a child pytest
    whose PATH starts with a `claude` nobody is logged in to."""
    fake = fake_logged_out_claude(tmp_path / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_", "ANTHROPIC_", "CLAUDE"))}
    env["PATH"] = f"{fake.parent}{os.pathsep}{os.environ['PATH']}"
    selection = [
        "tests/memory/test_memory_extract.py::test_no_key_no_call",
        "tests/prompt/test_hook.py::test_answer_question_without_key_raises_nokey",
        "tests/memory/test_memory_hooks.py::test_no_key_queues_nothing",
        "tests/memory/test_sessions.py::test_no_model_no_summary_and_no_call",
        "tests/memory/test_memory_cli.py::test_consolidate_and_ask_need_a_key",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *selection],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "5 passed" in proc.stdout


def test_the_support_cache_lives_in_the_run_s_temporary_folder_never_in_the_home(
    tmp_path, tmp_path_factory, monkeypatch
):
    """The installed Claude Code, the wheelhouse and pip's cache (issue 36, item 8): in this run's
    basetemp, or where $RECALL_TEST_CACHE says (.ci/run: a temporary folder of its own), never
    in the account's home -- whatever $HOME says."""
    import pwd

    from tests.support import claude, wheelhouse

    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    monkeypatch.delenv("RECALL_TEST_CACHE", raising=False)
    cache = claude.support_cache_dir()
    assert cache.is_relative_to(tmp_path_factory.getbasetemp())
    assert not cache.is_relative_to(real_home / ".cache")
    assert wheelhouse._cache_dir().is_relative_to(cache)
    monkeypatch.setenv("RECALL_TEST_CACHE", str(tmp_path_factory.getbasetemp() / "ci-cache"))
    assert claude.support_cache_dir() == tmp_path_factory.getbasetemp() / "ci-cache"
    # outside pytest (.ci/run asks for the binary before the suite starts): a temporary folder
    monkeypatch.delenv("RECALL_TEST_CACHE")
    code = (
        "from tests.support.claude import support_cache_dir as c; import tempfile, os; "
        "print(c().is_relative_to(os.path.realpath(tempfile.gettempdir())) or c())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, TMPDIR=str(tmp_path)),
    )
    assert out.stdout.strip() == "True", out.stdout + out.stderr
    assert [p.name[:18] for p in tmp_path.iterdir() if p.name != "home"] == ["recall-test-cache-"]
