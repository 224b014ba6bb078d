"""Cutting text to a length, the one way recall does it (standard library only): at most
``limit`` characters, one ``…`` standing for what was left out.

``storable``: NULs and unpaired surrogates replaced (what UTF-8 and PostgreSQL refuse).
``cut``: the text as it is (line breaks kept), cut anywhere. ``one_line``: whitespace runs
(line breaks too) made one space first. ``clip``: one line, cut at a word boundary when one is
near the end. ``clip_block``: line breaks kept, cut at a word or line boundary near the end.

``counted``: a count with its noun, singular or plural as the number says ("1 problem",
"2 problems"), never "problem(s)".

Not here, on purpose: ``indexer.transcripts``' ``…[N more characters]`` (a stored message
says how much of it was left out).
"""

from __future__ import annotations

ELLIPSIS = "…"
REPLACEMENT = "\ufffd"
_IRREGULAR = {"memory": "memories", "summary": "summaries", "this": "these", "entry": "entries", "is": "are"}


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 session``, ``2 sessions``, ``1,204 memories``: never "1 sessions" nor "session(s)".
    ``plural`` for a noun that does not take an "s" (``counted(n, "CLAUDE.md file")`` needs none)."""
    n = int(n or 0)
    return f"{n:,} {noun if n == 1 else plural or plural_of(noun)}"


def plural_of(noun: str) -> str:
    """``noun``'s plural: the last word's (``transcript file`` -> ``transcript files``)."""
    head, _, last = noun.rpartition(" ")
    many = _IRREGULAR.get(last) or (
        last[:-1] + "ies" if last.endswith("y") and last[-2:-1] not in "aeiou" else last + "s"
    )
    return f"{head} {many}" if head else many


def storable(text: str) -> str:
    """``text`` as every store takes it: no NUL (PostgreSQL refuses one; binary tool output
    quoted by the model brings them) and no unpaired surrogate (UTF-8 cannot encode one),
    each such character replaced by U+FFFD."""
    text = text or ""
    if "\0" in text:
        text = text.replace("\0", REPLACEMENT)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join(REPLACEMENT if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def cut(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its first ``limit - 1`` (trailing
    whitespace dropped) and ``…``."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (every run of whitespace one space), cut like ``cut``."""
    return cut(" ".join((text or "").split()), limit)


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters at a word boundary (when there is one
    in the last 40% of the room). Only the start of a long text is read (a pasted log's prompt
    is long), unless that start is nearly all whitespace."""
    text = text or ""
    head = text[: 4 * limit + 64]
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) < len(text):
        flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    if limit <= 1:
        return ELLIPSIS[: max(0, limit)]
    kept = flat[: limit - 1]
    space = kept.rfind(" ")
    if space > limit * 0.6:
        kept = kept[:space]
    return kept.rstrip() + ELLIPSIS


def clip_block(text: str, limit: int) -> str:
    """``text`` (stripped) cut to ``limit`` characters, keeping its line breaks (prose
    answers), at a word or line boundary when there is one in the last 20% of the room."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    kept = text[: limit - 1]
    space = max(kept.rfind(" "), kept.rfind("\n"))
    if space > limit * 0.8:
        kept = kept[:space]
    return kept.rstrip() + ELLIPSIS
