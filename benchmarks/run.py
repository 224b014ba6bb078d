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
``run.json`` to ``--out-dir``. ``--write-docs`` regenerates ``docs/benchmarks.md`` whole from
this run alone: this module is its only writer. Timings are figures, never test assertions.
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

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "benchmarks.md"
OUT_DIR = REPO / "benchmarks" / "out"
SCALING_RECORD = REPO / "benchmarks" / "scaling.json"  # the scaling rows behind the docs, kept
BYTES_PER_MESSAGE = 2600  # generated JSONL per indexable message (measured: 2.52 KB)

TARGETS = {
    "search_p50_ms": 5.0,
    "hook_service_p50_ms": 50.0,
    "hook_local_p50_ms": 100.0,
    "freshness_p95_ms": 1000.0,
    "service_rss_mb": 300.0,
    # issue #21: what a user with a long history feels in the first minutes
    "newest_searchable_s": 5.0,   # after `recall serve` starts on an empty state directory
    "week_searchable_s": 15.0,
    "backfill_vs_path_order": 1.10,  # the whole backfill, newest first ÷ path order (the order before)
    "hook_busy_p95_ratio": 2.0,   # the hook's p95 during a full backfill ÷ on the idle index
    "big_session_rss_mb": 300.0,  # one 200 MB transcript
    "big_session_fresh_max_ms": 2000.0,
}
# Retired by issue #21 (they measure the engine, not what a user feels; the floor section says
# where their limit is). Their figures and ratios stay in the table as information.
RETIRED = {"backfill_rate": 30_000, "search_speedup": 10.0}


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
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"cpu": cpu or platform.processor() or "?", "cores": os.cpu_count(), "ram_gb": mem_gb,
            "python": platform.python_version(), "tantivy": tantivy_version,
            "os": f"{platform.system()} {platform.release()}", "commit": commit}


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
    out = {"index": index, "fts5": fts5, "fts5_db": str(work / "baseline-fts5.db"),
           "home": str(work / "home-index")}
    if serve:
        from benchmarks import catchup

        _log("backfill: recall serve, newest files first …")
        out["serve"] = catchup.newest_first(claude, work)
        _log(f"  {out['serve']['messages']:,} messages in {out['serve']['seconds']} s; newest session "
             f"searchable at {out['serve']['newest_searchable_s']} s, the last 7 days at "
             f"{out['serve']['week_searchable_s']} s")
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
    out = catchup.typing_during_backfill(claude, work, hook_latency.prompts(seed, runs), processes["project"],
                                         seed, runs)
    _log(f"  hook p50 {out['hook']['p50_ms']} ms, p95 {out['hook']['p95_ms']} ms; still backfilling at the end: "
         f"{out['still_backfilling']}")
    return out


