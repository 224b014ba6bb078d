"""indexer.schema: the content preparation matches its regex definition; group hashes are stable."""

from __future__ import annotations

import random
import re

from indexer.schema import _CAMEL, _CJK, group_hash, prepare_content, text_analyzer


def bigrams(run: str) -> str:
    return " " + (run if len(run) < 3 else " ".join(run[i : i + 2] for i in range(len(run) - 1))) + " "


def reference(text: str) -> str:
    """What prepare_content computes with bytes.find, as the two regexes say it: camelCase
    split, every run of CJK characters as its overlapping bigrams."""
    return re.sub(_CJK.pattern + "+", lambda m: bigrams(m.group(0)), _CAMEL.sub(" ", text))


def test_cjk_is_indexed_as_overlapping_bigrams():
    analyze = text_analyzer().analyze
    assert analyze(prepare_content("数据库连接池耗尽了")) == [
        "数据",
        "据库",
        "库连",
        "连接",
        "接池",
        "池耗",
        "耗尽",
        "尽了",
    ]
    assert analyze(prepare_content("テストが失敗した")) == ["テス", "スト", "トが", "が失", "失敗", "敗し", "した"]
    assert analyze(prepare_content("用 redis 的缓存")) == ["用", "redi", "的缓", "缓存"]  # stemmed


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


def test_team_documents_carry_their_author_and_are_built_again_from_what_they_store():
    """A teammate's item keeps its author in its own ``author`` field (schema 6; ``branch`` held it
    before), and a purge builds the same document again from the stored fields."""
    from indexer.documents import team_document, team_from_document, team_key
    from indexer.schema import SCHEMA_VERSION

    assert SCHEMA_VERSION >= 6
    item = {
        "id": "abc123",
        "kind": "memory",
        "author": "alice_1",
        "content": "The flux capacitor wants raw bodies",
        "tags": ["webhooks", "stripe"],
        "mtype": "gotcha",
        "updated": 1764000000.7,
        "remote": "github.com/acme/shop",
    }
    for kind in ("memory", "summary", "rule"):
        for n in (0, 1, 12):
            doc = team_document({**item, "kind": kind}, "/work/shop", n)
            fields = doc.to_dict()
            assert fields["author"] == ["alice_1"] and "branch" not in fields
            assert fields["key"] == [team_key({**item, "kind": kind}, n)] and fields["session_id"] == ["team:abc123"]
            again, project, copy = team_from_document(doc)
            assert (project, copy, again["kind"], again["author"]) == ("/work/shop", n, kind, "alice_1")
            assert team_document(again, project, copy).to_dict() == fields
    assert team_key({**item, "kind": "summary"}, 1) == "team:sum-abc123@1"
