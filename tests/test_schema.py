"""indexer.schema: the content preparation matches its regex definition; group hashes are stable."""

from __future__ import annotations

import random

from indexer.schema import _CAMEL, _CJK, group_hash, prepare_content


def reference(text: str) -> str:
    """What prepare_content computes with bytes.find, as the two regexes say it."""
    return _CJK.sub(lambda m: f" {m.group(0)} ", _CAMEL.sub(" ", text))


def test_prepare_content_matches_the_regex_definition():
    rng = random.Random(7)
    alphabet = "aZ9 _.-/é数据库Ωx\u0130Ab…\n"
    samples = ["getUserName", "parseHTTPResponse2Json", "数据库连接池", "naïveCamelCase…", "", "ABC", "aB"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    for text in samples:
        assert prepare_content(text) == reference(text), text


def test_group_hash_is_stable_across_processes():
    # a fixed value: Python's own hash() of a str changes with every process
    assert group_hash("s-1") == 999470128570573571
    assert 0 <= group_hash("mem:x") < 1 << 64 and group_hash("s-1") != group_hash("s-2")
