"""Which prompts are not worth a search: too short, a slash command, a number, a bare path,
or an acknowledgement ("ok thanks, go ahead"). ``trivial_reason`` says why; the hook skips
such a prompt before it imports anything heavy.

``STOPWORDS`` (words that say nothing about what a prompt is about) also decide which of a
prompt's terms count as informative (``recall.prompt.candidates``).
"""

from __future__ import annotations

import re

from recall.prompt.settings import HookSettings, hook_settings
from recall.search.words import PROMPT_STOPWORDS as STOPWORDS  # stdlib only

STOP_WORDS = frozenset(STOPWORDS)

_FILLER = {
    "please",
    "pls",
    "and",
    "then",
    "now",
    "just",
    "so",
    "you",
    "it",
    "that",
    "very",
    "much",
    "a",
    "lot",
    "all",
    "again",
    "for",
    "the",
    "this",
    "yes",
    "sir",
    "mate",
    "ahead",
    "on",
}

_SLASH = re.compile(r"^/[A-Za-z][\w:.\-]*(?:\s|$)")
_NUMBER = re.compile(r"^[\s\d.,:;+\-#%()/*=x]+$")
_PATH_TOKEN = re.compile(r"^(?:file://)?(?:[A-Za-z]:)?[~.]{0,2}[/\\]?[\w.@+~%\-]*(?:[/\\][\w.@+~%\-]*)+(?::\d+)*$")
_PUNCT = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    return _SPACES.sub(" ", _PUNCT.sub(" ", text.lower())).strip()


def _is_acknowledgement(prompt: str, skip) -> bool:
    words = normalize(prompt).split()
    if not words:
        return True
    phrases = sorted({tuple(normalize(s).split()) for s in skip if normalize(s)}, key=len, reverse=True)
    i = 0
    matched = False
    while i < len(words):
        for ph in phrases:
            if tuple(words[i : i + len(ph)]) == ph:
                i += len(ph)
                matched = True
                break
        else:
            if words[i] in _FILLER:
                i += 1
                continue
            return False
    return matched


def trivial_reason(prompt, hook: HookSettings | None = None) -> str | None:
    """Why ``prompt`` is not worth a search (a short label), or None when it is."""
    hook = hook or hook_settings()
    if not isinstance(prompt, str):
        return "no prompt"
    p = prompt.strip()
    if len(p) < hook.min_chars:
        return "short"
    if _SLASH.match(p):
        return "slash command"
    if _NUMBER.match(p):
        return "number"
    tokens = p.strip("'\"`").split()
    if (
        tokens
        and all(_PATH_TOKEN.match(t.strip("'\"`,")) for t in tokens)
        and any("/" in t or "\\" in t for t in tokens)
    ):
        return "path"
    if _is_acknowledgement(p, hook.skip):
        return "acknowledgement"
    return None


def is_trivial(prompt, hook: HookSettings | None = None) -> bool:
    return trivial_reason(prompt, hook) is not None
