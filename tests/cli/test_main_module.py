"""`python -m recall ...` is the `recall` console script: same output, same exit code, and its
fast paths import no more than the script's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from indexer.ingest import index_all
from tests.search.test_index_search import webhook_session

#: exactly what the console script's wrapper runs (``recall = "recall.entry:main"``)
SCRIPT = [sys.executable, "-c", "import sys; from recall.entry import main; sys.exit(main())"]
MODULE = [sys.executable, "-m", "recall"]


def run(prefix: list[str], *args: str, stdin: str = "") -> tuple[int, str, str]:
    proc = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, input=stdin)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["statsu"],  # a typo: exit 2 and the same one line
        ["--raw", "--json", "-n", "2", "stripe"],  # the fast search
        ["--raw", "--since", "yesterday", "x"],  # a RecallError, on the fast path
        ["status", "--json"],  # the everyday fast path
        ["memories", "--bogus"],  # typer's usage error
        ["index", "--source", "/no/such/dir"],  # a typer command's error
    ],
)
def test_python_m_recall_behaves_as_the_console_script(claude_projects, args):
    webhook_session().write(claude_projects)
    index_all()
    module = run(MODULE, *args)
    assert module == run(SCRIPT, *args)
    console = Path(sys.executable).parent / "recall"
    if console.is_file():  # the installed script itself, where pip put one beside this Python
        assert module == run([str(console)], *args)


def test_python_m_recall_hook_answers_and_exits_zero():
    event = '{"hook_event_name": "UserPromptSubmit", "prompt": "ok", "session_id": "s1", "cwd": "/"}'
    assert run(MODULE, "hook", "user-prompt-submit", stdin=event) == run(
        SCRIPT, "hook", "user-prompt-submit", stdin=event
    )
    assert run(MODULE, "hook", "user-prompt-submit", stdin=event)[0] == 0


def test_python_m_recall_search_does_not_import_typer(claude_projects):
    webhook_session().write(claude_projects)
    index_all()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *MODULE[1:], "--raw", "--json", "stripe"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and '"hits"' in proc.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "recall.entry" in loaded and "recall.cli.fast_search" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("typer", "click", "rich", "anthropic", "mcp")}
