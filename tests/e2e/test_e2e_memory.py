"""End to end with the real Claude Code binary: a session whose Stop hook fires produces
typed memories in state.json and the CLAUDE.md block (user text around the markers intact);
the SessionStart hook briefs the next session."""

from __future__ import annotations

import shlex
import sys

import pytest

from recall.memory import queue, store
from tests.support.memory import active, extraction, is_extraction, prompt_of, use_standin
from tests.support.standin import is_main_request, request_text, text, tool_use
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

USER_HEAD = "# Team rules\n\nAlways run `make lint` before committing.\n\n"
USER_TAIL = "\n\n## Deploys\nOnly from main. ünïcödé 数据 stays.\n"


def hook_command(name: str) -> str:
    return f"{shlex.quote(sys.executable)} -m recall.entry hook {name}"


@pytest.fixture
def project(claude_env):
    (claude_env.project / ".git" / "info").mkdir(parents=True)
    return claude_env.project


def test_stop_hook_of_a_real_session_writes_memories_and_the_block(monkeypatch, standin, claude_env, project):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    use_standin(monkeypatch, standin)
    claude_md = project / "CLAUDE.md"
    claude_md.write_text(USER_HEAD + "<!-- MEMORY:START -->\nstale block\n<!-- MEMORY:END -->" + USER_TAIL)
    claude_env.add_hook("Stop", hook_command("stop"), timeout=30)
    memories = [
        {
            "type": "decision",
            "content": "Notes live in notes.txt at the project root, one line per note",
            "tags": ["notes"],
        },
        {"type": "gotcha", "content": "The Write tool needs an absolute file_path", "tags": ["tools"]},
    ]
    standin.handler = lambda req: text(extraction(*memories)) if is_extraction(req) else None
    standin.script(
        tool_use("Write", {"file_path": str(project / "notes.txt"), "content": "first note\n"}),
        text("Done: wrote notes.txt with your first note."),
    )

    proc = claude_env.run("Create notes.txt with my first note")
    assert proc.returncode == 0, proc.stderr
    assert (project / "notes.txt").read_text() == "first note\n"

    assert wait_for(lambda: len(active(project)) == 2 and not queue.pending() and queue.lock_free(), timeout=90)
    state = store.load(str(project))
    (session_file,) = claude_env.transcripts(include_subagents=False)
    assert {m.type for m in state.active()} == {"decision", "gotcha"}
    assert all(m.sessions == [session_file.stem] for m in state.active())

    text_now = claude_md.read_text()
    assert text_now.startswith(USER_HEAD + "<!-- MEMORY:START -->")
    assert text_now.endswith("<!-- MEMORY:END -->" + USER_TAIL)
    assert "stale block" not in text_now
    assert "- Notes live in notes.txt at the project root, one line per note" in text_now
    assert "### Gotchas" in text_now and "### Decisions" in text_now

    (req,) = [r for r in standin.messages_requests() if is_extraction(r)]
    prompt = prompt_of(req)
    assert "USER: Create notes.txt with my first note" in prompt
    assert "TOOL [Write]: notes.txt" in prompt
    assert "CLAUDE: Done: wrote notes.txt with your first note." in prompt


def test_session_start_hook_briefs_the_next_real_session(monkeypatch, standin, claude_env, project):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    use_standin(monkeypatch, standin, claude_md="none")
    with store.transaction(str(project)) as st:
        store.add_memory(st, "gotcha", "The staging database resets every night at 02:00 UTC")
    claude_env.add_hook("SessionStart", hook_command("session-start"), timeout=15)
    standin.script(text("ok"))
    proc = claude_env.run("what should I know?")
    assert proc.returncode == 0, proc.stderr
    main = [r for r in standin.messages_requests() if is_main_request(r)]
    assert main and "The staging database resets every night at 02:00 UTC" in request_text(main[0])
    assert not (project / "CLAUDE.md").exists()
