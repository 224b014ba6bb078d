"""``/remember TEXT`` and ``recall remember TEXT``: a memory the user states, saved at once
(no model call): its type guessed from its words, and whether it is a standing instruction
(a rule for every future session rather than a fact) decided apart, so that such text can
go to the rules store where one exists."""

from __future__ import annotations

import re

from recall.memory import store

# the first matching type wins; "pattern" (conventions) when nothing matches
_TYPE_WORDS: tuple[tuple[str, re.Pattern], ...] = (
    (
        "gotcha",
        re.compile(
            r"\b(bug|breaks?|broke|fails?|failing|crash\w*|careful|beware|gotcha|pitfall|"
            r"workaround|flaky|watch out|doesn'?t work|does not work|error)\b",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(decided|decision|we chose|chose|picked|instead of|rather than|ruled out|"
            r"went with|trade-?off)\b",
            re.I,
        ),
    ),
    (
        "progress",
        re.compile(
            r"\b(done|finished|in progress|wip|next step|todo|to do|remaining|blocked|"
            r"shipped|merged)\b",
            re.I,
        ),
    ),
    (
        "context",
        re.compile(
            r"\b(deadline|due|customer|client|team|owner|meeting|release date|by (monday|"
            r"tuesday|wednesday|thursday|friday)|this (week|month|quarter))\b",
            re.I,
        ),
    ),
    (
        "architecture",
        re.compile(
            r"\b(architecture|component|module|service|lives in|data flow|schema|"
            r"database|queue|endpoint|layer)\b",
            re.I,
        ),
    ),
)

_INSTRUCTION = re.compile(
    r"^\s*(always|never|don'?t|do not|please (always|never|don'?t|do not|use|prefer)|prefer|avoid|make sure|"
    r"use\b|run\b|keep\b|from now on|when(ever)? you|before (you )?(commit|push|merge)|you (must|should))"
    r"|\b(must always|must never|should always|should never|from now on)\b",
    re.I,
)


def is_standing_instruction(text: str) -> bool:
    """Whether ``text`` tells Claude how to behave from now on ("always run the linter before
    committing", "never push to main") rather than stating a fact about the project."""
    return bool(_INSTRUCTION.search(text or ""))


def guess_type(text: str) -> str:
    for mtype, words in _TYPE_WORDS:
        if words.search(text):
            return mtype
    return "pattern"


def remember(project: str, text: str, mtype: str | None = None, tags=()) -> tuple[store.Outcome, store.State]:
    """Save ``text`` as a memory of ``project`` now (deduplicated like any other). Given a
    standing instruction, it is kept as a "pattern" (a convention); ``recall remember`` turns
    those into rules before it gets here. Returns the outcome and the state, for the
    caller's briefing and index update."""
    kind = mtype or ("pattern" if is_standing_instruction(text) else guess_type(text))
    with store.transaction(project) as state:
        out = store.add_memory(state, kind, text, tags, origin="manual")
    return out, state
