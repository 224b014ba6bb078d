"""How long the UserPromptSubmit hook takes, process start to output, as Claude Code runs it.

Each sample starts ``recall hook user-prompt-submit`` (the console script), writes a hook
payload to its stdin and stops the clock when its stdout closes, next to a plain
``python -c pass`` measured the same way in the same run (interleaved, so machine noise
hits both). Modes:

  raw, no service    the hook opens the index and searches in-process (no API key: no model)
  raw, service       the hook hands the prompt to a running ``recall serve`` over its socket
  trivial            an acknowledgement ("ok, continue"): filtered before any search

Usage::

    python -m benchmarks.hook_latency --home ~/.local/share/recall-bench   # an existing index
    python -m benchmarks.hook_latency --messages 1000000                  # build one first

Writes ``benchmarks/out/hook_latency.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import REPO, ms, percentile, recall_exe, start_service, stop_service, time_process

OUT = REPO / "benchmarks" / "out" / "hook_latency.json"


def bench_env(home: Path, claude_dir: Path) -> dict[str, str]:
    """An environment with no API key anywhere (the raw path) and the given state."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "RECALL_")) and k != "PYTHONDONTWRITEBYTECODE"
    }  # an installed recall has its bytecode cached
    env["RECALL_HOME"] = str(home)
    env["CLAUDE_CONFIG_DIR"] = str(claude_dir)
    env["HOME"] = str(claude_dir.parent)  # no ~/.config/anthropic/api_key either
    return env


def build(home: Path, messages: int, seed: int) -> dict:
    """Generate ``messages`` transcripts and index them into ``home``."""
    from benchmarks.generate import generate

    corpus = home / "corpus"
    t0 = time.perf_counter()
    stats = generate(corpus, messages, seed=seed)
    gen_s = time.perf_counter() - t0
    env = bench_env(home, home / "claude" / ".claude")
    t0 = time.perf_counter()
    subprocess.run(
        [*recall_exe(), "index", "--source", str(corpus), "--json"], env=env, check=True, stdout=subprocess.DEVNULL
    )
    return {
        "generated": getattr(stats, "messages", messages),
        "generate_seconds": round(gen_s, 1),
        "index_seconds": round(time.perf_counter() - t0, 1),
    }


def biggest_project(home: Path) -> str:
    con = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT project, COUNT(*) FROM sessions GROUP BY project ORDER BY 2 DESC LIMIT 1").fetchone()
    finally:
        con.close()
    if not row:
        raise SystemExit(f"no indexed sessions in {home}: pass --home of a built index or --messages N")
    return row[0]


def project_prompts(home: Path, project: str, seed: int, n: int) -> list[str]:
    """Questions about things said in ``project`` before: the first words of past user
    prompts there, asked again (these should recall something)."""
    import tantivy

    from recall.search.searcher import Searcher

    s = Searcher(home / "index")
    q = tantivy.Query
    query = q.boolean_query(
        [
            (tantivy.Occur.Must, q.term_query(s.schema, "project", project, index_option="basic")),
            (tantivy.Occur.Must, q.term_query(s.schema, "role", "user", index_option="basic")),
        ]
    )
    searcher = s.index.searcher()
    texts = []
    for _score, address in searcher.search(query, 3000).hits:
        words = s._hit(searcher.doc(address), 0.0, 0.0).text.split()  # text from the archive
        if len(words) >= 6:
            texts.append(" ".join(words[:12]))
    rng = random.Random(seed)
    rng.shuffle(texts)
    return [f"remind me what we found about this: {t}" for t in texts[:n]]


