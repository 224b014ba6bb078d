"""Query latency: recall's in-process search next to SQLite FTS5 on the same corpus and
queries, and the ``recall --raw`` CLI next to ``python -c pass``.

* **in-process** — ``recall.search.searcher.Searcher.search(text, limit=10)`` (the path the service
  and the prompt hook take: query analysis, BM25 + phrases, stored documents, grouping by
  session, snippets) against ``benchmarks.fts5.FTS5Store.search(text, limit=10)`` (a MATCH
  with ``bm25(10, 2, 1)``, ids and scores only), over ``benchmarks.generate.query_set``
  (keywords, quoted phrases, identifiers, file paths, long pasted prompts). Every query is
  run once to warm up, then ``reps`` times per system, interleaved query by query so
  machine noise hits both the same; p50/p95 over all samples, and per query kind.
* **CLI** — ``recall --raw --limit 5 "<query>"`` as a new process, clock from spawn to exit,
  next to ``python -c pass`` spawned the same way, interleaved.

    python -m benchmarks.query_latency --home RECALL_HOME --fts5 baseline.db [--reps 5]

``RECALL_HOME`` is an index built by ``recall index`` (``benchmarks.run`` builds both).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from benchmarks.harness import REPO, ms, percentile, recall_exe, time_process


def summary(samples: list[float]) -> dict:
    return {
        "n": len(samples),
        "p50_ms": ms(percentile(samples, 0.5), 2),
        "p95_ms": ms(percentile(samples, 0.95), 2),
        "mean_ms": ms(sum(samples) / len(samples), 2) if samples else None,
    }


def in_process(home: Path, fts5_db: Path, seed: int = 0, reps: int = 5, limit: int = 10) -> dict:
    """Search latency of recall (in this process) and of FTS5 on ``query_set(seed)``."""
    from benchmarks.fts5 import FTS5Store
    from benchmarks.generate import query_set
    from recall.search.searcher import Searcher

    queries = query_set(seed)
    searcher = Searcher(home / "index")
    store = FTS5Store(fts5_db)
    rec: list[float] = []
    base: list[float] = []
    kinds: dict[str, dict[str, list[float]]] = {}
    hits_recall = hits_fts5 = 0
    try:
        for q in queries:  # warm-up: caches, first-use costs
            searcher.search(q["text"], limit=limit)
            store.search(q["text"], limit=limit)
        for _ in range(reps):
            for q in queries:
                t0 = time.perf_counter()
                h = searcher.search(q["text"], limit=limit)
                t1 = time.perf_counter()
                f = store.search(q["text"], limit=limit)
                t2 = time.perf_counter()
                rec.append(t1 - t0)
                base.append(t2 - t1)
                k = kinds.setdefault(q["kind"], {"recall": [], "fts5": []})
                k["recall"].append(t1 - t0)
                k["fts5"].append(t2 - t1)
                hits_recall += bool(h)
                hits_fts5 += bool(f)
        docs = searcher.count()
        rows = store.count()
    finally:
        store.close()
    return {
        "queries": len(queries),
        "reps": reps,
        "limit": limit,
        "index_documents": docs,
        "fts5_rows": rows,
        "recall": summary(rec),
        "fts5": summary(base),
        "answered": {"recall": hits_recall, "fts5": hits_fts5, "of": len(queries) * reps},
        "by_kind": {k: {"recall": summary(v["recall"]), "fts5": summary(v["fts5"])} for k, v in kinds.items()},
    }


def cli(env: dict, seed: int = 0, runs: int = 20, warmup: int = 2) -> dict:
    """``recall --raw --limit 5 QUERY`` processes next to ``python -c pass``, interleaved."""
    from benchmarks.generate import query_set

    texts = [q["text"] for q in query_set(seed) if q["kind"] != "long"]
    texts = (texts * (runs // max(1, len(texts)) + 2))[: runs + warmup]
    rec: list[float] = []
    base: list[float] = []
    failed = 0
    for i, text in enumerate(texts):
        b, _, _, _ = time_process([sys.executable, "-c", "pass"], env)
        r, _, _, rc = time_process([*recall_exe(), "--raw", "--limit", "5", text], env)
        if i < warmup:
            continue
        base.append(b)
        rec.append(r)
        failed += rc != 0
    return {"recall": summary(rec), "python_pass": summary(base), "failed": failed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.query_latency", description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a RECALL_HOME with an index")
    ap.add_argument("--fts5", type=Path, required=True, help="the FTS5 baseline database of the same corpus")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cli-runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "query_latency.json")
    args = ap.parse_args(argv)
    os.environ["RECALL_HOME"] = str(args.home)
    res = {"in_process": in_process(args.home, args.fts5, args.seed, args.reps)}
    env = {**os.environ, "RECALL_HOME": str(args.home), "RECALL_NO_SERVICE": "1"}
    res["cli_no_service"] = cli(env, args.seed, args.cli_runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    ip = res["in_process"]
    print("| query kind | recall p50 ms | recall p95 ms | FTS5 p50 ms | FTS5 p95 ms |")
    print("|---|---:|---:|---:|---:|")
    for k, v in [("all", ip), *ip["by_kind"].items()]:
        print(
            f"| {k} | {v['recall']['p50_ms']} | {v['recall']['p95_ms']} | {v['fts5']['p50_ms']} | {v['fts5']['p95_ms']} |"
        )
    c = res["cli_no_service"]
    print(f"\nrecall --raw p50 {c['recall']['p50_ms']} ms (python -c pass {c['python_pass']['p50_ms']} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
