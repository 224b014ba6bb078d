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


def test_every_session_carries_the_memories_the_extraction_model_returns():
    from recall.memory.store import TYPES

    for p in ch.load_all():
        known = {s.sid for s in p.sessions}
        answers = json.loads((ch.DATA_DIR / f"{p.slug}.memories.json").read_text(encoding="utf-8"))
        assert set(answers) == known  # an answer for every session, empty when nothing lasts
        mems = [m for s in p.sessions for m in s.memories]
        assert len(mems) >= len(p.sessions)
        for m in mems:
            assert m["type"] in TYPES and 0 < len(m["content"]) <= 400 and 1 <= len(m.get("tags") or ()) <= 4
        assert all(s.end > s.start for s in p.sessions)


def test_the_benchmark_writes_a_sessions_memories_as_the_extraction_does(tmp_path):
    """``injection_sizes``'s driver takes a session's typed memories (op ``memories``) into the
    index as memory documents of that session; ``recall --raw`` finds them."""
    import os
    import subprocess
    import sys

    from benchmarks import injection_sizes as bench

    proj = ch.load("shipyard")
    s = proj.sessions[0]
    s.memories = [
        {"type": "decision", "content": "Shipyard talks to databases through database/sql, no ORM.", "tags": ["db"]}
    ]
    root = tmp_path / "transcripts"
    ch.write_session(s, root)
    driver = bench.Driver(bench.Here("ours", bench.REPO), tmp_path / "home", tmp_path / "scratch")
    try:
        driver.index(root)
        driver.memories(s)
    finally:
        driver.close()
    env = {**os.environ, "RECALL_HOME": str(tmp_path / "home"), "RECALL_NO_SERVICE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "recall", "search", "--raw", "--project", proj.cwd, "database/sql ORM"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "memory  session " + s.session_id[:8] in out.stdout