def prompts(seed: int, n: int) -> list[str]:
    """Questions built from the generator's query set (about any project: most of them are
    not about the measured one, so these mostly measure the search that finds nothing)."""
    from benchmarks.generate import query_set

    rng = random.Random(seed)
    out = []
    for q in query_set(seed):
        t = q["text"]
        if q["kind"] == "keywords":
            out.append(f"what did we decide about {t}, and why?")
        elif q["kind"] in ("identifier", "path"):
            out.append(f"why did {t} break last time, and what did we try?")
        elif q["kind"] == "phrase":
            out.append(f"remind me what we said about {t}")
        else:
            out.append(t)
    rng.shuffle(out)
    return (out * (n // max(1, len(out)) + 1))[:n]


def measure(label: str, texts: list[str], cwd: str, env: dict, warmup: int = 3) -> dict:
    hook, base, hook_cpu, base_cpu, injected = [], [], [], [], 0
    argv = [*recall_exe(), "hook", "user-prompt-submit"]
    for i, text in enumerate([*texts[:warmup], *texts]):
        payload = json.dumps(
            {
                "session_id": f"bench-{i}",
                "transcript_path": "",
                "cwd": cwd,
                "hook_event_name": "UserPromptSubmit",
                "prompt": text,
            }
        ).encode()
        b, bc, _, _ = time_process([sys.executable, "-c", "pass"], env)
        h, hc, out, _ = time_process(argv, env, payload)
        if i < warmup:
            continue
        base.append(b)
        hook.append(h)
        base_cpu.append(bc)
        hook_cpu.append(hc)
        injected += bool(out.strip())
    row = {
        "mode": label,
        "runs": len(hook),
        "injected": injected,
        "p50_ms": ms(percentile(hook, 0.5)),
        "p95_ms": ms(percentile(hook, 0.95)),
        "python_pass_p50_ms": ms(percentile(base, 0.5)),
        "python_pass_p95_ms": ms(percentile(base, 0.95)),
    }
    row["over_python_p50_ms"] = round(row["p50_ms"] - row["python_pass_p50_ms"], 1)
    # CPU time of the hook process itself: far less sensitive to a busy machine than wall time
    # (on the service path the service's own CPU is not in it)
    row["cpu_p50_ms"] = ms(percentile(hook_cpu, 0.5))
    row["python_pass_cpu_p50_ms"] = ms(percentile(base_cpu, 0.5))
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hook_latency", description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, help="an existing RECALL_HOME with an index (else one is built)")
    ap.add_argument("--messages", type=int, default=100_000, help="size of the index to build without --home")
    ap.add_argument("--keep", type=Path, help="build into this folder and keep it (reuse it with --home)")
    ap.add_argument("--runs", type=int, default=40, help="samples per mode")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-service", action="store_true", help="skip the with-service mode")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    tmp = None
    built = None
    if args.home:
        home = args.home.expanduser().resolve()
        if not (home / "index").is_dir():
            raise SystemExit(f"{home} has no index: build one with `--messages N --keep {home}`")
    else:
        if args.keep:
            home = args.keep.expanduser().resolve()
        else:
            tmp = tempfile.TemporaryDirectory(prefix="recall-hook-bench-")
            home = Path(tmp.name)
        print(f"building a {args.messages:,}-message index in {home} …", file=sys.stderr)
        built = build(home, args.messages, args.seed)
    claude_dir = home / "claude" / ".claude"
    claude_dir.mkdir(parents=True, exist_ok=True)
    env = bench_env(home, claude_dir)
    cwd = biggest_project(home)
    # as after `pip install`: bytecode compiled (a dev shell may set PYTHONDONTWRITEBYTECODE)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *(str(REPO / d) for d in ("recall", "indexer", "hooks"))],
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    half = args.runs // 2
    texts = [*project_prompts(home, cwd, args.seed, args.runs - half), *prompts(args.seed, half)]
    random.Random(args.seed).shuffle(texts)
    trivial = ["ok, continue", "thanks!", "yes go ahead", "lgtm"] * (args.runs // 4 + 1)

    from recall.search.searcher import Searcher  # noqa: E402  (only to report the index size)

    os.environ["RECALL_HOME"] = str(home)
    docs = Searcher(home / "index").count()
    rows = []
    env_local = {**env, "RECALL_NO_SERVICE": "1"}
    rows.append(measure("raw, no service", texts, cwd, env_local))
    rows.append(measure("trivial prompt", trivial[: args.runs], cwd, env_local))
    if not args.no_service:
        service = start_service(env)
        try:
            rows.append(measure("raw, service", texts, cwd, env))
        finally:
            stop_service(service)
    result = {
        "index_documents": docs,
        "project": cwd,
        "built": built,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"\nHook latency, process start to output, on an index of {docs:,} documents "
        f"({os.cpu_count()} CPUs), {args.runs} prompts per mode (half about things said in the "
        f"project before, half from the generator's query set):\n"
    )
    print(
        "| mode | p50 ms | p95 ms | python -c pass p50 ms | hook − python p50 ms | CPU p50 ms "
        "(python -c pass) | prompts injected |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['p50_ms']} | {r['p95_ms']} | {r['python_pass_p50_ms']} | "
            f"{r['over_python_p50_ms']} | {r['cpu_p50_ms']} ({r['python_pass_cpu_p50_ms']}) | "
            f"{r['injected']}/{r['runs']} |"
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average during the run: {load:.1f} on {os.cpu_count()} CPUs")
    result["load_average"] = round(load, 2)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten to {args.out}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
