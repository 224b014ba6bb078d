"""Issue 34, "No echo": what recall itself said, and exchanges whose reply adds nothing, are
never injected and never outrank the session they point to (the real client's transcripts of
each case: tests/e2e/test_e2e_echo.py)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import index_all
from indexer.sources.claude_code import FileContext, read_lines
from recall.core import config
from recall.prompt import context as rc
from recall.search.exchange import adds_nothing, is_question
from recall.search.searcher import Searcher
from tests.support.factory import Session

START = datetime(2026, 10, 1, 9, tzinfo=timezone.utc)
DECISION = (
    "Decision for stripe webhooks: verify the signature, record the event id in processed_events, "
    "answer 200 at once and let the worker process the event; duplicates are skipped by event id."
)
RESULT = '{"matches": [{"text": "record the event id in processed_events", "session": "abcdef12"}]}'


def parse(path):
    ctx, stats = FileContext(path), Counter()
    msgs = [m for batch, _ in read_lines(path, 0, ctx, stats) for m in batch]
    return msgs, stats


def payload(project, prompt):
    return {
        "session_id": "current",
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def injected(project, prompt) -> str:
    out = rc.build_context(payload(project, prompt), 10**10)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.mark.parametrize("tool", ["mcp__recall__memory_search", "mcp__plugin_recall_recall__recall_search"])
def test_recall_tool_calls_and_results_are_not_messages(claude_projects, tool):
    s = Session(start=START)
    s.user("what do we know about the stripe webhooks?")
    tid = s.tool_use(tool, {"query": "stripe webhook idempotent"})
    s.tool_result(tid, [{"type": "text", "text": RESULT}])
    s.assistant("We record the event id in processed_events.")
    other = s.tool_use("mcp__github__search_issues", {"query": "stripe webhook"})
    s.tool_result(other, "issue #12: stripe webhook retries")
    msgs, stats = parse(s.write(claude_projects))
    assert [m.role for m in msgs] == ["user", "assistant", "tool_use", "tool_result"]
    assert not any(tool in m.text or "matches" in m.text for m in msgs)
    assert stats["recall-tool"] == 2
    assert msgs[1].echo  # the reply restating recall's answer
    assert not msgs[2].echo and not msgs[3].echo  # another server's tool is history like any other


def test_a_meta_command_expansion_does_not_make_the_next_prompt_an_echo(claude_projects):
    """Claude Code 2.1.197 writes a command's expanded prompt as an isMeta line (not indexed)."""
    s = Session(start=START)
    s.user(
        "<command-message>recall-search</command-message>\n<command-name>/recall-search</command-name>\n"
        "<command-args>stripe webhooks</command-args>"
    )
    s.user(
        [
            {
                "type": "text",
                "text": "hits…\n\nAbove are recall's raw hits from past Claude Code sessions for \"stripe webhooks\".",
            }
        ],
        isMeta=True,
    )
    s.assistant("1. record the event id in processed_events")
    s.user("now add the refunds webhook")
    s.assistant("Added payments/refunds.py.")
    msgs, stats = parse(s.write(claude_projects))
    assert [(m.role, m.echo) for m in msgs] == [("assistant", True), ("user", False), ("assistant", False)]
    assert stats["meta"] == 1 and stats["command-wrapper"] == 1


def test_an_older_non_meta_expansion_is_not_a_message(claude_projects):
    s = Session(start=START)
    s.user(
        "<command-message>recall</command-message>\n<command-name>/recall:recall</command-name>\n"
        "<command-args>stripe webhooks</command-args>"
    )
    s.user("Above is what recall found for the question \"stripe webhooks\". Answer the question from it.")
    s.assistant("We record the event id in processed_events.")
    msgs, stats = parse(s.write(claude_projects))
    assert [(m.role, m.echo) for m in msgs] == [("assistant", True)]
    assert stats["recall-command"] == 1


def test_acknowledgements_and_questions():
    for ack in ("OK.", "ok", "Sure.", "Got it, thanks!", "Okay, will do.", "👍", "Noted."):
        assert adds_nothing(ack), ack
    for answer in ("No.", "Yes, use cents.", "OK. We use integer cents.", "", "Done: added payments/refunds.py"):
        assert not adds_nothing(answer), answer
    assert is_question("what did we decide about stripe webhooks")
    assert is_question("the webhook: idempotent or not?")
    assert not is_question("the deploy key lives in vault at secret/deploy")


