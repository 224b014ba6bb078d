"""The FTS5 side of the shell-search benchmark (``benchmarks/fts5_search.py``, issue 48 item 4):
the same MATCH expression as the FTS5 baseline store, and a process that prints its top hits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.fts5 import FTS5Store, has_fts5, match_expression
from benchmarks.generate import query_set

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fts5_search.py"


def _script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fts5_search", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    "text",
    ['"stripe webhook" retry', "foo.bar_baz AND NEAR *", '"unclosed', "!!!", "a " * 80, "数据库 连接"]
    + [q["text"] for q in query_set(0)],
)
def test_the_same_match_expression_as_the_baseline_store(text):
    assert _script().match_expression(text) == match_expression(text)


@pytest.mark.skipif(not has_fts5(), reason="this SQLite has no FTS5")
def test_the_process_prints_the_best_hits_first(tmp_path):
    db = tmp_path / "fts5.db"
    with FTS5Store(db) as store:
        store.add(
            [
                {
                    "uuid": "u1",
                    "session_id": "s1" * 8,
                    "project": "/p",
                    "role": "user",
                    "timestamp": "2026-11-01T09:00:00",
                    "content": "the stripe webhook keeps retrying",
                },
                {
                    "uuid": "u2",
                    "session_id": "s2" * 8,
                    "project": "/q",
                    "role": "assistant",
                    "timestamp": "2026-11-02T09:00:00",
                    "content": "nothing of the kind here, only a stripe",
                },
            ]
        )
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(db), "5", "stripe", "webhook"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("1. [") and "session s1s1s1s1" in lines[0] and "the stripe webhook" in lines[1]
    assert lines[2].startswith("2. [") and "session s2s2s2s2" in lines[2]
