"""benchmarks.search_ab runs (so the figures docs/benchmarks.md quotes stay reproducible),
and switching its parts off and on leaves the searcher as it was."""

from __future__ import annotations

from datetime import datetime, timezone

import recall.search.searcher as S
from benchmarks import search_ab
from benchmarks.generate import generate
from indexer.ingest import Indexer
from recall.core import paths


def test_search_ab_measures_every_configuration(tmp_path):
    generate(tmp_path / "projects", 600, seed=1, end=datetime(2026, 11, 22, tzinfo=timezone.utc))
    with Indexer() as ix:
        ix.run([tmp_path / "projects"])
    before = (S.exchange, S._matches, S._helper, S.NEIGHBOUR_WEIGHT, S.SESSION_WEIGHTS)
    res = search_ab.measure(paths.home_dir(), reps=1)
    assert set(res) >= {"all of issue 18", "all old"}
    assert all(r["cpu_p50_ms"] > 0 and r["wall_p50_ms"] > 0 and r["n"] for r in res.values())
    assert (S.exchange, S._matches, S._helper, S.NEIGHBOUR_WEIGHT, S.SESSION_WEIGHTS) == before
