"""Session summaries and browsing: `recall sessions` (first prompt without a model, the
summary once written), summaries through the Messages API stand-in on the SessionEnd
trigger, resumable after a failure, found by search, removed through the storage API;
`recall show` from the archive after the transcript is gone."""

from __future__ import annotations

import json
import stat
import time
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import index_all
from recall.memory import summaries, summarize, worker
from tests.support.cli import cli
from tests.support.factory import Session
from tests.support.memory import system_of, use_standin
from tests.support.standin import error, text

SUMMARY = (
    "Goal: add an index on orders.created_at\nDecided: build it concurrently, writes must not block\n"
    "Files: migrations/0008_orders_index.sql\nOutcome: migration written and verified\n"
    "Open: backfill of old rows (quillpond)"
)


def is_summary(req) -> bool:
    return "summary of one finished Claude Code session" in system_of(req)


@pytest.fixture
def two_sessions(tmp_path, claude_projects):
    shop = tmp_path / "work" / "shop"
    blog = tmp_path / "work" / "blog"
    shop.mkdir(parents=True)
    blog.mkdir(parents=True)
    now = datetime.now(timezone.utc)
    old = Session(cwd=str(blog), start=now - timedelta(days=5))
    old.user("write the release notes for the blog")
    old.assistant("Release notes written.")
    old.write(claude_projects)
    new = Session(cwd=str(shop), start=now - timedelta(hours=2))
    new.user("add an index on orders.created_at in a new migration")
    tid = new.tool_use("Write", {"file_path": f"{shop}/migrations/0008_orders_index.sql", "content": "create index"})
    new.tool_result(tid, "File created successfully at: migrations/0008_orders_index.sql\n" + "x" * 400)
    new.assistant("Done: the index is built concurrently.")
    (shop / "migrations").mkdir()
    (shop / "migrations" / "0008_orders_index.sql").write_text("create index")  # what it wrote, as it wrote it
    path = new.write(claude_projects)
    index_all()
    return {"shop": shop, "blog": blog, "old": old.session_id, "new": new.session_id, "path": path}


def test_sessions_list_newest_first_with_their_first_prompt_without_a_model(two_sessions, capsys):
    code, out, _ = cli(capsys, "sessions", "--json")
    data = json.loads(out)["sessions"]
    assert code == 0 and [s["session_id"] for s in data] == [two_sessions["new"], two_sessions["old"]]
    first = data[0]
    assert set(first) == {"session_id", "project", "started", "ended", "messages", "first_prompt", "summary", "stale"}
    assert first["stale"] == []  # the file it wrote is as it wrote it (tests/search/test_stale.py has the rest)
    assert first["summary"] is None and first["first_prompt"] == "add an index on orders.created_at in a new migration"
    assert first["project"] == str(two_sessions["shop"]) and first["messages"] >= 3
    assert first["started"].endswith("Z") and first["started"] <= first["ended"]
    code, out, _ = cli(capsys, "sessions")
    lines = out.splitlines()
    assert len(lines) == 2 and two_sessions["new"][:8] in lines[0] and "shop" in lines[0]
    assert "add an index on orders.created_at" in lines[0] and "msgs" in lines[0]
    assert [s["session_id"] for s in json.loads(cli(capsys, "sessions", "--since", "1d", "--json")[1])["sessions"]] == [
        two_sessions["new"]
    ]
    assert [
        s["session_id"]
        for s in json.loads(cli(capsys, "sessions", "--project", str(two_sessions["blog"]), "--json")[1])["sessions"]
    ] == [two_sessions["old"]]
    assert len(json.loads(cli(capsys, "sessions", "--limit", "1", "--json")[1])["sessions"]) == 1
    code, out, err = cli(capsys, "sessions", "--since", "soon")
    assert code == 2 and "--since takes a span like 2h, 3d or 1w" in err


