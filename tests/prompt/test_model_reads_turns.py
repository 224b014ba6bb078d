"""Issue 47 (item 2): the model reads exchanges. Each excerpt of the synthesis request carries
its turn (the prompt it served, what the turn concluded), so a mid-turn line ("Let me write the
money helper.", ``Write: src/money.py``) brings the decision the turn ended on; a content-free
tool line never takes the place of its session's lines that say something."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import index_all
from recall.core import config
from recall.prompt import context as rc
from recall.search.exchange import content_free
from tests.support.factory import Session
from tests.support.standin import request_text, text

START = datetime(2026, 9, 1, 9, tzinfo=timezone.utc)
CENTS = "Decision: we store all prices as integer cents, never floats; money.py converts at the edges only."


@pytest.fixture
def money(claude_projects, tmp_path):
    project = tmp_path / "src" / "shop"
    project.mkdir(parents=True)
    s = Session(cwd=str(project), start=START)
    s.user("set up the pricing module for the shop")
    s.assistant("Let me write the money helper.")
    tid = s.tool_use("Write", {"file_path": "src/money.py", "content": "def to_cents(x): ..."})
    s.tool_result(tid, f"File created successfully at: {project}/src/money.py")
    s.assistant(CENTS)
    s.write(claude_projects)
    other = Session(cwd=str(project), start=START + timedelta(days=2))
    other.user("add terraform for the staging bucket")
    tid = other.tool_use("Write", {"file_path": "infra/backend.tf", "content": "terraform {}"})
    other.tool_result(tid, f"File created successfully at: {project}/infra/backend.tf (file state is current)")
    other.assistant("The staging bucket is in infra/backend.tf, with versioning on.")
    other.write(claude_projects)
    index_all()
    return project


@pytest.fixture
def api(standin, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    config.set_value("hook.budget_seconds", 60)
    config.set_value("hook.semantic", False)
    return standin


def _payload(project, prompt):
    return {"session_id": "now", "cwd": str(project), "prompt": prompt, "hook_event_name": "UserPromptSubmit"}


def test_the_model_reads_the_turn_of_a_mid_turn_line(money, api):
    api.script(text("NONE"))
    trace: dict = {}
    rc.build_context(
        _payload(money, "where did the money helper go, and how does it write amounts?"), 10**10, trace=trace
    )
    reqs = api.messages_requests()
    assert len(reqs) == 1, trace
    sent = request_text(reqs[0])
    assert "integer cents" in sent  # the turn's conclusion came with the line that matched
    assert "user asked: set up the pricing module for the shop" in sent
    assert "File created successfully" not in sent  # boilerplate never stands in for its session


def test_content_free_lines():
    assert content_free("tool_result", "File created successfully at: /x/infra/backend.tf (file state is current)")
    assert content_free("tool_result", "The file /x/src/server.ts has been updated successfully.")
    assert content_free("tool_use", "Write: src/money.py")
    assert not content_free("tool_use", "Bash: npm run test -- webhooks")
    assert not content_free("tool_result", "FAIL src/routes/webhooks.test.ts\n 1 failed")
    assert not content_free("assistant", "Write: src/money.py")


def test_a_boilerplate_result_never_takes_its_sessions_place(money, api):
    """A prompt whose only common word with the history is "file": the tool's boilerplate is not
    what the model reads of that session."""
    api.script(text("NONE"))
    rc.build_context(_payload(money, "which file holds the terraform state backend for staging?"), 10**10)
    for req in api.messages_requests():
        sent = json.dumps(req)
        assert "file state is current" not in sent
