"""Claude Code's own auto memory, end to end with the real Claude Code client: a note in the
project's MEMORY.md is indexed, reaches the model request through the prompt hook when a
prompt asks about it, and stops reaching it once the note is deleted."""

from __future__ import annotations

import os

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config
from tests.support.factory import encode_cwd
from tests.support.standin import is_main_request, request_text, text

pytestmark = pytest.mark.e2e

NOTE = "Deploys of the shop go through `make ship` (quillharbor), never kubectl apply by hand."
QUESTION = "how do we deploy the shop to production, which make target do we use to ship it?"


def main_turns(standin, since):
    return [r for r in standin.snapshot()[since:] if is_main_request(r)]


def test_a_memory_md_note_reaches_the_model_and_leaves_when_deleted(claude_env, standin, monkeypatch, capsys):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    config.set_value("memory.enabled", False)
    config.set_value("hook.budget_seconds", 30)
    config.set_value("hook.synthesize", False)  # the raw note, verbatim
    proc = claude_env.run("hello, this is the shop project")
    assert proc.returncode == 0, proc.stderr
    folder = claude_env.transcripts(include_subagents=False)[0].parent
    assert folder.name == encode_cwd(str(claude_env.project))
    memory = folder / "memory"
    memory.mkdir(exist_ok=True)  # Claude Code makes it itself
    (memory / "MEMORY.md").write_text(f"# Shop\n\n- {NOTE}\n- The staging database resets nightly.\n")
    index_all()
    assert run(["setup", "--project", str(claude_env.project), "--no-service"]) == 0
    capsys.readouterr()

    mark = len(standin.snapshot())
    standin.script(text("Use make ship."))
    proc = claude_env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_turns(standin, mark)[0])
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert "quillharbor" in block and "memory" in block

    (memory / "MEMORY.md").write_text("# Shop\n\n- The staging database resets nightly.\n")
    st = os.stat(memory / "MEMORY.md")
    os.utime(memory / "MEMORY.md", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    index_all()
    mark = len(standin.snapshot())
    proc = claude_env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    turns = main_turns(standin, mark)
    assert turns and all("quillharbor" not in request_text(r) for r in turns)  # a new session: no trace left