def part_big_session(work: Path, mb: int, seed: int) -> dict:
    from benchmarks import catchup

    _log(f"one {mb} MB transcript landing in a running service …")
    out = catchup.big_session(work, mb, seed)
    _log(f"  read in {out['ingest_seconds']} s, peak RSS {out['peak_rss_mb']} MB, other files' freshness "
         f"max {out['fresh_max']} ms")
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
    out = subprocess.run([sys.executable, "-m", "benchmarks.floor", "--claude", str(claude), "--messages",
                          str(messages), "--home", str(home), "--seed", str(seed), "--reps", str(reps)],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    if out.returncode != 0:
        raise SystemExit(f"benchmarks.floor failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def part_processes(home: Path, seed: int, runs: int) -> dict:
    """``recall --raw`` and the prompt hook, without then with the service."""
    from benchmarks import hook_latency, query_latency
    from benchmarks.backfill import _status

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
    service = hook_latency.start_service(env, home)
    try:
        out["hook_service"] = hook_latency.measure("raw, service", texts, cwd, env)
        out["cli_service"] = query_latency.cli(env, seed, runs)
        st = _status(env)
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
    return {"rate": rate, "files": files, "seconds": seconds, "corpus": corpus, "recall": recall,
            "fts5": baseline}


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


# ---------------------------------------------------------------------------- the table
def _fmt(v, unit: str = "") -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and abs(v) < 10:
        s = f"{v:.2f}"
    elif isinstance(v, float) and abs(v) < 1000:
        s = f"{v:.1f}"
    else:
        s = f"{round(v):,}"
    return f"{s} {unit}".strip()


def _ratio(v, b) -> str:
    if v is None or b in (None, 0):
        return "—"
    return f"{v / b:.2f}×"


def rows_of(res: dict) -> list[dict]:
    """The table: one dict per figure (label, value, baseline, unit, ratio, target, ok)."""
    rows: list[dict] = []

    def row(label, value, base_label, base, unit, target="", ok=None, ratio=None):
        rows.append({"figure": label, "value": value, "baseline_name": base_label, "baseline": base,
                     "unit": unit, "ratio": f"{ratio:.2f}×" if ratio is not None else _ratio(value, base),
                     "target": target,
                     "status": "—" if ok is None else ("pass" if ok else "MISS")})

    bf = res.get("backfill") or {}
    ix, f5, sv = bf.get("index") or {}, bf.get("fts5") or {}, bf.get("serve")
    rate = lambda r: round(r["messages"] / r["seconds"]) if r.get("seconds") else None  # noqa: E731
    cpu_rate = lambda r: round(r["messages"] / r["cpu_seconds"]) if r.get("cpu_seconds") else None  # noqa: E731
    if ix:
        r = rate(ix)
        row("backfill `recall index`, messages/s (wall)", r, "FTS5", rate(f5), "msg/s")
        row("backfill `recall index`, messages per CPU-second", cpu_rate(ix), "FTS5", cpu_rate(f5), "msg/CPU-s")
        row("backfill `recall index`, peak RSS", ix.get("peak_rss_mb"), "FTS5", f5.get("peak_rss_mb"), "MB")
        if ix.get("peak_anon_mb") is not None:
            row("backfill `recall index`, peak anonymous RSS", ix["peak_anon_mb"], "FTS5",
                f5.get("peak_anon_mb"), "MB")
    rss_cap = TARGETS["service_rss_mb"]
    if sv:
        row("backfill `recall serve` (start-up), messages/s", rate(sv), "FTS5", rate(f5), "msg/s")
        row("`recall serve` peak RSS during the backfill", sv.get("peak_rss_mb"), "FTS5 backfill",
            f5.get("peak_rss_mb"), "MB", f"≤ {rss_cap:g} MB",
            sv.get("peak_rss_mb") is not None and sv["peak_rss_mb"] <= rss_cap)
        if sv.get("peak_anon_mb") is not None:
            row("`recall serve` peak anonymous RSS during the backfill", sv["peak_anon_mb"], "FTS5 backfill",
                f5.get("peak_anon_mb"), "MB", f"≤ {rss_cap:g} MB", sv["peak_anon_mb"] <= rss_cap)
    corpus = res.get("corpus") or {}
    raw_mb = round(corpus["bytes_on_disk"] / 1e6, 1) if corpus.get("bytes_on_disk") else None
    if ix:
        row("index size on disk", ix.get("index_mb"), "FTS5 database", f5.get("index_mb"), "MB",
            "≤ FTS5", ix.get("index_mb") is not None and f5.get("index_mb") is not None
            and ix["index_mb"] <= f5["index_mb"])
        row("index size on disk", ix.get("index_mb"), "raw JSONL", raw_mb, "MB")
        row("archive (redacted copy of every message)", ix.get("archive_mb"), "raw JSONL", raw_mb, "MB")
    q = res.get("queries")
    if q:
        p50, b50 = q["recall"]["p50_ms"], q["fts5"]["p50_ms"]
        row("search in-process p50", p50, "FTS5", b50, "ms", f"≤ {TARGETS['search_p50_ms']:g} ms",
            p50 is not None and p50 <= TARGETS["search_p50_ms"])
        speed = round(b50 / p50, 2) if p50 and b50 else None
        row("search in-process p50 speed-up over FTS5", speed, "", None, "×")
        row("search in-process p95", q["recall"]["p95_ms"], "FTS5", q["fts5"]["p95_ms"], "ms")
    p = res.get("processes")
    if p:
        for key, label, tkey in (("hook_local", "prompt hook p50, no service", "hook_local_p50_ms"),
                                 ("hook_service", "prompt hook p50, with service", "hook_service_p50_ms")):
            h = p[key]
            row(label, h["p50_ms"], "`python -c pass`", h["python_pass_p50_ms"], "ms",
                f"≤ {TARGETS[tkey]:g} ms", h["p50_ms"] <= TARGETS[tkey])
            row(label.replace("p50", "p95"), h["p95_ms"], "`python -c pass`", h["python_pass_p95_ms"], "ms")
        for key, label in (("cli_local", "`recall --raw` p50, no service"),
                           ("cli_service", "`recall --raw` p50, with service")):
            c = p[key]
            row(label, c["recall"]["p50_ms"], "`python -c pass`", c["python_pass"]["p50_ms"], "ms")
        if p.get("service_rss_mb") is not None:
            row("`recall serve` RSS while serving", p["service_rss_mb"], "", None, "MB",
                f"≤ {rss_cap:g} MB", p["service_rss_mb"] <= rss_cap)
        if p.get("service_anon_mb") is not None:
            row("`recall serve` anonymous RSS while serving", p["service_anon_mb"], "", None, "MB",
                f"≤ {rss_cap:g} MB", p["service_anon_mb"] <= rss_cap)
    fr = res.get("freshness")
    if fr:
        r, b = fr["recall"], fr["fts5"]
        row("freshness p50 (line written → visible to another process)", r["p50"], "FTS5 tailer", b["p50"], "ms")
        row("freshness p95", r["p95"], "FTS5 tailer", b["p95"], "ms", f"≤ {TARGETS['freshness_p95_ms']:g} ms",
            r["p95"] is not None and r["p95"] <= TARGETS["freshness_p95_ms"] and not r["missing"])
    catchup_rows(res, row)
    return rows


def catchup_rows(res: dict, row) -> None:
    """Issue #21's targets: newest first, typing during the backfill, one huge session."""
    bf = res.get("backfill") or {}
    sv, po = bf.get("serve") or {}, bf.get("serve_path_order") or {}

    def within(v, cap):
        return v is not None and v <= cap

    if sv.get("newest_searchable_s") is not None or po:
        t = TARGETS
        row("newest session searchable after `recall serve` starts", sv.get("newest_searchable_s"),
            "files in path order", po.get("newest_searchable_s"), "s", f"≤ {t['newest_searchable_s']:g} s",
            within(sv.get("newest_searchable_s"), t["newest_searchable_s"]))
        row(f"last 7 days searchable ({sv.get('week_sessions') or 0:,} sessions, "
            f"{sv.get('week_messages') or 0:,} messages)", sv.get("week_searchable_s"), "files in path order",
            po.get("week_searchable_s"), "s", f"≤ {t['week_searchable_s']:g} s",
            within(sv.get("week_searchable_s"), t["week_searchable_s"]))
        ot = bf.get("order_timing") or {}
        if ot.get("median_ratio"):  # alternating pairs without the poller: the figure the target reads
            ratio = ot["median_ratio"]
            n = len(ot["pairs"])
            row("whole start-up backfill, newest first (" + (f"median of {n} alternating pairs" if n > 1 else
                                                             "one pair, no poller") + ")",
                ot["newest_median_s"], "files in path order", ot["path_median_s"], "s",
                f"≤ {t['backfill_vs_path_order']:.2f}× path order", ratio <= t["backfill_vs_path_order"],
                ratio=ratio)
        elif po.get("seconds") and sv.get("seconds"):
            ratio = round(sv["seconds"] / po["seconds"], 3)
            row("whole start-up backfill, newest first", sv["seconds"], "files in path order", po["seconds"], "s",
                f"≤ {t['backfill_vs_path_order']:.2f}× path order", ratio <= t["backfill_vs_path_order"])
    ty = res.get("typing")
    idle = ((res.get("processes") or {}).get("hook_service")) or {}
    if ty and not ty.get("skipped"):
        h = ty["hook"]
        row("prompt hook p50 during a full backfill", h["p50_ms"], "idle index", idle.get("p50_ms"), "ms")
        row("prompt hook p95 during a full backfill", h["p95_ms"], "idle index", idle.get("p95_ms"), "ms",
            f"≤ {TARGETS['hook_busy_p95_ratio']:g}× idle",
            bool(idle.get("p95_ms")) and h["p95_ms"] <= TARGETS["hook_busy_p95_ratio"] * idle["p95_ms"])
        cli_idle = ((res.get("processes") or {}).get("cli_service") or {}).get("recall") or {}
        row("`recall --raw` p50 during a full backfill", ty["raw"]["recall"]["p50_ms"], "idle index",
            cli_idle.get("p50_ms"), "ms")
        row("`recall --raw` p95 during a full backfill", ty["raw"]["recall"]["p95_ms"], "idle index",
            cli_idle.get("p95_ms"), "ms")
    big = res.get("big_session")
    if big and not big.get("skipped"):
        row(f"one {big['mb']:g} MB transcript: `recall serve` peak RSS", big["peak_rss_mb"], "", None, "MB",
            f"≤ {TARGETS['big_session_rss_mb']:g} MB", within(big["peak_rss_mb"], TARGETS["big_session_rss_mb"]))
        row(f"one {big['mb']:g} MB transcript: other files' freshness, max while it is read", big["fresh_max"],
            "", None, "ms", f"≤ {TARGETS['big_session_fresh_max_ms']:g} ms",
            within(big["fresh_max"], TARGETS["big_session_fresh_max_ms"]) and not big["missing"])


def table(rows: list[dict]) -> str:
    out = ["| figure | recall | baseline | recall ÷ baseline | target | |", "|---|---:|---:|---:|---|---|"]
    for r in rows:
        base = f"{_fmt(r['baseline'], r['unit'])} ({r['baseline_name']})" if r["baseline"] is not None else "—"
        out.append(f"| {r['figure']} | {_fmt(r['value'], r['unit'])} | {base} | {r['ratio']} | "
                   f"{r['target'] or '—'} | {r['status']} |")
    return "\n".join(out)


def details(res: dict) -> str:
    """Secondary tables: per query kind, process latencies, freshness, backfill."""
    parts = []
    q = res.get("queries")
    if q:
        parts += ["### Search latency by query kind (in-process, limit 10)", "",
                  f"{q['queries']} queries × {q['reps']} repetitions; index of {q['index_documents']:,} documents, "
                  f"FTS5 table of {q['fts5_rows']:,} rows. Queries answered (≥ 1 hit): recall "
                  f"{q['answered']['recall']}/{q['answered']['of']}, FTS5 {q['answered']['fts5']}/{q['answered']['of']}.",
                  "", "| kind | recall p50 ms | recall p95 ms | FTS5 p50 ms | FTS5 p95 ms |", "|---|---:|---:|---:|---:|"]
        for k, v in [("all", q), *q["by_kind"].items()]:
            parts.append(f"| {k} | {v['recall']['p50_ms']} | {v['recall']['p95_ms']} | "
                         f"{v['fts5']['p50_ms']} | {v['fts5']['p95_ms']} |")
        parts.append("")
    p = res.get("processes")
    if p:
        parts += ["### Process latency (spawn to exit, interleaved with `python -c pass`)", "",
                  f"{p['runs']} runs per mode; prompts from `hook_latency.prompts`, cwd `{p['project']}`.", "",
                  "| process | p50 ms | p95 ms | `python -c pass` p50 ms | p95 ms | note |", "|---|---:|---:|---:|---:|---|"]
        for key, label in (("hook_local", "`recall hook user-prompt-submit`, no service"),
                           ("hook_service", "`recall hook user-prompt-submit`, service")):
            h = p[key]
            parts.append(f"| {label} | {h['p50_ms']} | {h['p95_ms']} | {h['python_pass_p50_ms']} | "
                         f"{h['python_pass_p95_ms']} | injected {h['injected']}/{h['runs']} |")
        for key, label in (("cli_local", "`recall --raw --limit 5`, no service"),
                           ("cli_service", "`recall --raw --limit 5`, service")):
            c = p[key]
            parts.append(f"| {label} | {c['recall']['p50_ms']} | {c['recall']['p95_ms']} | "
                         f"{c['python_pass']['p50_ms']} | {c['python_pass']['p95_ms']} | failed {c['failed']} |")
        parts.append("")
    fr = res.get("freshness")
    if fr:
        parts += [f"### Freshness at {fr['rate']:g} lines/s across {fr['files']} files for {fr['seconds']:g} s", "",
                  f"Background corpus {fr['corpus']:,} messages; readers poll every 10 ms.", "",
                  "| system | lines | p50 ms | p95 ms | p99 ms | max ms | missing | commits |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in (fr["recall"], fr["fts5"]):
            parts.append(f"| {r['system']} | {r['lines']} | {r['p50']} | {r['p95']} | {r['p99']} | {r['max']} | "
                         f"{r['missing']} | {r.get('commits') if r.get('commits') is not None else '—'} |")
        parts.append("")
    bf = res.get("backfill")
    if bf:
        parts += ["### Backfill", "",
                  "Peak RSS counts the index pages Tantivy maps (merges read whole segments through mmap: "
                  "reclaimable page cache); the anonymous RSS is the memory the process itself holds, sampled "
                  "every 100 ms.", "",
                  "| system | messages | wall s | CPU s | messages/s | peak RSS MB | peak anonymous MB | on disk MB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for key in ("index", "serve", "fts5"):
            r = bf.get(key)
            if not r:
                continue
            disk = r.get("index_mb")
            if r.get("archive_mb") is not None:
                disk = f"{r['index_mb']} index + {r['archive_mb']} archive"
            parts.append(f"| {r['system']} | {r['messages']:,} | {r['seconds']} | {r.get('cpu_seconds', '—')} | "
                         f"{round(r['messages'] / r['seconds']) if r['seconds'] else '—':,} | {r['peak_rss_mb']} | "
                         f"{r.get('peak_anon_mb', '—')} | {disk} |")
        parts.append("")
    return "\n".join(parts)


# ---------------------------------------------------------------------------- the docs
PROFILING = """\
## What profiling found

Recorded during the optimisation work of issue #7 (cProfile and py-spy on `recall index`
over generated corpora of 100K and 1M messages, micro-benchmarks of the pieces; every
before/after was measured in one run, alternating the two versions, on this shared 2-core
machine; medians). This section is prose written then, not figures regenerated by the
command.

**Backfill.** Before: ~15–17 CPU-seconds per 100K messages. Tantivy (tokenise, stem,
postings, doc store: its own threads) ~5.5 s; building documents ~2.2 s; parsing ~2 s
(orjson ~0.5 s of it); redaction ~1.3 s; archive and session bookkeeping ~1.5 s.

* `tantivy.Document(**fields)` cost 21.5 µs a message, `Document()` plus one `add_*` per
  field 5.8 µs: the keyword-argument conversion, not the indexing. Switched.
* `prepare_content`'s camelCase split was a zero-width look-around regex with no literal
  prefix (~20 µs a message, and every truncated tool result is non-ASCII because of its
  `…`). Now a byte map + `bytes.find` over the UTF-8 finds the same boundaries (checked on
  19K corpus texts and 50K fuzz strings): 17.3 → 3.9 µs a message on the corpus mix; the
  CJK regex only runs when a CJK lead byte is present.
* A delete-by-key per document (the upsert) cost ~10% of the backfill. An index that was
  empty when the writer opened it can only hold what that writer added, so an 8 MB bitmap
  of added key hashes skips the deletes that cannot match (a false positive only costs a
  needless delete).
* `FileContext` now keeps the per-file facts (subagent or not, source, the directory's
  project) that were recomputed per line through pathlib.
* Together, `recall index` of 100K messages: user CPU 16.0 → 13.0 s (first two changes and
  the bitmap), then 9.6 → 9.2 s (the UTF-8 path and FileContext, measured after others'
  changes to redaction had landed); peak RSS 271 → 149 MB.
* Tried and not kept: a parse process (JSON, redaction) feeding the writer over a
  multiprocessing queue (twice: a run-level pipeline, then a feed into `index_file`).
  Identical output (summaries, skip counts, archive bytes), but no gain beyond noise:
  under load, 7 alternated runs of 100K gave medians of 6.6 s in-process against 7.0 s
  pipelined; at load 1–3, 8.4 / 9.8 / 6.2 s against 12.3 / 6.5 / 6.5 s. In-process already
  keeps ~1.5 cores busy (Tantivy indexes on its own threads), so the pipeline mostly adds
  its pickling (~1 CPU-s per 100K) to a CPU-bound job. Also tried: a commit every 1M instead of 100K messages
  and one indexing thread instead of two: no difference beyond noise on a 300K corpus.
* Where the floor is (second round, 100K messages on a quiet machine, in place: the real
  `index_all` with one piece switched off at a time). Whole: 4.5–5.3 s wall, ~7.3 user +
  0.6–1.2 sys CPU-s. Without Tantivy (no documents built or added): 3.6 s wall on one core,
  so the Python side alone caps at ~28,000 messages/s. Without redaction: −1.1 CPU-s. The
  archive: ~0.5 CPU-s, mostly its writes. Tantivy alone, fed prebuilt documents: 2.9 CPU-s
  (the `content` field 1.6–1.7, the raw key and filter fields 0.6, the stored text 0.4,
  files and tools 0.2; positions cost nothing measurable over frequencies). That is ~6.5
  CPU-s before commits, merges (+~30% at 1M) and system time, against the 6.6 CPU-s that
  30,000 messages/s allows on two fully busy cores. Reaching it means moving parsing and
  redaction out of Python (a native extension: this machine reaches no crates registry) or
  dropping redaction or the archive (not acceptable). Orjson on the lines that are skipped
  anyway costs 0.05 s per 100K, and glibc's `malloc_trim` every 16 MB made no difference
  beyond noise (3 alternated runs).
* Third round, the floor now measured by every run (`benchmarks.floor`, section above).
  Inside Tantivy's 3.2–3.9 CPU-s per 100K, with scratch variants of the schema (one run
  each, noisy): the English stemmer on `content` costs 1.2–1.6 CPU-s, the unique `key`
  term of every message 0.4–0.7 (an indexed u64 hash in its place ~0.25), stemming
  `files` and `tools` ~0.15. Feeding `add_json` strings instead of built documents saved
  ~0.3 CPU-s of Python and cost Tantivy a little more. None of these closes the gap. Even
  without the stemmer and the key term (worse recall, and no upserts), Tantivy would take
  ~1.5 CPU-s; with the JSON (0.7) and redaction (1.3) that leaves ~3.2 of the 6.67 for
  parsing, archiving and building documents (4–5 in Python today), commits and merges.

**Search.** At 1M messages the Tantivy query dominates; Python's share is small.

* `Searcher.search` decoded every candidate (`limit × 8 + 30`, ~110) in full to group hits
  by session: now only score, time, kind, session and key are read for ranking and
  grouping, the rest for the hits shown (100K index: p50 10.0 → 8.4 ms, identical results).
* The doctype filter (`Must(doctype ∈ {message, session, memory})`) intersected every query
  with a posting list covering ~97% of the index. Every document has exactly one of these
  doctypes, so `MustNot(the others)` selects the same documents: 1M index, p50 13.7 →
  8.7 ms, identical hits and scores.
* Snippets: the highlighter tried one look-behind per query term at every position of the
  text (~144 µs a snippet, 10 per search); the terms now share one word-start check (the
  matches are the same) and the densest-window search keeps counts as it slides: ~36 µs,
  identical snippets on 12.5K (text, query) pairs; mean search time at 100K 5.65 → 4.41 ms.
* Second round (1M index, quiet machine, 60 queries × 3; totals per search, p50):
  - `searcher.search(..., count=False)`: Tantivy no longer counts every match: 6.9 → 6.5 ms.
  - An exact phrase (identifier, path, quoted text) already rewards its adjacent parts, so
    no sloppy bigram is added for a pair inside one (on a path both read the same common
    positions); a pasted prompt keeps its 3 phrases with the rarest part (a phrase costs
    1–7 ms at 1M when its parts are common): 6.5 → 4.7 ms; paths 22 → 12 ms, pasted prompts
    18 → 8 ms, quoted phrases 4.0 → 2.8 ms. Retrieval quality, old and new code in one
    session: 10 of the 12 LoCoMo and LongMemEval figures identical to the fourth decimal,
    LoCoMo NDCG@5 and NDCG@10 +0.0001.
  - Ranking and grouping read three fast-field columns (`ts`, `group`, `dtcode`; schema 2)
    instead of ~110 stored documents (1.3 ms): 4.7 → 4.3 ms.
  - Tried and dropped: a cheap first pass (terms only, top 200), then the phrases run only
    on those candidates through a term set of their keys: the term set alone cost 6.6 ms.
* Third round (1M index, 60 queries × 3, old and new code alternated three times in one
  session): what a path cost was not its phrase but its common parts. `home`, `src`,
  `simple`, `py` are each in 23–38% of the messages; BM25 scores such a term almost flat,
  so block-max WAND skips none of its postings (2–2.8 ms each, top 110 or top 10 alike), and
  any phrase or sloppy-bigram clause in the union stops the pruning of all the others. A
  single optional clause checked on the ~55K–110K documents the rarer terms match still
  cost 4–11 ms (Tantivy's union refills 4,096-document windows, decoding every block).
  - A content word in ≥ 20% of the index (and ≥ 5,000 documents) gets no term clause, only
    its place in phrases; stopwords never (LoCoMo lost ~1% of recall@10 when they were);
    the rarest word always stays. Below that, the phrases and bigrams run as a second query
    over the documents that earn them (few) and the term union stays bare; merged, the top
    110 is the single query's (tested on a generated corpus). Pasted prompts keep one query:
    their 16 bigrams match most of what their terms do (split: +2.7 ms in sequence; on two
    threads 7.35 → 6.7 ms for 2.7 ms more CPU, not kept).
  - p50 6.5 → 4.5–4.7 ms; paths 17.0 → 6.1–6.6, identifiers 5.3–5.4 → 4.5–4.8, keywords
    2.7–2.8 → 2.5–2.6, quoted phrases and pasted prompts unchanged (3.8–4.0, 12–13 ms). A
    5% share would have given 3.6 ms, at the price in recall below.
  - Retrieval: the share was chosen on the retrieval benchmark with the 5,000-document
    minimum lifted (at its 47K messages the 20% floor is ~9,400 documents: `make`, `like`,
    `help`, `use`, numbers). LoCoMo R@10 0.633 → 0.586 at 5%, 0.616 at 10%, 0.631 at 20%
    (NDCG@10 0.513 → 0.511); LongMemEval message R@10 0.874 → 0.861 and 0.859 at 5% and
    10%, unchanged at 20%.
  - Tantivy searches without holding the GIL, so the two queries run on two threads: p50
    4.6 → 3.5 ms (quoted phrases 3.9 → 2.9, identifiers 4.6 → 3.4, paths 6.4 → 4.7; two
    of three alternations, the third 4.2 under load). The CPU spent is the same.
  - Tried and dropped: the common terms as optional clauses (on the documents the rarer
    terms match): 9–30 ms for paths, the window refills above; a whole-identifier field
    fed by Tantivy's regex tokenizer (43 µs a message, twice the whole `content` analysis,
    against a backfill already short of its target) or by Python's `re` (80 µs).
* What remains, and the 10× target: FTS5's p50 on this query set is 14–20 ms, so 10× would
  need ~1.4–2.0 ms for the whole search; ranking, archive reads and snippets take ~1.2 ms
  of Python alone, and the Tantivy part 1.5 ms for keywords to 4 ms for paths.
**Processes.** `recall --raw` spent ~100 ms importing typer, click and every command
module before searching: the plain `--raw`/`--json` forms now skip typer (same output and
errors, tested side by side), and with the service running they import neither Tantivy
nor the indexer (the hit type moved to `recall/hit.py`). `recall --raw` p50 in the 1M
runs: 257 ms before, 78 ms after the first change (`python -c pass` 23–32 ms).

**Memory.** Peak RSS (`ru_maxrss`) includes the segment files Tantivy maps while merging
(reclaimable page cache); the anonymous RSS rows show what the process itself holds.

* Second round: at 1M the file-backed part peaked at ~290 MB during the large merges, most
  of it the doc store (335 MB of the 543 MB index), which held the text of every message,
  text the archive already keeps. The index now stores each message's position in its
  archive file (schema 3) and the searcher reads the shown hits' text from there: index
  543 → 282 MB (doc store 335 → 66 MB), `recall index` peak RSS at 1M 472 → 339–344 MB,
  and 0.6–1.0 fewer CPU-s per 100K messages (two alternated pairs at 100K).
* Tantivy's writer budget (its in-memory segments, shared by the indexing threads): the
  service's peak RSS over the 1M backfill was 301 and 268 MB at 64 MB, 254 and 253 MB at
  48 MB, 317 MB at 32 MB (more segments, more merging), CPU-seconds within the noise; it is
  48 MB now (was 128). One indexing thread instead of two peaked higher (388–409 MB).
* Not calling `malloc_trim` every 16 MB read: no CPU gain beyond noise (two alternated
  pairs at 1M), peak RSS +30–50 MB. Kept.
* What the two changes cost search (1M, one session, the benchmark's 60 queries, in-process
  breakdown, p50): reading the 10 shown hits' text from the archive is ~13 µs a hit with a
  warm page cache (after caching each session's file path; decoding went 0.19 → 0.40 ms a
  search); the smaller writer budget leaves more segments (13–14 against 6 for the same
  corpus), and the Tantivy query takes 3.9–4.2 ms against 3.4–3.6 (pasted prompts 4.7–5.5 →
  6.0–6.1 ms, keywords +0.1–0.2 ms). The old code on its index and the new one on a
  6-segment index, alternated three times: 4.4–5.0 against 4.8–5.0 ms. So the search
  target now sits at its edge: the price of the memory target.
* Upgrading to this schema rebuilds the index (the archive replayed, then the live
  transcripts re-read). At 1M messages that took 99 s, 152 CPU-s and 476 MB peak RSS,
  because every live message was indexed a second time (a delete and an add). The rebuild
  now skips what the replay indexed (an 8-byte key per message): 71 s, 90 CPU-s, 291 MB.
"""

MISS_REASONS = {
    "`recall serve` peak RSS during the backfill": "`ru_maxrss` counts the segment files Tantivy maps while "
    "merging (page cache), and the peak moves with when the large merges fall (253 and 254 MB in two runs "
    "with this writer budget during the work, see below); the anonymous RSS row is the memory the service "
    "holds.",
    "`recall serve` peak anonymous RSS": "The service's own memory during the start-up backfill (writer heap, "
    "parse state, merge buffers).",
    "search in-process p50": "The Tantivy queries: a union of 3 scored clauses per informative term, and "
    "the phrase and proximity bonuses as a second query on a second thread (see Search below); ~1.2 ms of Python on top "
    "(ranking columns, archive reads, snippets). Paths and pasted prompts are the slow kinds.",
    "prompt hook p50, with service": "Process start-up is most of it: `python -c pass` alone is in the baseline "
    "column; the hook adds imports, the socket round trip and the search.",
    "prompt hook p50, no service": "Process start-up, imports, opening the index and the search in-process.",
    "freshness p95": "Commit cadence of the service under the write load.",
    "index size on disk": "Postings, positions for phrases and the filter fields; the text itself is read "
    "from the archive.",
    "newest session searchable": "The service's start (imports, opening the index) and the first file read "
    "and committed.",
    "last 7 days searchable": "The week's files are read first and committed as they are read (at most a "
    "quarter of the backfill's age apart); what is left is the reading itself.",
    "whole start-up backfill, newest first": "Both orders run the same code and commit on the same schedule; "
    "only the order of the files differs. The two runs are not alternated here, and the gap is not explained "
    "yet: at 300K messages, alternated twice (`python -m benchmarks.catchup --messages 300000 --parts "
    "newest,path`), newest first took 20.7 and 25.5 s and path order 33.7 and 31.0 s.",
    "prompt hook p95 during a full backfill": "The machine's cores are busy with the backfill (at a lower "
    "priority) and with other work; the hook's own process competes with both.",
    "one ": "One huge file is read in 4 MB slices with the other files' lines between them.",
}


def missed(rows: list[dict], res: dict | None = None) -> list[str]:
    """The targets this run missed, each with its figure and why (reasons written by hand,
    plus what this run measured where it explains the miss)."""
    out = []
    for r in rows:
        if r["status"] != "MISS":
            continue
        keys = [k for k in MISS_REASONS if r["figure"].startswith(k)]
        why = MISS_REASONS[max(keys, key=len)] if keys else ""
        sv = (((res or {}).get("backfill") or {}).get("serve")) or {}
        if r["figure"].startswith("last 7 days searchable") and sv.get("seconds") and sv.get("week_messages"):
            rate = sv["messages"] / sv["seconds"]
            why += (f" This run: {sv['week_messages']:,} messages in the last 7 days at the backfill's average "
                    f"{rate:,.0f} messages/s are {sv['week_messages'] / rate:.1f} s of reading alone.")
        base = f" (baseline {_fmt(r['baseline'], r['unit'])}, {r['baseline_name']})" if r["baseline"] is not None else ""
        out.append(f"* **{r['figure']}**: {_fmt(r['value'], r['unit'])}{base}, target {r['target']}. {why}")
    if not out:
        return ["Every target was met in this run.", ""]
    return [*out, ""]


def shown_command(command: str) -> str:
    """The command as the docs show it: without ``--note`` (shown on its own line)."""
    words, out, skip = shlex.split(command), [], False
    for w in words:
        if skip or w.startswith("--note="):
            skip = False
            continue
        if w == "--note":
            skip = True
            continue
        out.append(w)
    return " ".join(shlex.quote(w) for w in out)


def render_docs(res: dict, rows: list[dict]) -> str:
    from benchmarks import answers_and_ranking, injection, plugin_launcher, startup, team
    from benchmarks import forget as forget_bench
    from benchmarks import stale as stale_marks

    m = res["machine"]
    res = dict(res, command=shown_command(res["command"]))
    lines = [
        "# Benchmarks",
        "",
        "<!-- Generated by `python -m benchmarks.run --write-docs`: do not edit by hand; rerun it. -->",
        "",
        f"Every figure below comes from one run of `{res['command']}`, each next to its baseline "
        "measured in the same run. Timings are wall-clock on a shared machine (other work was "
        "running: see the load averages); CPU-seconds are given where noise matters.",
        "",
        "## Machine and run",
        "",
        f"* CPU: {m['cpu']}, {m['cores']} cores; RAM {m['ram_gb']} GB; {m['os']}",
        f"* Python {m['python']}, tantivy {m['tantivy']}, recall at commit `{m['commit']}`",
        f"* Date {res['started']} (UTC); run took {res['seconds'] / 60:.1f} min",
        f"* Load average (1, 5, 15 min) at start {res['load_start']}, at end {res['load_end']}",
        *([f"* Load: {res['note']}"] if res.get("note") else []),
        f"* Corpus: {res['corpus']['messages']:,} indexable messages, {res['corpus']['lines']:,} JSONL lines, "
        f"{res['corpus']['files']:,} files, {res['corpus']['bytes_on_disk'] / 1e6:,.0f} MB "
        f"(`benchmarks.generate`, seed {res['seed']}), in `{res['workdir_kind']}`",
        "",
        "Rerun: `" + res["command"] + "` (add `--messages 5000000` for 5M; `--quick` for a smoke run).",
        "",
        "## Results",
        "",
        table(rows),
        "",
        "## Targets missed in this run",
        "",
        *missed(rows, res),
        "Retired targets (issue #21): backfill ≥ 30,000 messages/s and search ≥ 10× FTS5 measure the "
        "engine, not what a user feels, and the floor below shows where their limit is; their figures and "
        "ratios stay in the table above as information. What replaced them: the first minutes with a long "
        "history (newest first), typing during the backfill and one huge session, below.",
        "",
        *scaling_section(res),
        *catchup_section(res),
        details(res),
        *floor_section(res),
        PROFILING,
        *retrieval_section(res),
        *answers_and_ranking.sections(res),
        *injection.sections(),
        *forget_bench.docs_sections(),
        *startup.sections(),
        *plugin_launcher.sections(res),
        *stale_marks.sections(),
        *team.sections(res),
    ]
    return "\n".join(lines).rstrip() + "\n"


SCALING_SIZES = (100_000, 1_000_000, 5_000_000)


def scaling_row(res: dict) -> dict:
    """One run's row of the scaling table."""
    bf = res.get("backfill") or {}
    ix, sv = bf.get("index") or {}, bf.get("serve") or {}
    q = (res.get("queries") or {}).get("recall") or {}
    p = res.get("processes") or {}
    return {"messages": res["messages"], "backfill_index_s": ix.get("seconds"), "backfill_serve_s": sv.get("seconds"),
            "index_mb": ix.get("index_mb"), "archive_mb": ix.get("archive_mb"),
            "raw_mb": round(res["corpus"]["bytes_on_disk"] / 1e6) if (res.get("corpus") or {}).get("bytes_on_disk") else None,
            "search_p50_ms": q.get("p50_ms"), "search_p95_ms": q.get("p95_ms"),
            "serve_peak_rss_mb": sv.get("peak_rss_mb"), "serve_rss_mb": p.get("service_rss_mb"),
            "date": res.get("started"), "commit": (res.get("machine") or {}).get("commit"),
            "command": res.get("command"), "load": [res.get("load_start"), res.get("load_end")]}


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


def scaling_section(res: dict) -> list[str]:
    rows = {r["messages"]: r for r in res.get("scaling") or [scaling_row(res)]}
    out = ["## What a history of your size costs", "",
           "One row per corpus size, each from its own run of `benchmarks.run` (date, commit and load "
           "below the table); backfill from scratch on an empty state directory.", "",
           "| messages | raw JSONL | backfill `recall index` | backfill `recall serve` | index | archive | "
           "search p50 / p95 | `recall serve` peak RSS in the backfill / serving |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sorted(set(SCALING_SIZES) | set(rows)):
        r = rows.get(n)
        if r is None:
            out.append(f"| {n:,} | not run yet: `python -m benchmarks.run --messages {n} --write-docs` "
                       f"| | | | | | |")
            continue
        out.append(f"| {n:,} | {_fmt(r['raw_mb'], 'MB')} | {_fmt(r['backfill_index_s'], 's')} | "
                   f"{_fmt(r['backfill_serve_s'], 's')} | {_fmt(r['index_mb'], 'MB')} | {_fmt(r['archive_mb'], 'MB')} | "
                   f"{_fmt(r['search_p50_ms'])} / {_fmt(r['search_p95_ms'], 'ms')} | "
                   f"{_fmt(r['serve_peak_rss_mb'])} / {_fmt(r['serve_rss_mb'], 'MB')} |")
    out.append("")
    for n in sorted(rows):
        r = rows[n]
        out.append(f"* {n:,}: `{shown_command(r['command'])}` at `{r['commit']}`, {r['date']} UTC, load {r['load'][0]} → "
                   f"{r['load'][1]}")
    out.append("")
    return out


def catchup_section(res: dict) -> list[str]:
    """Issue #21's measurements in detail."""
    out = []
    bf = res.get("backfill") or {}
    sv, po = bf.get("serve") or {}, bf.get("serve_path_order") or {}
    if sv.get("newest_searchable_s") is not None:
        out += ["### The first minutes: newest first", "",
                "`recall serve` started on an empty state directory over the whole corpus (its files carry "
                "their last line's time); another process polled the index every 0.2 s. Seconds from the "
                "service's start.", "",
                "| order | newest session searchable | last 7 days searchable | whole backfill | peak RSS MB |",
                "|---|---:|---:|---:|---:|"]
        for label, r in (("newest first (now)", sv), ("path order (before)", po)):
            if r:
                out.append(f"| {label} | {r.get('newest_searchable_s')} s | {r.get('week_searchable_s')} s | "
                           f"{r.get('seconds')} s | {r.get('peak_rss_mb')} |")
        out += ["", f"The last 7 days: {sv.get('week_sessions')} sessions, {sv.get('week_messages') or 0:,} "
                f"messages; the newest session {sv.get('newest_messages') or 0:,} messages.", ""]
        ot = bf.get("order_timing") or {}
        if ot.get("pairs"):
            out += ["The whole backfill's cost of the order is timed apart, without the poller (whose "
                    "queries share the two cores, and reach the newest-first run's sessions sooner): "
                    f"{len(ot['pairs'])} pairs of runs, the order within a pair alternating so that a drift "
                    "of the machine's speed hits both alike (`benchmarks.catchup.order_timing`).", "",
                    "| pair | ran first | newest first | path order | ratio |", "|---:|---|---:|---:|---:|"]
            for i, p in enumerate(ot["pairs"]):
                out.append(f"| {i + 1} | {'newest first' if i % 2 == 0 else 'path order'} | {p['newest']} s | "
                           f"{p['path']} s | {p['ratio']:.3f} |")
            out += [f"| median | | {ot['newest_median_s']} s | {ot['path_median_s']} s | "
                    f"**{ot['median_ratio']:.3f}** |", ""]
    ty = res.get("typing")
    if ty and ty.get("hook"):
        pb, pa = ty.get("progress_before") or {}, ty.get("progress_after") or {}
        idle = (res.get("processes") or {}).get("hook_service") or {}
        ended = f"{pa.get('files_done', 0):,}" if pa else "all"
        out += ["### Typing during a full backfill", "",
                f"The prompt hook ({ty['hook']['runs']} prompts) and `recall --raw` "
                f"({ty['raw']['recall']['n']} runs) while `recall serve` backfilled the corpus from scratch "
                f"(at a lower CPU and I/O priority); the backfill had read {pb.get('files_done', 0):,} of "
                f"{pb.get('files_total', 0):,} files when they started and {ended} when they ended"
                f"{'' if ty.get('still_backfilling') else ' (it finished before them)'}.", "",
                "| | p50 ms | p95 ms | `python -c pass` p50 ms | prompts injected |", "|---|---:|---:|---:|---:|",
                f"| hook, during the backfill | {ty['hook']['p50_ms']} | {ty['hook']['p95_ms']} | "
                f"{ty['hook']['python_pass_p50_ms']} | {ty['hook']['injected']}/{ty['hook']['runs']} |",
                f"| hook, idle index | {idle.get('p50_ms')} | {idle.get('p95_ms')} | "
                f"{idle.get('python_pass_p50_ms')} | {idle.get('injected')}/{idle.get('runs')} |",
                f"| `recall --raw`, during the backfill | {ty['raw']['recall']['p50_ms']} | "
                f"{ty['raw']['recall']['p95_ms']} | {ty['raw']['python_pass']['p50_ms']} | — |", ""]
        if ty.get("raw_note"):
            out += [f"What `recall --raw` printed on stderr meanwhile: `{ty['raw_note']}`", ""]
    big = res.get("big_session")
    if big and big.get("mb"):
        out += [f"### One {big['mb']:g} MB transcript", "",
                f"A {big['mb']:g} MB session file ({big['messages']:,} indexable messages, tool results of 20–60 KB) "
                f"moved into the transcript root of a running service, while 10 lines/s went to two other "
                f"files. Read and searchable in {big['ingest_seconds']} s; the service's peak RSS "
                f"{big['peak_rss_mb']} MB (anonymous {big['peak_anon_mb']} MB); the {big['lines_during']} lines "
                f"written to the other files meanwhile were searchable after p50 {big['fresh_p50']} ms, p95 "
                f"{big['fresh_p95']} ms, max {big['fresh_max']} ms ({big['missing']} missing).", ""]
    return out


def backfill_budget(res: dict) -> float:
    """CPU-seconds per 100K messages that the backfill target allows on this machine's cores
    (every core busy all the time)."""
    return res["machine"]["cores"] / RETIRED["backfill_rate"] * 1e5


def floor_fixed(ing: dict) -> float:
    """CPU-s per 100K of the backfill steps recall cannot drop, from ``benchmarks.floor``:
    reading the JSON, redaction and Tantivy's indexing."""
    return ing["read_json_cpu"] + ing["redact_cpu"] + ing["tantivy_cpu"]


def floor_section(res: dict) -> list[str]:
    """What the engine and the steps recall cannot drop leave of the two throughput targets
    (``benchmarks.floor``), from this run."""
    fl = res.get("floor")
    if not fl:
        return []
    out = ["## The floor under the retired throughput targets", "",
           "`benchmarks.floor` in the same run, in a process of its own: each step alone, so the "
           "figures say what is the engine's and what is recall's own overhead.", ""]
    ing = fl.get("ingest")
    if ing:
        budget = backfill_budget(res)
        fixed = floor_fixed(ing)
        parse = max(ing["reader_cpu"] - ing["read_json_cpu"] - ing["redact_cpu"], 0.0)
        rest = parse + ing["archive_cpu"] + ing["documents_cpu"] + ing["tantivy_feed_cpu"]
        ix = (res.get("backfill") or {}).get("index") or {}
        whole = ix["cpu_seconds"] / ix["messages"] * 1e5 if ix.get("cpu_seconds") and ix.get("messages") else None
        out += [f"**Backfill**, CPU-seconds per 100K messages, on the corpus' first {ing['messages']:,} messages "
                f"({ing['files']:,} files, {ing['lines']:,} lines). {RETIRED['backfill_rate']:,} messages/s on "
                f"{res['machine']['cores']} cores allows **{budget:.2f}** CPU-s per 100K, every core busy all the time.",
                "", "| step, run alone | CPU-s per 100K |", "|---|---:|",
                f"| reading the lines and parsing their JSON (orjson) | {ing['read_json_cpu']:.2f} |",
                f"| redaction (`indexer.redact`, over the parsed texts) | {ing['redact_cpu']:.2f} |",
                f"| Tantivy indexing: its own threads, fed prebuilt documents, committed, merges awaited "
                f"({ing['tantivy_wall']:.2f} s wall) | {ing['tantivy_cpu']:.2f} |",
                f"| **these three together** | **{fixed:.2f}** |",
                f"| left of the budget for everything else | {budget - fixed:.2f} |",
                f"| everything else today: parsing lines into messages {parse:.2f}, the archive "
                f"{ing['archive_cpu']:.2f}, building documents {ing['documents_cpu']:.2f}, feeding the writer "
                f"{ing['tantivy_feed_cpu']:.2f} | {rest:.2f} |"]
        if whole is not None:
            out.append(f"| the whole `recall index` backfill of this run (every thread, commits, merges, "
                       f"{ix['messages']:,} messages) | {whole:.2f} |")
        out.append("")
    se = fl.get("search")
    q = res.get("queries") or {}
    if se and q.get("fts5"):
        p = se["p50_ms"]
        goal = q["fts5"]["p50_ms"] / RETIRED["search_speedup"]
        out += [f"**Search**, p50 ms over the same {se['queries']} queries × {se['reps']} on the run's index "
                f"(each phase timed within one search; medians of phases do not add up exactly).", "",
                "| | p50 ms |", "|---|---:|",
                f"| {RETIRED['search_speedup']:g}× FTS5: FTS5's p50 in this run ÷ {RETIRED['search_speedup']:g} "
                f"| **{goal:.2f}** |",
                f"| the whole search | {p['total']:.2f} |",
                f"| Tantivy: the product's queries, ~110 candidates (as searched) | {p['tantivy']:.2f} |",
                f"| Tantivy: the product's queries, 10 results | {p['tantivy_k10']:.2f} |",
                f"| Tantivy: a bare union of the query's terms, 10 results (no phrase, proximity or filter) | "
                f"{p['bare_union_k10']:.2f} |",
                f"| Python: building the queries {p['build']:.2f}, ranking candidates {p['rank']:.2f}, reading "
                f"the 10 hits and their snippets {p['hits']:.2f} | {p['build'] + p['rank'] + p['hits']:.2f} |", "",
                "| kind | whole search | Tantivy as searched | Tantivy, 10 results | bare union, 10 results |",
                "|---|---:|---:|---:|---:|"]
        for kind, v in se["by_kind"].items():
            out.append(f"| {kind} | {v['total']:.2f} | {v['tantivy']:.2f} | {v['tantivy_k10']:.2f} | "
                       f"{v['bare_union_k10']:.2f} |")
        out.append("")
    return out


def retrieval_section(res: dict) -> list[str]:
    """Retrieval quality measured by this run (``part_retrieval``)."""
    ret = res.get("retrieval")
    if not ret:
        return []
    out = ["## Retrieval quality", ""]
    if "skipped" in ret:
        return [*out, f"Not measured in this run: {ret['skipped']}", ""]
    from benchmarks.retrieval import markdown_table

    q = ", ".join(f"{k} {v}" for k, v in ret["questions"].items())
    out += [f"`benchmarks.retrieval` in the same run: questions {q}; "
            f"{ret['messages_indexed']:,} messages indexed through the real indexer; "
            f"baseline: {ret['baseline']}.", "",
            markdown_table(ret["summary"]), ""]
    return out


# ---------------------------------------------------------------------------- main
def run(args) -> dict:
    from benchmarks import cjk_probe
    from benchmarks.backfill import corpus

    t0 = time.perf_counter()
    res: dict = {"started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "load_start": load(),
                 "machine": machine(), "seed": args.seed, "command": args.command, "messages": args.messages,
                 "note": args.note}
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
        res["backfill"] = part_backfill(claude, work, serve=not args.no_serve,
                                       order_pairs=args.order_pairs if args.order_pairs is not None
                                       else (1 if args.quick else 3))
        home, db = Path(res["backfill"]["home"]), Path(res["backfill"]["fts5_db"])
        res["queries"] = part_queries(home, db, args.seed, args.reps)
        res["processes"] = part_processes(home, args.seed, args.runs)
        res["freshness"] = part_freshness(work, args.seed, args.freshness_seconds, args.freshness_corpus,
                                          args.freshness_rate, args.freshness_files)
        if not args.no_serve:
            res["typing"] = part_typing(claude, work, res["processes"], args.seed, args.runs)
        if args.big_mb:
            res["big_session"] = part_big_session(work, args.big_mb, args.seed)
        res["retrieval"] = part_retrieval(work, args.quick)
        res["cjk_probe"] = cjk_probe.run()  # (issue 18: benchmarks.answers_and_ranking)
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
    ap.add_argument("--order-pairs", type=int, default=None, metavar="N",
                    help="alternating pairs of whole backfills (newest first, path order) timed for "
                         "their ratio (default 3, 1 with --quick; 0 takes the two polled runs' times)")
    ap.add_argument("--reps", type=int, default=None, help="in-process repetitions per query")
    ap.add_argument("--runs", type=int, default=None, help="process runs per mode (hook, CLI)")
    ap.add_argument("--freshness-seconds", type=float, default=None)
    ap.add_argument("--freshness-corpus", type=int, default=None, help="background messages for freshness")
    ap.add_argument("--freshness-rate", type=float, default=50.0)
    ap.add_argument("--freshness-files", type=int, default=20)
    ap.add_argument("--big-mb", type=int, default=None, help="size of the one huge transcript (default 200; 0 skips)")
    ap.add_argument("--note", default="", help="what else ran on the machine meanwhile (shown in the docs)")
    ap.add_argument("--scaling-record", type=Path, default=SCALING_RECORD, metavar="JSON",
                    help="the committed scaling rows read for sizes this machine has not run, and "
                         "rewritten with --write-docs (default benchmarks/scaling.json)")
    ap.add_argument("--render", type=Path, default=None, metavar="RUN_JSON",
                    help="only print the table of an earlier run.json (and rewrite the docs from it with --write-docs)")
    args = ap.parse_args(argv)
    if args.render:
        res = json.loads(args.render.read_text())
        rows = rows_of(res)
        print(table(rows))
        if args.write_docs:
            args.docs.parent.mkdir(parents=True, exist_ok=True)
            args.docs.write_text(render_docs(res, rows))
            print(f"wrote {args.docs}")
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
    for a in (argv if argv is not None else sys.argv[1:]):  # the command, less private paths
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
    print(f"\n{res['corpus']['messages']:,} messages; run took {res['seconds'] / 60:.1f} min; "
          f"load {res['load_start']} → {res['load_end']}; JSON: {args.out_dir / 'run.json'}")
    if args.write_docs:
        args.docs.parent.mkdir(parents=True, exist_ok=True)
        args.docs.write_text(render_docs(res, rows))
        write_scaling_record(args.scaling_record, res["scaling"])
        print(f"wrote {args.docs} and {args.scaling_record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
