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


# the lenient JSON reader ------------------------------------------------------------------------------
def test_read_json_gives_the_default_for_missing_damaged_or_wrong_kind(tmp_path):
    from recall.core.jsonio import read_json

    p = tmp_path / "state.json"
    assert read_json(p, {}) == {}  # missing
    p.write_text('{"a": 1}', encoding="utf-8")
    assert read_json(p, {}, dict) == {"a": 1}
    assert read_json(p, [], list) == []  # not the kind asked for
    p.write_text('{"a": ', encoding="utf-8")  # cut short mid-write
    assert read_json(p, None) is None
    p.write_bytes(b"\xef\xbb\xbf" + b'{"bom": true}')  # an editor's byte order mark
    assert read_json(p, {}, dict) == {"bom": True}
    p.write_text("[" * 100_000, encoding="utf-8")  # nested too deep to parse
    assert read_json(p, {}, dict) == {}
    p.write_bytes(b'{"x": "\xff"}')
    assert read_json(p, "default") == "default"
    os.chmod(p, 0)
    if os.geteuid() != 0:
        assert read_json(p, {}) == {}


def test_read_jsonl_skips_what_is_not_an_object(tmp_path):
    from recall.core.jsonio import loads_object, read_jsonl

    p = tmp_path / "log.jsonl"
    assert list(read_jsonl(p)) == []  # missing
    p.write_bytes(b'{"n": 1}\n\nnot json\n[1, 2]\n{"n": "\xff"}\n{"n": 3}\n{"n": 4, "torn')
    assert list(read_jsonl(p)) == [{"n": 1}, {"n": "\ufffd"}, {"n": 3}]
    assert loads_object(b'{"a": 1}') == {"a": 1} and loads_object("[]") is None and loads_object("{") is None


def test_the_usage_log_survives_a_line_that_is_not_an_object(tmp_path):
    """The usage log is read with the one JSONL reader: a stray JSON array or number line no
    longer breaks `recall status` (it raised AttributeError before)."""
    from recall.llm import usage

    usage.record_usage("claude-haiku-4-5", 10, 5, "recall")
    with open(usage.usage_path(), "a", encoding="utf-8") as fh:
        fh.write("[1, 2]\n7\n")
    usage.record_usage("claude-haiku-4-5", 10, 5, "extraction")
    summary = usage.usage_summary()
    assert summary["calls"] == 2 and summary["input_tokens"] == 20
    assert usage.calls_today(("extraction",)) == 1
    assert usage.compact_usage() == 2 and usage.usage_summary()["calls"] == 2
