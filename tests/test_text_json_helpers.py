"""The one clipping helper (recall.core.text) and the one lenient JSON reader
(recall.core.jsonio) every part of recall uses."""

from __future__ import annotations

import os

from recall.core.text import clip, clip_block, cut, one_line


def test_cut_keeps_what_fits_and_ends_a_cut_with_one_ellipsis():
    assert cut("short", 5) == "short"
    assert cut("line one\nline two", 10) == "line one…"  # trailing space dropped, line break kept before
    assert cut("abcdef", 4) == "abc…" and len(cut("x" * 500, 100)) == 100


def test_one_line_flattens_whitespace_first():
    assert one_line("a\n\n b\t c", 20) == "a b c"
    assert one_line("word " * 10, 12) == "word word w…"  # cut anywhere
    assert one_line("word " * 10, 11) == "word word…"  # the space before the cut dropped
    assert one_line(None, 5) == ""


def test_clip_cuts_at_a_word_boundary_near_the_end_only():
    text = "alpha beta gamma delta epsilon"
    assert clip(text, 100) == text
    assert clip(text, 20) == "alpha beta gamma…"  # the word boundary within the last 40%
    assert clip("x" * 30 + " tail", 20) == "x" * 19 + "…"  # no boundary near the end: cut mid-word
    assert clip("", 10) == "" and clip("abc def", 1) == "…"


def test_clip_reads_past_a_long_run_of_whitespace():
    """Only the start of a long text is read, but a start that is nearly all whitespace does
    not hide the words after it (it used to give a lone "…" here)."""
    text = " " * 1000 + "the words come after a long run of blanks and are kept"
    assert clip(text, 40) == "the words come after a long run of…"
    long = "word " * 10_000
    assert clip(long, 100) == ("word " * 20).strip()[:99].rsplit(" ", 1)[0] + "…"


def test_clip_block_keeps_line_breaks():
    text = "First line.\nSecond line is longer than the room."
    assert clip_block(text, 200) == text
    assert clip_block(text, 30) == "First line.\nSecond line is…"