def test_a_session_end_writes_a_summary_found_by_sessions_and_search(two_sessions, monkeypatch, standin, capsys):
    use_standin(monkeypatch, standin)
    standin.handler = lambda req: text(SUMMARY) if is_summary(req) else text('{"memories": []}')
    group = {
        "session_id": two_sessions["new"],
        "event": "session-end",
        "transcript_path": str(two_sessions["path"]),
        "cwd": str(two_sessions["shop"]),
        "files": [],
    }
    out = worker.run_session(group, {"memory": {"timeout_seconds": 5}})
    assert out["summary"]["status"] == "written"
    (req,) = [r for r in standin.messages_requests() if is_summary(r)]
    sent = req["messages"][-1]["content"]
    sent = sent if isinstance(sent, str) else sent[0]["text"]
    assert (
        "USER: add an index on orders.created_at" in sent and "TOOL [Write]: migrations/0008_orders_index.sql" in sent
    )
    rec = summaries.get(two_sessions["new"])
    assert rec["summary"] == SUMMARY and rec["project"] == str(two_sessions["shop"])
    path = summaries.home() / f"{two_sessions['new']}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(cli(capsys, "sessions", "--json")[1])["sessions"]
    assert data[0]["summary"] == SUMMARY and data[1]["summary"] is None
    assert "Goal: add an index on orders.created_at" in cli(capsys, "sessions")[1].splitlines()[0]
    hits = json.loads(cli(capsys, "--json", "quillpond backfill")[1])["hits"]
    assert hits[0]["uuid"] == f"sum-{two_sessions['new']}" and hits[0]["session_id"] == two_sessions["new"]
    # once only: a second session-end does not call the model again
    assert summarize.summarize(two_sessions["new"], str(two_sessions["path"]))["status"] == "exists"
    assert len([r for r in standin.messages_requests() if is_summary(r)]) == 1
    # the storage API other parts use (recall forget)
    assert summaries.remove([two_sessions["new"]]) == 1
    assert summaries.get(two_sessions["new"]) is None
    assert json.loads(cli(capsys, "--json", "quillpond backfill")[1])["hits"] == []


def test_a_failed_summary_resumes(two_sessions, monkeypatch, standin):
    use_standin(monkeypatch, standin)
    standin.handler = lambda req: error(500, "down", should_retry=False)
    res = summarize.summarize(two_sessions["new"], str(two_sessions["path"]), str(two_sessions["shop"]))
    assert res["status"] == "pending" and res["attempts"] == 1
    (marker,) = summaries.pending()
    assert marker["session_id"] == two_sessions["new"] and "model call failed" in marker["problem"]
    assert summarize.retry_pending() == []  # too soon
    standin.handler = lambda req: text(SUMMARY)
    done = summarize.retry_pending(now=time.time() + summarize.RETRY_SECONDS + 1)
    assert [d["status"] for d in done] == ["written"] and summaries.pending() == []
    assert summaries.get(two_sessions["new"])["summary"] == SUMMARY


def test_no_model_no_summary_and_no_call(two_sessions):
    res = summarize.summarize(two_sessions["new"], str(two_sessions["path"]))
    assert res["status"] == "pending" and "key" in res["problem"].lower()


def test_show_prints_the_summary_then_the_transcript_from_the_archive(two_sessions, monkeypatch, capsys):
    summaries.put(two_sessions["new"], str(two_sessions["shop"]), SUMMARY)
    two_sessions["path"].unlink()  # Claude Code deleted it: the archive still has the session
    code, out, _ = cli(capsys, "show", two_sessions["new"][:6])
    assert code == 0
    assert out.startswith(f"session {two_sessions['new']}\nproject {two_sessions['shop']}\n")
    assert out.index("Summary:") < out.index("Transcript:") < out.index("USER\n    add an index on orders")
    tool_lines = [ln for ln in out.splitlines() if "→" in ln or "←" in ln]
    assert any(ln.endswith("→ Write: migrations/0008_orders_index.sql") for ln in tool_lines)
    assert all(len(ln) <= 170 for ln in tool_lines)  # tool calls and results: one line each
    assert "CLAUDE\n    Done: the index is built concurrently." in out
    code, out, err = cli(capsys, "show", "zzzz")
    assert code == 2 and err.strip() == (
        "recall: No indexed session starts with 'zzzz': `recall sessions` lists them (run `recall index` if it is new)."
    )
    code, out, err = cli(capsys, "show", "")
    assert code == 2 and "Give a session id" in err
