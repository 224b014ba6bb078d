"""The retrieval-quality harness (benchmarks/retrieval.py) on a small slice of the dev sets.

Needs the LoCoMo / LongMemEval dev files (``$RECALL_BENCH_DATA`` or ``shared/data`` beside the
repository); skipped with the reason when they are not there.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks import retrieval as rb

DATA = rb.find_data_dir()
HAVE_DATA = DATA is not None and (DATA / rb.LOCOMO_FILE).is_file() and (DATA / rb.LONGMEMEVAL_FILE).is_file()
needs_data = pytest.mark.skipif(
    not HAVE_DATA,
    reason=f"benchmark data not found (set RECALL_BENCH_DATA, or put shared/data with {rb.LOCOMO_FILE} "
    f"and {rb.LONGMEMEVAL_FILE} beside the repository)",
)


def test_mrr_is_the_rank_of_the_first_relevant_item():
    assert rb.mrr_at(["x", "a", "b"], {"a", "b"}, 10) == 0.5
    assert rb.mrr_at(["a"], {"a"}, 10) == 1.0
    assert rb.mrr_at(["x", "y"], {"a"}, 10) == 0.0
    assert rb.mrr_at(["x", "a"], {"a"}, 1) == 0.0
    assert rb.scores(["x", "a"], {"a"})["mrr@10"] == 0.5 and "mrr@10" in rb.METRICS


def test_metrics_on_toy_rankings():
    rel = {"a", "b"}
    assert rb.recall_at(["a", "x", "b"], rel, 2) == 0.5
    assert rb.recall_at(["a", "x", "b"], rel, 5) == 1.0
    assert rb.ndcg_at(["a", "b", "x"], rel, 5) == pytest.approx(1.0)
    assert rb.ndcg_at(["x", "a"], {"a"}, 5) == pytest.approx(1 / math.log2(3))
    assert rb.ndcg_at([], rel, 10) == 0.0
    assert rb.recall_at(["a"], set(), 10) == 0.0


def test_dataset_dates_and_evidence_ids():
    d = rb.parse_locomo_date("1:56 pm on 8 May, 2023")
    assert (d.year, d.month, d.day, d.hour, d.minute) == (2023, 5, 8, 13, 56)
    d = rb.parse_longmemeval_date("2023/05/20 (Sat) 02:21")
    assert (d.year, d.month, d.day, d.hour, d.minute) == (2023, 5, 20, 2, 21)
    assert rb.parse_locomo_date("sometime") is None
    assert rb.locomo_evidence(["D8:6; D9:17", "D", "D:11:26", "D8:6"]) == ["D8:6", "D9:17", "D11:26"]
    assert rb.encode_cwd("/bench/locomo/conv-26") == "-bench-locomo-conv-26"


@needs_data
def test_conversion_is_deterministic_and_maps_evidence(tmp_path):
    a = rb.load(DATA, ["locomo"], locomo_conversations=1, locomo_per_conversation=10)
    b = rb.load(DATA, ["locomo"], locomo_conversations=1, locomo_per_conversation=10)
    assert [t.uuid for _, t in a[0].messages] == [t.uuid for _, t in b[0].messages]
    case = a[0]
    assert case.cwd.startswith("/bench/locomo/") and len(case.questions) == 10
    assert all(q.evidence_messages for q in case.questions)

    rb.write_transcripts(a, tmp_path)
    pdir = tmp_path / rb.encode_cwd(case.cwd)
    files = sorted(pdir.glob("*.jsonl"))
    assert len(files) == len(case.sessions)
    uuids, roles = set(), set()
    for f in files:
        lines = [json.loads(x) for x in f.read_text().splitlines()]
        assert lines[0]["parentUuid"] is None
        for prev, line in zip(lines, lines[1:]):
            assert line["parentUuid"] == prev["uuid"]
        for line in lines:
            assert line["sessionId"] == f.stem and line["cwd"] == case.cwd
            assert line["timestamp"].startswith("20") and line["timestamp"].endswith("Z")
            uuids.add(line["uuid"])
            roles.add(line["type"])
    assert roles == {"user", "assistant"}
    for q in case.questions:
        assert q.evidence_messages <= uuids


@needs_data
def test_harness_on_a_small_subset(tmp_path):
    report = rb.run(
        ["locomo", "longmemeval"],
        data_dir=DATA,
        locomo_conversations=2,
        locomo_per_conversation=20,
        longmemeval_questions=5,
        workdir=tmp_path / "work",
    )
    assert report["questions"] == {"locomo": 40, "longmemeval": 5}
    assert report["messages_indexed"] == report["messages_written"] > 0
    summary = report["summary"]
    assert set(summary) == {"locomo", "longmemeval"}
    assert set(summary["locomo"]) == {"message"}
    assert set(summary["longmemeval"]) == {"message", "session"}
    for dataset, levels in summary.items():
        for level, entry in levels.items():
            for metric in rb.METRICS:
                row = entry[metric]
                assert 0.0 <= row["ours"] <= 1.0, (dataset, level, metric, row)
                assert 0.0 <= row["baseline"] <= 1.0, (dataset, level, metric, row)
            assert entry["recall@10"]["ours"] > 0.0, (dataset, level, entry)
            assert entry["recall@10"]["ours"] >= entry["recall@5"]["ours"]
    table = rb.markdown_table(summary)
    assert table.count("\n") == 1 + 3 * len(rb.METRICS)
    assert all(
        0.0 <= entry[m]["baseline_analyzed"] <= 1.0
        for levels in summary.values()
        for entry in levels.values()
        for m in rb.METRICS
    )


@needs_data
def test_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "out" / "r.json"
    rc = rb.main(["--dataset", "longmemeval", "--limit-questions", "2", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "| longmemeval (n=2) | session | recall@5 |" in printed
    report = json.loads(out.read_text())
    assert report["questions"] == {"longmemeval": 2}
    assert Path(report["data_dir"]) == DATA


def test_questions_split_in_two_halves_by_id():
    from benchmarks.retrieval import SPLITS, split_of

    ids = [f"conv-{c}#{i}" for c in (26, 30, 41) for i in range(200)]
    halves = [split_of(q) for q in ids]
    assert set(halves) == set(SPLITS) and 0.4 < halves.count("tune") / len(ids) < 0.6
    assert [split_of(q) for q in ids] == halves  # a question never moves
