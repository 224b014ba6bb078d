"""What the semantic channel costs (issue 34): the encoder's load time and memory, its throughput
on the coding history's prompts and replies (one thread, as the service runs it), and the
model path's added latency per prompt (``recall.search.semantic.related``: the prompt embedded,
the project's vectors scored and the best sessions picked; reading those few back is the
index's usual cost) at 1,000 and 20,000 vectors (a project's cap). Medians over the prompts.

    python -m benchmarks.semantic_cost [--write-json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).with_name("semantic_cost.json")
PROMPTS = [
    "what's our convention for money amounts?",
    "which timezone should cart code use?",
    "add a refunds endpoint to the billing api",
    "why did we pick argparse for the admin script?",
    "the nightly export job times out again, what did we change last time",
]


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(runs: int = 15) -> dict:
    import numpy as np

    from benchmarks import coding_history as ch

    os.environ["RECALL_HOME"] = tempfile.mkdtemp(prefix="recall-semcost-")
    from indexer.vectors import VectorStore
    from recall.search import minilm, semantic

    rss0 = _rss_mb()
    t = time.perf_counter()
    enc = minilm.MiniLM()
    load_s = time.perf_counter() - t
    enc.embed(["warm up"])
    rss_model = _rss_mb() - rss0
    texts = [
        str(turn.get("user") or turn.get("assistant") or "").strip()[: semantic.EMBED_CHARS]
        for p in ch.load_all()
        for s in p.sessions
        for turn in s.turns
    ]
    texts = [x for x in texts if x]
    t = time.perf_counter()
    enc.embed(texts)
    per_s = len(texts) / (time.perf_counter() - t)

    class Reader:  # the index's part of ``related``: reading back the few best keys
        def by_keys(self, keys):
            return []

    out = {
        "load_seconds": round(load_s, 3),
        "model_rss_mb": round(rss_model, 1),
        "messages": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts)),
        "messages_per_second_1_thread": round(per_s, 1),
        "hours_per_20k_messages": round(20_000 / per_s / 3600, 2),
        "query": {},
    }
    rng = np.random.default_rng(34)
    for n in (1_000, 20_000):
        store = VectorStore(Path(os.environ["RECALL_HOME"]) / f"v{n}.db")
        vecs = rng.standard_normal((n, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.put([(f"m:{i}", "/p", f"s{i % 500}", i, "h", vecs[i]) for i in range(n)])
        store.matrix("/p")  # the service keeps it in memory
        times = []
        for r in range(runs):
            for q in PROMPTS:
                t = time.perf_counter()
                semantic.related(Reader(), store, q, "/p", floor=-1.0, encoder=enc)
                times.append((time.perf_counter() - t) * 1000)
        out["query"][str(n)] = {"p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.semantic_cost", description=__doc__.split("\n")[0])
    ap.add_argument("--write-json", action="store_true")
    args = ap.parse_args(argv)
    res = run()
    print(json.dumps(res, indent=1))
    if args.write_json:
        RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
