"""What a rule's condition is made of, shared by the store (which validates a rule) and the
matcher (which fires it): the analyzer's terms of a text, and an RE2 pattern compiled under
a memory bound (RE2 runs in linear time: no pattern can backtrack catastrophically)."""

from __future__ import annotations

RE2_MAX_MEM = 8 << 20  # bytes one compiled pattern may use


def terms_of(text: str) -> frozenset[str]:
    """The index's analyzer terms of ``text`` minus stopwords (``migrations`` -> ``migrat``)."""
    from recall.search.query import STOPWORDS, analyze

    return frozenset(t for t in analyze(text) if t not in STOPWORDS)


def compile_regex(pattern: str):
    """An RE2 pattern object; ValueError with RE2's reason when it does not compile."""
    import re2

    options = re2.Options()
    options.max_mem = RE2_MAX_MEM
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(str(reason)) from None
