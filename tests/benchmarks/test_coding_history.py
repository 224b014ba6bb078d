"""Issue 34 item 1: the coding history's sessions become real Claude Code transcripts (prompts,
text and tool calls as separate assistant lines of one message, tool results with
``toolUseResult``, the project's cwd, branch and timestamps) that the indexer reads like any
other; the prompts load in two halves (the report half is only counted here)."""

from __future__ import annotations

import json

from benchmarks import coding_history as ch
from indexer.ingest import index_all
from recall.search.searcher import Searcher


def test_every_project_loads_with_both_halves():
    projects = ch.load_all()
    assert {p.slug for p in projects} == set(ch.PROJECTS)
    for p in projects:
        assert len(p.sessions) >= 30
        assert [s.start for s in p.sessions] == sorted(s.start for s in p.sessions)
        splits = {q.split for q in p.prompts}
        assert splits == {"tune", "report"}
        known = {s.session_id for s in p.sessions}
        for q in p.prompts:
            assert q.answers <= known and q.kind in ("question", "task", "paraphrase", "new-task")
            assert not (q.kind == "new-task" and q.answers)
        answerable = [q for q in p.prompts if q.kind != "new-task"]
        assert sum(bool(q.answers) for q in answerable) >= 0.9 * len(answerable)


def test_sessions_are_written_as_claude_code_transcripts(claude_projects):
    proj = ch.load("shipyard")
    s = next(x for x in proj.sessions if any(t.get("tools") for t in x.turns))
    path = ch.write_session(s, claude_projects)
    lines = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]
    convo = [ln for ln in lines if ln.get("type") in ("user", "assistant")]
    assert all(
        ln["sessionId"] == s.session_id and ln["cwd"] == proj.cwd and ln["gitBranch"] == s.branch for ln in convo
    )
    assert [ln["timestamp"] for ln in convo] == sorted(ln["timestamp"] for ln in convo)
    uses = [ln for ln in convo if ln["type"] == "assistant" and ln["message"]["content"][0]["type"] == "tool_use"]
    results = [ln for ln in convo if ln["type"] == "user" and isinstance(ln["message"]["content"], list)]
    assert uses and len(uses) == len(results)
    by_uuid = {ln["uuid"]: ln for ln in uses}
    for r in results:
        block = r["message"]["content"][0]
        assert block["type"] == "tool_result" and "toolUseResult" in r
        assert by_uuid[r["sourceToolAssistantUUID"]]["message"]["content"][0]["id"] == block["tool_use_id"]
    assert lines[-1]["type"] == "last-prompt"
    index_all()
    first_prompt = next(t["user"] for t in s.turns if "user" in t)
    hits = Searcher().search(first_prompt, limit=3)
    assert hits and hits[0].session_id == s.session_id
