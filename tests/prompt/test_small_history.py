"""Issue 34: the right past session in a small history (items 2, 3 and 5).

Every new user starts with a handful of sessions, in which most words of most prompts were
never said. A word no past session holds is not evidence against a hit unless it is
distinctive (an identifier, a path, a rare word); coding framing ("in this repo", "again",
"please") never counts. The raw path (no model backend) keeps the strict gate
(``hook.min_confidence``) and injects compactly: at most ``hook.raw_limit`` hits, one per past
session, ``hook.raw_max_chars`` characters, never a session already injected earlier in the
same conversation; the model path hands the synthesis what passes the looser
``hook.model_min_confidence`` and the model answers NONE when nothing bears on the prompt.
``recall log`` says which path decided, by which gate.

The histories are real Claude Code transcripts: prompts, tool calls with their results, pasted
errors, the model's explanations.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import Indexer, index_all
from recall.core import config
from recall.prompt import context as rc
from recall.prompt import injections
from tests.support.factory import Session

START = datetime(2026, 9, 1, 9, tzinfo=timezone.utc)
GOTCHA = (
    "Gotcha: the /api/stripe/webhook route must receive the raw request body, otherwise signature "
    "verification fails: express.json() had already parsed it, so the bytes Stripe signed were gone. "
    "I mounted express.raw({ type: 'application/json' }) on that route before the JSON parser."
)
STRIPE_ERROR = (
    "StripeSignatureVerificationError: No signatures found matching the expected signature for "
    "payload. Are you passing the raw request body you received from Stripe?"
)


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "src" / "shopfront"
    p.mkdir(parents=True)
    return p


def _session(project, day: int) -> Session:
    return Session(cwd=str(project), start=START + timedelta(days=day))


def stripe_session(project) -> Session:
    s = _session(project, 0)
    s.user("stripe webhooks fail in staging with a 400, can you look")
    tid = s.tool_use("Bash", {"command": "npm run test -- webhooks"})
    s.tool_result(
        tid,
        f"FAIL src/routes/webhooks.test.ts\n  ● stripe webhook › accepts a signed event\n\n"
        f"    {STRIPE_ERROR}\n\nTests: 1 failed, 6 passed",
        is_error=True,
    )
    tid = s.tool_use("Read", {"file_path": f"{project}/src/server.ts"})
    s.tool_result(tid, "app.use(express.json());\napp.post('/api/stripe/webhook', stripeWebhook);")
    s.assistant(GOTCHA)
    tid = s.tool_use(
        "Edit",
        {
            "file_path": f"{project}/src/server.ts",
            "old_string": "app.use(express.json());",
            "new_string": "app.post('/api/stripe/webhook', express.raw({ type: 'application/json' }), "
            "stripeWebhook);\napp.use(express.json());",
        },
    )
    s.tool_result(tid, f"The file {project}/src/server.ts has been updated.")
    tid = s.tool_use("Bash", {"command": "npm run test -- webhooks"})
    s.tool_result(tid, "PASS src/routes/webhooks.test.ts\nTests: 7 passed")
    s.assistant("The webhook tests pass now.")
    return s


def mundane_sessions(project) -> list[Session]:
    out = []
    s = _session(project, 2)
    s.user("fix the eslint errors in the cart components")
    tid = s.tool_use("Bash", {"command": "npx eslint src/cart"})
    s.tool_result(
        tid,
        "src/cart/CartList.tsx\n  12:7  error  'total' is assigned a value but never used  "
        "no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)",
        is_error=True,
    )
    s.assistant("Removed the unused variable in CartList.tsx; eslint is clean.")
    out.append(s)
    s = _session(project, 5)
    s.user("bump next to 15.1 and run the build")
    tid = s.tool_use("Bash", {"command": "npm install next@15.1 && npm run build"})
    s.tool_result(
        tid, "added 3 packages, changed 12 packages\n✓ Compiled successfully\n✓ Generating static pages (14/14)"
    )
    s.assistant("Next is on 15.1 and the build is green.")
    out.append(s)
    s = _session(project, 8)
    s.user("add a section about running the app locally to the README")
    tid = s.tool_use(
        "Edit",
        {
            "file_path": f"{project}/README.md",
            "old_string": "## Deploy",
            "new_string": "## Running locally\n\nnpm install && npm run dev\n\n## Deploy",
        },
    )
    s.tool_result(tid, f"The file {project}/README.md has been updated.")
    s.assistant("Added 'Running locally' to the README.")
    out.append(s)
    return out


@pytest.fixture
def four(claude_projects, project):
    """A real 4-session history: the stripe gotcha and three mundane sessions."""
    sessions = {"stripe": stripe_session(project)}
    for i, s in enumerate(mundane_sessions(project)):
        sessions[f"m{i}"] = s
    for s in sessions.values():
        s.write(claude_projects)
    index_all()
    config.set_value("model.backend", "off")  # the raw path, whatever is on this machine
    return sessions


def payload(project, prompt, session_id="conversation-1"):
    return {
        "session_id": session_id,
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def hook(project, prompt, session_id="conversation-1", trace=None) -> str:
    """What the hook injects, as the whole hook runs it (logged, like a real prompt)."""
    emitted: list = []

    def emit(out):
        emitted.append(out)
        return True

    rc.run_hook(payload(project, prompt, session_id), time.time(), emit)
    out = emitted[0] if emitted else None
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def cites(text: str, s: Session) -> bool:
    return f"session {s.session_id[:8]}]" in text


@pytest.mark.parametrize(
    "prompt",
    [
        "How do we verify Stripe webhook signatures in this repo?",
        "How do we verify Stripe webhook signatures?",
        "how do we verify stripe webhook signatures in the codebase again, please",
    ],
)
def test_the_webhook_question_injects_the_gotcha_in_a_four_session_history(four, project, prompt):
    text = hook(project, prompt)
    assert cites(text, four["stripe"]), text
    assert "raw request body" in text
    rec = injections.read()[-1]
    assert rec["outcome"] == "raw" and rec["path"] == "raw"
    assert rec["gate"] == {"setting": "hook.min_confidence", "value": config.DEFAULTS["hook"]["min_confidence"]}


def test_pasting_the_earlier_error_again_injects_the_session_that_fixed_it(four, project):
    text = hook(project, f"webhook tests failing again:\n{STRIPE_ERROR}")
    assert cites(text, four["stripe"]), text


@pytest.mark.parametrize(
    "prompt",
    [
        "add a dark mode toggle to the settings page",
        "write a migration that adds a loyalty_points column to users",
    ],
)
def test_a_new_task_in_that_history_stays_silent(four, project, prompt):
    assert hook(project, prompt) == ""
    rec = injections.read()[-1]
    assert rec["outcome"] == "nothing" and rec["path"] == "raw"


def test_raw_injections_are_compact_one_hit_per_session(four, project):
    text = hook(project, "How do we verify Stripe webhook signatures? the tests fail with a 400 again")
    assert text and len(text) <= config.DEFAULTS["hook"]["raw_max_chars"] == 1500
    lines = [ln for ln in text.splitlines() if ln.startswith("- [")]
    sessions = [ln.split("session ", 1)[1][:8] for ln in lines]
    assert 1 <= len(lines) <= 3 and len(set(sessions)) == len(sessions)


def test_a_session_injected_earlier_in_the_conversation_is_not_injected_again(four, project):
    first = hook(project, "How do we verify Stripe webhook signatures?")
    assert cites(first, four["stripe"])
    again = hook(project, "so how does the stripe webhook signature verification work?")
    assert not cites(again, four["stripe"])
    rec = injections.read()[-1]
    assert rec["repeated"] == [four["stripe"].session_id]
    # another conversation gets it
    assert cites(
        hook(project, "How do we verify Stripe webhook signatures?", session_id="conversation-2"), four["stripe"]
    )


def test_recall_log_shows_the_path_and_the_gate(four, project, capsys):
    from recall.cli import everyday

    hook(project, "How do we verify Stripe webhook signatures in this repo?")
    hook(project, "add a dark mode toggle to the settings page")
    assert everyday.log(limit=5) == 0
    out = capsys.readouterr().out
    assert "raw (no backend) via in-process [raw path: hook.min_confidence 0.60]" in out
    assert "nothing (no hit confident enough: the best was" in out
    assert "under hook.min_confidence 0.60) via in-process [raw path: hook.min_confidence 0.60]" in out


# --------------------------------------------------------------------------- the model path
def test_the_model_path_sends_looser_candidates_and_the_model_decides(four, project, monkeypatch, standin):
    from tests.support.standin import text as answer

    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    config.set_value("model.backend", "api")
    config.set_value("hook.budget_seconds", 60)  # importing the SDK on a loaded machine takes seconds
    sid = four["stripe"].session_id[:8]
    standin.script(
        answer(
            f"- Stripe signs the raw body: /api/stripe/webhook gets express.raw() before the JSON "
            f"parser [2026-09-01 session {sid}]"
        )
    )
    text = hook(project, "why do stripe signatures fail when the body was parsed?")
    assert sid in text
    rec = injections.read()[-1]
    assert rec["outcome"] == "synthesized" and rec["path"] == "model"
    assert rec["gate"]["setting"] == "hook.model_min_confidence"
    assert rec["injected"] == [four["stripe"].session_id]
    # nothing bears on this one: the model answers NONE, as the real one is told to
    standin.script(answer("NONE"))
    text = hook(project, "the cart eslint config should also lint the checkout folder", session_id="c3")
    assert text == ""
    rec = injections.read()[-1]
    assert rec["outcome"] == "nothing" and rec["path"] in ("model", "raw")


# --------------------------------------------------------------------------- paraphrases with memories
def _decision(project, day, prompt, reply, tool=None) -> Session:
    s = _session(project, day)
    s.user(prompt)
    if tool:
        tid = s.tool_use("Bash", {"command": tool[0]})
        s.tool_result(tid, tool[1], is_error=tool[2])
    s.assistant(reply)
    return s


PARAPHRASES = {
    "prices": (
        "what's our convention for money amounts?",
        _decision,
        (
            "the invoice totals are off by a cent on some orders",
            "Floats caused it: 19.99 * 3 came out as 59.97000000000001. From now on we store all "
            "prices as integer cents (price_cents) and only format them as dollars on display.",
            ("npm test -- invoice", "expected 5997 received 5997.000000000001", True),
        ),
        (
            "pattern",
            "Money amounts are stored as integer cents (price_cents); format to dollars only "
            "on display. Floats caused off-by-a-cent invoice totals.",
            ["money", "prices"],
        ),
    ),
    "dedup": (
        "remind me how the webhook dedup works",
        _decision,
        (
            "stripe sends the same event twice sometimes and we double-ship orders",
            "Each event id goes into processed_events (unique on event_id) in the same transaction "
            "as the order update; a second delivery hits the constraint and is acknowledged "
            "with 200 without doing anything.",
            None,
        ),
        (
            "decision",
            "Stripe webhook deduplication: the event id is inserted into processed_events "
            "(unique) with the order update; a duplicate delivery returns 200 and does nothing.",
            ["stripe", "webhooks", "dedup"],
        ),
    ),
    "timezone": (
        "which timezone should cart code use?",
        _decision,
        (
            "carts expire an hour early for customers in Berlin",
            "The expiry compared a naive local datetime with a UTC one. Cart code now uses UTC "
            "everywhere (datetime.now(timezone.utc)); local time only in the templates.",
            None,
        ),
        (
            "pattern",
            "Cart code uses UTC everywhere (timezone-aware datetimes); convert to the "
            "customer's time zone only in templates.",
            ["cart", "timezone", "utc"],
        ),
    ),
    "click": (
        "is there a reason we are not using click?",
        _decision,
        (
            "should the admin script use click or typer?",
            "Neither: scripts/admin.py runs in the slim deploy image with no third-party packages, "
            "so it sticks to argparse from the standard library.",
            None,
        ),
        (
            "decision",
            "scripts/admin.py uses argparse, not click or typer: it runs in the slim deploy "
            "image with no third-party packages.",
            ["cli", "argparse", "click"],
        ),
    ),
}


def decision_history(claude_projects, project) -> dict:
    """The four decision sessions of ``PARAPHRASES`` and two mundane ones, written and indexed
    (no typed memories): name -> session (``m0``, ``m1``: the mundane ones)."""
    sessions = {}
    for i, (name, (_, make, args, _mem)) in enumerate(PARAPHRASES.items()):
        sessions[name] = make(project, i * 3, *args)
    for i, s in enumerate(mundane_sessions(project)[:2]):
        sessions[f"m{i}"] = s
    for s in sessions.values():
        s.write(claude_projects)
    index_all()
    return sessions


@pytest.fixture
def with_memories(claude_projects, project):
    """Four decision sessions, two mundane ones, and the typed memories the extraction made of
    the decisions (``recall.memory``), as a history of a few weeks holds them."""
    from recall.memory import index_docs as memory_index
    from recall.memory import store

    sessions = decision_history(claude_projects, project)
    root = str(project)
    with store.transaction(root) as state:
        for name, (_, _, _, (mtype, content, tags)) in PARAPHRASES.items():
            store.add_memory(state, mtype, content, tags=tags, session_id=sessions[name].session_id)
    with Indexer() as ix:
        ix.upsert_memory_docs(memory_index.changes(root, [m.id for m in store.load(root).memories], [])[0])
        ix.commit()
    config.set_value("model.backend", "off")
    return sessions


@pytest.mark.parametrize("name", list(PARAPHRASES))
def test_paraphrases_inject_the_answer_where_typed_memories_exist(with_memories, project, name):
    prompt, _, _, (_, content, _) = PARAPHRASES[name]
    text = hook(project, prompt)
    assert content.split(";")[0].split(":")[0][:30] in text or cites(text, with_memories[name]), text


# --------------------------------------------------------------------------- item 7
def test_the_searcher_owns_retrieval_through_one_public_method(four, project):
    """``Searcher.candidates`` with one ``CandidateFilter``: the hook only judges (no private
    Searcher call in ``recall/prompt``)."""
    import ast
    from pathlib import Path

    from indexer.project import canonical_project
    from recall.search.searcher import CandidateFilter, Searcher

    here = canonical_project(str(project))
    s = Searcher()
    hits = s.candidates("stripe webhook signature", CandidateFilter(project=here))
    assert four["stripe"].session_id in {h.session_id for h in hits}
    assert any(h.reply for h in hits if h.role == "user")  # the exchange around each candidate comes along
    without = s.candidates(
        "stripe webhook signature", CandidateFilter(project=here, exclude_session=four["stripe"].session_id)
    )
    assert four["stripe"].session_id not in {h.session_id for h in without}
    assert s.candidates("stripe webhook signature", CandidateFilter(project="/elsewhere")) == []
    for path in Path(__file__).resolve().parents[2].joinpath("recall", "prompt").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        private = [
            n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("_read", "_hit", "_fill")
        ]
        assert not private, f"{path.name} calls the Searcher's private {private}"
