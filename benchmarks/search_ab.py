"""What each part of issue 18's search costs: ``Searcher.search`` with all of it, with each
part switched off, and with all of it off, in one process on one index, interleaved query
by query over ``benchmarks.generate.query_set`` so the machine's load hits every
configuration alike. Medians of CPU time (``time.process_time``, every thread of the
process) and of wall time per search.

Parts: the exchange (each shown hit's reply or question read from the archive) with the
weighty-match filter; neighbour context; the session top-3 score; the kept helper thread
for the second query (switched off: a new thread per search, as before).

    python -m benchmarks.search_ab --home RECALL_HOME [--reps 5]

``RECALL_HOME`` holds an index of this schema (``recall index`` over a ``benchmarks.generate``
corpus, as ``benchmarks.run`` builds).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

from benchmarks.harness import ms, percentile


def measure(home: Path, reps: int = 5, seed: int = 0, limit: int = 10) -> dict:
    os.environ["RECALL_HOME"] = str(home)
    import recall.search.searcher as S
    from benchmarks.generate import query_set

    s = S.Searcher(home / "index")
    real = (S.exchange, S._matches, S._helper, S.NEIGHBOUR_WEIGHT, S.SESSION_WEIGHTS)

    class ThreadPerSearch:
        def submit(self, fn, arg):
            import queue

            done: queue.SimpleQueue = queue.SimpleQueue()

            def own() -> None:
                try:
                    fn(arg)
                finally:
                    done.put(None)

            threading.Thread(target=own, daemon=True).start()
            return done

    per_search = ThreadPerSearch()

    def configure(exchange=True, neighbours=True, sessions=True, helper=True) -> None:
        S.exchange = real[0] if exchange else (lambda *a, **k: (None, None))
        S._matches = real[1] if exchange else (lambda *a, **k: True)
        S._helper = real[2] if helper else (lambda: per_search)
        S.NEIGHBOUR_WEIGHT = real[3] if neighbours else 0.0
        S.SESSION_WEIGHTS = real[4] if sessions else (1.0,)

    configs = {
        "all of issue 18": {},
        "without the exchange and weighty-match": {"exchange": False},
        "without neighbour context": {"neighbours": False},
        "without the session top-3": {"sessions": False},
        "a new thread per search (as before)": {"helper": False},
        "all old": {"exchange": False, "neighbours": False, "sessions": False, "helper": False},
    }
    queries = [q["text"] for q in query_set(seed)]
    try:
        for c in configs.values():  # warm up
            configure(**c)
            for q in queries:
                s.search(q, limit=limit)
        cpu: dict[str, list[float]] = {k: [] for k in configs}
        wall: dict[str, list[float]] = {k: [] for k in configs}
        for _ in range(reps):
            for q in queries:
                for name, c in configs.items():
                    configure(**c)
                    c0, w0 = time.process_time(), time.perf_counter()
                    s.search(q, limit=limit)
                    cpu[name].append(time.process_time() - c0)
                    wall[name].append(time.perf_counter() - w0)
    finally:
        configure()

    return {
        name: {
            "cpu_p50_ms": ms(percentile(cpu[name], 0.5), 3),
            "wall_p50_ms": ms(percentile(wall[name], 0.5), 3),
            "n": len(cpu[name]),
        }
        for name in configs
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.search_ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a RECALL_HOME with an index")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    res = measure(args.home, args.reps, args.seed)
    print("| configuration | CPU p50 | wall p50 |\n|---|---:|---:|")
    for name, r in res.items():
        print(f"| {name} | {r['cpu_p50_ms']:.2f} ms | {r['wall_p50_ms']:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
