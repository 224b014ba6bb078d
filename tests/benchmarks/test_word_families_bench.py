"""benchmarks/word_families.py: the same search with and without word families, on one index."""

from __future__ import annotations

import json

import pytest

from benchmarks import retrieval as rb
from benchmarks import word_families as wf

HAVE_DATA = (d := rb.find_data_dir()) is not None and (d / rb.LOCOMO_FILE).is_file()


def test_families_switch_off_and_back():
    import recall.search.searcher as searcher

    real = searcher.variants
    assert real("decid") == ("decis",)
    with wf.families(False):
        assert searcher.variants("decid") == ()
    assert searcher.variants is real
    with wf.families(True):
        assert searcher.variants is real


def test_coding_history_with_and_without(tmp_path):
    report = wf.coding(tmp_path)
    figures = report["figures"]
    everything = figures["coding all kinds (all)"]
    assert everything["with"]["questions"] == everything["without"]["questions"] > 100
    for modes in figures.values():
        for mode in wf.MODES:
            assert 0.0 <= modes[mode]["R@1"] <= modes[mode]["R@5"] <= 1.0
        # shipped only because no figure drops by more than 0.01 (issue 44)
        assert modes["with"]["R@5"] >= modes["without"]["R@5"] - 0.01
        assert modes["with"]["mrr@10"] >= modes["without"]["mrr@10"] - 0.01
    assert "R@5" in wf.table(figures, ("R@1", "R@5", "mrr@10"))


@pytest.mark.skipif(not HAVE_DATA, reason="benchmark data not found (RECALL_BENCH_DATA or shared/data)")
def test_cli_on_a_slice_of_locomo(tmp_path, capsys):
    out = tmp_path / "wf.json"
    assert wf.main(["--dataset", "locomo", "--limit-questions", "30", "--no-coding", "--out", str(out)]) == 0
    assert "| locomo message (all) |" in capsys.readouterr().out
    report = json.loads(out.read_text())
    entry = report["dev_sets"]["figures"]["locomo message (all)"]
    assert entry["with"]["questions"] == entry["without"]["questions"] == 30
    assert set(rb.METRICS) <= set(entry["with"])
