"""Issue 34, "Was it used": `recall log` says whether the next reply used each injection, and
`recall stats` gives per week prompts, injections, used share, silent share and misses."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import index_all
from recall.prompt import injections
from recall.prompt.stats import repeats, told, week_of
from recall.prompt.used import judge
from tests.support.cli import cli as run_cli
from tests.support.factory import Session

DECISION = (
    "We decided on pgbouncer in transaction pooling mode, because the ORM opens one connection per "
    "request; its settings live in deploy/pgbouncer.ini."
)
BLOCK = (
    "<recalled-context>\nRecalled by recall from past Claude Code sessions of this project (may be outdated: "
    "verify before relying on it).\n- [{day} session {sid}] assistant: " + DECISION + "\n</recalled-context>"
)


@pytest.fixture
def cli(capsys):
    return lambda *args: run_cli(capsys, *args)


def _ts(line: dict) -> float:
    return datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).timestamp()


@pytest.fixture
def logged(claude_projects, tmp_path):
    """A past session that answered a question; a later conversation where the hook injected
    it (used), injected something the reply ignored (not used), and one prompt still waiting
    for its reply; another conversation asked the answered question again and got nothing, and
    one said "as we discussed"."""
    cwd = str(tmp_path / "work" / "api")
    (tmp_path / "work" / "api").mkdir(parents=True)
    now = datetime.now(timezone.utc)
    past = Session(cwd=cwd, start=now - timedelta(days=2))
    past.user("which connection pooler should we use for postgres?")
    past.assistant(DECISION)
    past.user("thanks")

    conv = Session(cwd=cwd, start=now - timedelta(hours=3))
    p1 = conv.user("which connection pooler did we pick?")
    conv.assistant("We pick pgbouncer; I'll set pool_mode in deploy/pgbouncer.ini.")
    p2 = conv.user("add a dark mode toggle to the settings page")
    conv.tool_use("Edit", {"file_path": cwd + "/web/Settings.tsx"})
    conv.assistant("Added the toggle.")
    p3 = conv.user("how do the pool limits work?")

    other = Session(cwd=cwd, start=now - timedelta(hours=1))
    q1 = other.user("which connection pooler should we use for postgres?")
    other.assistant("Let me look at the code.")
    q2 = other.user("as we discussed, the migrations run before deploy; add that to the README")
    other.assistant("Done.")
    q3 = other.user("thanks")
    for s in (past, conv, other):
        s.write(claude_projects)
    index_all()

    day = (now - timedelta(days=2)).strftime("%Y-%m-%d")
    block = BLOCK.format(day=day, sid=past.session_id[:8])
    unrelated = BLOCK.format(day=day, sid=past.session_id[:8]).replace(DECISION, "The CSV export streams rows.")

    def rec(session, line, outcome, text=""):
        return {
            "t": _ts(line) + 0.8,
            "project": cwd,
            "session": session.session_id,
            "outcome": outcome,
            "why": "",
            "hits": [{"session": past.session_id, "score": 1.0}] if text else [],
            "backend": "off",
            "via": "in-process",
            "chars": len(text),
            "tokens": len(text) // 4,
            "latency_ms": 40.0,
            "text": text,
        }

    for r in (
        rec(conv, p1, "raw", block),
        rec(conv, p2, "raw", unrelated),
        rec(conv, p3, "raw", block),
        rec(other, q1, "nothing"),
        rec(other, q2, "nothing"),
        rec(other, q3, "trivial"),
    ):
        injections.append(r)
    return {"past": past, "conv": conv, "other": other}


def test_judge_reads_citations_names_and_words_never_the_prompts_own():
    block = BLOCK.format(day="2026-11-20", sid="abcdef12")
    prompt = "which connection pooler did we pick?"
    assert judge(block, prompt, "Per session abcdef12, pgbouncer.", ["abcdef12-0000"]) == (
        True,
        "cites session abcdef12",
    )
    assert judge(block, prompt, "Editing deploy/pgbouncer.ini now.") == (True, "repeats deploy/pgbouncer.ini")
    used, why = judge(block, prompt, "We went with pgbouncer: transaction pooling, because of the ORM.")
    assert used and why.startswith("repeats its words: ") and "pgbouncer" in why
    assert judge(block, prompt, "Added the toggle to the settings page.")[0] is False
    # the prompt's own words are no use of the injection
    assert (
        judge(block, "pgbouncer transaction pooling connection", "pgbouncer transaction pooling connection")[0] is False
    )


def test_told_and_repeats():
    for p in (
        "I already told you the staging db is read-only",
        "as we discussed, use cents",
        "like I said, no ORM here",
        "we've been over this: tabs",
        "don't you remember the deploy key?",
    ):
        assert told(p), p
    for p in ("tell me about the deploy", "what did we discuss about cents?", "I said hello to the team"):
        assert not told(p), p
    assert repeats(
        "which connection pooler should we use for postgres?", "Which connection pooler should we use for Postgres"
    )
    assert not repeats("which connection pooler should we use for postgres?", "how do we reset postgres?")


def test_recall_log_says_whether_the_next_reply_used_each_injection(logged, cli):
    code, out, err = cli("log", "--json")
    assert code == 0, err
    recs = json.loads(out)
    by_outcome = [(r["outcome"], r.get("used")) for r in recs]
    assert by_outcome == [
        ("trivial", None),
        ("nothing", None),
        ("nothing", None),
        ("raw", None),
        ("raw", False),
        ("raw", True),
    ]
    assert "used" not in recs[1]  # nothing injected: nothing to use
    assert recs[5]["used_why"] == "repeats deploy/pgbouncer.ini"
    assert recs[3]["used_why"] == "no reply indexed yet"
    code, out, err = cli("log")
    assert code == 0, err
    assert "used: yes (repeats deploy/pgbouncer.ini)" in out
    assert "used: no (the reply repeats nothing distinctive of it)" in out
    assert "used: not known yet (no reply indexed yet)" in out


def test_recall_stats_per_week(logged, cli):
    code, out, err = cli("stats", "--json")
    assert code == 0, err
    weeks = json.loads(out)["weeks"]
    this = weeks[0]
    assert this["week"] == week_of(logged["conv"].clock.timestamp()).isoformat() or len(weeks) == 2
    total = {
        k: sum(w[k] for w in weeks)
        for k in ("prompts", "trivial", "injections", "used", "unknown", "silent", "misses", "repeated", "told")
    }
    assert total == {
        "prompts": 6,
        "trivial": 1,
        "injections": 3,
        "used": 1,
        "unknown": 1,
        "silent": 2,
        "misses": 2,
        "repeated": 1,
        "told": 1,
    }
    if len(weeks) == 1:
        assert this["used_share"] == 0.5 and this["silent_share"] == 0.4  # of the 5 prompts not trivial
    whys = [m["why"] for w in weeks for m in w["miss_examples"]]
    assert f"asked again; session {logged['past'].session_id[:8]} answered it" in whys
    assert 'said it was told before ("as we discussed")' in whys
    code, out, err = cli("stats")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["week", "of", "prompts", "injected", "used", "silent", "misses"]
    assert "1 asked again, 1 said it was told before" in out


def test_stats_and_log_take_the_fast_path_and_check_their_options(cli):
    from recall.cli import fast_commands

    assert fast_commands.parse(["stats", "--weeks", "4", "--json"]) == ("stats", {"weeks": 4, "as_json": True})
    code, out, err = cli("stats")
    assert code == 0 and "No prompts logged" in out
    code, out, err = cli("stats", "--weeks", "0")
    assert code != 0 and "--weeks takes a number of weeks >= 1" in err
    probe = (
        "import sys; from recall.entry import main; code = main(['stats', '--json']); "
        "print('\\nLOADED', sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("LOADED []"), (out.stdout[-300:], out.stderr[-500:])
