"""The performance suite itself (``python -m benchmarks.run``), at ~20K messages, so the
benchmark never rots: every figure is produced and sane, and the docs page is written.
Figures are never compared with targets here: timings belong in docs/benchmarks.md."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks import report
from benchmarks import run as bench
from benchmarks.fts5 import has_fts5

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not has_fts5(), reason="SQLite without FTS5")]

MESSAGES = 20_000


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    docs = tmp / "benchmarks.md"
    code = bench.main(
        [
            "--messages",
            str(MESSAGES),
            "--quick",
            "--out-dir",
            str(tmp / "out"),
            "--work",
            str(tmp / "work"),
            "--write-docs",
            "--docs",
            str(docs),
            "--freshness-seconds",
            "3",
            "--freshness-corpus",
            "1000",
            "--scaling-record",
            str(tmp / "scaling.json"),
            "--results",
            str(tmp / "kept-run.json"),
        ]
    )
    assert code == 0
    res = json.loads((tmp / "out" / "run.json").read_text())
    return res, docs.read_text(), tmp


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_backfill_figures(result):
    res, _, _ = result
    bf = res["backfill"]
    for key in ("index", "fts5", "serve"):
        row = bf[key]
        assert row["messages"] == MESSAGES, key  # every system indexed the whole corpus
        assert _positive(row["seconds"]) and _positive(row["peak_rss_mb"]) and _positive(row["index_mb"]), key
    assert _positive(bf["index"]["cpu_seconds"]) and _positive(bf["fts5"]["cpu_seconds"])
    assert _positive(bf["index"]["archive_mb"])
    corpus = res["corpus"]
    assert corpus["messages"] == MESSAGES and corpus["bytes_on_disk"] > bf["index"]["index_mb"] * 1e6


def test_query_figures(result):
    res, _, _ = result
    q = res["queries"]
    assert q["queries"] >= 50 and q["index_documents"] >= MESSAGES and q["fts5_rows"] == MESSAGES
    for system in ("recall", "fts5"):
        assert q[system]["n"] == q["queries"] * q["reps"]
        assert 0 < q[system]["p50_ms"] <= q[system]["p95_ms"]
    assert set(q["by_kind"]) == {"keywords", "phrase", "identifier", "path", "long"}
    # the query set is drawn from the corpus' own vocabulary: nearly every query has hits
    assert q["answered"]["recall"] >= 0.9 * q["answered"]["of"]
    assert q["answered"]["fts5"] >= 0.9 * q["answered"]["of"]


def test_process_figures(result):
    res, _, _ = result
    p = res["processes"]
    for key in ("hook_local", "hook_service"):
        h = p[key]
        assert h["runs"] == p["runs"] and 0 < h["p50_ms"] <= h["p95_ms"]
        assert _positive(h["python_pass_p50_ms"])
        assert h["injected"] >= 1  # the hook found and printed context for real prompts
    for key in ("cli_local", "cli_service"):
        c = p[key]
        assert c["failed"] == 0 and c["recall"]["n"] == p["runs"] and _positive(c["recall"]["p50_ms"])
    assert _positive(p["service_rss_mb"])


def test_freshness_figures(result):
    res, _, _ = result
    fr = res["freshness"]
    for system in ("recall", "fts5"):
        r = fr[system]
        assert r["lines"] == int(fr["rate"] * fr["seconds"])
        assert r["missing"] == 0, system
        assert 0 < r["p50"] <= r["p95"]


def test_table_has_every_figure_with_its_baseline(result):
    res, _, _ = result
    rows = res["rows"]
    figures = {r["figure"] for r in rows}
    for needle in (
        "backfill `recall index`, messages/s",
        "backfill `recall index`, peak RSS",
        "index size on disk",
        "search in-process p50",
        "prompt hook p50, no service",
        "prompt hook p50, with service",
        "`recall --raw` p50, no service",
        "`recall --raw` p50, with service",
        "freshness p95",
        "`recall serve` RSS while serving",
    ):
        assert any(f.startswith(needle) for f in figures), needle
    for r in rows:
        assert r["value"] is not None, r["figure"]
        if r["target"]:
            assert r["status"] in ("pass", "MISS"), r["figure"]
        if r["baseline_name"]:
            assert r["baseline"] is not None and r["ratio"].endswith("×"), r["figure"]


def test_docs_written(result):
    res, docs, _ = result
    assert docs.startswith("# Benchmarks")
    assert "do not edit by hand" in docs
    assert "## Machine and run" in docs and "## Results" in docs and "## What profiling found" in docs
    assert f"{MESSAGES:,} indexable messages" in docs
    assert res["machine"]["tantivy"] in docs and "Load average" in docs
    assert "python -m benchmarks.run --messages 20000 --quick" in docs and "--docs" not in docs
    table = bench.table(res["rows"])
    assert table in docs


def test_floor_measured_and_shown(result):
    """The floor under the throughput targets: every backfill step alone, on the whole
    20K corpus, and every search phase on the run's index, on the page beside the budgets."""
    res, docs, _ = result
    ing = res["floor"]["ingest"]
    assert ing["messages"] == MESSAGES and ing["files"] == res["corpus"]["files"]
    for key in ("read_json_cpu", "reader_cpu", "redact_cpu", "archive_cpu", "documents_cpu", "tantivy_cpu"):
        assert _positive(ing[key]), key
    assert ing["reader_cpu"] > ing["read_json_cpu"]  # the reader parses the JSON, and more
    se = res["floor"]["search"]
    assert se["queries"] == res["queries"]["queries"] and set(se["by_kind"]) == set(res["queries"]["by_kind"])
    for key in ("build", "tantivy", "rank", "hits", "total", "tantivy_k10", "bare_union_k10"):
        assert _positive(se["p50_ms"][key]), key
    assert "## The floor under the retired throughput targets" in docs
    assert f"allows **{report.backfill_budget(res):.2f}** CPU-s per 100K" in docs
    assert f"| **{res['queries']['fts5']['p50_ms'] / 10:.2f}** |" in docs  # 10× FTS5, from this run


