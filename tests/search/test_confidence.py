"""Issue 25: an absolute confidence per hit gates the hook (``hook.min_confidence``) and
orders every search; framing words never count against a hit; recall never quotes itself
(a reply restating an injection, recall's tool output, /recall and /remember turns rank
below the session they came from)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import index_all
from recall.core import config
from recall.prompt import context as rc
from recall.prompt import injections
from recall.search import confidence as conf
from recall.search.searcher import Searcher
from tests.service.test_service import serve  # noqa: F401 - fixture
from tests.support.factory import Session

START = datetime(2026, 10, 1, 9, tzinfo=timezone.utc)
REDIS_DECISION = (
    "We dropped redis: the managed instance cost $180 a month and it only cached sessions, "
    "so sessions moved to postgres in an unlogged table."
)
STRIPE_DECISION = (
    "Decision for stripe webhooks: verify the signature, record the event id in processed_events, "
    "answer 200 at once and let the worker process the event; duplicates are skipped by event id."
)
PRICES_DECISION = (
    "Floats caused the rounding errors on invoices: prices are stored as integer cents "
    "(price_cents) and only formatted as dollars on display."
)
DISTRACTORS = [
    (
        "last time the deploy took ages, can we cache the docker layers?",
        "Cached the layers; the deploy takes 3 minutes.",
    ),
    ("decide on a font for the landing page", "Went with Inter for headings and body."),
    ("the settings page crashes when the avatar is missing", "Added a fallback avatar in SettingsPage.tsx."),
    ("add a toggle for email notifications", "Added the notifications toggle, stored in user_prefs."),
    ("remind me to rotate the staging keys", "Noted: rotate the staging keys on Friday."),
    ("why is the search endpoint slow?", "A missing index on documents(project_id); added it."),
    ("write a test for the csv export", "Added test_export_csv with three rows."),
    ("what did the linter complain about?", "Unused imports in api/routes.py; removed them."),
    ("store the uploaded files in s3 instead of local disk", "Uploads now go to the s3 bucket app-uploads."),
    ("the build is red again", "A snapshot test drifted; updated the snapshot."),
    ("time zones are wrong in the report", "Converted timestamps to the user's zone before grouping."),
    ("make the page title configurable", "Added PAGE_TITLE to the config."),
]


def _session(project, day, *turns):
    s = Session(cwd=str(project), start=START + timedelta(days=day))
    for user, reply in turns:
        s.user(user)
        s.assistant(reply)
    return s


@pytest.fixture
def history(claude_projects, project):
    """A small real-looking history: three decisions, a dozen unrelated sessions, and a later
    session where recall answered "why did we drop redis?" by injecting the decision."""
    out = {}
    out["redis"] = _session(project, 0, ("should we keep redis for the session cache?", REDIS_DECISION))
    out["stripe"] = _session(project, 1, ("how do we handle stripe webhooks retries?", STRIPE_DECISION))
    out["prices"] = _session(project, 2, ("the invoice totals are off by a cent", PRICES_DECISION))
    for i, turn in enumerate(DISTRACTORS):
        out[f"d{i}"] = _session(project, 3 + i, turn)
    echo = Session(cwd=str(project), start=START + timedelta(days=30))
    echo.user("why did we drop redis?")
    echo.hook_context(
        "<recalled-context>\nRecalled by recall from past Claude Code sessions of this project.\n"
        f"- [2026-10-01 session {out['redis'].session_id[:8]}] assistant: {REDIS_DECISION}\n"
        "</recalled-context>"
    )
    echo.assistant(
        "You dropped redis because the managed instance cost $180 a month and it only cached "
        "sessions; the sessions moved to postgres in an unlogged table."
    )
    out["echo"] = echo
    for s in out.values():
        s.write(claude_projects)
    index_all()
    return out


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


def cited(text: str, session: Session) -> bool:
    return f"session {session.session_id[:8]}]" in text


# ---------------------------------------------------------------- recall must not quote itself
def test_a_reply_restating_an_injection_ranks_below_the_session_it_came_from(history, project):
    hits = Searcher().search("why did we drop redis?", limit=5)
    sessions = [h.session_id for h in hits]
    assert sessions[0] == history["redis"].session_id
    assert history["echo"].session_id not in sessions[:1]
    echo_hits = [h for h in hits if h.session_id == history["echo"].session_id]
    assert all(h.echo for h in echo_hits)
    text = injected(project, "why did we drop redis?")
    assert cited(text, history["redis"])
    assert text.index(history["redis"].session_id[:8]) < (
        text.find(history["echo"].session_id[:8]) % (len(text) + 1) if cited(text, history["echo"]) else len(text)
    )


@pytest.mark.parametrize("command", ["/recall", "/recall-search", "/recall:recall-search"])  # setup's, the plugin's
def test_recall_turns_are_echo_and_recall_tool_output_is_not_indexed(claude_projects, project, command):
    s = Session(cwd=str(project), start=START)
    s.user(
        f"<command-message>recall is running…</command-message>\n<command-name>{command}</command-name>\n"
        "<command-args>stripe webhooks</command-args>"
    )
    s.user("Search recall's memory for: stripe webhooks")  # the expansion (not isMeta in older versions)
    tid = s.tool_use("Bash", {"command": "recall --raw --limit 5 'stripe webhooks'"})
    s.tool_result(tid, STRIPE_DECISION)
    s.assistant("From memory: " + STRIPE_DECISION)
    s.user("now add a webhook for refunds")
    s.assistant("Added the refund webhook handler in payments/webhooks.py.")
    s.write(claude_projects)
    index_all()
    hits = Searcher().search("stripe webhooks processed_events", limit=10, messages=True)
    texts = [h.text for h in hits]
    assert not any(t.startswith(("Search recall's memo", "Bash: recall")) or t == STRIPE_DECISION for t in texts)
    assert [h.echo for h in hits if h.text.startswith("From memory")] == [True]  # the reply quoting it
    refund = Searcher().search("refund webhook handler payments", limit=10, messages=True)
    mine = [h for h in refund if "refund" in h.text]
    assert len(mine) == 2 and not any(h.echo for h in mine)  # the next prompt starts a new turn


# ---------------------------------------------------------------- framing words and plain questions
def test_framing_words_never_count_against_a_hit(history, project):
    text = injected(project, "what did we decide about stripe webhooks last time?")
    assert cited(text, history["stripe"])
    assert "processed_events" in text


def test_a_plain_question_about_how_prices_are_stored_is_answered(history, project):
    text = injected(project, "how should prices be stored, floats or something else?")
    assert cited(text, history["prices"])
    assert "cents" in text


def test_a_new_task_sharing_common_words_gets_nothing(history, project):
    trace: dict = {}
    out = rc.build_context(payload(project, "add a dark mode toggle to the settings page"), 10**10, trace=trace)
    assert out is None
    assert trace["outcome"] == "nothing"
    assert trace["why"].startswith("no hit confident enough: the best was ")


def test_a_prompt_whose_words_no_session_holds_gets_nothing_lexically(history, project):
    """None of "convention", "money", "amounts" was ever said: what the engine still matches
    ("what" of "what's", "s" of "user's") is no evidence, however well it scores."""
    trace: dict = {}
    assert rc.build_context(payload(project, "what's our convention for money amounts?"), 10**10, trace=trace) is None
    assert trace["outcome"] == "nothing"


# ---------------------------------------------------------------- the gate and its record
def test_min_confidence_decides_and_the_log_says_why(history, project):
    config.set_value("hook.min_confidence", 0.999)
    trace: dict = {}
    assert rc.build_context(payload(project, "why did we drop redis?"), 10**10, trace=trace) is None
    assert trace["outcome"] == "nothing" and "under hook.min_confidence 1.00" in trace["why"]
    config.set_value("hook.min_confidence", 0.0)
    trace = {}
    out = rc.build_context(payload(project, "why did we drop redis?"), 10**10, trace=trace)
    assert out is not None
    assert trace["hits"] and all(0.0 <= h["confidence"] <= 1.0 for h in trace["hits"])


def test_recall_log_shows_each_hits_confidence_and_why_nothing(history, project, capsys):
    from recall.cli.app import run

    rc.run_hook(payload(project, "what did we decide about stripe webhooks last time?"), time.time(), lambda out: True)
    rc.run_hook(payload(project, "add a dark mode toggle to the settings page"), time.time(), lambda out: True)
    recs = injections.read()
    assert recs[-2]["hits"] and all("confidence" in h for h in recs[-2]["hits"])
    capsys.readouterr()
    assert run(["log", "--limit", "2"]) == 0
    text = capsys.readouterr().out
    assert "confidence 0." in text
    assert "no hit confident enough" in text


def test_the_shipped_model_is_calibrated_in_the_right_direction():
    strong = {"rare": 1.0, "proximity": 1.0, "score": 1.2}
    weak = {"rare": 0.3, "proximity": 0.0, "score": 0.4}
    assert conf.confidence(strong) > conf.confidence(weak)
    for name in conf.FEATURES:  # every feature counts for a hit, none against it
        more = dict(weak, **{name: weak[name] + 0.5})
        assert conf.confidence(more) > conf.confidence(weak), name


def test_the_hook_decision_is_calibrated_in_the_right_direction():
    """Issue 34: the hook's decision model; every feature counts for a hit."""
    strong = {"proximity": 0.5, "held": 0.8, "specific": 1.0, "margin": 1.0}
    weak = {"proximity": 0.0, "held": 0.2, "specific": 0.0, "margin": -0.5}
    gate = config.DEFAULTS["hook"]["min_confidence"]
    assert gate == conf.DEFAULT_MIN_CONFIDENCE
    assert config.DEFAULTS["hook"]["model_min_confidence"] == conf.DEFAULT_MODEL_MIN_CONFIDENCE < gate
    assert (
        conf.confidence(strong, conf.DECISION)
        > gate
        > conf.DEFAULT_MODEL_MIN_CONFIDENCE
        > conf.confidence(weak, conf.DECISION)
    )
    assert set(conf.DECISION.weights) == set(conf.DECISION_FEATURES)
    for name in conf.DECISION_FEATURES:
        more = dict(weak, **{name: weak[name] + 0.5})
        assert conf.confidence(more, conf.DECISION) > conf.confidence(weak, conf.DECISION), name


