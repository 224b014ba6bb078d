"""The first minutes with a long history (issue 21): what a user feels while recall catches up.

Three measurements, each next to a baseline from the same run:

1. **Newest first** (``newest_first``): ``recall serve`` starts on an empty ``RECALL_HOME`` over
   the corpus (whose files carry their last line's time, ``generate.stamp_mtimes``); this
   process polls the index every 0.2 s. Figures: seconds from the service's start until every
   message of the newest session is searchable, then every message of the sessions of the
   last 7 days (files modified within 7 days of the newest), and the whole backfill.
   Baseline: the same run with the files in path order (``RECALL_BACKFILL_ORDER=path``: the
   order before this change).
2. **Typing during the backfill** (``typing_during_backfill``): ``recall serve`` starts on an
   empty ``RECALL_HOME`` and, while it backfills, the prompt hook and ``recall --raw`` run
   (``hook_latency.measure``, ``query_latency.cli``). Baseline: the same prompts on the idle,
   complete index (``benchmarks.run``'s process part).
3. **One huge session** (``big_session``): a 200 MB transcript (an agentic session with big
   tool results) lands in the transcript root of a running service while 10 lines/s are
   written to two other files; the service's peak RSS and how long those lines took to become
   searchable (``freshness.tantivy_reader``) while the big file was read.

    python -m benchmarks.catchup [--messages 100000] [--big-mb 200] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.harness import REPO, WORK, median, recall_exe, spread_ms, start_service, state_env, stop_service

WEEK = 7 * 86400


# ------------------------------------------------------------------------------ newest first
def _sessions(root: Path) -> tuple[str, list[str]]:
    """(the newest session, the sessions of the last 7 days) by file modification time."""
    from indexer.ingest import discover
    from indexer.sources.claude_code import session_of

    files = [(p.stat().st_mtime, p) for p in discover([root])]
    newest_t, newest = max(files, key=lambda t: t[0])
    week = sorted({session_of(p) for t, p in files if t >= newest_t - WEEK})
    return session_of(newest), week


class IndexPoller:
    """Counts, every ``interval`` seconds from another process's view of the index, the
    messages of the newest session and of the last week's sessions."""

    def __init__(self, index_dir: Path, newest: str, week: list[str], interval: float = 0.2) -> None:
        self.index_dir, self.newest, self.week, self.interval = index_dir, newest, week, interval
        self.samples: list[tuple[float, int, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import tantivy

        from indexer.schema import open_index

        index = None
        while not self.stop.is_set():
            try:
                if index is None:
                    index = open_index(self.index_dir)
                index.reload()
                s, schema = index.searcher(), index.schema
                Q, Must = tantivy.Query, tantivy.Occur.Must
                msg = Q.term_query(schema, "doctype", "message", index_option="basic")
                one = Q.boolean_query(
                    [(Must, msg), (Must, Q.term_query(schema, "session_id", self.newest, index_option="basic"))]
                )
                week = Q.boolean_query([(Must, msg), (Must, Q.term_set_query(schema, "session_id", self.week))])
                self.samples.append(
                    (time.monotonic(), s.search(one, 1, count=True).count, s.search(week, 1, count=True).count)
                )
            except (FileNotFoundError, ValueError, OSError):
                index = None
            self.stop.wait(self.interval)

    def finish(self) -> list[tuple[float, int, int]]:
        self.stop.set()
        self.thread.join()
        return self.samples


def _first_complete(samples, started: float, col: int) -> float | None:
    """Seconds after ``started`` of the first sample whose count ``col`` reached its final value."""
    if not samples or not samples[-1][col]:
        return None
    final = samples[-1][col]
    for t, *counts in samples:
        if counts[col - 1] >= final:
            return round(t - started, 2)
    return None


def newest_first(claude: Path, work: Path, order: str = "newest") -> dict:
    """``recall serve``'s start-up backfill (``backfill.run_serve``, every figure it gives)
    plus when the newest session and the last week became searchable."""
    from benchmarks import backfill

    newest, week = _sessions(claude / "projects")
    backfill._fresh(work / "home-serve")  # the poller must not see a previous run's index
    poller = IndexPoller(work / "home-serve" / "index", newest, week)
    try:
        row = backfill.run_serve(claude, work, {"RECALL_BACKFILL_ORDER": order} if order == "path" else None)
    finally:
        samples = poller.finish()
    started = row.pop("started_mono")
    row.update(
        {
            "order": order,
            "newest_searchable_s": _first_complete(samples, started, 1),
            "week_searchable_s": _first_complete(samples, started, 2),
            "week_sessions": len(week),
            "week_messages": samples[-1][2] if samples else None,
            "newest_messages": samples[-1][1] if samples else None,
        }
    )
    if order == "path":
        row["system"] = "recall serve (backfill, files in path order)"
    return row


def order_timing(claude: Path, work: Path, pairs: int = 3) -> dict:
    """The whole start-up backfill newest first against path order, timed without the poller
    of ``newest_first`` (its queries land on the same two cores, and sooner on the newest-first
    run, whose polled sessions fill first). ``pairs`` pairs of runs, the order within a pair
    alternating (newest then path, path then newest, ...) so that a drift of the machine's
    speed hits both alike; the figure is the median of the pairs' ratios."""
    from benchmarks import backfill

    runs: list[dict] = []
    for i in range(pairs):
        pair = {}
        for order in ("newest", "path") if i % 2 == 0 else ("path", "newest"):
            row = backfill.run_serve(claude, work, {"RECALL_BACKFILL_ORDER": order})
            pair[order] = row["seconds"]
            print(f"  pair {i + 1}/{pairs}: {order} {row['seconds']} s", file=sys.stderr, flush=True)
        pair["ratio"] = round(pair["newest"] / pair["path"], 3) if pair["path"] else None
        runs.append(pair)
    shutil.rmtree(work / "home-serve", ignore_errors=True)
    ratios = [p["ratio"] for p in runs if p["ratio"]]
    return {
        "pairs": runs,
        "median_ratio": round(median(ratios), 3) if ratios else None,
        "newest_median_s": round(median(p["newest"] for p in runs), 2) if runs else None,
        "path_median_s": round(median(p["path"] for p in runs), 2) if runs else None,
    }


# ------------------------------------------------------------------------------ typing
def _service_json(home: Path) -> dict:
    try:
        return json.loads((home / "service.json").read_text())
    except (OSError, ValueError):
        return {}


def typing_during_backfill(claude: Path, work: Path, texts: list[str], cwd: str, seed: int, runs: int) -> dict:
    """The prompt hook and ``recall --raw`` while ``recall serve`` backfills the corpus from scratch."""
    from benchmarks import hook_latency, query_latency
    from benchmarks.backfill import _fresh

    home = _fresh(work / "home-busy")
    env = state_env(home, claude)
    (home / "claude" / ".claude").mkdir(parents=True, exist_ok=True)
    env.update(hook_latency.bench_env(home, home / "claude" / ".claude"))
    env["CLAUDE_CONFIG_DIR"] = str(claude)  # the service reads the corpus; the hook's settings stay default
    env["PYTHONPATH"] = str(REPO)
    service = hook_latency.start_service(env)
    try:
        time.sleep(1.0)  # the backfill is under way (its first commit holds the newest session)
        before = _service_json(home).get("backfill") or {}
        hook = hook_latency.measure("hook, service backfilling", texts, cwd, env)
        raw = query_latency.cli(env, seed, runs)
        probe = subprocess.run(
            [*recall_exe(), "--raw", "--limit", "5", texts[0]], env=env, capture_output=True, text=True, timeout=120
        )
        st = _service_json(home)
        after = st.get("backfill") or {}
    finally:
        hook_latency.stop_service(service)
        shutil.rmtree(home, ignore_errors=True)
    return {
        "hook": hook,
        "raw": raw,
        "still_backfilling": bool(after),
        "progress_before": before,
        "progress_after": after,
        "raw_exit": probe.returncode,
        "raw_hits": probe.stdout.count("\n  "),
        "raw_note": probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "",
    }


# ------------------------------------------------------------------------------ one huge session
def write_big_session(path: Path, mb: int, seed: int = 0) -> dict:
    """A long agentic session of ``mb`` MB: prompts, answers, tool calls and big tool results
    (20-60 KB of command output each). Returns {messages, bytes, session}."""
    import uuid

    rng = random.Random(seed)
    words = [
        "build",
        "retry",
        "webhook",
        "index",
        "segment",
        "merge",
        "cache",
        "tokenizer",
        "parser",
        "deploy",
        "timeout",
        "latency",
        "schema",
        "migration",
        "session",
        "archive",
        "commit",
        "writer",
        "reader",
        "error",
        "warning",
        "trace",
        "stack",
        "frame",
        "module",
        "import",
        "config",
        "worker",
        "queue",
    ]
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    cwd = "/home/dev/huge-project"
    path.parent.mkdir(parents=True, exist_ok=True)
    ts0 = time.time() - 3600
    n = msgs = 0
    written = 0
    target = mb * 1_000_000

    def env(kind: str, i: int, message: dict) -> bytes:
        line = {
            "parentUuid": None,
            "isSidechain": False,
            "type": kind,
            "uuid": f"big-{i:08d}",
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts0 + i * 0.01)),
            "userType": "external",
            "cwd": cwd,
            "sessionId": sid,
            "version": "2.1.197",
            "gitBranch": "main",
            "message": message,
        }
        return (json.dumps(line) + "\n").encode()

    with open(path, "wb") as fh:
        while written < target:
            lines = [
                env("user", n, {"role": "user", "content": f"step {n}: run the {rng.choice(words)} tests again"}),
                env(
                    "assistant",
                    n + 1,
                    {
                        "role": "assistant",
                        "id": f"msg_{n}",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"toolu_{n}",
                                "name": "Bash",
                                "input": {"command": f"pytest -x tests/test_{rng.choice(words)}.py"},
                            }
                        ],
                    },
                ),
                env(
                    "user",
                    n + 2,
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"toolu_{n}",
                                "content": "\n".join(
                                    " ".join(rng.choices(words, k=12)) + f" line {k}"
                                    for k in range(rng.randint(250, 750))
                                ),
                            }
                        ],
                    },
                ),
                env(
                    "assistant",
                    n + 3,
                    {
                        "role": "assistant",
                        "id": f"msg_{n}b",
                        "content": [
                            {"type": "text", "text": f"The {rng.choice(words)} {rng.choice(words)} fails at step {n}."}
                        ],
                    },
                ),
            ]
            for line in lines:
                fh.write(line)
                written += len(line)
            n += 4
            msgs += 4
    return {"messages": msgs, "bytes": written, "session": sid}


