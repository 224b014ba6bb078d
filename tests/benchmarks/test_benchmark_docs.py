"""docs/benchmarks.md is what ``python -m benchmarks.report`` renders from the results committed
in benchmarks/ (no benchmark runs here), its prose comes from benchmarks/prose/*.md, and every
benchmark shares one percentile."""

from __future__ import annotations

import json
import statistics

from benchmarks import harness, page, report


def test_the_page_is_rendered_from_the_committed_results():
    res = json.loads(report.RUN.read_text(encoding="utf-8"))
    assert report.render(res) == report.DOCS.read_text(encoding="utf-8"), (
        "docs/benchmarks.md is out of sync: run `python -m benchmarks.report`"
    )
    assert report.main(["--check"]) == 0


def test_a_changed_figure_or_prose_shows_as_out_of_sync(tmp_path, monkeypatch, capsys):
    res = json.loads(report.RUN.read_text(encoding="utf-8"))
    res["queries"]["recall"]["p50_ms"] = 4.04
    changed = tmp_path / "run.json"
    changed.write_text(json.dumps(res), encoding="utf-8")
    assert report.main(["--run", str(changed), "--check"]) == 1
    assert "| search in-process p50 | 4.04 ms |" in report.render(res)
    prose = tmp_path / "prose"
    prose.mkdir()
    for f in page.PROSE.glob("*.md"):
        (prose / f.name).write_text(
            f.read_text(encoding="utf-8").replace("Machine and run", "The machine"), encoding="utf-8"
        )
    monkeypatch.setattr(page, "PROSE", prose)
    assert "## The machine\n" in report.render(json.loads(report.RUN.read_text(encoding="utf-8")))
    assert report.main(["--check"]) == 1
    assert "python -m benchmarks.report" in capsys.readouterr().err


def test_a_missed_target_is_listed_with_its_reason_from_the_prose():
    res = json.loads(report.RUN.read_text(encoding="utf-8"))
    res["freshness"]["recall"]["p95"] = 1500.0
    res["big_session"]["fresh_max"] = 2500.0
    page = report.render(res)
    assert (
        "* **freshness p95**: 1,500 ms (baseline 105.3 ms, FTS5 tailer), target ≤ 1000 ms. "
        "Commit cadence of the service under the write load."
    ) in page
    assert "target ≤ 2000 ms. One huge file is read in 4 MB slices" in page
    assert "Every target was met in this run." not in page


def test_one_percentile_interpolates_between_the_nearest_samples():
    xs = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    assert harness.percentile(xs, 0.5) == statistics.median(xs) == 3.5
    assert harness.percentile(xs, 0.95) == statistics.quantiles(xs, n=20, method="inclusive")[-1]
    assert harness.percentile(xs, 0) == 1.0 and harness.percentile(xs, 1) == 10.0
    assert harness.percentile([], 0.5) is None and harness.median([]) is None
    assert harness.spread_ms([0.1, 0.2, 0.3]) == {"p50": 200.0, "p95": 290.0, "p99": 298.0, "max": 300.0, "mean": 200.0}
