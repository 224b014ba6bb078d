"""Fixtures made by the real Claude Code client: its transcripts, indexed and searched."""

from __future__ import annotations

import json
import os

import pytest

from indexer.ingest import index_all
from recall.search.searcher import Searcher
from tests.support.standin import text, tool_use

pytestmark = pytest.mark.e2e


def _index_from(env):
    os.environ["CLAUDE_CONFIG_DIR"] = str(env.home / ".claude")
    return index_all()


def test_real_session_is_indexed_and_found(claude_env, standin):
    standin.script(
        tool_use("Bash", {"command": "echo 'pgbouncer pool_mode=transaction'", "description": "show pool mode"}),
        text("We decided on pgbouncer in transaction pooling mode because the ORM opens a connection per request."),
    )
    proc = claude_env.run("which connection pooler did we settle on?")
    assert proc.returncode == 0, proc.stderr
    summary = _index_from(claude_env)
    assert summary.messages >= 4  # prompt, tool call, tool result, answer
    assert summary.skipped["queue-operation"] >= 1

    hits = Searcher().search("pgbouncer transaction pooling", messages=True, limit=10)
    roles = {h.role for h in hits}
    assert {"assistant", "tool_use", "tool_result"} <= roles
    project = str(claude_env.project)
    assert all(h.project == project and h.cwd == project for h in hits)
    transcript_uuids = {e.get("uuid") for e in claude_env.transcript_entries()}
    assert all(h.uuid in transcript_uuids for h in hits)
    assert Searcher().search("connection pooler", limit=5)[0].role == "user"


def test_injected_context_is_not_indexed_back(claude_env, standin, tmp_path):
    hook = tmp_path / "inject.py"
    hook.write_text(
        "import json, sys\n"
        "json.load(sys.stdin)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit',"
        " 'additionalContext': '<recalled-context>zanzibar-marker decided long ago</recalled-context>'}}))\n"
    )
    claude_env.add_hook("UserPromptSubmit", f"python3 {hook}", timeout=10)
    standin.script(text("Noted."))
    proc = claude_env.run("tell me about the deployment plan")
    assert proc.returncode == 0, proc.stderr
    assert any("zanzibar-marker" in json.dumps(r) for r in standin.requests)  # it did reach the model
    raw = "".join(p.read_text() for p in claude_env.transcripts())
    assert "zanzibar-marker" in raw  # and it came back in the transcript...
    summary = _index_from(claude_env)
    assert summary.skipped["hook-context"] == 1
    assert Searcher().search("zanzibar-marker", messages=True) == []  # ...but is not indexed
    assert Searcher().search("deployment plan", messages=True)
