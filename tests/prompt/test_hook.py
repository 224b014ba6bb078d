"""The UserPromptSubmit hook: trivial prompts, search scope and floor, the block's format
and size, synthesis through the Messages API stand-in (and its failures), the deadline,
the cache, the service path, and what the raw path imports."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.ingest import index_all
from recall.core import config
from recall.hooks import dispatch
from recall.llm import errors, synthesis, usage
from recall.prompt import candidates, trivial
from recall.prompt import context as rc
from recall.prompt.settings import hook_settings
from recall.search.hit import Hit
from tests.support.cli import cli
from tests.support.factory import Session
from tests.support.standin import error, hang, text

QUESTION = "which database did we choose for the job queue?"
DECISION = (
    "We decided to use SQLite in WAL mode for the job queue, because Postgres was overkill "
    "for a single host and Redis lost jobs on restart."
)
SYNTH = "- Job queue store: SQLite in WAL mode; Postgres overkill, Redis lost jobs [2026-11-03 session abcdef12]"


@pytest.fixture
def indexed(claude_projects, project):
    """Two past sessions of ``project`` and one of another project, indexed."""
    s1 = Session(cwd=str(project), start=datetime(2026, 11, 3, 10, tzinfo=timezone.utc))
    s1.user(QUESTION)
    s1.assistant(DECISION)
    tid = s1.tool_use("Edit", {"file_path": f"{project}/queue/store.py"})
    s1.tool_result(tid, "The file has been updated.")
    s1.user("the retry backoff test is flaky again")
    s1.assistant(
        "Tried freezegun but it broke asyncio.sleep; switched to an injected clock. "
        "Unresolved: clock skew on the CI runner."
    )
    s1.write(claude_projects)
    s2 = Session(cwd=str(project), start=datetime(2026, 11, 5, 10, tzinfo=timezone.utc))
    for i in range(6):
        s2.user(f"rename the helper number {i} in utils")
        s2.assistant(f"Renamed helper {i}.")
    s2.write(claude_projects)
    other = Session(cwd="/elsewhere/blog", start=datetime(2026, 11, 4, 10, tzinfo=timezone.utc))
    other.user("which static site generator for the blog? also the job queue database?")
    other.assistant("We chose Hugo for the blog; the job queue database there is MySQL.")
    other.write(claude_projects)
    index_all()
    return {"s1": s1, "s2": s2, "other": other}


def payload(project, prompt=QUESTION, session_id="current-session", **extra):
    return {
        "session_id": session_id,
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **extra,
    }


def soon() -> float:
    """A deadline far enough away for a loaded machine (the deadline tests set their own)."""
    return time.time() + 60


def context_of(out) -> str:
    assert out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return out["hookSpecificOutput"]["additionalContext"]


def run_hook_process(data, env=None, timeout=60, args=("hook", "user-prompt-submit"), extra=()):
    """The console script as Claude Code runs it: JSON on stdin, JSON (or nothing) on stdout."""
    stdin = data if isinstance(data, (str, bytes)) else json.dumps(data)
    return subprocess.run(
        [sys.executable, *extra, "-m", "recall.entry", *args],
        input=stdin,
        capture_output=True,
        text=isinstance(stdin, str),
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def set_hook_config(**values):
    for key, value in values.items():
        config.set_value(f"hook.{key}", value)


# ------------------------------------------------------------------------------ trivial prompts
@pytest.mark.parametrize(
    "prompt",
    [
        "",
        "   ",
        "short one",
        "yes",
        "OK!",
        "Continue.",
        "go ahead",
        "Thanks!!",
        "LGTM",
        "thank you so much!",
        "ok, thanks — continue please",
        "yes please go ahead and do it",
        "/compact focus on the tests",
        "/review",
        "12345678901234567",
        "  3.14159265358979  ",
        "/home/dev/app/src/lib/stripe_webhook.py",
        "'./src/components/Button/index.tsx:42:7'",
        "C:\\Users\\dev\\project\\main.py",
        "~/projects/recall/hooks/dispatch.py ~/projects/recall/README.md",
        None,
        42,
        ["a list"],
    ],
)
def test_trivial_prompts_are_skipped(prompt):
    assert trivial.is_trivial(prompt), prompt


@pytest.mark.parametrize(
    "prompt",
    [
        QUESTION,
        "why is the retry backoff test flaky?",
        "continue with the job queue migration to sqlite",
        "/home/dev/app/main.py crashes on start, why?",
        "ok so what did we decide about auth tokens",
        "数据库的连接池配置是怎么决定的？我们之前讨论过",
    ],
)
def test_real_questions_are_not_trivial(prompt):
    assert not trivial.is_trivial(prompt), prompt


def test_skip_list_and_minimum_are_configurable():
    set_hook_config(skip=["ship the release now"], min_chars=4)
    hook = hook_settings()
    assert trivial.trivial_reason("Ship the release now!", hook) == "acknowledgement"
    assert trivial.trivial_reason("yes thanks", hook) is None  # the default list was replaced
    assert trivial.trivial_reason("why?", hook) is None
    assert trivial.trivial_reason("why", hook) == "short"


def test_bad_config_values_fall_back_to_defaults():
    config.save(
        {"hook": {"max_chars": "huge", "budget_seconds": -3, "scope": "galaxy", "limit": 10**9, "synthesize": "yes"}}
    )
    hook = hook_settings()
    defaults = config.DEFAULTS["hook"]
    assert hook["max_chars"] == defaults["max_chars"]
    assert hook["budget_seconds"] >= 0.5 and hook["scope"] == "project"
    assert hook["limit"] == 50 and hook["synthesize"] is True


# ------------------------------------------------------------------------------ search, floor, format
def test_finds_the_decision_in_this_project_only(indexed, project):
    out = rc.build_context(payload(project), soon())
    ctx = context_of(out)
    assert ctx.startswith("<recalled-context>\n") and ctx.endswith("\n</recalled-context>")
    assert "SQLite in WAL mode" in ctx
    assert "Hugo" not in ctx and "MySQL" not in ctx  # another project
    assert f"[2026-11-03 session {indexed['s1'].session_id[:8]}]" in ctx
    assert "may be outdated" in ctx.splitlines()[1]
    assert "rename the helper" not in ctx  # below the floor


def test_scope_all_reaches_other_projects(indexed, project):
    # the other project's answer is about its own job queue: below the default confidence
    set_hook_config(scope="all", min_confidence=0.02)
    ctx = context_of(rc.build_context(payload(project), soon()))
    assert "MySQL" in ctx and "SQLite" in ctx


def test_current_session_is_left_out(indexed, project):
    sid = indexed["s1"].session_id
    assert rc.build_context(payload(project, session_id=sid), soon()) is None


def test_unrelated_prompt_injects_nothing(indexed, project):
    assert rc.build_context(payload(project, "how do I bake sourdough bread at home?"), soon()) is None
    assert rc.build_context(payload(project, "what is going on with all of this now?"), soon()) is None


def test_a_prompt_about_something_never_discussed_injects_nothing(indexed, project, claude_projects):
    s = Session(cwd=str(project))
    s.user("explain how the job queue works in this codebase")
    s.assistant("The worker polls the queue table every second.")
    for topic in (
        "login form",
        "css grid",
        "router",
        "cache layer",
        "config loader",
        "cli parser",
        "logger",
        "date helpers",
        "upload handler",
        "search box",
    ):
        s.user(f"explain how the {topic} works")
        s.assistant(f"The {topic} works like this: it reads its input and returns a result.")
    s.write(claude_projects)
    index_all()
    # "explain ... works" matches, but the subject (quicksort) appears in no past session
    assert rc.build_context(payload(project, "can you explain how quicksort works?"), soon()) is None
    assert context_of(rc.build_context(payload(project, "can you explain how the job queue works?"), soon()))


def test_noise_tokens_and_long_prompts_still_recall(indexed, project):
    noise = [
        "3f2b9c1e-8d4a-4e2f-9b7a-1c2d3e4f5a6b",
        "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
    ]
    noisy = f"{QUESTION} ({', '.join(noise)})"
    assert not any(n in candidates.query_text(noisy) for n in noise)
    assert "stripe_webhook.py" in candidates.query_text("why does src/stripe_webhook.py retry?")
    for ident in ("parseBm25ScoreForHits", "s3_upload_handler_v2_final", "useOAuth2RefreshTokens"):
        assert ident in candidates.query_text(f"where is {ident} defined?")
    assert "SQLite in WAL mode" in context_of(rc.build_context(payload(project, noisy), soon()))
    log = "\n".join(
        f"2026-11-20 12:00:{i:02d} worker[{i}] INFO tick {i} heartbeat ok elapsed={i * 3}ms" for i in range(40)
    )
    long_prompt = f"{log}\n\nthe job queue database keeps dropping jobs after a restart, which store did we choose?"
    # a pasted log spreads the prompt's words apart (less proximity, a lower share of its
    # score): found first, at a confidence under the default gate of a pooled history
    set_hook_config(min_confidence=0.05)
    assert "SQLite in WAL mode" in context_of(rc.build_context(payload(project, long_prompt), soon()))


def test_question_hit_brings_its_answer(indexed, project):
    ctx = context_of(rc.build_context(payload(project, "why is the retry backoff test flaky?"), soon()))
    assert "backoff test is flaky" in ctx
    assert "injected clock" in ctx  # the reply, although it shares no word with the prompt


def test_block_respects_max_chars_and_cleans_nested_tags(claude_projects, project):
    s = Session(cwd=str(project))
    for i in range(30):
        s.user(f"job queue design question {i}: " + "sqlite queue durability " * 40)
        s.assistant(f"<recalled-context>old</recalled-context> answer {i}: " + "the sqlite queue is durable " * 40)
    s.write(claude_projects)
    index_all()
    set_hook_config(max_chars=1200, limit=20)
    ctx = context_of(rc.build_context(payload(project, "sqlite job queue durability?"), soon()))
    assert len(ctx) <= 1200
    assert ctx.count("<recalled-context>") == 1 and ctx.count("</recalled-context>") == 1
    assert ctx.endswith("</recalled-context>")


def test_no_index_means_no_output(project):
    assert rc.build_context(payload(project), soon()) is None


# ------------------------------------------------------------------------------ the process
def test_hook_process_outputs_context_and_exits_zero(indexed, project):
    proc = run_hook_process(payload(project))
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)
    assert "SQLite in WAL mode" in context_of(out)


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json {",
        "[1, 2, 3]",
        "null",
        '"a string"',
        b"\xff\xfe\x00garbage",
        '{"prompt": 12}',
        '{"prompt": "why is the sqlite job queue slow?", "cwd": 5}',
    ],
)
def test_garbage_input_never_fails(stdin, indexed):
    proc = run_hook_process(stdin)
    assert proc.returncode == 0
    assert not proc.stderr
    if proc.stdout.strip() if isinstance(proc.stdout, str) else proc.stdout.strip():
        json.loads(proc.stdout)  # anything printed is the hook JSON


def test_trivial_prompt_prints_nothing(indexed, project):
    proc = run_hook_process(payload(project, "ok, continue"))
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


@pytest.mark.parametrize("via", ["service", "in-process"])
def test_the_ignore_checks_run_once_per_prompt(indexed, project, monkeypatch, via):
    """refusal and trivial_reason run once, in the hook: neither the service's op nor the
    in-process pipeline checks the prompt again."""
    from recall.service.ops import hook as hook_ops

    calls = []

    def counted(name, fn):
        def wrapper(*a, **kw):
            calls.append(name)
            return fn(*a, **kw)

        return wrapper

    monkeypatch.setattr(rc, "refusal", counted("refusal", rc.refusal))
    monkeypatch.setattr(rc, "trivial_reason", counted("trivial_reason", rc.trivial_reason))

    def service_context(args, deadline, trace):  # the op, answered in this process
        if via == "in-process":
            return False, None
        out = hook_ops.hook_context(dict(args, _budget=30.0))
        trace.update(out.pop("_trace"))
        return True, out or None

    monkeypatch.setattr(rc, "service_context", service_context)
    emitted = []
    rc.run_hook(payload(project), time.time() + 30, lambda out: emitted.append(out) or True)
    assert "SQLite in WAL mode" in context_of(emitted[0])
    assert sorted(calls) == ["refusal", "trivial_reason"]
    calls.clear()  # a caller that did not screen the prompt (a direct op call) still gets both checks
    assert hook_ops.hook_context(payload(project, "ok, continue")) == {"_trace": {"outcome": "trivial", "why": "short"}}
    assert sorted(calls) == ["refusal", "trivial_reason"]


def test_unknown_hook_name_says_what_to_do():
    proc = run_hook_process("{}", args=("hook", "post-tool-use"))
    assert proc.returncode == 0 and proc.stdout == ""
    assert "recall setup" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_unexpected_error_is_logged_not_shown(indexed, project, monkeypatch, capsys):
    def boom(_payload, *_a, **_k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(rc, "run_hook", boom)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload(project)).encode())))
    monkeypatch.setattr(dispatch, "_emitted", False)
    assert dispatch.run_hook("user-prompt-submit", []) == 0
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    from recall.core import log

    assert "kaboom" in log.log_file().read_text()


def test_capture_events_route_to_the_capture_module(monkeypatch, capsys):
    import types

    calls = []
    fake = types.ModuleType("recall.hooks.capture")
    for fn in ("stop", "pre_compact", "session_end", "session_start"):
        setattr(
            fake,
            fn,
            (
                lambda name: (
                    lambda p: (
                        calls.append((name, p))
                        or (
                            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "x"}}
                            if name == "session_start"
                            else None
                        )
                    )
                )
            )(fn),
        )
    monkeypatch.setitem(sys.modules, "recall.hooks.capture", fake)
    for name in ("stop", "pre-compact", "session-end", "session-start"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"session_id": "s1"}')))
        monkeypatch.setattr(dispatch, "_emitted", False)
        assert dispatch.run_hook(name, []) == 0
    assert [c[0] for c in calls] == ["stop", "pre_compact", "session_end", "session_start"]
    assert all(c[1] == {"session_id": "s1"} for c in calls)
    assert json.loads(capsys.readouterr().out)["hookSpecificOutput"]["additionalContext"] == "x"


def test_missing_capture_module_exits_silently(monkeypatch):
    monkeypatch.setitem(dispatch.HANDLERS, "stop", ("recall.hooks.not_installed_capture", "stop"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    assert dispatch.run_hook("stop", []) == 0


def test_raw_path_imports_no_heavy_module(indexed, project):
    """Process start to output without a key: no anthropic, mcp, typer, rich, pydantic, httpx, nor the
    team sync's psycopg (tests/team/test_team.py runs it again in a home that joined a team)."""
    proc = run_hook_process(payload(project), extra=("-X", "importtime"))
    assert proc.returncode == 0
    assert "SQLite in WAL mode" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "tantivy" in imported and "recall.prompt.context" in imported  # the probe sees imports
    heavy = {
        m
        for m in imported
        if m.split(".")[0]
        in ("anthropic", "mcp", "typer", "rich", "click", "pydantic", "httpx", "httpx2", "psycopg", "psycopg_binary")
        or m.startswith(("recall.cli", "recall.team", "recall.ui"))
        or m in ("http.server", "webbrowser")
    }
    assert not heavy, sorted(heavy)
    # with no rule file anywhere, the rules' matcher, store and RE2 are not even imported
    assert not {m for m in imported if m.startswith(("recall.rules.", "re2")) and m != "recall.rules.files"}