def test_retrieval_quality_is_part_of_the_run(result):
    res, docs, _ = result
    ret = res["retrieval"]
    assert "## Retrieval quality" in docs
    if "skipped" in ret:  # no ../shared/data on this machine: the page says so
        assert "Not measured in this run" in docs and "shared/data" in ret["skipped"]
        return
    assert set(ret["questions"]) == {"locomo", "longmemeval"} and all(ret["questions"].values())
    cell = ret["summary"]["locomo"]["message"]["recall@5"]
    assert 0 <= cell["ours"] <= 1 and 0 <= cell["baseline"] <= 1
    assert "| locomo" in docs and "recall@5" in docs


def test_work_directory_removed(result):
    _, _, tmp = result
    assert not (tmp / "work").exists()


def test_docs_rendered_again_from_run_json(result, capsys):
    res, docs, tmp = result
    again = tmp / "again.md"
    assert bench.main(["--render", str(tmp / "out" / "run.json"), "--write-docs", "--docs", str(again)]) == 0
    assert again.read_text() == docs
    assert json.loads((tmp / "kept-run.json").read_text())["command"] == res["command"]  # the page's source, kept
    assert report.table(res["rows"]) in capsys.readouterr().out


def test_cjk_probe_and_ranking_notes_are_part_of_the_run(result):
    res, docs, _ = result
    assert set(res["cjk_probe"]["variants"]) == {"characters (schema 3)", "bigrams (schema 4)", "jieba"}
    assert "## Chinese and Japanese: words, not characters" in docs
    assert "| bigrams (schema 4) | zh (n=12) |" in docs
    assert "## Ranking ideas on the development sets (issue 18)" in docs


def test_the_first_minutes_are_measured_next_to_their_baselines(result):
    """Issue 21: newest first (baseline: path order), typing during a full backfill (baseline:
    the idle index), one huge transcript; the retired throughput targets stay as information."""
    res, docs, _ = result
    sv, po = res["backfill"]["serve"], res["backfill"]["serve_path_order"]
    for r in (sv, po):
        assert r["messages"] == MESSAGES and r["week_sessions"] >= 1 and r["newest_messages"] >= 1
        assert 0 < r["newest_searchable_s"] <= r["week_searchable_s"]
    ot = res["backfill"]["order_timing"]  # the order's cost: alternating pairs without the poller
    assert len(ot["pairs"]) == 1 and ot["median_ratio"] > 0
    assert all(p["newest"] > 0 and p["path"] > 0 for p in ot["pairs"])
    assert "| median | |" in docs and "newest first (one pair, no poller)" in docs
    ty = res["typing"]
    assert ty["hook"]["runs"] == res["processes"]["runs"] and ty["raw"]["failed"] == 0
    big = res["big_session"]
    assert big["mb"] >= 19 and big["messages"] > 0 and big["ingest_seconds"] > 0 and big["missing"] == 0
    assert _positive(big["peak_rss_mb"]) and big["lines_during"] >= 1
    figures = {r["figure"]: r for r in res["rows"]}
    for needle in (
        "newest session searchable",
        "last 7 days searchable",
        "whole start-up backfill, newest first",
        "prompt hook p95 during a full backfill",
        "one 20 MB transcript: `recall serve` peak RSS",
    ):
        assert any(f.startswith(needle) and figures[f]["target"] for f in figures), needle
    for retired in ("backfill `recall index`, messages/s", "search in-process p50 speed-up"):
        assert all(not r["target"] for f, r in figures.items() if f.startswith(retired)), retired
    assert "Retired targets (issue #21)" in docs and "### The first minutes: newest first" in docs
    assert "## What a history of your size costs" in docs
    assert "| 5,000,000 | not run yet: `python -m benchmarks.run --messages 5000000 --write-docs`" in docs
    assert f"| {MESSAGES:,} | " in docs and "### One 20 MB transcript" in docs


def test_scaling_rows_are_kept_in_a_committed_record(result, tmp_path):
    """A manual 5M run's row outlives its machine: --write-docs keeps the scaling rows in the
    record, and a later run of another size shows the record's rows for sizes it has no run of."""
    res, _, tmp = result
    kept = json.loads((tmp / "scaling.json").read_text())
    assert [r["messages"] for r in kept] == [MESSAGES] and kept[0]["command"] == res["command"]
    record = tmp_path / "scaling.json"
    five = dict(kept[0], messages=5_000_000, command="python -m benchmarks.run --messages 5000000")
    bench.write_scaling_record(record, [five])
    rows = bench.scaling(res, tmp_path / "no-runs-here", record)
    assert [r["messages"] for r in rows] == [MESSAGES, 5_000_000]
    section = "\n".join(report.scaling_section(dict(res, scaling=rows)))
    assert "| 5,000,000 | not run yet" not in section and "| 5,000,000 | " in section
    assert "| 1,000,000 | not run yet" in section  # no run of that size anywhere
    assert bench.read_scaling_record(tmp_path / "missing.json") == []
    (tmp_path / "bad.json").write_text("{not json")
    assert bench.read_scaling_record(tmp_path / "bad.json") == []
