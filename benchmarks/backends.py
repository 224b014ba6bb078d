"""The model backends' cost on the prompt hook and their own start-up (issue 16).

Against the loopback stand-in (``tests/support/standin.py``: it answers at once, so these
are recall's and Claude Code's own costs, not the model's), next to ``python -c pass``
measured in the same run (``benchmarks.hook_latency.measure``: interleaved samples):

  raw, service, no key          the service answers with raw snippets (the baseline mode)
  synth, service, hook's key    the key only in the hook's environment: it travels with the
                                request and the service (no key of its own) synthesizes
  synth, in-process, key        no service: the hook imports the SDK and synthesizes itself
  synth, service, claude-code   no key anywhere; the service runs Claude Code headless
                                with the hook's PATH (the child's start-up is in the budget)

and, for the claude-code backend alone: ``claude --version`` (the binary's start-up) and one
``recall.llm.claude_code.complete`` call end to end.

Usage::

    python -m benchmarks.backends --claude PATH/TO/claude [--messages 5000] [--runs 10]

Writes ``benchmarks/out/backends.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import hook_latency as hl
from benchmarks.harness import median, ms, time_process

OUT = hl.REPO / "benchmarks" / "out" / "backends.json"


def _claude_times(claude: str, env: dict, runs: int) -> dict:
    version, complete, base = [], [], []
    code = (
        "import sys, time; from recall.llm import claude_code; t = time.perf_counter(); "
        "claude_code.complete('Answer in one word.', 'ping', purpose='bench', timeout=60, path=sys.argv[1]); "
        "print(time.perf_counter() - t)"
    )
    for _ in range(runs):
        for argv, into in (([sys.executable, "-c", "pass"], base), ([claude, "--version"], version)):
            wall, _, _, rc = time_process(argv, env)
            if rc != 0:
                raise SystemExit(f"{argv} exited with {rc}")
            into.append(wall)
        out = subprocess.run([sys.executable, "-c", code, claude], env=env, capture_output=True, text=True, check=True)
        complete.append(float(out.stdout.strip()))
    return {
        "runs": runs,
        "python_pass_p50_ms": ms(median(base)),
        "claude_version_p50_ms": ms(median(version)),
        "claude_code_complete_p50_ms": ms(median(complete)),
    }


def measure(label: str, texts: list[str], cwd: str, env: dict, home: Path) -> dict:
    """``hook_latency.measure`` plus, from the injection log, what each sample did and the
    latency of the samples that injected a synthesis (the mode's point)."""
    from recall.prompt import injections

    before = len(injections.read())
    row = hl.measure(label, texts, cwd, env)
    records = injections.read()[before:][3:]  # after the warm-up samples
    row["outcomes"] = {}
    for rec in records:
        key = rec.get("outcome", "?") + (f" ({rec['why']})" if rec.get("why") and rec.get("outcome") == "raw" else "")
        row["outcomes"][key] = row["outcomes"].get(key, 0) + 1
    synth = [rec["latency_ms"] for rec in records if rec.get("outcome") == "synthesized"]
    row["synthesized_latency_p50_ms"] = round(median(synth), 1) if synth else None
    return row


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(hl.REPO))
    from tests.support.claude import OFFLINE_ENV
    from tests.support.standin import StandIn, text

    ap = argparse.ArgumentParser(prog="python -m benchmarks.backends", description=__doc__.split("\n")[0])
    ap.add_argument("--claude", required=True, help="the Claude Code binary")
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    rows: list[dict] = []
    with (
        tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp,
        StandIn(default=text("- the briefing [2026-11-20 session abcdef12]")) as api,
    ):
        home = Path(tmp) / "home"
        hl.build(home, args.messages, args.seed)
        claude_dir = home / "claude" / ".claude"
        env = hl.bench_env(home, claude_dir)
        env.update(OFFLINE_ENV)
        env["ANTHROPIC_BASE_URL"] = api.url
        (home / "config.json").write_text(json.dumps({"memory": {"enabled": False}}))
        bindir = Path(tmp) / "bin"
        bindir.mkdir()
        (bindir / "claude").symlink_to(os.path.abspath(args.claude))
        cwd = hl.biggest_project(home)
        os.environ["RECALL_HOME"] = str(home)  # project_prompts reads the index in this process
        texts = hl.project_prompts(home, cwd, args.seed, args.runs * 4)
        keyed = {**env, "ANTHROPIC_API_KEY": "bench-key-not-real"}
        with_claude = {**env, "PATH": f"{bindir}{os.pathsep}{env.get('PATH', '')}"}
        (Path(claude_dir) / "settings.json").parent.mkdir(parents=True, exist_ok=True)
        (Path(claude_dir) / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo bench-key-not-real"}))
        service = hl.start_service(env)  # started with no key and no claude on PATH
        try:
            rows.append(measure("raw, service, no key", texts[: args.runs], cwd, env, home))
            rows.append(measure("synth, service, hook's key", texts[args.runs : 2 * args.runs], cwd, keyed, home))
            rows.append(
                measure(
                    "synth, service, claude-code",
                    texts[2 * args.runs : 3 * args.runs],
                    cwd,
                    {**with_claude, "HOME": str(claude_dir.parent)},
                    home,
                )
            )
        finally:
            hl.stop_service(service)
        rows.append(
            measure("synth, in-process, key", texts[3 * args.runs :], cwd, {**keyed, "RECALL_NO_SERVICE": "1"}, home)
        )
        claude = _claude_times(args.claude, {**with_claude, "HOME": str(claude_dir.parent)}, args.runs)
    result = {"messages": args.messages, "runs": args.runs, "hook": rows, "claude_code": claude}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print("| mode | p50 ms | p95 ms | python -c pass p50 ms | synthesized p50 ms | outcomes |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        outcomes = ", ".join(f"{n} {k}" for k, n in sorted(r["outcomes"].items()))
        print(
            f"| {r['mode']} | {r['p50_ms']} | {r['p95_ms']} | {r['python_pass_p50_ms']} | "
            f"{r['synthesized_latency_p50_ms']} | {outcomes} |"
        )
    print(
        f"\nClaude Code ({args.runs} runs, medians): `claude --version` {claude['claude_version_p50_ms']} ms, "
        f"one headless call end to end {claude['claude_code_complete_p50_ms']} ms "
        f"(python -c pass {claude['python_pass_p50_ms']} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
