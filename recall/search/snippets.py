"""Snippets: a window of a hit's text around the densest run of query terms, the matches
in **bold** (``snippet``), and the pattern that finds them (``highlighter``)."""

from __future__ import annotations

import re

from recall.core.lazy_re import lazy

SNIPPET_CHARS = 240


_CJK_TERM = lazy("^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+$")


def _cjk_runs(terms: list[str]) -> list[str]:
    """The CJK words of a query, rebuilt from its overlapping bigrams (``数据 据库`` ->
    ``数据库``), so a snippet bolds the word, not every other pair of it."""
    runs: list[str] = []
    for t in terms:
        if t.isascii() or not _CJK_TERM.match(t):  # (an ASCII term never compiles the CJK class)
            continue
        if runs and len(t) == 2 and len(runs[-1]) >= 2 and runs[-1][-1] == t[0]:
            runs[-1] += t[1]
        else:
            runs.append(t)
    return runs


def highlighter(terms: list[str]) -> re.Pattern | None:
    """The pattern that finds ``terms`` (analysed: stemmed, CJK bigrams) in a hit's text."""
    words, alts = [], []
    cjk = set(_cjk_runs(terms)) | {t for t in terms if not t.isascii() and _CJK_TERM.match(t)}
    for t in sorted(cjk | set(terms), key=len, reverse=True)[:64]:
        if t in cjk:
            alts.append(re.escape(t))
        elif len(t) >= 2 and t.endswith("i") and not t.isdigit():
            words.append(re.escape(t[:-1]) + "[iy]")  # the stemmer's y -> i: flaky -> flaki
        elif len(t) >= 2 or t.isdigit():
            words.append(re.escape(t))
    if words:
        # one word-start check for all the words (was one per word, tried at every position):
        # any word matching at a position spans to the end of its run of letters and digits,
        # so the matches are the same whichever word matched; CJK terms never start there
        alts.insert(0, r"(?<![^\W_])(?:" + "|".join(words) + r")[^\W_]*")
    if not alts:
        return None
    return re.compile("|".join(alts), re.I)


def snippet(text: str, pattern: re.Pattern | None, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the densest run of query terms, matches in **bold**."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    matches = list(pattern.finditer(flat)) if pattern is not None else []
    if not matches:
        return flat[:width] + ("…" if len(flat) > width else "")
    best_start, best_count = matches[0].start(), 0
    starts = [m.start() for m in matches]
    words = [m.group(0).lower() for m in matches]
    inside: dict[str, int] = {}  # the window's words and their counts (kept as it slides)
    distinct = 0
    j = 0
    half = width // 2
    for i, start in enumerate(starts):  # sliding window over match starts
        w = words[i]
        n = inside.get(w, 0)
        inside[w] = n + 1
        distinct += n == 0
        while starts[j] < start - half:
            w = words[j]
            inside[w] -= 1
            distinct -= inside[w] == 0
            j += 1
        if distinct > best_count:
            best_count, best_start = distinct, starts[j]
    start = max(0, best_start - width // 4)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < best_start else start
    end = min(len(flat), start + width)
    window = flat[start:end]
    window = pattern.sub(lambda m: f"**{m.group(0)}**", window)
    return ("…" if start else "") + window + ("…" if end < len(flat) else "")
