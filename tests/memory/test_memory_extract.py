"""Extraction against the loopback Messages API stand-in: rendering, chunking, thresholds,
cursor, strict validation, malformed answers, 500s, timeouts, the daily cap, no key."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from recall.core import config
from recall.llm import usage
from recall.memory import extract, store
from tests.support.memory import Transcript, active, extraction, is_extraction, prompt_of, use_standin
from tests.support.standin import error, hang, text


@pytest.fixture
def session(claude_projects, project):
    return Transcript(claude_projects, project)


def run(session, event="stop", **kw):
    return extract.process(session.session_id, event, str(session.path), str(session.project), **kw)


GOTCHA = {
    "type": "gotcha",
    "content": "Stripe webhook verification needs the raw body: use express.raw() on the webhook route",
    "tags": ["stripe"],
}


# rendering and chunking ----------------------------------------------------------------------
def test_summary_rendering_keeps_what_the_index_keeps(session, project):
    session.user("Fix the stripe webhook, signatures fail")
    session.hook_context("<recalled-context>INJECTED CONTEXT MUST NOT COME BACK</recalled-context>")
    session.assistant(
        "The body is parsed by express.json() first. <recalled-context>also injected"
        "</recalled-context>I will switch that route to express.raw()."
    )
    session.tool("Write", file_path=str(project / "src/lib/stripe.ts"), content="export const x = 1")
    session.tool("Bash", command="npm test -- stripe", description="Run the stripe tests")
    session.user("my key is sk-ant-api03-" + "B" * 90)
    entries, end, cwd = extract.read_new(session.path, 0, str(project))
    lines = "\n".join(e.text for e in entries)
    assert lines.splitlines()[0] == "USER: Fix the stripe webhook, signatures fail"
    assert "CLAUDE: The body is parsed by express.json() first." in lines
    assert "TOOL [Write]: src/lib/stripe.ts" in lines.splitlines()
    assert "TOOL [Bash]: npm test -- stripe | Run the stripe tests" in lines.splitlines()
    assert "INJECTED" not in lines and "also injected" not in lines  # the feedback-loop guard
    assert "TOOL RESULT BODY" not in lines  # tool results left out
    assert "sk-ant-api03" not in lines and "[redacted:" in lines  # the same redaction
    assert end == session.path.stat().st_size and cwd == str(project)


def test_chunks_are_6000_chars_with_500_overlap():
    entries = [extract.Entry(f"USER: line {i:04d} " + "x" * 180, 1000 + i) for i in range(100)]
    chunks = extract.chunk(entries, 0)
    full = "\n".join(e.text for e in entries)
    assert len(chunks) >= 4
    pos = 0
    spans = []
    for c in chunks:
        assert len(c.text) <= extract.CHUNK_CHARS
        start = full.index(c.text, max(0, pos - extract.CHUNK_CHARS))
        spans.append((start, start + len(c.text)))
        pos = start + len(c.text)
    assert spans[0][0] == 0 and spans[-1][1] == len(full)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        overlap = e1 - s2
        assert 0 < overlap <= extract.OVERLAP_CHARS  # each chunk repeats up to 500 chars of the last
        assert full[s2 - 1] == "\n"  # ...starting at a line start
    ends = [c.end for c in chunks]
    assert ends == sorted(ends) and ends[-1] == entries[-1].end
    # a chunk's cursor is past only the lines it holds whole
    first_whole = [e for e in entries if full.index(e.text) + len(e.text) <= spans[0][1]]
    assert chunks[0].end == first_whole[-1].end


# thresholds and the cursor ---------------------------------------------------------------------
def test_stop_needs_three_new_lines_and_the_cursor_waits(monkeypatch, standin, session):
    use_standin(monkeypatch, standin)
    session.user("short question").assistant("short answer")
    rep = run(session, "stop")
    assert rep.note.startswith("2 new lines, stop needs 3") and not standin.messages_requests()
    session.user("one more thing about the deploy script")
    standin.script(text(extraction(GOTCHA)))
    rep = run(session, "stop")
    assert rep.calls_ok == 1 and rep.added == 1
    prompt = prompt_of(standin.messages_requests()[0])
    assert "USER: short question" in prompt and "USER: one more thing" in prompt  # nothing was lost
    assert extract.load_cursor(session.session_id).offset == session.path.stat().st_size
    # nothing new: no call
    rep = run(session, "session-end")
    assert rep.note == "nothing new" and len(standin.messages_requests()) == 1


def test_precompact_needs_one_line_and_existing_memories_are_sent(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    with store.transaction(str(project)) as st:
        store.add_memory(st, "architecture", "The web app is Next.js in apps/web")
    session.user("compact soon")
    standin.script(text(extraction()))
    rep = run(session, "pre-compact")
    assert rep.calls_ok == 1 and rep.added == 0
    req = standin.messages_requests()[0]
    assert is_extraction(req)
    assert "- [architecture] The web app is Next.js in apps/web" in prompt_of(req)
    assert req["model"] == config.DEFAULT_MODEL


def test_extracted_memories_dedup_and_supersede(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    session.user("a").assistant("b").user("c")
    standin.script(
        text(
            extraction(
                GOTCHA, {"type": "progress", "content": "Stripe webhook fix is deployed to staging; production next"}
            )
        )
    )
    run(session, "stop")
    session.user("d").assistant("e").user("f")
    standin.script(
        text(
            "```json\n"
            + extraction(
                {
                    "type": "gotcha",
                    "content": "Stripe webhook verification needs the raw request body: use express.raw() "
                    "on the webhook route",
                },
                {
                    "type": "progress",
                    "content": "Stripe webhook fix is live in production",
                    "supersedes_content": "Stripe webhook fix is deployed to staging; production next",
                },
            )
            + "\n```"
        )
    )
    rep = run(session, "stop")
    assert rep.superseded == 2 and rep.added == 0
    mems = active(project)
    assert sorted(m["type"] for m in mems) == ["gotcha", "progress"]
    prog = next(m for m in mems if m["type"] == "progress")
    assert prog["content"] == "Stripe webhook fix is live in production" and prog["supersedes"]
    assert prog["sessions"] == [session.session_id]


def test_long_sessions_are_chunked_one_call_per_chunk(monkeypatch, standin, session):
    use_standin(monkeypatch, standin)
    for i in range(30):
        session.user(f"question {i} " + "about the importer " * 30)
        session.assistant(f"answer {i} " + "the importer streams rows " * 30)
    standin.script(*[text(extraction()) for _ in range(10)])
    rep = run(session, "session-end")
    assert rep.chunks == len(standin.messages_requests()) >= 5 and rep.calls_ok == rep.chunks
    prompts = [prompt_of(r) for r in standin.messages_requests()]
    assert "(part 1 of" in prompts[0]


# failures -------------------------------------------------------------------------------------
def test_malformed_answer_retried_once_then_used(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    session.user("a").assistant("b").user("c")
    standin.script(text("Sure! Here are the memories: {not json"), text(extraction(GOTCHA)))
    rep = run(session)
    assert len(standin.messages_requests()) == 2 and rep.added == 1


@pytest.mark.parametrize(
    "bad",
    [
        "no json at all",
        json.dumps({"memories": [{"type": "todo", "content": "x"}]}),  # unknown type
        json.dumps({"memories": [{"type": "gotcha", "content": ""}]}),  # empty content
        json.dumps({"memories": [{"type": "gotcha", "content": 42}]}),  # strict: no coercion
        json.dumps({"memories": "nope"}),
    ],
)
def test_malformed_twice_is_skipped_with_a_log_line(monkeypatch, standin, session, project, bad, caplog):
    use_standin(monkeypatch, standin)
    session.user("a").assistant("b").user("c")
    standin.script(text(bad), text(bad))
    rep = run(session)
    assert len(standin.messages_requests()) == 2
    assert rep.skipped_chunks == 1 and rep.added == 0 and active(project) == []
    # skipped, not retried forever: the cursor moved past the chunk
    assert extract.load_cursor(session.session_id).offset == session.path.stat().st_size
    assert "skipped, the model's answer was malformed twice" in caplog.text


def test_http_500_stops_and_the_next_trigger_resumes(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    session.user("a").assistant("b").user("c")
    standin.script(error(500, "boom", should_retry=False))
    rep = run(session)
    assert rep.stopped.startswith("model error") and len(standin.messages_requests()) == 1  # no retry loop
    assert extract.load_cursor(session.session_id).offset == 0
    standin.script(text(extraction(GOTCHA)))
    rep = run(session, "session-end")
    assert rep.added == 1 and len(active(project)) == 1


def test_timeout_stops_without_losing_lines(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin, timeout_seconds=1)
    session.user("a").assistant("b").user("c")
    standin.script(hang(5, text(extraction(GOTCHA))))
    rep = run(session)
    assert rep.stopped.startswith("model error") and active(project) == []
    assert extract.load_cursor(session.session_id).offset == 0


def test_daily_cap_stops_extraction(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin, daily_call_cap=2)
    usage.record_usage("claude-haiku-4-5", 10, 10, "extraction")
    usage.record_usage("claude-haiku-4-5", 10, 10, "consolidation")
    session.user("a").assistant("b").user("c")
    rep = run(session)
    assert rep.stopped == "daily cap reached" and not standin.messages_requests()


def test_no_key_no_call(monkeypatch, standin, session):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    session.user("a").assistant("b").user("c")
    rep = run(session, "session-end")
    assert rep.stopped == "no key" and not standin.messages_requests()


def test_usage_is_recorded_for_the_cost_estimate(monkeypatch, standin, session):
    use_standin(monkeypatch, standin)
    session.user("a").assistant("b").user("c")
    standin.script(text(extraction(GOTCHA)))
    run(session)
    summary = usage.usage_summary()
    assert summary["by_purpose"] == {"extraction": 1} and summary["cost"] > 0
    assert Counter(r["purpose"] for r in map(json.loads, usage.usage_path().read_text().splitlines())) == {
        "extraction": 1
    }


def test_corrupt_state_wastes_no_call(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    (project / ".memory").mkdir()
    (project / ".memory" / "state.json").write_text("{broken")
    session.user("a").assistant("b").user("c")
    rep = run(session, "session-end")
    assert "is not valid JSON" in rep.stopped and not standin.messages_requests()
    assert (project / ".memory" / "state.json").read_text() == "{broken"
    assert extract.load_cursor(session.session_id).offset == 0
