"""End to end with the real Claude Code client: recall never hears itself (issue 34, "No echo").

Real sessions, written by the real client against the stand-in: one states a decision; one asks
the same question and gets only "OK."; two call recall's own MCP tools (as `recall setup`'s server
names them, `mcp__recall__…`, and as the plugin's, `mcp__plugin_recall_recall__…`) and restate
what they answered; two run recall's slash commands (`/recall-search`, `/recall`). Then the
question is asked again: the next prompt's injection holds the decision session, and nothing of
the others (no tool call, no tool output, no command expansion, no "OK." exchange), and none of
them ranks above the decision."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config
from recall.prompt import injections
from recall.search.searcher import Searcher
from tests.support.cli import cli
from tests.support.standin import is_claude_code_request, is_main_request, request_text, text, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RECALL_BIN = Path(sys.executable).with_name("recall")
DECISION = (
    "We decided that stripe webhooks are deduplicated by event id in the processed_events table, "
    "and the handler answers 200 before it does any work, because stripe retries for three days."
)
QUESTION = "what did we decide about stripe webhooks?"
TOOL_ANSWER = (
    "From recall: stripe webhooks are deduplicated by event id in processed_events, and the handler answers 200 first."
)
INJECTED = "UserPromptSubmit hook additional context: <recalled-context>"


def main_requests(standin, since: int) -> list[dict]:
    return [r for r in standin.snapshot()[since:] if is_main_request(r) and is_claude_code_request(r)]


def session_of_last_run(env) -> str:
    return env.transcripts(include_subagents=False)[-1].stem


@pytest.fixture
def history(claude_env, standin, monkeypatch, capsys):
    """The sessions above, each written by the real client, indexed in-process."""
    env = claude_env
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(env.home / ".claude"))
    config.set_value("memory.enabled", False)
    config.set_value("hook.synthesize", False)  # the raw path: the injection shows its hits as they are
    code = run(["setup", "--project", str(env.project), "--no-service", "--no-index", "--no-mcp"])
    assert code == 0, capsys.readouterr().err
    (env.project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    name: {
                        "type": "stdio",
                        "command": str(RECALL_BIN),
                        "args": ["mcp"],
                        "env": {"RECALL_HOME": os.environ["RECALL_HOME"]},
                    }
                    for name in ("recall", "plugin_recall_recall")
                }
            }
        )
    )  # the second is named as the plugin's server is
    env.write_settings({"enableAllProjectMcpServers": True})
    sessions: dict[str, str] = {}

    def turn(name: str, prompt: str, *replies, **kw) -> None:
        standin.script(*replies)
        proc = env.run(prompt, **kw)
        assert proc.returncode == 0, proc.stderr
        assert standin.pending == 0, f"{name}: the client made fewer requests than scripted"
        sessions[name] = session_of_last_run(env)
        index_all()

    turn("decision", "how should we handle stripe webhooks? they get retried", text(DECISION))
    turn("ok", QUESTION, text("OK."))
    mcp = {"timeout": 180, "env": {"MCP_CONNECTION_NONBLOCKING": "0"}}
    turn(
        "mcp",
        "look up what recall knows about the stripe webhooks decision",
        tool_use("mcp__recall__memory_search", {"query": "stripe webhooks decide"}),
        text(TOOL_ANSWER),
        allowed_tools="mcp__recall__memory_search",
        **mcp,
    )
    turn(
        "plugin-mcp",
        "search recall for stripe webhooks",
        tool_use("mcp__plugin_recall_recall__recall_search", {"query": "stripe webhooks processed_events"}),
        text(TOOL_ANSWER),
        allowed_tools="mcp__plugin_recall_recall__recall_search",
        **mcp,
    )
    turn("recall-search", "/recall-search stripe webhooks", text("OK."), allowed_tools=None)
    turn("recall", "/recall what did we decide about stripe webhooks", text(TOOL_ANSWER), allowed_tools=None)
    assert len(set(sessions.values())) == len(sessions)
    return sessions


def test_a_question_asked_again_finds_the_decision_not_the_echoes(claude_env, standin, history, capsys):
    env = claude_env
    raw = "\n".join(p.read_text() for p in env.transcripts())
    # what the real client wrote: recall's tools were called and answered, the commands expanded
    assert '"name":"mcp__recall__memory_search"' in raw.replace(" ", "")
    assert '"name":"mcp__plugin_recall_recall__recall_search"' in raw.replace(" ", "")
    assert "<command-name>/recall-search</command-name>" in raw and "Above are recall's raw hits" in raw
    assert "processed_events" in raw.split("mcp__recall__memory_search", 1)[1]  # the tool's result

    # none of it is searchable text: not the calls, their results, nor the command expansions
    searcher = Searcher()
    everything = searcher.search("stripe webhooks processed_events decide recall", messages=True, limit=50)
    texts = "\n".join(h.text for h in everything)
    assert "mcp__" not in texts and "Above are recall" not in texts and '"matches"' not in texts
    assert not [h for h in everything if h.role in ("tool_use", "tool_result")]
    # a reply restating recall's answer is an echo; the "OK." exchange is no answer
    by_session = {}
    for h in searcher.search(QUESTION, messages=True, limit=50):
        by_session.setdefault(h.session_id, []).append(h)
    for name in ("mcp", "plugin-mcp", "recall"):
        assert all(h.echo for h in by_session.get(history[name], [])), name
    assert by_session[history["ok"]] and all(h.echo for h in by_session[history["ok"]])

    # ranked: the decision first, whatever else matches below it
    hits = searcher.search(QUESTION, limit=10)
    assert hits[0].session_id == history["decision"], [(h.session_id[:8], h.text[:60]) for h in hits]

    # the question asked again, in a new session of the real client: the injection is the decision
    mark = len(standin.snapshot())
    standin.script(text("Stripe webhooks are deduplicated by event id in processed_events; answer 200 first."))
    proc = env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_requests(standin, mark)[0])
    assert INJECTED in json.dumps(main_requests(standin, mark)[0])
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert f"session {history['decision'][:8]}" in block and "processed_events" in block
    for name in ("ok", "mcp", "plugin-mcp", "recall-search", "recall"):
        assert history[name][:8] not in block, (name, block)
    assert "mcp__" not in block and "OK." not in block and "Above are recall" not in block
    rec = injections.read()[-1]
    assert rec["session"] == session_of_last_run(env)
    assert {h["session"] for h in rec["hits"]} == {history["decision"]}

    # and the reply used it: `recall log` says so once that reply is indexed (issue 34, "Was it used")
    index_all()
    capsys.readouterr()
    code, out, err = cli(capsys, "log", "--json", "--limit", "1")
    assert code == 0, err
    assert json.loads(out)[0]["used"] is True and json.loads(out)[0]["used_why"] == "repeats processed_events"