def test_a_question_asked_again_finds_the_decision_not_the_earlier_asking(claude_projects, project):
    config.set_value("hook.synthesize", False)
    decision = Session(cwd=str(project), start=START)
    decision.user("how do we handle stripe webhooks retries?")
    decision.assistant(DECISION)
    asked = Session(cwd=str(project), start=START + timedelta(days=20))  # newer: the recency prior favours it
    asked.user("what did we decide about stripe webhooks?")
    asked.assistant("OK.")
    told = Session(cwd=str(project), start=START + timedelta(days=21))
    told.user("FYI the stripe webhooks signing secret lives in vault at secret/stripe-webhooks")
    told.assistant("Got it.")
    for s in (decision, asked, told):
        s.write(claude_projects)
    index_all()
    hits = Searcher().search("what did we decide about stripe webhooks?", limit=10)
    assert hits[0].session_id == decision.session_id
    mine = [
        h
        for h in Searcher().search("what did we decide about stripe webhooks?", messages=True, limit=20)
        if h.session_id == asked.session_id
    ]
    assert mine and all(h.echo for h in mine)  # the question, and its "OK."

    text = injected(project, "what did we decide about stripe webhooks?")
    assert f"session {decision.session_id[:8]}]" in text and "processed_events" in text
    assert asked.session_id[:8] not in text and "OK." not in text
    # a statement the assistant only acknowledged is what the user said: it keeps its standing
    text = injected(project, "where is the stripe webhooks signing secret kept?")
    assert f"session {told.session_id[:8]}]" in text and "secret/stripe-webhooks" in text


def test_the_echo_leaves_every_search_surface(claude_projects, project, capsys):
    """Issue 47 (item 6): `recall --raw` (grouped and --messages), MCP memory_search and the
    page's search rank the decision above an earlier asking of the same question."""
    import json

    from recall.cli.app import run
    from recall.mcp import tools
    from recall.search.merged import merged_search
    from recall.ui import views

    decision = Session(cwd=str(project), start=START)
    decision.user("how do we handle stripe webhooks retries?")
    decision.assistant(DECISION)
    asked = Session(cwd=str(project), start=START + timedelta(days=20))  # newer: the recency prior favours it
    asked.user("what did we decide about stripe webhooks?")
    asked.assistant("OK.")
    for s in (decision, asked):
        s.write(claude_projects)
    index_all()
    q = "what did we decide about stripe webhooks?"
    assert Searcher().search(q, messages=True, limit=5)[0].session_id == decision.session_id
    assert merged_search(Searcher(), q, limit=5)[0].session_id == decision.session_id
    for args in (["--raw", "--json"], ["--raw", "--json", "--messages"]):
        assert run([*args, "--project", str(project), q]) == 0
        out = json.loads(capsys.readouterr().out)
        rows = out if isinstance(out, list) else out.get("hits", out.get("results", []))
        assert rows and rows[0]["session_id"] == decision.session_id, (args, rows)
    found = tools.memory_search(q, cwd=str(project))
    matches = found["matches"] if isinstance(found, dict) else found
    assert matches[0]["session_id"] == decision.session_id
    for kind in ("", "message"):
        assert views.search(q, kind=kind)[0].session_id == decision.session_id


def test_the_hook_drops_echoes_acknowledgements_and_recall_calls_an_older_version_indexed():
    from recall.search.hit import Hit

    def hit(role, text, echo=False):
        return Hit(
            session_id="s",
            uuid=text[:8],
            project="p",
            cwd="",
            timestamp="",
            role=role,
            text=text,
            snippet="",
            score=1.0,
            echo=echo,
        )

    kept = hit("assistant", DECISION)
    hits = [
        kept,
        hit("assistant", "OK."),
        hit("assistant", "From memory: " + DECISION, echo=True),
        hit("tool_use", "mcp__recall__memory_search: stripe webhook idempotent"),
        hit("tool_use", "mcp__plugin_recall_recall__recall_search: stripe"),
        hit("tool_use", "Bash: grep -r processed_events"),
    ]
    assert [h.text for h in rc.without_rule_docs(hits)] == [DECISION, "Bash: grep -r processed_events"]
