"""The whole performance suite in one command: every figure next to its baseline from the
same run, the targets of issue #7, and (``--write-docs``) ``docs/benchmarks.md``.

    python -m benchmarks.run [--messages 1000000] [--quick] [--out-dir benchmarks/out] [--write-docs]

Steps (each reuses the benchmark module that owns it):

1. a corpus of ``--messages`` indexable messages (``benchmarks.generate``, deterministic from
   ``--seed``) in a work directory (``/dev/shm`` when it has room, else the temp dir);
2. backfill (``benchmarks.backfill``): ``recall index`` vs SQLite FTS5 fed the same parsed
   messages, then ``recall serve``'s start-up backfill; messages/s, CPU seconds, peak RSS,
   sizes on disk next to the raw JSONL;
3. in-process query latency over ``generate.query_set`` vs ``FTS5Store.search``
   (``benchmarks.query_latency``);
4. ``recall --raw`` and the UserPromptSubmit hook, process start to exit, vs ``python -c
   pass``, without and with the service (``benchmarks.query_latency`` /
   ``benchmarks.hook_latency``), and the service's RSS while serving;
5. freshness under a write load, recall serve vs the FTS5 tailer (``benchmarks.freshness``);
6. retrieval quality on LoCoMo and LongMemEval vs BM25 (``benchmarks.retrieval``, data from
   ``../shared/data``);
7. the floor under the two retired throughput targets (``benchmarks.floor``, in its own
   process): the CPU cost of each backfill step alone, Tantivy's indexing among them, on the
   first 100K messages of the corpus, and each phase of a search, Tantivy's own queries
   among them, on the run's index;
8. the first minutes with a long history (``benchmarks.catchup``, issue #21): when the newest
   session and the last 7 days become searchable after ``recall serve`` starts (baseline: the
   files in path order), the prompt hook and ``recall --raw`` while the service backfills
   (baseline: the idle index of step 4), and one 200 MB transcript landing in a running
   service (its RSS, other files' freshness meanwhile).

The scaling table of the docs takes one row from every ``run-<messages>.json`` in
``--out-dir`` (each run writes its own), so a 100K, a 1M and a 5M run make it together.

Prints one markdown table (figure, baseline, ratio, target, pass/miss) and writes
``run.json`` to ``--out-dir``. ``--write-docs`` keeps this run's results as
``benchmarks/run.json`` and has ``benchmarks.report`` (the page's one writer) render
``docs/benchmarks.md`` from them and the other committed results. Timings are figures, never
test assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from benchmarks.report import rows_of, scaling_row, table, write

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "benchmarks.md"
OUT_DIR = REPO / "benchmarks" / "out"
SCALING_RECORD = REPO / "benchmarks" / "scaling.json"  # the scaling rows behind the docs, kept
BYTES_PER_MESSAGE = 2600  # generated JSONL per indexable message (measured: 2.52 KB)


# ---------------------------------------------------------------------------- the machine
def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> dict:
    cpu = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_gb = None
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_gb = round(int(line.split()[1]) / (1 << 20), 1)
    try:
        from importlib.metadata import version

        tantivy_version = version("tantivy")
    except Exception:  # noqa: BLE001 - informational only
        tantivy_version = "?"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {
        "cpu": cpu or platform.processor() or "?",
        "cores": os.cpu_count(),
        "ram_gb": mem_gb,
        "python": platform.python_version(),
        "tantivy": tantivy_version,
        "os": f"{platform.system()} {platform.release()}",
        "commit": commit,
    }


def load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def pick_workdir(messages: int) -> Path:
    """/dev/shm when it has room for the corpus, the indexes and the baselines, else tmp."""
    need = messages * BYTES_PER_MESSAGE * 3 + (1 << 30)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        try:
            if shutil.disk_usage(shm).free > need:
                return Path(tempfile.mkdtemp(prefix="recall-bench-", dir=shm))
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix="recall-bench-"))


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _measure_cpu(fn, *args):
    """Run ``fn`` (which runs and waits for one child process); add the child's CPU seconds."""
    c0 = _children_cpu()
    row = fn(*args)
    row["cpu_seconds"] = round(_children_cpu() - c0, 2)
    return row


