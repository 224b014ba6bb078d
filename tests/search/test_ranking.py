"""Ranking ideas of issue 18: a session scores by its top few messages, a message by the
candidates beside it (neighbour context)."""

from __future__ import annotations

from recall.search.searcher import Candidate, _group_by_session, _with_neighbours


def cand(score, group, ts, kind="message"):
    return Candidate(score, kind, group, address=(group, ts), ts=ts)


def test_a_session_discussing_the_question_in_several_messages_outranks_one_mention():
    def ranked():
        return [cand(10.0, "once", 0), cand(9.0, "often", 0), cand(6.0, "often", 60), cand(5.0, "often", 120)]

    grouped = _group_by_session(ranked(), weights=(1.0, 0.5, 0.25))
    assert [c.group for c in grouped] == ["often", "once"]
    assert grouped[0].address == ("often", 0)  # shown by its best message
    assert grouped[0].score == 9.0 + 0.5 * 6.0 + 0.25 * 5.0
    # one hit per session by its best message alone: the single mention wins
    assert [c.group for c in _group_by_session(ranked(), weights=(1.0,))] == ["once", "often"]


def test_a_message_gains_from_the_candidates_beside_it_in_its_session():
    question = cand(10.0, "s1", 1000)
    answer = cand(6.0, "s1", 1030)  # said right after a matching question
    alone = cand(6.5, "s2", 1000)  # as good on its own, nothing beside it
    far = cand(6.4, "s1", 1000 + 3600)  # same session, an hour later: not a neighbour
    ranked = _with_neighbours([question, alone, far, answer], weight=0.1, seconds=120)
    assert [c.address for c in ranked] == [question.address, answer.address, alone.address, far.address]
    assert answer.score == 6.0 + 0.1 * 10.0 and far.score == 6.4 and alone.score == 6.5


def test_memories_are_not_neighbours():
    mem = cand(10.0, "s1", 1000, kind="memory")
    msg = cand(5.0, "s1", 1010)
    _with_neighbours([mem, msg], weight=0.1, seconds=120)
    assert msg.score == 5.0
