"""Issue 47 item 8: the raw path at chat-pool scale. In a project of tens of thousands of
messages chance matches are many and the same features mean less: the raw path's gate
(``hook.min_confidence``) rises with the size of the history the candidates were judged in,
and so does the lexical confidence a session found by meaning needs to join its picks. A
history of coding size keeps the gate as set."""

from __future__ import annotations

import pytest

from recall.core import config
from recall.core.settings import HookSettings
from recall.prompt import candidates as cand
from recall.prompt import context as rc
from recall.search import confidence as conf
from recall.search.hit import Hit
from tests.search.test_confidence import STRIPE_DECISION, history, payload  # noqa: F401 - fixture

HOOK = HookSettings(min_confidence=0.6, raw_limit=3, semantic_min_similarity=0.3, semantic_sessions=3)


def hit(session: str, confidence: float, history: int | None, similarity: float | None = None) -> Hit:
    h = Hit(session, f"u-{session}-{confidence}", "p", "/p", "2026-10-01T09:00:00Z", "assistant", "x", "x", 1.0)
    h.confidence, h.history, h.similarity = confidence, history, similarity
    return h


def test_the_gate_holds_as_set_up_to_ten_thousand_messages_then_rises_per_doubling():
    assert conf.raw_gate(0.6, None) == conf.raw_gate(0.6, 0) == 0.6
    assert conf.raw_gate(0.6, 1_200) == conf.raw_gate(0.6, conf.RAW_GATE_DOCS) == 0.6
    assert conf.raw_gate(0.6, 2 * conf.RAW_GATE_DOCS) == pytest.approx(0.6 + conf.RAW_GATE_STEP)
    pool = conf.raw_gate(0.6, 43_782)  # the benchmark's chat pool: 3,881 sessions in one project
    assert 0.7 < pool < 0.8
    assert conf.raw_gate(0.6, 10**9) == conf.RAW_GATE_MAX  # never out of reach
    assert conf.raw_gate(0.99, 10**9) == 0.99  # never below what the user set
    assert conf.raw_gate(0.2, 20_000) > 0.2  # a user's looser gate rises too


def test_a_hit_confident_enough_in_a_coding_project_is_not_in_a_chat_pool():
    small = cand.raw_decision([hit("a", 0.7, 1_200), hit("b", 0.5, 1_200)], HOOK)
    assert [h.session_id for h in small.hits] == ["a"] and small.gate == 0.6
    big = cand.raw_decision([hit("a", 0.7, 43_782), hit("b", 0.5, 43_782)], HOOK)
    assert big.hits == [] and big.gate == pytest.approx(conf.raw_gate(0.6, 43_782))
    strong = cand.raw_decision([hit("a", 0.9, 43_782)], HOOK)
    assert [h.session_id for h in strong.hits] == ["a"]
    # the model path's gate is the synthesis's to judge: unchanged
    assert len(cand.model_decision([hit("a", 0.3, 43_782)], HookSettings(model_min_confidence=0.25)).hits) == 1


def test_meaning_corroborates_the_raw_path_only_with_words_as_strong_at_that_size():
    for docs, joins in ((1_200, True), (43_782, False)):
        judged = [hit("a", 0.45, docs)]
        near = [hit("a", 0.0, None, similarity=0.6)]
        assert cand.may_corroborate(judged, [], HOOK) is joins
        _model, raw_extra = cand.semantic_picks(near, judged, [], [], HOOK)
        assert bool(raw_extra) is joins, docs
    judged = [hit("a", 0.7, 43_782)]  # words strong enough for the pool's floor, short of its gate
    _model, raw_extra = cand.semantic_picks([hit("a", 0.0, None, similarity=0.6)], judged, [], [], HOOK)
    assert [h.session_id for h in raw_extra] == ["a"] and cand.may_corroborate(judged, [], HOOK)


def test_the_hook_judges_by_the_projects_size_and_a_small_history_is_answered(history, project, monkeypatch):  # noqa: F811
    from recall.prompt.settings import hook_settings
    from recall.search.searcher import Searcher

    prompt = "what did we decide about stripe webhooks last time?"
    judged, _s = cand.judged_candidates(prompt, str(project), None, hook_settings(), Searcher())
    docs = {h.history for h in judged}
    assert len(docs) == 1 and 0 < docs.pop() < conf.RAW_GATE_DOCS  # the project's messages
    trace: dict = {}
    out = rc.build_context(payload(project, prompt), 10**10, trace=trace)
    assert out is not None and STRIPE_DECISION[:40] in out["hookSpecificOutput"]["additionalContext"]
    assert trace["gate"]["value"] == config.DEFAULTS["hook"]["min_confidence"]
    # the same history judged as if it were a chat pool's: the same hit no longer passes, and
    # the log says the gate it needed
    monkeypatch.setattr(conf, "RAW_GATE_DOCS", 1)
    monkeypatch.setattr(conf, "RAW_GATE_MAX", 0.999)
    trace = {}
    assert rc.build_context(payload(project, prompt), 10**10, trace=trace) is None
    assert trace["gate"]["value"] == 0.999
    assert trace["outcome"] == "nothing" and "under hook.min_confidence 1.00" in trace["why"]


def test_the_log_says_the_gate_was_raised_for_a_large_history():
    from recall.prompt.context import nothing_why

    assert nothing_why(0.7, HOOK, "raw", 0.76).endswith(
        "under hook.min_confidence 0.76 (raised from 0.60 in a history this large)"
    )
    assert nothing_why(0.5, HOOK, "raw", 0.6).endswith("under hook.min_confidence 0.60")