# ---------------------------------------------------------------------------- the parts
def part_backfill(claude: Path, work: Path, serve: bool = True, order_pairs: int = 3) -> dict:
    from benchmarks import backfill

    _log("backfill: recall index …")
    index = _measure_cpu(backfill.run_index, claude, work)
    _log(f"  {index['messages']:,} messages in {index['seconds']} s")
    _log("backfill: SQLite FTS5 baseline …")
    fts5 = _measure_cpu(backfill.run_fts5, claude, work)
    _log(f"  {fts5['messages']:,} messages in {fts5['seconds']} s")
    out = {"index": index, "fts5": fts5, "fts5_db": str(work / "baseline-fts5.db"), "home": str(work / "home-index")}
    if serve:
        from benchmarks import catchup

        _log("backfill: recall serve, newest files first …")
        out["serve"] = catchup.newest_first(claude, work)
        _log(
            f"  {out['serve']['messages']:,} messages in {out['serve']['seconds']} s; newest session "
            f"searchable at {out['serve']['newest_searchable_s']} s, the last 7 days at "
            f"{out['serve']['week_searchable_s']} s"
        )
        _log("backfill: recall serve, files in path order (the baseline) …")
        out["serve_path_order"] = catchup.newest_first(claude, work, order="path")
        shutil.rmtree(work / "home-serve", ignore_errors=True)
        _log(f"  {out['serve_path_order']['messages']:,} messages in {out['serve_path_order']['seconds']} s")
        if order_pairs > 0:
            _log(f"backfill: the whole backfill in both orders, {order_pairs} alternating pairs, no poller …")
            out["order_timing"] = catchup.order_timing(claude, work, order_pairs)
            _log(f"  newest first ÷ path order: median {out['order_timing']['median_ratio']}")
    return out


def part_typing(claude: Path, work: Path, processes: dict, seed: int, runs: int) -> dict:
    """The prompt hook and `recall --raw` while `recall serve` backfills the corpus from scratch
    (``benchmarks.catchup``); the idle figures are ``part_processes``'."""
    from benchmarks import catchup, hook_latency

    _log(f"typing during a full backfill: hook and CLI latency ({runs} runs each) …")
    out = catchup.typing_during_backfill(
        claude, work, hook_latency.prompts(seed, runs), processes["project"], seed, runs
    )
    _log(
        f"  hook p50 {out['hook']['p50_ms']} ms, p95 {out['hook']['p95_ms']} ms; still backfilling at the end: "
        f"{out['still_backfilling']}"
    )
    return out


def part_big_session(work: Path, mb: int, seed: int) -> dict:
    from benchmarks import catchup

    _log(f"one {mb} MB transcript landing in a running service …")
    out = catchup.big_session(work, mb, seed)
    _log(
        f"  read in {out['ingest_seconds']} s, peak RSS {out['peak_rss_mb']} MB, other files' freshness "
        f"max {out['fresh_max']} ms"
    )
    return out


def part_queries(home: Path, fts5_db: Path, seed: int, reps: int) -> dict:
    from benchmarks import query_latency

    _log(f"in-process query latency ({reps} reps) …")
    return query_latency.in_process(home, fts5_db, seed=seed, reps=reps)


