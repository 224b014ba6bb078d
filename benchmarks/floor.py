"""The floor under the two throughput targets: what Tantivy itself, and the steps recall
cannot drop (reading the JSON, redacting), cost on the same corpus and queries as the run.

A target missed by the product's own overhead can be fixed in the product; one missed by
the engine's floor cannot, whatever the Python around it does. Two parts:

* ``ingest_floor(claude, messages)``: over the corpus' first ``messages`` indexable
  messages (files in sorted order), the CPU-seconds per 100K messages of each step of the
  backfill, every one run alone in this process:
  reading the lines and ``orjson.loads`` on each; the transcript reader as the product
  runs it (lines, JSON, parsing, redaction); redaction alone (``redact`` re-run on the
  parsed texts, which are already redacted: the same scans, no replacements); the archive
  (``Archive.store`` into a scratch directory); building the Tantivy documents; and
  Tantivy's indexing alone: the prebuilt documents added to an empty index with the
  product's writer settings, committed, merges awaited. Its CPU is the process' CPU
  (``getrusage``, every thread) minus the main thread's (``time.thread_time``), so it
  counts Tantivy's indexing, docstore and merge threads and not the Python loop feeding
  them.
* ``search_floor(home, seed, reps)``: on the run's index and ``query_set(seed)``, the p50
  of each phase of ``Searcher.search`` (building the queries, the Tantivy queries, ranking
  the candidates from fast fields, reading the 10 hits and their snippets), and two
  engine-only floors: the product's own queries asked for 10 results instead of ~110, and
  the cheapest query that can answer at all, a bare union of the query's terms with 10
  results (no phrase or proximity bonus, no filter, no ranking, no text read).

    python -m benchmarks.floor --claude <dir holding projects/> [--messages 100000]
    python -m benchmarks.floor --home <RECALL_HOME with an index> [--reps 3]

Prints JSON. ``benchmarks.run`` runs both parts on its corpus and index.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PER = 100_000  # figures are CPU-seconds per this many messages


def _cpu_all() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _files(claude: Path) -> list[Path]:
    from indexer.ingest import discover

    return discover([claude / "projects" if (claude / "projects").is_dir() else claude])


def ingest_floor(claude: Path, messages: int = PER) -> dict:
    """CPU-seconds per 100K messages of each backfill step, run alone (see the module doc)."""
    import orjson

    from indexer.archive import Archive
    from indexer.documents import message_document
    from indexer.ingest import writer_heap
    from indexer.redact import redact
    from indexer.schema import open_index
    from indexer.sources.claude_code import FileContext, read_lines

    # the transcript reader as the product runs it, until ``messages`` are read (whole files)
    files: list[Path] = []
    msgs: list = []
    stats: Counter = Counter()
    t = time.thread_time()
    for path in _files(claude):
        if len(msgs) >= messages:
            break
        files.append(path)
        ctx = FileContext(path)
        for batch, _ in read_lines(path, 0, ctx, stats):
            msgs.extend(batch)
    reader = time.thread_time() - t
    n = len(msgs)
    if not n:
        raise SystemExit(f"no messages under {claude}")
    scale = PER / n

    t = time.thread_time()
    lines = 0
    for path in files:
        with open(path, "rb") as fh:
            for raw in fh:
                orjson.loads(raw)
                lines += 1
    read_json = time.thread_time() - t

    texts = [m.text for m in msgs]
    t = time.thread_time()
    for text in texts:
        redact(text)
    redaction = time.thread_time() - t

    scratch = Path(tempfile.mkdtemp(prefix="recall-floor-"))
    try:
        archive = Archive(scratch / "archive")
        t = time.thread_time()
        positions: list[int] = []
        for i in range(0, n, 5000):
            positions += archive.store(msgs[i : i + 5000])
        archive.sync()
        archiving = time.thread_time() - t

        t = time.thread_time()
        docs = [message_document(m, p) for m, p in zip(msgs, positions)]
        documents = time.thread_time() - t

        index = open_index(scratch / "index", create=True)
        writer = index.writer(writer_heap(), 0)  # the Indexer's settings
        all0, main0, wall0 = _cpu_all(), time.thread_time(), time.perf_counter()
        for doc in docs:
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        wall = time.perf_counter() - wall0
        feeding = time.thread_time() - main0
        engine = _cpu_all() - all0 - feeding
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def per(x: float) -> float:
        return round(x * scale, 2)

    return {
        "messages": n,
        "lines": lines,
        "files": len(files),
        "read_json_cpu": per(read_json),
        "reader_cpu": per(reader),
        "redact_cpu": per(redaction),
        "archive_cpu": per(archiving),
        "documents_cpu": per(documents),
        "tantivy_cpu": per(engine),
        "tantivy_feed_cpu": per(feeding),
        "tantivy_wall": per(wall),
    }


def search_floor(home: Path, seed: int = 0, reps: int = 3) -> dict:
    """p50 ms of each phase of a search, and of the engine alone (see the module doc)."""
    import tantivy

    from benchmarks.generate import query_set
    from recall.search.query import analyze
    from recall.search.searcher import Searcher, _group_by_session, fetch_size

    s = Searcher(home / "index")
    queries = query_set(seed)
    Should = tantivy.Occur.Should
    names = ("build", "tantivy", "rank", "hits", "total", "tantivy_k10", "bare_union_k10")
    times: dict[str, list[float]] = {k: [] for k in names}
    by_kind: dict[str, dict[str, list[float]]] = {}
    for rep in range(reps + 1):  # the first pass warms caches and is not counted
        for q in queries:
            now = time.time()
            t0 = time.perf_counter()
            searcher = s.index.searcher()
            built = s.build_query(searcher, q["text"], doctypes=("message", "session", "memory"))
            t1 = time.perf_counter()
            if built is None:
                continue
            qs, terms = built
            top = s.top(searcher, qs, fetch_size(10, messages=False))
            t2 = time.perf_counter()
            ranked = _group_by_session(s.rank(searcher, top, now))
            t3 = time.perf_counter()
            s.hits(searcher, ranked[:10], terms, now)
            t4 = time.perf_counter()
            s.top(searcher, qs, 10)
            t5 = time.perf_counter()
            words = list(dict.fromkeys(analyze(q["text"])))[:32]
            bare = tantivy.Query.boolean_query(
                [(Should, tantivy.Query.term_query(s.schema, "content", w, index_option="freq")) for w in words]
            )
            t6 = time.perf_counter()
            searcher.search(bare, 10, count=False)
            t7 = time.perf_counter()
            if not rep:
                continue
            for k, v in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, t5 - t4, t7 - t6)):
                times[k].append(v * 1000)
                by_kind.setdefault(q["kind"], {}).setdefault(k, []).append(v * 1000)

    def p50s(d: dict[str, list[float]]) -> dict[str, float]:
        return {k: round(statistics.median(v), 2) for k, v in d.items() if v}

    return {
        "queries": len(queries),
        "reps": reps,
        "p50_ms": p50s(times),
        "by_kind": {k: p50s(v) for k, v in by_kind.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__.split("\n\n")[0])
    ap.add_argument("--claude", type=Path, help="a Claude config dir (or its projects/) to read transcripts from")
    ap.add_argument("--messages", type=int, default=PER)
    ap.add_argument("--home", type=Path, help="a RECALL_HOME whose index to query")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    if not a.claude and not a.home:
        ap.error("give --claude (the backfill floor), --home (the search floor), or both")
    out = {}
    if a.claude:
        out["ingest"] = ingest_floor(a.claude, a.messages)
    if a.home:
        out["search"] = search_floor(a.home, a.seed, a.reps)
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
