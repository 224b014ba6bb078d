"""The benchmark corpus generator and the SQLite FTS5 baseline store."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from benchmarks.fts5 import FTS5Store, has_fts5, match_expression
from benchmarks.generate import MESSAGE_KINDS, encode_cwd, generate, iter_file_messages, iter_messages, query_set

N = 2000
END = datetime(2026, 11, 22, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("corpus")
    stats = generate(root, N, seed=3, end=END)
    return root, stats


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


def _lines(root: Path):
    for p in sorted(root.rglob("*.jsonl")):
        for raw in p.read_bytes().splitlines():
            yield p, json.loads(raw)


def test_deterministic(corpus, tmp_path):
    root, stats = corpus
    again = tmp_path / "again"
    stats2 = generate(again, N, seed=3, end=END)
    assert _files(root) == _files(again)
    assert stats2.kinds == stats.kinds and stats2.bytes == stats.bytes
    other = tmp_path / "other"
    generate(other, N, seed=4, end=END)
    assert _files(other) != _files(root)


def test_counts_match(corpus):
    root, stats = corpus
    assert stats.messages == N
    assert sum(stats.kinds[k] for k in MESSAGE_KINDS if k in stats.kinds) == N
    rows = list(iter_messages(root))
    assert len(rows) == N  # the reference extraction agrees with the generator
    kinds = Counter(r["kind"] for r in rows)
    for k in MESSAGE_KINDS:
        assert kinds[k] == stats.kinds.get(k, 0), k
    files = list(root.rglob("*.jsonl"))
    assert stats.files == len(files)
    assert stats.bytes == sum(p.stat().st_size for p in files)
    assert stats.lines == sum(p.read_bytes().count(b"\n") for p in files)
    assert len({r["uuid"] for r in rows}) == N


def test_every_line_is_json_and_kinds_appear(corpus):
    root, stats = corpus
    types = Counter()
    att = Counter()
    recalled = 0
    for _, d in _lines(root):
        types[d["type"]] += 1
        if d["type"] == "attachment":
            att[d["attachment"]["type"]] += 1
            if d["attachment"]["type"] == "hook_additional_context":
                c = d["attachment"]["content"][0]
                assert c.startswith("<recalled-context>") and c.endswith("</recalled-context>")
                recalled += 1
    for t in (
        "user",
        "assistant",
        "queue-operation",
        "attachment",
        "file-history-snapshot",
        "last-prompt",
        "system",
        "progress",
        "summary",
    ):
        assert types[t] > 0, t
    for a in ("skill_listing", "agent_listing_delta", "hook_additional_context"):
        assert att[a] > 0, a
    assert recalled > 0
    for k in ("user_meta", "user_command", "user_interrupt", "thinking", "summary"):
        assert stats.kinds.get(k, 0) > 0, k
    assert stats.lines > stats.messages  # noise on top
    assert stats.subagent_files > 0 and stats.projects >= 3


def test_envelope_and_layout(corpus):
    root, _ = corpus
    cwds = set()
    for p, d in _lines(root):
        if d["type"] in ("user", "assistant"):
            for key in (
                "parentUuid",
                "isSidechain",
                "uuid",
                "timestamp",
                "cwd",
                "sessionId",
                "version",
                "gitBranch",
                "userType",
                "entrypoint",
            ):
                assert key in d, (key, d["type"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", d["timestamp"])
            cwds.add(d["cwd"])
            if p.parent.name == "subagents":
                assert d["isSidechain"] is True and p.name == f"agent-{d['agentId']}.jsonl"
                assert p.parent.parent.name == d["sessionId"]
                assert p.parent.parent.parent.name == encode_cwd(d["cwd"])
            else:
                assert d["isSidechain"] is False
                assert p.stem == d["sessionId"] and p.parent.name == encode_cwd(d["cwd"])
        if d["type"] == "user" and isinstance(d["message"]["content"], list):
            b = d["message"]["content"][0]
            if b["type"] == "tool_result":
                assert "toolUseResult" in d and "sourceToolAssistantUUID" in d
    # some sessions run in a subdirectory of a project root
    assert any(a != b and b.startswith(a + "/") for a in cwds for b in cwds)
    assert encode_cwd("/home/dev/my_app.v2/web") == "-home-dev-my-app-v2-web"


def test_timestamps_increase_and_recent(corpus):
    root, _ = corpus
    lo = END.timestamp() - 91 * 86400
    for p in root.rglob("*.jsonl"):
        ts = [
            d["timestamp"] for d in map(json.loads, p.read_bytes().splitlines()) if d["type"] in ("user", "assistant")
        ]
        assert ts == sorted(ts), p
        first = datetime.fromisoformat(ts[0].replace("Z", "+00:00")).timestamp()
        assert lo <= first <= END.timestamp()


def test_assistant_lines_share_message_id(corpus):
    root, _ = corpus
    by_id: dict[str, list[dict]] = {}
    for _, d in _lines(root):
        if d["type"] == "assistant":
            assert len(d["message"]["content"]) == 1  # one content block per line
            by_id.setdefault(d["message"]["id"], []).append(d)
    multi = [v for v in by_id.values() if len(v) > 1]
    assert len(multi) > 50
    for lines in multi:
        assert len({d["requestId"] for d in lines}) == 1
        kinds = [d["message"]["content"][0]["type"] for d in lines]
        assert "tool_use" in kinds or "thinking" in kinds


def _check_pairs(root: Path) -> None:
    for p in root.rglob("*.jsonl"):
        uses, results = set(), set()
        for d in map(json.loads, p.read_bytes().splitlines()):
            if d["type"] == "assistant":
                b = d["message"]["content"][0]
                if b["type"] == "tool_use":
                    uses.add(b["id"])
            elif d["type"] == "user" and isinstance(d["message"]["content"], list):
                b = d["message"]["content"][0]
                if b["type"] == "tool_result":
                    results.add(b["tool_use_id"])
        assert uses == results, p


def test_tool_uses_have_results(corpus):
    _check_pairs(corpus[0])


def test_larger_corpus(tmp_path):
    stats = generate(tmp_path, 6000, seed=10, end=END)  # seed 10 once left a tool_use dangling
    assert stats.messages == 6000 and stats.kinds["tool_use"] == stats.kinds["tool_result"]
    _check_pairs(tmp_path)
    sizes = [len(r["content"]) for r in iter_messages(tmp_path) if r["kind"] == "tool_result"]
    small = sum(s < 1024 for s in sizes) / len(sizes)
    assert small > 0.5
    assert max(sizes) > 10_000


def test_query_set():
    qs = query_set(0)
    assert qs == query_set(0)
    assert 50 <= len(qs) <= 70
    kinds = Counter(q["kind"] for q in qs)
    assert set(kinds) == {"keywords", "phrase", "identifier", "path", "long"}
    for q in qs:
        if q["kind"] == "long":
            assert 900 <= len(q["text"]) <= 3500


@pytest.mark.skipif(not has_fts5(), reason="sqlite3 without FTS5")
def test_fts5_store(corpus, tmp_path):
    root, _ = corpus
    store = FTS5Store(tmp_path / "fts.db")
    rows = list(iter_messages(root))
    for i in range(0, len(rows), 500):
        store.add(rows[i : i + 500])
    assert store.count() == N
    assert store.size_bytes() > 0

    # a known generated term: a rare word of one tool_use finds that message
    target = next(r for r in rows if r["kind"] == "tool_use" and r["tools"] == "Bash")
    hits = store.search(target["content"], limit=50)
    assert target["uuid"] in [u for u, _ in hits]
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))  # best first

    # project filter
    proj = target["project"]
    for u, _ in store.search(target["content"], limit=50, project=proj):
        assert next(r for r in rows if r["uuid"] == u)["project"] == proj
    assert store.search(target["content"], project="/nope") == []

    # most benchmark queries of the same seed match; phrase-like ones exactly
    qs = query_set(3)
    matched = Counter(q["kind"] for q in qs if store.search(q["text"], limit=5))
    assert sum(matched.values()) >= 0.8 * len(qs)

    hostile = [
        '"',
        '""',
        "AND",
        "OR NOT",
        "a AND",
        "(((",
        ")",
        "NEAR(a b",
        "foo*",
        "^x",
        "col:val",
        'x" OR "y',
        "'; DROP TABLE messages;--",
        "\x00",
        "—☃𝔘",
        "-",
        "a" * 10_000,
        '"unbalanced phrase',
        "NOT NOT NOT",
        "{content}: x",
        "+ - * / ?",
        "",
    ]
    for q in hostile:
        store.search(q)  # must not raise
        store.search(q, project=proj)
    assert match_expression("") is None and match_expression("((( ---") is None
    assert match_expression('fix "connection pool" AND x') == '"fix" OR "connection pool" OR "and" OR "x"'
    assert store.count() == N
    store.close()


def test_reference_transcript_parses():
    name = "claude-code-2.1.197-tool-use-session.jsonl"  # in shared/ beside the checkout (../shared)
    here = Path(__file__).resolve().parents[2]
    ref = next(
        (
            p / "shared" / "reference-transcripts" / name
            for p in here.parents
            if (p / "shared" / "reference-transcripts" / name).exists()
        ),
        None,
    )
    if ref is None:
        pytest.skip("no reference transcript")
    kinds = Counter(r["kind"] for r in iter_file_messages(ref))
    assert kinds == {"user_prompt": 1, "assistant_text": 2, "tool_use": 2, "tool_result": 2}