def part_floor(claude: Path, home: Path, messages: int, seed: int, reps: int) -> dict:
    """``benchmarks.floor`` in a process of its own (its CPU accounting counts every thread of
    the process): the backfill steps on the first ``messages`` of the corpus, the search
    phases on the run's index."""
    _log(f"the floor: backfill steps alone on {messages:,} messages, search phases …")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.floor",
            "--claude",
            str(claude),
            "--messages",
            str(messages),
            "--home",
            str(home),
            "--seed",
            str(seed),
            "--reps",
            str(reps),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    if out.returncode != 0:
        raise SystemExit(f"benchmarks.floor failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def part_processes(home: Path, seed: int, runs: int) -> dict:
    """``recall --raw`` and the prompt hook, without then with the service."""
    from benchmarks import hook_latency, query_latency
    from benchmarks.harness import service_status

    claude_dir = home / "claude" / ".claude"
    claude_dir.mkdir(parents=True, exist_ok=True)
    env = hook_latency.bench_env(home, claude_dir)
    env["PYTHONPATH"] = str(REPO)
    local = {**env, "RECALL_NO_SERVICE": "1"}
    cwd = hook_latency.biggest_project(home)
    texts = hook_latency.prompts(seed, runs)
    out: dict = {"runs": runs, "project": cwd}
    _log(f"hook and CLI latency without the service ({runs} runs each) …")
    out["hook_local"] = hook_latency.measure("raw, no service", texts, cwd, local)
    out["cli_local"] = query_latency.cli(local, seed, runs)
    _log("hook and CLI latency with the service …")
    service = hook_latency.start_service(env)
    try:
        out["hook_service"] = hook_latency.measure("raw, service", texts, cwd, env)
        out["cli_service"] = query_latency.cli(env, seed, runs)
        st = service_status(env)
        out["service_rss_mb"] = st.get("rss_mb")
        out["service_peak_rss_mb"] = st.get("peak_rss_mb")
        out["service_anon_mb"] = st.get("anon_mb")  # without the index pages Tantivy maps
    finally:
        hook_latency.stop_service(service)
    return out


def part_freshness(work: Path, seed: int, seconds: float, corpus: int, rate: float, files: int) -> dict:
    from benchmarks import freshness
    from benchmarks.generate import generate

    fw = work / "freshness"
    root = fw / "claude" / "projects"
    shutil.rmtree(fw, ignore_errors=True)
    root.mkdir(parents=True)
    _log(f"freshness: {rate:g} lines/s over {files} files for {seconds:g} s, background corpus {corpus:,} …")
    if corpus:
        generate(root, corpus, seed=seed)
    args = SimpleNamespace(rate=rate, files=files, seconds=seconds, corpus=corpus, poll=0.01, seed=seed)
    recall = freshness.run_recall(fw, args)
    args.corpus_indexed = int(0.99 * (recall.get("indexed_messages") or 0))
    baseline = freshness.run_baseline(fw, args)
    shutil.rmtree(fw, ignore_errors=True)
    return {"rate": rate, "files": files, "seconds": seconds, "corpus": corpus, "recall": recall, "fts5": baseline}


def part_retrieval(work: Path, quick: bool) -> dict:
    """Retrieval quality on LoCoMo and LongMemEval (``benchmarks.retrieval``), recall vs BM25 in
    the same run; ``quick`` asks 20 questions per dataset. Without the data: why, not a failure."""
    from benchmarks import retrieval

    _log("retrieval quality: LoCoMo and LongMemEval …")
    try:
        rep = retrieval.run(limit_questions=20 if quick else None, workdir=work / "retrieval")
    except FileNotFoundError as exc:
        return {"skipped": str(exc)}
    finally:
        shutil.rmtree(work / "retrieval", ignore_errors=True)
    return {k: rep[k] for k in ("questions", "messages_indexed", "baseline", "seconds", "summary")}


def scaling(res: dict, out_dir: Path, record: Path | None = None) -> list[dict]:
    """The scaling table: this run's row, one from the latest ``run-<messages>.json`` in
    ``out_dir`` of every other size, and for a size neither has, the row kept in ``record``
    (``benchmarks/scaling.json``, committed: a manual 5M run's row outlives its machine)."""
    rows = {res["messages"]: scaling_row(res)}
    for path in sorted(out_dir.glob("run-*.json")):
        try:
            other = json.loads(path.read_text())
            n = int(other["messages"])
            if n not in rows and other.get("backfill") and other.get("queries"):
                rows[n] = scaling_row(other)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for r in read_scaling_record(record):
        rows.setdefault(r["messages"], r)
    return [rows[n] for n in sorted(rows)]


def read_scaling_record(record: Path | None) -> list[dict]:
    """The rows kept in ``record`` (none when it is missing or unreadable)."""
    if record is None:
        return []
    try:
        rows = json.loads(record.read_text())
        return [r for r in rows if isinstance(r, dict) and isinstance(r.get("messages"), int)]
    except (OSError, ValueError, TypeError):
        return []


def write_scaling_record(record: Path, rows: list[dict]) -> None:
    """Keep the scaling rows (one per size) in ``record``, beside the docs they were rendered into."""
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(sorted(rows, key=lambda r: r["messages"]), indent=1) + "\n")


