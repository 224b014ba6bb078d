"""Claude Code's own auto memory, end to end with the real Claude Code client: a note in a
topic file of the project's auto memory (read on demand by Claude Code, not at session start)
is indexed, reaches the model request through the prompt hook when a prompt asks about it, and
stops reaching it once the note is deleted; a note in the head of MEMORY.md, which Claude Code
itself puts in front of the model, is never repeated by the hook (issue 44 item 9). Claude
Code 2.1.332's own memory recall (a ``relevant_memories`` attachment) is indexed as Claude
Code's memory, never as the user's words."""

from __future__ import annotations

import json
import os

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config
from tests.support.claude import claude_version, version_tuple
from tests.support.factory import encode_cwd
from tests.support.standin import is_main_request, request_text, text, tool_use

pytestmark = pytest.mark.e2e

HEAD = "The shop's logo files live in assets/ferncastle, never in the repository root."
NOTE = "Deploys of the shop go through `make ship` (quillharbor), never kubectl apply by hand."
QUESTION = "how do we deploy the shop to production, which make target do we use to ship it?"


def main_turns(standin, since):
    return [r for r in standin.snapshot()[since:] if is_main_request(r)]


def test_a_memory_note_reaches_the_model_and_leaves_when_deleted(claude_env, standin, monkeypatch, capsys):
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
    (memory / "MEMORY.md").write_text(f"# Shop\n\n- {HEAD}\n- See deploy.md for how we ship.\n")
    (memory / "deploy.md").write_text(f"# Deploy\n\n- {NOTE}\n- The staging database resets nightly.\n")
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
    # the head of MEMORY.md: in the request once, put there by Claude Code, never by recall
    assert sent.count("ferncastle") == 1 and "ferncastle" not in block

    (memory / "deploy.md").write_text("# Deploy\n\n- The staging database resets nightly.\n")
    st = os.stat(memory / "deploy.md")
    os.utime(memory / "deploy.md", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    index_all()
    mark = len(standin.snapshot())
    proc = claude_env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    turns = main_turns(standin, mark)
    assert turns and all("quillharbor" not in request_text(r) for r in turns)  # a new session: no trace left


def test_claude_codes_memory_recall_is_indexed_as_its_memory(claude_env, standin, monkeypatch, capsys):
    """2.1.332 recalls memory files itself: a side request picks them and a ``relevant_memories``
    attachment carries them into the transcript (and the model's next request). Older clients
    have no memory recall."""
    if version_tuple(claude_version()) < (2, 1, 332):
        pytest.skip(f"Claude Code {claude_version()} has no memory recall (relevant_memories)")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    memory = claude_env.home / ".claude" / "projects" / encode_cwd(str(claude_env.project)) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Shop\n\n- [deploy](deploy.md): how we deploy the shop\n")
    (memory / "deploy.md").write_text(
        f"---\nname: deploy\ndescription: how we deploy the shop\ntype: project\n---\n\n{NOTE}\n"
    )

    def selector(req):
        if "selecting memories" in json.dumps(req.get("system")):
            return text(json.dumps({"selected_memories": ["deploy.md"]}))
        return None

    standin.handler = selector
    standin.script(tool_use("Bash", {"command": "echo checking"}), text("Ship with make ship."))
    # the memory recall runs where memory stores are on (a server flag, or this variable)
    proc = claude_env.run("how do we deploy the shop, which target?", env={"CLAUDE_MEMORY_STORES": "local"})
    assert proc.returncode == 0, proc.stderr
    kinds = [(e.get("attachment") or {}).get("type") for e in claude_env.transcript_entries()]
    assert "relevant_memories" in kinds  # Claude Code's own format, as recorded
    index_all()
    assert run(["--json", "quillharbor kubectl"]) == 0
    hits = [h for h in json.loads(capsys.readouterr().out)["hits"] if h["kind"] == "message"]
    assert hits and {h["role"] for h in hits if "quillharbor" in h["text"]} == {"claude-memory"}
    assert any(h["text"].startswith("Claude Code recalled from its memory deploy.md:") for h in hits)
