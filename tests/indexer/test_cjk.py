"""Chinese and Japanese are matched by words (overlapping bigrams), not by single
characters; an index of the per-character schema is rebuilt from the archive, nothing lost."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from indexer.ingest import index_all
from indexer.schema import SCHEMA_VERSION
from recall.core import paths
from recall.search.query import is_stopword, weighty
from recall.search.searcher import Searcher
from tests.support.factory import Session


def write(claude_projects, *prompts):
    sessions = []
    for i, (prompt, answer) in enumerate(prompts):
        s = Session(cwd="/home/dev/shop", start=datetime(2026, 11, 1, 9, tzinfo=timezone.utc) + timedelta(hours=i))
        s.user(prompt)
        s.assistant(answer)
        s.write(claude_projects)
        sessions.append(s)
    index_all()
    return sessions


def test_chinese_is_matched_by_words_not_shared_characters(claude_projects):
    pool, other, why = write(
        claude_projects,
        ("数据库连接池老是耗尽，怎么回事？", "事务没有提交就返回了，连接一直被占用。"),
        ("数学的根据在于公理，连续两天都在看", "这本书的体系很完整。"),  # 数, 据, 连 in other words
        ("为什么页面的字体看起来很模糊", "缩放比例的问题。"),  # shares only 为什么
    )
    hits = Searcher().search("为什么数据库的连接会被占满", limit=3)
    assert [h.session_id for h in hits] == [pool.session_id]
    assert "**数据库**" in hits[0].snippet and "**连接**" in hits[0].snippet


def test_japanese_is_matched_by_words(claude_projects):
    flaky, tv = write(
        claude_projects,
        ("テストが時々失敗するのはなぜ？", "タイムゾーンの違いでした。"),
        ("テレビのストーリーが面白い", "来週も見ます。"),  # テ, ス, ト in other words
    )
    hits = Searcher().search("テストが落ちる理由", limit=3)
    assert hits[0].session_id == flaky.session_id and "**テスト**" in hits[0].snippet
    # (ストーリー shares the pair スト: a bigram's limit, ranked below the word found whole)


def test_cjk_grammar_is_a_stopword():
    assert is_stopword("什么") and is_stopword("像が") and is_stopword("した") and is_stopword("the")
    assert not is_stopword("数据") and not is_stopword("テス") and not is_stopword("cart")
    assert weighty(["为什", "什么", "数据"]) == ["数据"]
    assert weighty(["した"]) == ["した"]  # grammar alone: kept, it is all the query has


def test_an_index_of_the_per_character_schema_is_rebuilt_from_the_archive(claude_projects):
    (pool,) = write(claude_projects, ("数据库连接池老是耗尽", "事务没有提交。"))
    # the index now claims the per-character schema (3), and the transcript is gone
    (paths.index_dir() / "recall-schema.json").write_text(json.dumps({"version": 3}))
    for f in claude_projects.rglob("*.jsonl"):
        f.unlink()
    summary = index_all()
    assert summary.rebuilt.startswith("schema changed") and summary.replayed == 2
    assert json.loads((paths.index_dir() / "recall-schema.json").read_text())["version"] == SCHEMA_VERSION
    hits = Searcher().search("连接池", limit=3, messages=True)
    assert [h.session_id for h in hits] == [pool.session_id]
    assert hits[0].reply == "事务没有提交。"


def test_the_probe_shows_bigrams_beat_single_characters():
    """benchmarks.cjk_probe, as docs/benchmarks.md quotes it: bigrams rank the answer first
    at least as often, and show fewer sessions that merely share characters."""
    from benchmarks import cjk_probe

    chars = cjk_probe.evaluate(cjk_probe.VARIANTS["characters (schema 3)"])
    pairs = cjk_probe.evaluate(cjk_probe.VARIANTS["bigrams (schema 4)"])
    for lang in ("zh", "ja"):
        assert pairs[lang]["hit@1"] >= chars[lang]["hit@1"]
        assert pairs[lang]["others_in_top3"] < chars[lang]["others_in_top3"]