def big_session(work: Path, mb: int = 200, seed: int = 0, rate: float = 10.0) -> dict:
    """A ``mb`` MB transcript lands in the root of a running service while ``rate`` lines/s go
    to two other files: the service's peak RSS, and those lines' freshness meanwhile."""
    import tantivy

    from benchmarks import freshness
    from benchmarks.backfill import AnonSampler, _fresh
    from indexer.schema import open_index

    base = _fresh(work / "big")
    claude = base / "claude"
    root = claude / "projects"
    stage = base / "stage" / "-home-dev-huge-project"
    info = write_big_session(stage / "huge.jsonl", mb, seed)
    home = base / "home"
    env = state_env(home, claude)
    root.mkdir(parents=True)
    freshness.write_load(root, 5.0, 1, 1.0, offset=90_000_000, tag="warm")  # the other files exist first
    serve = start_service(
        env, until="started", argv=[sys.executable, "-m", "recall.entry", "serve"], log=base / "serve.log"
    )
    sampler = AnonSampler(serve.pid)
    try:
        deadline = time.monotonic() + 300
        while _service_json(home).get("state") != "watching":
            if serve.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"recall serve did not come up: {(base / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.2)
        seconds = 60.0
        n = int(rate * seconds)
        seen_file = base / "seen.json"
        reader = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.freshness",
                "--reader",
                "tantivy",
                "--n",
                str(n),
                "--seen",
                str(seen_file),
                "--poll",
                "0.02",
            ],
            env=env,
        )
        time.sleep(1.5)
        written: dict[int, float] = {}
        writer = threading.Thread(target=lambda: written.update(freshness.write_load(root, rate, 2, seconds)))
        writer.start()
        time.sleep(2.0)
        landed = time.monotonic()
        (root / stage.name).mkdir(exist_ok=True)
        os.rename(stage / "huge.jsonl", root / stage.name / f"{info['session']}.jsonl")
        index = open_index(home / "index")
        q = tantivy.Query.term_query(index.schema, "session_id", info["session"], index_option="basic")
        done = None
        while time.monotonic() - landed < 600:
            index.reload()
            if index.searcher().search(q, 1, count=True).count >= info["messages"]:
                done = time.monotonic()
                break
            time.sleep(0.2)
        writer.join()
        reader.wait(timeout=seconds + 120)
        st = _service_json(home)
        anon = sampler.finish()
    finally:
        sampler.stop.set()
        stop_service(serve, 120)
    seen = {int(k): v for k, v in json.loads(seen_file.read_text()).items()}
    during = [seen[i] - t for i, t in written.items() if i in seen and landed <= t <= (done or t)]
    missing = sum(1 for i in written if i not in seen)
    out = {
        "mb": round(info["bytes"] / 1e6, 1),
        "messages": info["messages"],
        "ingest_seconds": round(done - landed, 1) if done else None,
        "peak_rss_mb": st.get("peak_rss_mb"),
        "peak_anon_mb": anon,
        "lines_during": len(during),
        "missing": missing,
        **{f"fresh_{k}": v for k, v in spread_ms(during).items()},
    }
    shutil.rmtree(base, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    from benchmarks.backfill import corpus

    ap = argparse.ArgumentParser(prog="python -m benchmarks.catchup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--big-mb", type=int, default=200)
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--parts", default="newest,path,big", help="comma-separated: newest,path,big")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    parts = set(args.parts.split(","))
    out: dict = {}
    if parts & {"newest", "path"}:
        claude, _info = corpus(args.work, args.messages, args.seed)
        for order in ("newest", "path"):
            if order in parts:
                out[order] = newest_first(claude, args.work, order)
                print(json.dumps(out[order]), flush=True)
    if "big" in parts:
        out["big"] = big_session(args.work, args.big_mb, args.seed)
        print(json.dumps(out["big"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
