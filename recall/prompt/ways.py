"""Which of four ways a prompt takes, so that the user waits for the model only where it pays.

* ``nothing``: no past session bears on the prompt (or it is trivial): the hook prints nothing.
* ``raw``: no model reads the candidates (none is set up, or ``hook.synthesize`` is off):
  the raw path's snippets, at once.
* ``wait``: the model reads the candidates and the prompt waits for its briefing. Only where
  Claude Code's first move is likely an answer rather than a tool call: a question about the
  past (``asks_about_past``) with a strong candidate (``strong``). When the model answers
  without calling a tool, the turn ends at once, and a briefing in the background would come
  too late to reach it.
* ``background``: every other prompt the model reads for. The hook's first line tells Claude
  Code to go on at once (``{"async": true, ...}``); the briefing joins the turn at its next
  model request (after the first tool call), or is dropped when the turn has ended by then
  (``recall.prompt.turns``): never attached to a later prompt.

``hook.background`` false: every model prompt waits, as before this was built.
"""

from __future__ import annotations

import re

from recall.core.settings import HookSettings

NOTHING, RAW, WAIT, BACKGROUND = "nothing", "raw", "wait", "background"
WAYS = (NOTHING, RAW, WAIT, BACKGROUND)

#: a semantic pick this near the prompt is a strong candidate (the raw path's own floor)
STRONG_SIMILARITY = 0.5

# a question that asks for work ("can you add a retry?", "could you fix the build?") is a
# task, and the main model's first move is a tool call
_ASKS_FOR_WORK = re.compile(
    r"^\W*(?:(?:can|could|would|will)\s+(?:you|u)|please|pls|let'?s|go\s+ahead|make\s+sure|"
    r"add|fix|make|write|create|implement|update|change|refactor|remove|delete|rename|run|build|"
    r"move|set\s+up|install|migrate|deploy|convert|generate|replace|bump|upgrade)\b",
    re.I,
)


def asks_about_past(prompt: str) -> bool:
    """Whether ``prompt`` asks something that past sessions may answer outright (a question,
    not a request for work)."""
    from recall.search.exchange import is_question

    text = (prompt or "").strip()
    return bool(text) and is_question(text) and not _ASKS_FOR_WORK.match(text)


def strong(hits: list, hook: HookSettings) -> bool:
    """Whether a candidate is strong: a lexical confidence at the raw path's own gate
    (``hook.min_confidence``), or a semantic pick at ``STRONG_SIMILARITY``."""

    gate = hook.min_confidence
    return any((getattr(h, "confidence", None) or 0.0) >= gate for h in hits) or any(
        (getattr(h, "similarity", None) or 0.0) >= STRONG_SIMILARITY for h in hits
    )


def model_way(prompt: str, hits: list, hook: HookSettings) -> str:
    """``wait`` or ``background`` for a prompt whose ``hits`` the model will read."""
    if not hook.background:
        return WAIT
    return WAIT if asks_about_past(prompt) and strong(hits, hook) else BACKGROUND
