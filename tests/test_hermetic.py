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

ROOT = Path(__file__).resolve().parent.parent


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
    selection = ["tests/test_memory_extract.py::test_no_key_no_call",
                 "tests/test_hook.py::test_answer_question_without_key_raises_nokey",
                 "tests/test_memory_hooks.py::test_no_key_queues_nothing",
                 "tests/test_sessions.py::test_no_model_no_summary_and_no_call",
                 "tests/test_memory_cli.py::test_consolidate_and_ask_need_a_key"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *selection],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "5 passed" in proc.stdout