# ---------------------------------------------------------------------------- main
def run(args) -> dict:
    from benchmarks import cjk_probe
    from benchmarks.backfill import corpus

    t0 = time.perf_counter()
    res: dict = {
        "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_start": load(),
        "machine": machine(),
        "seed": args.seed,
        "command": args.command,
        "messages": args.messages,
        "note": args.note,
    }
    work = args.work or pick_workdir(args.messages)
    work.mkdir(parents=True, exist_ok=True)
    res["workdir_kind"] = "/dev/shm" if str(work).startswith("/dev/shm") else "a temp dir on disk"
    _log(f"work directory {work}")
    try:
        _log(f"generating {args.messages:,} messages …")
        g0 = time.perf_counter()
        claude, info = corpus(work, args.messages, args.seed)
        res["corpus"] = {k: info.get(k) for k in ("messages", "lines", "files", "sessions", "bytes", "bytes_on_disk")}
        res["corpus"]["generate_seconds"] = round(time.perf_counter() - g0, 1)
        res["backfill"] = part_backfill(
            claude,
            work,
            serve=not args.no_serve,
            order_pairs=args.order_pairs if args.order_pairs is not None else (1 if args.quick else 3),
        )
        home, db = Path(res["backfill"]["home"]), Path(res["backfill"]["fts5_db"])
        res["queries"] = part_queries(home, db, args.seed, args.reps)
        res["processes"] = part_processes(home, args.seed, args.runs)
        res["freshness"] = part_freshness(
            work, args.seed, args.freshness_seconds, args.freshness_corpus, args.freshness_rate, args.freshness_files
        )
        if not args.no_serve:
            res["typing"] = part_typing(claude, work, res["processes"], args.seed, args.runs)
        if args.big_mb:
            res["big_session"] = part_big_session(work, args.big_mb, args.seed)
        res["retrieval"] = part_retrieval(work, args.quick)
        res["cjk_probe"] = cjk_probe.run()  # issue 18 (its prose: benchmarks/prose/cjk.md)
        res["floor"] = part_floor(claude, home, min(100_000, args.messages), args.seed, args.reps)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    res["load_end"] = load()
    res["seconds"] = round(time.perf_counter() - t0, 1)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000, help="corpus size (indexable messages)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and a short freshness phase")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where run.json goes")
    ap.add_argument("--write-docs", action="store_true", help="regenerate docs/benchmarks.md")
    ap.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: /dev/shm or tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-serve", action="store_true", help="skip the `recall serve` backfill")
    ap.add_argument(
        "--order-pairs",
        type=int,
        default=None,
        metavar="N",
        help="alternating pairs of whole backfills (newest first, path order) timed for "
        "their ratio (default 3, 1 with --quick; 0 takes the two polled runs' times)",
    )
    ap.add_argument("--reps", type=int, default=None, help="in-process repetitions per query")
    ap.add_argument("--runs", type=int, default=None, help="process runs per mode (hook, CLI)")
    ap.add_argument("--freshness-seconds", type=float, default=None)
    ap.add_argument("--freshness-corpus", type=int, default=None, help="background messages for freshness")
    ap.add_argument("--freshness-rate", type=float, default=50.0)
    ap.add_argument("--freshness-files", type=int, default=20)
    ap.add_argument("--big-mb", type=int, default=None, help="size of the one huge transcript (default 200; 0 skips)")
    ap.add_argument("--note", default="", help="what else ran on the machine meanwhile (shown in the docs)")
    ap.add_argument(
        "--scaling-record",
        type=Path,
        default=SCALING_RECORD,
        metavar="JSON",
        help="the committed scaling rows read for sizes this machine has not run, and "
        "rewritten with --write-docs (default benchmarks/scaling.json)",
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=None,
        metavar="JSON",
        help="where --write-docs keeps this run's results, the page's source "
        "(default: run.json beside the scaling record, benchmarks/run.json)",
    )
    ap.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="RUN_JSON",
        help="only print the table of an earlier run.json (and rewrite the docs from it with --write-docs)",
    )
    args = ap.parse_args(argv)
    if args.render:
        res = json.loads(args.render.read_text())
        print(table(rows_of(res)))
        if args.write_docs:
            print(f"wrote {write(res, args.docs)}")
        return 0
    q = args.quick
    args.reps = args.reps or (1 if q else 3)
    args.runs = args.runs or (6 if q else 30)
    args.freshness_seconds = args.freshness_seconds or (5.0 if q else 30.0)
    if args.freshness_corpus is None:
        args.freshness_corpus = 2_000 if q else 20_000
    if args.big_mb is None:
        args.big_mb = 20 if q else 200
    shown, skip = [], False
    for a in argv if argv is not None else sys.argv[1:]:  # the command, less private paths
        if skip or a.startswith(("--docs=", "--work=", "--out-dir=", "--note=")):
            skip = False
            continue
        if a in ("--docs", "--work", "--out-dir", "--note"):
            skip = True
            continue
        shown.append(a)
    args.command = " ".join(["python -m benchmarks.run", *(shlex.quote(a) for a in shown)])
    res = run(args)
    rows = rows_of(res)
    res["rows"] = rows
    args.out_dir.mkdir(parents=True, exist_ok=True)
    res["scaling"] = scaling(res, args.out_dir, args.scaling_record)
    (args.out_dir / "run.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    (args.out_dir / f"run-{args.messages}.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    print(table(rows))
    print(
        f"\n{res['corpus']['messages']:,} messages; run took {res['seconds'] / 60:.1f} min; "
        f"load {res['load_start']} → {res['load_end']}; JSON: {args.out_dir / 'run.json'}"
    )
    if args.write_docs:
        kept = args.results or args.scaling_record.with_name("run.json")
        kept.write_text(json.dumps(res, indent=1, default=str) + "\n")
        write(res, args.docs)
        write_scaling_record(args.scaling_record, res["scaling"])
        print(f"wrote {args.docs}, {kept} and {args.scaling_record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