# ------------------------------------------------------------------------------ synthesis
@pytest.fixture
def api(standin, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    # importing the SDK alone can take seconds on a loaded machine: tests that expect a
    # synthesis give it room (the deadline tests set their own budget)
    set_hook_config(budget_seconds=60)
    return standin


def test_synthesis_through_the_stand_in(indexed, project, api):
    api.script(text(SYNTH))
    secret = "sk-ant-api03-" + "A1b2C3d4E5f6" * 8
    prompt = f"{QUESTION} (my key is {secret})"
    proc = run_hook_process(payload(project, prompt))
    assert proc.returncode == 0, proc.stderr
    ctx = context_of(json.loads(proc.stdout))
    assert SYNTH in ctx and ctx.startswith("<recalled-context>")
    reqs = api.messages_requests()
    assert len(reqs) == 1
    req = reqs[0]
    assert req["model"] == config.DEFAULT_MODEL and "haiku" in req["model"]
    body = json.dumps(req)
    assert secret not in body and "redacted" in body  # the prompt was redacted before it left
    assert "SQLite in WAL mode" in body and "Hugo" not in body
    system = req["system"] if isinstance(req["system"], str) else json.dumps(req["system"])
    for asked in ("decisions", "rationale", "failed", "file paths", "warnings", "unresolved", "ONLY"):
        assert asked in system
    assert f"[2026-11-03 session {indexed['s1'].session_id[:8]}]" in body
    spent = usage.usage_summary()
    assert spent["calls"] == 1 and spent["by_purpose"] == {"recall": 1}

    # the same hits again, in another conversation (this one has them already): answered from
    # the cache, no second request
    proc = run_hook_process(payload(project, prompt, session_id="another-session"))
    assert SYNTH in context_of(json.loads(proc.stdout))
    assert len(api.messages_requests()) == 1
    cached = list(synthesis.cache_dir().iterdir())
    assert cached and all((f.stat().st_mode & 0o777) == 0o600 for f in cached)


def test_the_synthesis_cache_keys_on_the_prompt_and_the_hits(indexed, project, api):
    """Two prompts with the same candidates get a briefing each (a NONE for one is no NONE for
    the other); the same prompt again is answered from the cache."""
    from recall.prompt.candidates import find_hits

    hits = find_hits(QUESTION, str(project), "now", path="model")
    assert hits
    api.script(text("NONE"), text(SYNTH))
    assert synthesis.synthesize_recall("how do we run the linter before a commit?", hits, timeout=30) == ""
    assert synthesis.synthesize_recall(QUESTION, hits, timeout=30) == SYNTH
    assert synthesis.synthesize_recall(QUESTION, hits, timeout=30) == SYNTH  # cached
    assert synthesis.synthesize_recall("How do we  run the linter before a commit?", hits, timeout=30) == ""
    assert len(api.messages_requests()) == 2


def test_model_setting_is_used(indexed, project, api):
    config.set_value("model", "claude-haiku-9-test")
    api.script(text(SYNTH))
    context_of(rc.build_context(payload(project), soon()))
    assert api.messages_requests()[0]["model"] == "claude-haiku-9-test"


def test_model_answering_none_injects_nothing(indexed, project, api):
    api.script(text("NONE"))
    assert rc.build_context(payload(project), soon()) is None


@pytest.mark.parametrize("reply", [error(500, "boom", should_retry=False), error(529, "overloaded"), text("   ")])
def test_model_failure_falls_back_to_raw_snippets(indexed, project, api, reply):
    api.script(reply)
    proc = run_hook_process(payload(project))
    assert proc.returncode == 0 and not proc.stderr
    ctx = context_of(json.loads(proc.stdout))
    assert "SQLite in WAL mode" in ctx and "session " in ctx
    assert api.messages_requests()  # it did try
    from recall.core import log

    assert "raw snippets" in log.log_file().read_text()


def test_hanging_model_gets_raw_snippets_before_the_deadline(indexed, project, api):
    set_hook_config(budget_seconds=3)
    api.script(hang(60, text(SYNTH)))
    started = time.monotonic()
    proc = run_hook_process(payload(project), timeout=50)
    took = time.monotonic() - started
    assert proc.returncode == 0 and not proc.stderr
    ctx = context_of(json.loads(proc.stdout))
    assert "SQLite in WAL mode" in ctx and SYNTH not in ctx
    assert took < 50  # it gave up on the model instead of waiting for it


WORK = "add a retry with backoff to the job queue store"


@pytest.fixture
def searches(monkeypatch):
    """Every search the prompt hook makes of the past sessions (``judged_candidates``)."""
    calls = []
    real = candidates.judged_candidates

    def recording(prompt, *args, **kwargs):
        calls.append(prompt)
        return real(prompt, *args, **kwargs)

    monkeypatch.setattr(candidates, "judged_candidates", recording)
    return calls


def test_a_prompt_that_asks_for_work_goes_on_before_it_is_searched(indexed, project, api, searches):
    """Issue 47: with a model backend, a prompt that asks for work takes the background way at
    once: nothing is searched while the prompt is held; the search, the gate and the model's
    reading come after it has gone on, and give what they gave when the prompt waited."""
    api.script(text(SYNTH))
    trace: dict = {}
    out, pending = rc.plan_context(payload(project, WORK), trace=trace)
    assert out is None and pending is not None and pending.way == "background"
    assert trace["way"] == "background" and trace["path"] == "model"
    assert searches == [] and api.messages_requests() == []
    assert pending.fallback() is None  # nothing known to fall back on yet
    briefing = pending.deliver(soon())
    assert searches == [WORK]
    assert trace["way"] == "background"
    waited_trace: dict = {}
    set_hook_config(background=False, budget_seconds=60)
    api.script(text(SYNTH))
    waited = rc.build_context(payload(project, WORK, session_id="another-session"), soon(), trace=waited_trace)
    assert waited_trace["way"] == "wait"
    assert (briefing is None) == (waited is None)
    assert trace["outcome"] == waited_trace["outcome"] and trace.get("hits") == waited_trace.get("hits")


def test_a_new_task_in_the_background_ends_in_nothing_without_a_call(indexed, project, api, searches):
    trace: dict = {}
    out, pending = rc.plan_context(payload(project, "write a limerick about autumn leaves"), trace=trace)
    assert out is None and pending.way == "background" and searches == []
    assert pending.deliver(soon()) is None
    assert len(searches) == 1 and api.messages_requests() == []
    assert trace["outcome"] == "nothing" and trace["way"] == "background" and trace["why"]


def test_a_question_is_searched_before_its_way_is_chosen(indexed, project, api, searches):
    api.script(text(SYNTH))
    trace: dict = {}
    out, pending = rc.plan_context(payload(project), trace=trace)
    assert searches == [QUESTION] and pending is not None and pending.way == "wait"
    assert SYNTH in context_of(pending.deliver(soon()))


def test_a_question_about_the_past_is_read_against_the_sessions_its_words_rank_first(indexed, project, api):
    """Issue 47: a paraphrase of a past answer shares few words with it, so its confidence sits
    below every gate, yet its words still rank the answering session first. A question about
    the past is read against the top sessions whatever their confidence (the model answers NONE
    when none bears on it); a request for work still needs the gates."""
    set_hook_config(
        budget_seconds=60,
        min_confidence=0.99,
        model_min_confidence=0.99,
        ask_min_confidence=0.99,
        ask_min_similarity=0.99,
    )
    api.script(text(SYNTH))
    trace: dict = {}
    out, pending = rc.plan_context(payload(project, "why did the clock mocking library get dropped?"), trace=trace)
    assert out is None and pending is not None, trace
    assert indexed["s1"].session_id in {h.session_id for h in pending.hits}
    assert "other" not in {h.session_id for h in pending.hits}  # this project's sessions only
    assert SYNTH in context_of(pending.deliver(soon()))
    trace = {}
    out, pending = rc.plan_context(payload(project, "swap the clock mocking library in the backoff test"), trace=trace)
    assert pending is None or pending.deliver(soon()) is None
    assert trace["outcome"] == "nothing" and len(api.messages_requests()) == 1


def test_question_picks_take_the_top_sessions_by_score_once_each():
    def hit(session, score):
        return Hit(session, f"{session}-{score}", "p", "/p", "", "assistant", "x", "x", score)

    judged = [hit("a", 1.0), hit("b", 3.0), hit("b", 2.5), hit("c", 2.0), hit("d", 1.5), hit("e", 0.5)]
    assert [h.uuid for h in candidates.question_picks(judged, [])] == ["b-3.0", "c-2.0", "d-1.5"]
    assert [h.session_id for h in candidates.question_picks(judged, [hit("c", 9.0)], frozenset({"d"}))] == ["b", "a"]


def test_without_a_model_a_work_prompt_is_searched_at_once(indexed, project, standin, monkeypatch, searches):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    trace: dict = {}
    out, pending = rc.plan_context(payload(project, "add a retry to the SQLite WAL job queue store"), trace=trace)
    assert pending is None and len(searches) == 1 and trace["path"] == "raw"


def test_no_key_means_raw_snippets_and_no_request(indexed, project, standin, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    ctx = context_of(rc.build_context(payload(project), soon()))
    assert "SQLite in WAL mode" in ctx
    assert standin.messages_requests() == []


def test_key_from_the_config_file(indexed, project, standin, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    set_hook_config(budget_seconds=60)
    config.set_value("api_key", "sk-from-config")
    standin.script(text(SYNTH))
    assert SYNTH in context_of(rc.build_context(payload(project), soon()))
    headers = standin.messages_requests()[0]["_headers"]
    assert "sk-from-config" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_synthesize_off_never_calls_the_model(indexed, project, api):
    set_hook_config(synthesize=False)
    assert "SQLite" in context_of(rc.build_context(payload(project), soon()))
    assert api.messages_requests() == []


def test_answer_question_contract(indexed, project, api):
    from recall.search.run import run_search

    hits = run_search(QUESTION, messages=True, project=project)
    api.script(text("SQLite in WAL mode [2026-11-03 session abcdef12]"))
    answer = synthesis.answer_question(QUESTION, hits)
    assert answer.startswith("SQLite in WAL mode")
    req = api.messages_requests()[-1]
    assert QUESTION in json.dumps(req) and req["model"] == config.DEFAULT_MODEL
    assert synthesis.answer_question(QUESTION, hits) == answer  # cached
    assert len(api.messages_requests()) == 1
    api.script(error(500, "down", should_retry=False))
    with pytest.raises(errors.ModelError):
        synthesis.answer_question("something else about the queue?", hits, timeout=5)


def test_answer_question_without_key_raises_nokey(indexed):
    with pytest.raises(errors.NoKey):
        synthesis.answer_question(QUESTION, [])


def test_recall_query_synthesizes_with_a_key(indexed, project, api, capsys):
    api.script(text("You chose SQLite in WAL mode [2026-11-03 session abcdef12]."))
    code, out, err = cli(capsys, "--project", str(project), QUESTION)
    assert code == 0, err
    assert out.startswith("You chose SQLite in WAL mode")
    assert "Sources:" in out and indexed["s1"].session_id[:8] in out
    code, out, _ = cli(capsys, "--raw", "--project", str(project), QUESTION)
    assert "You chose" not in out and len(api.messages_requests()) == 1


def test_recall_query_without_key_says_how_to_enable(indexed, project, capsys):
    code, out, err = cli(capsys, "--project", str(project), QUESTION)
    assert code == 0
    assert indexed["s1"].session_id[:8] in out
    assert "Synthesis is off" in out and "recall config set api_key" in out
    code, out, _ = cli(capsys, "--raw", "--project", str(project), QUESTION)
    assert "Synthesis is off" not in out


# ------------------------------------------------------------------------------ the service path
@pytest.fixture
def service(indexed):
    import logging

    from recall.service import registry as ops  # noqa: F401  (registers hook_context)
    from recall.service.socket_server import SocketServer

    assert "recall.service.ops.hook" in ops.OP_MODULES
    assert ops.load_modules() == []  # as the server does at start (a test run alone has not yet)
    calls = []
    real = ops.OPS["hook_context"]

    def recording(args):
        calls.append(args)
        return real(args)

    ops.OPS["hook_context"] = recording
    server = SocketServer(logging.getLogger("test-service"))
    server.start()
    try:
        yield calls
    finally:
        server.stop()
        ops.OPS["hook_context"] = real


def test_hook_hands_the_work_to_the_service(service, project):
    proc = run_hook_process(payload(project))
    assert proc.returncode == 0 and not proc.stderr
    assert "SQLite in WAL mode" in context_of(json.loads(proc.stdout))
    assert len(service) == 1
    assert service[0]["prompt"] == QUESTION and 0 < service[0]["_budget"] < 5
    # trivial prompts never reach it
    proc = run_hook_process(payload(project, "thanks!"))
    assert proc.stdout == "" and len(service) == 1
    # the service path imports neither tantivy nor the model SDK in the hook process
    proc = run_hook_process(payload(project), extra=("-X", "importtime"))
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "recall.core.service_client" in imported
    assert not {m for m in imported if m.split(".")[0] in ("tantivy", "anthropic", "mcp", "typer", "rich")}


def test_service_op_synthesizes_and_respects_budget(service, project, api):
    from recall.service import registry as ops

    api.script(hang(30, text(SYNTH)))
    started = time.monotonic()
    out = ops.OPS["hook_context"](dict(payload(project), _budget=1.5))
    assert "SQLite in WAL mode" in context_of(out) and SYNTH not in context_of(out)
    assert time.monotonic() - started < 25
    api.script(text(SYNTH))
    out = ops.OPS["hook_context"](dict(payload(project), _budget=10))
    assert SYNTH in context_of(out)


def test_the_service_keeps_a_work_prompt_before_searching_it(service, project, api, searches):
    from recall.service import registry as ops

    api.script(text(SYNTH))
    kept = ops.OPS["hook_context"](dict(payload(project, WORK), _budget=10, _ways=True, _screened=True))
    assert isinstance(kept.get("_background"), str) and kept["_trace"]["way"] == "background"
    assert searches == [] and api.messages_requests() == []
    done = ops.OPS["hook_deliver"]({"ticket": kept["_background"], "_budget": 10})
    assert searches == [WORK] and done["_trace"]["way"] == "background" and done["_trace"]["outcome"]


def test_broken_service_falls_back_in_process(indexed, project, tmp_path):
    """A socket that accepts and never answers: the hook still answers, in-process."""
    import socket

    from recall.core import service_client as client

    set_hook_config(budget_seconds=2)
    addr = client.address()
    Path(addr).parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(addr)
    sock.listen(5)
    try:
        proc = run_hook_process(payload(project), timeout=30)
    finally:
        sock.close()
        os.unlink(addr)
    assert proc.returncode == 0
    # either the in-process fallback made it in time, or the watchdog printed nothing:
    # never an error, never a hang past the budget
    if proc.stdout:
        assert "SQLite" in context_of(json.loads(proc.stdout))


def test_a_hung_service_is_skipped_for_a_while(indexed, project, monkeypatch):
    """Issue 17 (low): a hung service cost every prompt the whole wait; after one hang the
    next prompts go in-process at once (a short circuit breaker), and it is tried again later."""
    import logging

    from recall.prompt import context
    from recall.service import registry as ops
    from recall.service.socket_server import SocketServer

    calls = []
    ops.load_modules()
    monkeypatch.setitem(ops.OPS, "hook_context", lambda args: calls.append(1) or time.sleep(3) or None)
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    try:
        answered, _ = context.service_context(payload(project), time.time() + 1.5)
        assert not answered and len(calls) == 1 and context.breaker_open()
        answered, _ = context.service_context(payload(project), time.time() + 1.5)
        assert not answered and len(calls) == 1  # not asked again: the prompt went in-process at once
        old = time.time() - context.BREAKER_SECONDS - 1
        os.utime(context._breaker_path(), (old, old))
        monkeypatch.setitem(ops.OPS, "hook_context", lambda args: calls.append(2) or None)
        answered, out = context.service_context(payload(project), time.time() + 1.5)
        assert answered and out is None and calls == [1, 2] and context.breaker_open() is None
    finally:
        srv.stop()
