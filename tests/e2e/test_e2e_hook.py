"""End to end with the real Claude Code client and the loopback Messages API stand-in:
a decision stated in session 1 is indexed; after `recall setup`, a question about it in
session 2 reaches the model with the decision inside <recalled-context> (synthesized by
Haiku through the stand-in, or as raw snippets when that call fails or hangs); trivial
prompts get nothing; the injected block is not indexed back."""

from __future__ import annotations

import json

import pytest

from recall.cli.app import run
from recall.core import config
from recall.search.searcher import Searcher
from tests.support.standin import error, hang, is_claude_code_request, is_messages_request, request_text, text
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

DECISION = (
    "We decided on pgbouncer in transaction pooling mode, because the ORM opens one "
    "connection per request and Postgres ran out of slots."
)
QUESTION = "which connection pooler did we settle on for postgres, and why?"
SYNTH_MARK = "quillfeather"  # a word only the synthesis says, to follow it around


def claude_requests(standin, since=0):
    return [r for r in standin.snapshot()[since:] if is_messages_request(r) and is_claude_code_request(r)]


def recall_requests(standin, since=0):
    """Requests recall's synthesis made (the anthropic SDK, not Claude Code)."""
    return [r for r in standin.snapshot()[since:] if is_messages_request(r) and not is_claude_code_request(r)]


def synthesis_handler(req):
    """Haiku stand-in: a briefing built from what the request carried (so the decision can
    only come back if recall sent it)."""
    if is_claude_code_request(req):
        return None  # Claude Code's own turns get the default reply
    sent = request_text(req)
    if "pgbouncer" in sent:
        return text(
            f"- {SYNTH_MARK}: pgbouncer in transaction pooling mode, because the ORM opens one "
            "connection per request [2026-11-20 session abcdef12]"
        )
    return text("NONE")


def index():
    """`recall index`: through the running service (it holds the only writer)."""
    from recall.control.index import index_via_service

    summary = index_via_service([], False)
    assert summary is not None, "the service started by `recall setup` is not answering"
    return summary


@pytest.fixture
def recalled_project(claude_env, standin, monkeypatch, capsys, request):
    """Session 1 states a decision; `recall setup` (the README's command: it starts the
    service from this shell, which has no key) wires the project and indexes it."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.delenv("RECALL_NO_SERVICE", raising=False)
    config.set_value("memory.enabled", False)  # no extraction workers in these tests
    # importing the SDK alone can take seconds on a loaded machine: room for the synthesis
    config.set_value("hook.budget_seconds", 30)
    standin.script(text(DECISION))
    proc = claude_env.run("which connection pooler should we use for postgres?")
    assert proc.returncode == 0, proc.stderr
    assert DECISION in proc.stdout
    session1 = claude_env.transcripts(include_subagents=False)[0].stem
    code = run(["setup", "--project", str(claude_env.project)])
    out = capsys.readouterr()
    assert code == 0, out.err
    request.addfinalizer(lambda: run(["service", "stop"]))
    assert index().messages + len(Searcher().search("connection pooler postgres", messages=True)) >= 1
    assert "added the UserPromptSubmit hook" in out.out
    settings = json.loads((claude_env.project / ".claude" / "settings.json").read_text())
    assert {"UserPromptSubmit", "Stop", "PreCompact", "SessionEnd", "SessionStart"} <= set(settings["hooks"])
    standin.handler = synthesis_handler
    return session1, len(standin.snapshot())


def test_decision_is_recalled_in_the_next_session(claude_env, standin, recalled_project):
    session1, mark = recalled_project
    proc = claude_env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr

    ours = recall_requests(standin, mark)
    assert len(ours) == 1
    assert "haiku" in ours[0]["model"] and ours[0]["model"] == config.DEFAULT_MODEL
    assert DECISION in request_text(ours[0])  # the hit recall sent to Haiku
    assert f"session {session1[:8]}]" in request_text(ours[0])  # with its citation
    main = claude_requests(standin, mark)[0]
    assert ours[0]["_time"] <= main["_time"]  # synthesis happened before Claude Code's turn
    sent = request_text(main)
    assert "<recalled-context>" in sent and "</recalled-context>" in sent
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert SYNTH_MARK in block and "pgbouncer in transaction pooling mode" in block
    assert "may be outdated" in block
    assert "UserPromptSubmit hook additional context: <recalled-context>" in json.dumps(main)

    # the injected block came back in the transcript, and is not indexed back
    raw = "".join(p.read_text() for p in claude_env.transcripts())
    assert SYNTH_MARK in raw
    index()  # the service indexes the new session as it is written (its summary may be empty)
    session2 = claude_env.transcripts(include_subagents=False)[-1].stem
    assert wait_for(
        lambda: any(
            h.session_id == session2
            for h in Searcher().search("connection pooler settle postgres", messages=True, limit=20)
        ),
        timeout=30,
    )
    assert Searcher().search(SYNTH_MARK, messages=True, limit=10) == []
    assert Searcher().search("connection pooler postgres why", messages=True, limit=20)

    # a trivial prompt: no injection, no model call by recall
    mark = len(standin.snapshot())
    proc = claude_env.run("ok, thanks!")
    assert proc.returncode == 0, proc.stderr
    assert recall_requests(standin, mark) == []
    assert "<recalled-context>" not in request_text(claude_requests(standin, mark)[0])


@pytest.mark.parametrize("failure", ["500", "hang"])
def test_failed_synthesis_still_injects_raw_snippets(claude_env, standin, recalled_project, failure):
    hang_seconds = 60.0

    def failing(req):
        if is_claude_code_request(req):
            return None
        if failure == "500":
            return error(500, "stand-in is down", should_retry=False)
        return hang(hang_seconds, text(f"{SYNTH_MARK} too late"))

    session1, mark = recalled_project
    budget = 8
    config.set_value("hook.budget_seconds", budget)
    standin.handler = failing
    proc = claude_env.run(QUESTION, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ours = recall_requests(standin, mark)
    assert ours, "recall did try the model"
    main = claude_requests(standin, mark)[0]
    sent = request_text(main)
    assert "<recalled-context>" in sent
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert "pgbouncer in transaction pooling mode" in block  # the raw snippet of the decision
    assert f"session {session1[:8]}]" in block  # cited
    assert SYNTH_MARK not in block
    # Claude Code's turn went out without waiting for the hung model (the hook's deadline)
    assert main["_time"] - ours[0]["_time"] < min(hang_seconds / 2, budget * 3)
