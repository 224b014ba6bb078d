"""`recall memories --backfill --since 30d` (issue 27 item 6): memories and summaries for
history from before recall was installed — an estimate of calls and cost first, the daily cap
and idle gating respected, resumable; `recall show` says why a session has no summary."""

from __future__ import annotations

import json
import os
import time

from recall.core import config
from recall.memory import store, summaries
from tests.memory.test_sessions import SUMMARY, is_summary, two_sessions  # noqa: F401 (fixture)
from tests.support.cli import cli
from tests.support.memory import extraction, is_extraction, use_standin
from tests.support.standin import text


def answer(req):
    if is_summary(req):
        return text(SUMMARY)
    if is_extraction(req):
        return text(
            extraction(
                {
                    "type": "decision",
                    "content": "Indexes on orders are built concurrently so writes never block",
                    "tags": ["db"],
                }
            )
        )
    return None


def test_backfill_estimates_first_then_makes_memories_and_summaries_and_resumes(
    two_sessions, monkeypatch, standin, capsys
):
    use_standin(monkeypatch, standin)
    standin.handler = answer
    code, out, err = cli(capsys, "memories", "--backfill", "--all-projects")  # no terminal, no --yes
    assert (
        code == 2
        and "No model was called: there is no terminal to ask. Run `recall memories --backfill "
        "--since 30d --all-projects --yes` to start it."
        in err
    )
    assert standin.requests == [] if isinstance(standin.requests, list) else True
    assert "Backfill: 2 sessions of every project active since" in out
    assert "4 model calls (2 extraction, 2 summaries;" in out and "est. $0.0" in out
    assert "the daily cap allows 200 more calls today (0 of 200 used)" in out

    code, out, err = cli(capsys, "memories", "--backfill", "--all-projects", "--yes")
    assert code == 0, err
    assert "[1/2] " in out and two_sessions["new"][:8] in out and "+1 memory, summary written" in out
    assert "Backfill done: 2 of 2 sessions done: 2 memories, 2 summaries." in out
    assert summaries.get(two_sessions["new"]) and summaries.get(two_sessions["old"])
    assert [m.content for m in store.load(str(two_sessions["shop"])).active()] == [
        "Indexes on orders are built concurrently so writes never block"
    ]
    calls = len(standin.requests)
    code, out, _ = cli(capsys, "memories", "--backfill", "--all-projects", "--yes")  # resumable: all done
    assert code == 0 and out.startswith("Nothing to backfill: every session of every project active since")
    assert len(standin.requests) == calls


def test_backfill_stops_at_the_daily_cap_and_goes_on_later(two_sessions, monkeypatch, standin, capsys):
    use_standin(monkeypatch, standin, daily_call_cap=2)
    standin.handler = answer
    code, out, err = cli(capsys, "memories", "--backfill", "--since", "30d", "--all-projects", "--yes")
    assert code == 1 and "Backfill stopped (" in err and "1 of 2 sessions done" in err
    assert "Run the same command again to go on" in err
    config.set_value("memory.daily_call_cap", 10)
    code, out, err = cli(capsys, "memories", "--backfill", "--since", "30d", "--all-projects", "--yes")
    assert code == 0, err
    assert "Backfill: 1 session of every project" in out and "Backfill done: 1 of 1 session done" in out


def test_backfill_leaves_active_sessions_to_the_hooks(two_sessions, monkeypatch, standin, capsys):
    use_standin(monkeypatch, standin, idle_seconds=3600)
    from recall.memory.extract import find_transcript

    old = find_transcript(two_sessions["old"])
    os.utime(old, (time.time() - 5 * 86400, time.time() - 5 * 86400))  # the blog session ended days ago
    os.utime(two_sessions["path"], (time.time(), time.time()))  # the shop session is going on
    code, out, _ = cli(capsys, "memories", "--backfill", "--since", "30d", "--all-projects")
    assert "Backfill: 1 session of every project" in out and "1 session still active is left to the hooks" in out
    code, out, err = cli(capsys, "memories", "--backfill", "--since", "1d", "--project", str(two_sessions["shop"]))
    assert code == 0 and "Nothing to backfill" in out and "(1 still active: the hooks take them" in out


def test_show_says_why_there_is_no_summary(two_sessions, capsys, tmp_path):
    code, out, _ = cli(capsys, "show", two_sessions["old"], "--no-pager")
    assert "No summary (before recall was installed: `recall memories --backfill`)." in out
    assert "written when a session ends" not in out
    proj = tmp_path / "p"
    (proj / ".git").mkdir(parents=True)
    code, out, _ = cli(capsys, "setup", "--project", str(proj), "--no-service", "--no-index")
    assert "recall memories --backfill --since 30d" in out  # setup mentions it


def test_backfill_without_a_backend_says_why_in_one_line(two_sessions, capsys):
    code, out, err = cli(capsys, "memories", "--backfill", "--all-projects")
    assert code == 1 and err.startswith("recall: Model calls are off: no Anthropic key and no Claude Code found")
    assert json.dumps  # noqa