def test_one_confidence_orders_raw_search_and_mcp(history, project):
    from recall.mcp import tools

    hits = Searcher().search("how are prices stored on invoices", limit=5)
    assert [h.confidence for h in hits] == sorted((h.confidence for h in hits), reverse=True)
    assert hits[0].session_id == history["prices"].session_id
    found = tools.memory_search("how are prices stored on invoices", limit=5, project=str(project))
    first = found["matches"][0]
    assert history["prices"].session_id in json.dumps(first)


def test_the_summary_of_an_echo_session_ranks_below_the_decision(history, project):
    from recall.memory import summaries
    from recall.memory.summarize import session_echo

    assert session_echo(history["echo"].session_id) is True
    assert session_echo(history["redis"].session_id) is False
    summaries.put(
        history["echo"].session_id,
        str(project),
        "Asked why we dropped redis; answered: the managed instance cost $180 a month and sessions "
        "moved to postgres in an unlogged table.",
        echo=True,
    )
    hits = Searcher().search("why did we drop redis for sessions", limit=5)
    summary = [h for h in hits if h.uuid == f"sum-{history['echo'].session_id}"]
    assert summary and summary[0].echo
    assert hits[0].session_id == history["redis"].session_id


def test_a_memory_note_is_judged_on_the_words_the_history_holds():
    q = conf.QueryStats(
        terms=["deploy", "shop", "product"],
        weights={"deploy": 4.0, "shop": 4.0, "product": 5.5},
        present={"deploy": 4.0, "shop": 4.0},
        pairs=[("deploy", "shop")],
        self_score=40.0,
    )
    note = "Deploys of the shop go through make ship."
    as_message = conf.features(q, note, 30.0)
    as_note = conf.features(q, note, 30.0, note=True)
    assert as_note["rare"] == 1.0 > as_message["rare"]  # "production" is in no session: not held against a note
    assert conf.confidence(as_note) > conf.confidence(as_message)
