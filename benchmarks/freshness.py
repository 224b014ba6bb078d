"""Freshness: how long after a line is written to a transcript a *separate process* can
find it, under a steady write load. Issue #3 target: p95 under 1 s at 50 lines/s across 20
files, without a commit per line.

Two systems, same run, same write schedule, one after the other:

* **recall serve** — the real service (a subprocess) over a background corpus generated
  by ``benchmarks.generate``; a reader subprocess reloads the Tantivy index every
  ``--poll`` seconds and looks up the keys of lines written but not yet seen.
* **baseline: FTS5 tailer** — the seed design: a subprocess polling the transcript files
  every 100 ms (no watcher), parsing new complete lines with the same parser and inserting
  them into an SQLite FTS5 table (``benchmarks.fts5.FTS5Store``, one transaction per
  poll); its reader polls SQLite for new rows.

Latency of a line = (first time the reader saw it) - (time its write returned), both on
the system-wide monotonic clock. The reader's own poll interval bounds the error.

    python -m benchmarks.freshness [--rate 50] [--files 20] [--seconds 30] [--corpus 20000]
                                   [--out benchmarks/out/freshness.json]

Prints a markdown table and writes the JSON results to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import REPO, service_status, spread_ms, start_service, state_env, stop_service

KEY = "fresh-{:08d}"
OFFSET = 10_000_000


# ------------------------------------------------------------------------------ lines
def make_line(i: int, session: str, cwd: str) -> bytes:
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "uuid": KEY.format(i),
        "timestamp": ts,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.197",
        "gitBranch": "main",
        "message": {
            "role": "user",
            "content": f"freshness probe {i}: why does the webhook retry "
            f"after the deploy of build {i * 7919 % 100003}?",
        },
    }
    return (json.dumps(line) + "\n").encode()


def write_load(
    root: Path, rate: float, files: int, seconds: float, offset: int = 0, tag: str = "p"
) -> dict[int, float]:
    """Append lines round-robin to ``files`` session files at ``rate`` lines/s; returns
    {line number: monotonic time its write returned}. Line numbers start at ``offset``."""
    import uuid

    sessions = []
    for f in range(files):
        cwd = f"/bench/fresh/{tag}{f % 5}"
        d = root / ("-" + cwd.strip("/").replace("/", "-"))
        d.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"recall-freshness/{tag}/{f}"))
        sessions.append((d / f"{sid}.jsonl", sid, cwd))
    fds = [os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) for p, _, _ in sessions]
    written: dict[int, float] = {}
    t0 = time.monotonic()
    try:
        for j in range(int(rate * seconds)):
            delay = t0 + j / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            k = j % files
            _, sid, cwd = sessions[k]
            os.write(fds[k], make_line(offset + j, sid, cwd))
            written[offset + j] = time.monotonic()
    finally:
        for fd in fds:
            os.close(fd)
    return written


# ------------------------------------------------------------------------------ readers
def tantivy_reader(n: int, out: str, poll: float, timeout: float) -> None:
    import tantivy

    from indexer.schema import open_index
    from recall.core import paths

    index = None
    seen: dict[int, float] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < n and time.monotonic() < deadline:
        if index is None:
            try:
                index = open_index(paths.index_dir())
            except FileNotFoundError:
                time.sleep(poll)
                continue
        index.reload()
        s = index.searcher()
        unseen = [i for i in range(n) if i not in seen][:500]
        q = tantivy.Query.term_set_query(index.schema, "key", ["m:" + KEY.format(i) for i in unseen])
        now = time.monotonic()
        for _, addr in s.search(q, len(unseen)).hits:
            key = s.doc(addr).get_first("key")
            seen[int(key.rsplit("-", 1)[1])] = now
        time.sleep(poll)
    Path(out).write_text(json.dumps(seen))


def sqlite_reader(db: str, n: int, out: str, poll: float, timeout: float) -> None:
    import sqlite3

    seen: dict[int, float] = {}
    last = 0
    con = None
    deadline = time.monotonic() + timeout
    while len(seen) < n and time.monotonic() < deadline:
        if con is None:
            if not os.path.exists(db):
                time.sleep(poll)
                continue
            con = sqlite3.connect(db, timeout=5)
        try:
            rows = con.execute("SELECT rowid, uuid FROM messages WHERE rowid > ?", (last,)).fetchall()
        except sqlite3.OperationalError:
            rows = []
        now = time.monotonic()
        for rowid, uid in rows:
            last = max(last, rowid)
            if uid and uid.startswith("fresh-") and int(uid.rsplit("-", 1)[1]) >= OFFSET:
                seen[int(uid.rsplit("-", 1)[1])] = now  # only the baseline phase's lines
        time.sleep(poll)
    Path(out).write_text(json.dumps(seen))


def fts5_tailer(root: str, db: str, interval: float) -> None:
    """The seed design: poll every file, parse new complete lines, one transaction per poll."""
    from collections import Counter

    from benchmarks.fts5 import FTS5Store
    from indexer.ingest import discover
    from indexer.sources.claude_code import FileContext, read_lines

    store = FTS5Store(db)
    offsets: dict[str, int] = {}
    contexts: dict[str, FileContext] = {}
    stats: Counter = Counter()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    for path in discover([Path(root)]):  # the background corpus first
        offsets[str(path)] = 0
    while not stop:
        t0 = time.monotonic()
        batch = []
        for path in discover([Path(root)]):
            key = str(path)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            off = offsets.get(key, 0)
            if size <= off:
                continue
            ctx = contexts.setdefault(key, FileContext(path))
            for msgs, new_off in read_lines(path, off, ctx, stats):
                batch += [_row(m) for m in msgs]
                offsets[key] = new_off
        if batch:
            store.add(batch)
        time.sleep(max(0.0, interval - (time.monotonic() - t0)))
    store.close()


def _row(m) -> dict:
    return {
        "uuid": m.uuid,
        "session_id": m.session_id,
        "project": m.project,
        "role": m.role,
        "timestamp": str(m.timestamp),
        "content": m.text,
        "files": "\n".join(m.files),
        "tools": " ".join(m.tools),
    }


# ------------------------------------------------------------------------------ running
def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def _latencies(written: dict[int, float], seen_file: Path) -> tuple[list[float], int]:
    seen = {int(k): v for k, v in json.loads(seen_file.read_text()).items()}
    lat = [seen[i] - t for i, t in written.items() if i in seen]
    return lat, len(written) - len(lat)


def run_recall(work: Path, args) -> dict:
    home, claude = work / "recall-home", work / "claude"
    root = claude / "projects"
    env = state_env(home, claude)
    serve = start_service(
        env, until="watching", argv=_py("-m", "recall.entry", "serve"), log=work / "serve.log", timeout=3600
    )
    try:
        before = service_status(env)
        n = int(args.rate * args.seconds)
        seen_file = work / "seen-recall.json"
        reader = subprocess.Popen(
            _py(
                "-m",
                "benchmarks.freshness",
                "--reader",
                "tantivy",
                "--n",
                str(n),
                "--seen",
                str(seen_file),
                "--poll",
                str(args.poll),
            ),
            env=env,
        )
        time.sleep(1.0)  # the reader is up (imports done)
        written = write_load(root, args.rate, args.files, args.seconds)
        reader.wait(timeout=args.seconds + 120)
        after = service_status(env)
    finally:
        stop_service(serve)
    lat, missing = _latencies(written, seen_file)
    commits = (after.get("commits") or 0) - (before.get("commits") or 0)
    return {
        "system": "recall serve",
        "lines": len(written),
        "missing": missing,
        **spread_ms(lat),
        "commits": commits,
        "lines_per_commit": round(len(written) / commits, 1) if commits else None,
        "service_rss_mb": after.get("rss_mb"),
        "indexed_messages": (after.get("counts") or {}).get("messages"),
    }


def run_baseline(work: Path, args) -> dict:
    claude = work / "claude"
    root = claude / "projects"
    db = work / "baseline-fts5.db"
    env = state_env(work / "unused-home", claude)
    tailer = subprocess.Popen(_py("-m", "benchmarks.freshness", "--tailer", str(root), "--db", str(db)), env=env)
    try:
        # wait for the tailer to take in the background corpus
        import sqlite3

        deadline = time.monotonic() + 3600
        while time.monotonic() < deadline:
            try:
                con = sqlite3.connect(str(db), timeout=5)
                c = con.execute("SELECT count(*) FROM messages").fetchone()[0]
                con.close()
                if c >= args.corpus_indexed:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.5)
        n = int(args.rate * args.seconds)
        seen_file = work / "seen-baseline.json"
        reader = subprocess.Popen(
            _py(
                "-m",
                "benchmarks.freshness",
                "--reader",
                "sqlite",
                "--db",
                str(db),
                "--n",
                str(n),
                "--seen",
                str(seen_file),
                "--poll",
                str(args.poll),
            ),
            env=env,
        )
        time.sleep(1.0)
        offset = OFFSET  # other keys (and files) than the recall run's
        written = {
            i - offset: t for i, t in write_load(root, args.rate, args.files, args.seconds, offset, tag="b").items()
        }
        reader.wait(timeout=args.seconds + 120)
    finally:
        stop_service(tailer, 30)
    seen = {int(k) - offset: v for k, v in json.loads(seen_file.read_text()).items()}
    lat = [seen[i] - t for i, t in written.items() if i in seen]
    return {
        "system": "baseline: FTS5 tailer (100 ms poll)",
        "lines": len(written),
        "missing": len(written) - len(lat),
        **spread_ms(lat),
        "commits": None,
        "lines_per_commit": None,
    }


def table(rows: list[dict], args) -> str:
    out = [
        f"Freshness at {args.rate:g} lines/s across {args.files} files for {args.seconds:g} s "
        f"(background corpus {args.corpus:,} messages; reader polls every {args.poll * 1000:g} ms)",
        "",
        "| system | lines | p50 ms | p95 ms | p99 ms | max ms | missing | commits | lines/commit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['system']} | {r['lines']} | {r['p50']} | {r['p95']} | {r['p99']} | {r['max']} | "
            f"{r['missing']} | {r['commits'] if r['commits'] is not None else '—'} | "
            f"{r['lines_per_commit'] if r['lines_per_commit'] is not None else '—'} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=50.0, help="lines per second (all files together)")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--corpus", type=int, default=20000, help="background messages (benchmarks.generate)")
    ap.add_argument("--poll", type=float, default=0.01, help="reader poll interval, seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: a temp dir)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "freshness.json")
    # internal roles
    ap.add_argument("--reader", choices=["tantivy", "sqlite"], help=argparse.SUPPRESS)
    ap.add_argument("--tailer", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--seen", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.reader == "tantivy":
        tantivy_reader(args.n, args.seen, args.poll, args.n / 10 + 300)
        return 0
    if args.reader == "sqlite":
        sqlite_reader(args.db, args.n, args.seen, args.poll, args.n / 10 + 300)
        return 0
    if args.tailer:
        fts5_tailer(args.tailer, args.db, 0.1)
        return 0

    from benchmarks.generate import generate

    work = args.work or Path(tempfile.mkdtemp(prefix="recall-freshness-"))
    work.mkdir(parents=True, exist_ok=True)
    root = work / "claude" / "projects"
    if root.exists():
        shutil.rmtree(root)
    gen = generate(root, args.corpus, seed=args.seed) if args.corpus else None
    rows = [run_recall(work, args)]
    # the tailer first takes in everything recall indexed (corpus + recall-phase lines)
    args.corpus_indexed = int(0.99 * (rows[0].get("indexed_messages") or 0))
    if not args.no_baseline:
        rows.append(run_baseline(work, args))
    result = {
        "benchmark": "freshness",
        "rate": args.rate,
        "files": args.files,
        "seconds": args.seconds,
        "corpus_messages": args.corpus,
        "poll_ms": args.poll * 1000,
        "generated": gen.__dict__ if gen is not None else None,
        "cpus": os.cpu_count(),
        "results": rows,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str))
    print(table(rows, args))
    print(f"\nJSON: {args.out}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
