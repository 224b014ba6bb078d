"""Backfill: throughput (messages/s) and peak RSS indexing a large history from scratch.

For each corpus size (default 100K and 1M indexable messages, written by
``benchmarks.generate`` and kept between runs under ``--work``), in one run:

* **recall serve** — the service's start-up backfill (parse, redact, archive, index, commit,
  with the watcher running); messages and seconds from its own backfill summary, peak RSS
  (``ru_maxrss``) from its status;
* **recall index** — the one-shot CLI (``RECALL_NO_SERVICE=1``), timed around the process,
  peak RSS from ``wait4``;
* **baseline: SQLite FTS5** — the same files parsed by the same parser
  (``indexer.sources.claude_code.read_lines``), the messages fed to ``benchmarks.fts5.FTS5Store``
  in transactions of 5,000; timed and measured the same way (its own process).

Every system starts from an empty state directory. Each runs in its own process, one after
the other, so memory is per system: "peak RSS" is ``ru_maxrss``, which also counts the
file-backed pages Tantivy maps while merging segments (page cache, reclaimable); "peak
anon" is the anonymous RSS sampled every 100 ms (the memory the process itself holds).

    python -m benchmarks.backfill [--sizes 100000,1000000] [--systems serve,index,fts5]
                                  [--work /var/tmp/recall-bench] [--out benchmarks/out/backfill.json]

Prints a markdown table and writes the JSON results to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.harness import REPO, WORK, service_status, start_service, state_env, stop_service

FTS5_BATCH = 5000


def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def _du(path: Path) -> int:
    total = 0
    if path.is_file():
        return path.stat().st_size
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


class AnonSampler:
    """Peak anonymous RSS (RssAnon) of a process, sampled every ``interval`` seconds.

    ru_maxrss (peak RSS) also counts file-backed pages: Tantivy reads segments through
    mmap, so merging large segments maps page cache into the process. The anonymous part
    is the memory the process itself holds."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        import threading

        self.pid, self.interval, self.peak_kb = pid, interval, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        path = f"/proc/{self.pid}/status"
        while not self.stop.is_set():
            try:
                with open(path) as fh:
                    for line in fh:
                        if line.startswith("RssAnon:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                            break
            except (OSError, ValueError):
                return
            self.stop.wait(self.interval)

    def finish(self) -> float | None:
        self.stop.set()
        self.thread.join()
        return round(self.peak_kb / 1024, 1) if self.peak_kb else None


def _run_measured(cmd: list[str], env: dict, stdout=subprocess.PIPE) -> tuple[int, str, float, float, float | None]:
    """(exit code, stdout, wall seconds, peak RSS MB, peak anonymous RSS MB) of one child."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    sampler = AnonSampler(proc.pid)
    out_chunks = []
    # read output while waiting (the child must never block on a full pipe)
    import threading

    def drain(stream, sink):
        for chunk in iter(lambda: stream.read(65536), b""):
            sink.append(chunk)

    err_chunks: list[bytes] = []
    threads = []
    if proc.stdout is not None:
        threads.append(threading.Thread(target=drain, args=(proc.stdout, out_chunks)))
    threads.append(threading.Thread(target=drain, args=(proc.stderr, err_chunks)))
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    anon = sampler.finish()
    for t in threads:
        t.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss / (1 << 20) if sys.platform == "darwin" else usage.ru_maxrss / 1024
    if proc.returncode != 0:
        sys.stderr.write(b"".join(err_chunks).decode(errors="replace")[-3000:])
    return proc.returncode, b"".join(out_chunks).decode(errors="replace"), wall, round(peak, 1), anon


def corpus(work: Path, size: int, seed: int) -> tuple[Path, dict]:
    """``work/corpus-<size>/claude/projects`` (generated once; reused when complete)."""
    from benchmarks.generate import generate

    base = work / f"corpus-{size}"
    root = base / "claude" / "projects"
    done = base / "generated.json"
    if done.exists():
        return base / "claude", json.loads(done.read_text())
    if base.exists():
        shutil.rmtree(base)
    print(f"generating {size:,} messages under {root} …", file=sys.stderr, flush=True)
    st = generate(root, size, seed=seed)
    info = dict(st.__dict__)
    info["bytes_on_disk"] = _du(root)
    done.write_text(json.dumps(info, default=str))
    return base / "claude", info


def _fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    return path


def indexed_home(work: Path, messages: int, seed: int, name: str) -> Path:
    """``work/<name>-<messages>-home``, made afresh: the generated corpus of ``messages``
    (``corpus``) indexed into it by this process, which keeps it as its ``RECALL_HOME`` (and
    the corpus as its ``CLAUDE_CONFIG_DIR``, no service)."""
    claude, _ = corpus(work, messages, seed)
    home = _fresh(work / f"{name}-{messages}-home")
    os.environ.update(RECALL_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), RECALL_NO_SERVICE="1")
    from indexer.ingest import index_all

    print(f"indexing {messages:,} messages into {home} …", file=sys.stderr, flush=True)
    index_all()
    return home


def run_index(claude: Path, work: Path) -> dict:
    home = _fresh(work / "home-index")
    rc, out, wall, peak, anon = _run_measured(
        _py("-m", "recall.entry", "index", "--json"), state_env(home, claude, service=False)
    )
    if rc != 0:
        raise SystemExit(f"recall index failed ({rc})")
    summary = json.loads(out)
    return {
        "system": "recall index",
        "messages": summary["messages"],
        "seconds": round(wall, 2),
        "indexer_seconds": summary["seconds"],
        "peak_rss_mb": peak,
        "peak_anon_mb": anon,
        "index_mb": round(_du(home / "index") / 1e6, 1),
        "archive_mb": round(_du(home / "archive") / 1e6, 1),
    }


def run_serve(claude: Path, work: Path, extra_env: dict | None = None) -> dict:
    """``recall serve``'s start-up backfill on an empty state directory (``work/home-serve``);
    ``started_mono``: ``time.monotonic()`` when the process was started."""
    home = _fresh(work / "home-serve")
    env = state_env(home, claude)
    env.update(extra_env or {})
    t0 = time.perf_counter()
    started_mono = time.monotonic()
    proc = start_service(env, until="started", argv=_py("-m", "recall.entry", "serve"), log=work / "serve.log")
    sampler = AnonSampler(proc.pid)
    peak_seen = 0.0
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"recall serve exited: {(work / 'serve.log').read_text()[-2000:]}")
            st = service_status(env)
            peak_seen = max(peak_seen, st.get("peak_rss_mb") or 0.0)
            if st.get("state") == "watching" and st.get("last_backfill"):
                break
            time.sleep(2.0)
        wall = time.perf_counter() - t0
        bf = st["last_backfill"]
        anon = sampler.finish()
    finally:
        sampler.stop.set()
        stop_service(proc, 120)
    return {
        "system": "recall serve (backfill)",
        "messages": bf["messages"],
        "seconds": round(bf["seconds"], 2),
        "wall_seconds_incl_startup": round(wall, 2),
        "peak_rss_mb": max(peak_seen, st.get("peak_rss_mb") or 0),
        "peak_anon_mb": anon,
        "rss_after_mb": st.get("rss_mb"),
        "index_mb": round(_du(home / "index") / 1e6, 1),
        "archive_mb": round(_du(home / "archive") / 1e6, 1),
        "started_mono": started_mono,
    }


def run_fts5(claude: Path, work: Path) -> dict:
    db = work / "baseline-fts5.db"
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(db) + suffix)
        except FileNotFoundError:
            pass
    rc, out, wall, peak, anon = _run_measured(
        _py("-m", "benchmarks.backfill", "--fts5-worker", str(claude / "projects"), "--db", str(db)),
        state_env(work / "unused", claude, service=False),
    )
    if rc != 0:
        raise SystemExit(f"the FTS5 baseline failed ({rc})")
    res = json.loads(out)
    return {
        "system": "baseline: SQLite FTS5",
        "messages": res["messages"],
        "seconds": round(wall, 2),
        "indexer_seconds": res["seconds"],
        "peak_rss_mb": peak,
        "peak_anon_mb": anon,
        "index_mb": round(_du(db) / 1e6, 1),
        "archive_mb": None,
    }


def fts5_worker(root: str, db: str) -> None:
    """Parse every transcript with recall's parser and feed FTS5 (the baseline's process)."""
    from collections import Counter

    from benchmarks.fts5 import FTS5Store
    from indexer.ingest import discover
    from indexer.sources.claude_code import FileContext, read_lines

    t0 = time.perf_counter()
    stats: Counter = Counter()
    n = 0
    batch: list[dict] = []
    with FTS5Store(db) as store:
        for path in discover([Path(root)]):
            ctx = FileContext(path)
            for msgs, _ in read_lines(path, 0, ctx, stats):
                for m in msgs:
                    batch.append(
                        {
                            "uuid": m.uuid,
                            "session_id": m.session_id,
                            "project": m.project,
                            "role": m.role,
                            "timestamp": str(m.timestamp),
                            "content": m.text,
                            "files": "\n".join(m.files),
                            "tools": " ".join(m.tools),
                        }
                    )
                if len(batch) >= FTS5_BATCH:
                    n += store.add(batch)
                    batch = []
        n += store.add(batch)
    print(json.dumps({"messages": n, "seconds": round(time.perf_counter() - t0, 3)}))


RUNNERS = {"serve": run_serve, "index": run_index, "fts5": run_fts5}


def table(rows: list[dict]) -> str:
    out = [
        "| corpus | system | messages | seconds | messages/s | peak RSS MB | peak anon MB | index MB | archive MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rate = r["messages"] / r["seconds"] if r["seconds"] else 0
        anon = f"{r['peak_anon_mb']:.0f}" if r.get("peak_anon_mb") else "—"
        out.append(
            f"| {r['corpus']:,} | {r['system']} | {r['messages']:,} | {r['seconds']:.1f} | {rate:,.0f} | "
            f"{r['peak_rss_mb']:.0f} | {anon} | {r['index_mb']} | "
            f"{r['archive_mb'] if r['archive_mb'] is not None else '—'} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated message counts")
    ap.add_argument("--systems", default="serve,index,fts5", help="comma-separated: serve,index,fts5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "backfill.json")
    ap.add_argument("--fts5-worker", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.fts5_worker:
        fts5_worker(args.fts5_worker, args.db)
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in RUNNERS:
            ap.error(f"unknown system {s!r}: pick from {', '.join(RUNNERS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    generated = {}
    for size in sizes:
        claude, info = corpus(args.work, size, args.seed)
        generated[size] = info
        for system in systems:
            print(f"{size:,} messages: {system} …", file=sys.stderr, flush=True)
            row = RUNNERS[system](claude, args.work)
            row["corpus"] = size
            row["messages_per_second"] = round(row["messages"] / row["seconds"], 1) if row["seconds"] else None
            rows.append(row)
            print(table([row]).splitlines()[-1], file=sys.stderr, flush=True)
        for d in ("home-index", "home-serve"):
            shutil.rmtree(args.work / d, ignore_errors=True)
    from indexer.ingest import writer_heap

    result = {
        "benchmark": "backfill",
        "cpus": os.cpu_count(),
        "writer_heap_mb": writer_heap() // 1_000_000,
        "generated": generated,
        "results": rows,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str))
    print(table(rows))
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
