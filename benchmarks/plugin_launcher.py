"""What recall's Claude Code plugin adds to every hook: the launcher (hooks/recall) and the
plugin's stand-down check, next to the plain ``recall hook`` command in the same run.

Each sample starts a process as Claude Code does (the hook's JSON on stdin) and stops the clock
when it exits; the modes alternate, so machine noise hits all of them alike. The runtime is
this venv, linked into a temporary plugin data folder as ``runtime/<version>``.

  true                     ``/bin/true``: the cost of starting any process (baseline)
  launcher -> true         the launcher handing over to a runtime whose ``recall`` is ``true``:
                           the launcher's own cost is this minus ``true``
  recall hook              ``recall hook user-prompt-submit`` with an acknowledgement ("ok,
                           continue": filtered before any search): Python's start and the hook's
                           imports (baseline)
  launcher -> recall hook  the same through the launcher, which also reads Claude Code's
                           settings files (the plugin stands down where ``recall setup`` wired it)
  launcher, not ready      the runtime not built: the launcher exits at once

Usage::

    python -m benchmarks.plugin_launcher [--runs 60]

Writes ``benchmarks/plugin_launcher.json`` (committed; ``sections`` renders it into
docs/benchmarks.md) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import REPO, median, percentile, time_process

OUT = Path(__file__).with_name("plugin_launcher.json")
LAUNCHER = REPO / "hooks" / "recall"
PAYLOAD = json.dumps(
    {
        "session_id": "bench",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "ok, continue",
        "cwd": str(REPO),
        "transcript_path": "/nowhere.jsonl",
    }
)


def _runtime(data: Path, version: str, recall: str) -> None:
    bin_dir = data / "runtime" / version / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "recall").symlink_to(recall)
    (data / "runtime" / version / ".ready").write_text("{}\n")


def _time(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall ms, CPU ms: user + system of the process and what it exec'd) of one run."""
    wall, cpu, out, rc = time_process(argv, env, PAYLOAD.encode())
    if rc != 0 or out.strip():
        err = subprocess.run(argv, input=PAYLOAD.encode(), env=env, capture_output=True).stderr
        raise SystemExit(f"{argv} answered {rc}: {out[:200]!r} {err[:200]!r}")
    return wall * 1000, cpu * 1000


def measure(runs: int) -> dict:
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    recall = shutil.which("recall", path=str(Path(sys.executable).parent)) or shutil.which("recall")
    true = shutil.which("true")
    with tempfile.TemporaryDirectory(prefix="recall-bench-plugin-") as tmp:
        tmp = Path(tmp)
        ready, to_true, missing = tmp / "ready", tmp / "to-true", tmp / "missing"
        _runtime(ready, version, recall)
        _runtime(to_true, version, true)
        missing.mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RECALL_PLUGIN"))}
        base.update(
            {
                "RECALL_HOME": str(tmp / "home"),
                "CLAUDE_CONFIG_DIR": str(tmp / "claude"),
                "RECALL_NO_SERVICE": "1",
                "CLAUDE_PLUGIN_ROOT": str(REPO),
                "CLAUDE_PROJECT_DIR": str(REPO),
            }
        )
        hook = ["hook", "user-prompt-submit"]
        modes = {
            "true": ([true], base),
            "launcher -> true": ([str(LAUNCHER), *hook], {**base, "CLAUDE_PLUGIN_DATA": str(to_true)}),
            "recall hook": ([recall, *hook], base),
            "launcher -> recall hook": ([str(LAUNCHER), *hook], {**base, "CLAUDE_PLUGIN_DATA": str(ready)}),
            "launcher, not ready": ([str(LAUNCHER), *hook], {**base, "CLAUDE_PLUGIN_DATA": str(missing)}),
        }
        for argv, env in modes.values():  # warm the page cache and the bytecode
            _time(argv, env)
        samples: dict[str, list[float]] = {name: [] for name in modes}
        cpu: dict[str, list[float]] = {name: [] for name in modes}
        for i in range(runs):
            order = list(modes) if i % 2 == 0 else list(reversed(modes))
            for name in order:
                wall, used = _time(*modes[name])
                samples[name].append(wall)
                cpu[name].append(used)
    med = {name: round(median(v), 2) for name, v in samples.items()}
    cpu_med = {name: round(median(v), 2) for name, v in cpu.items()}
    return {
        "runs": runs,
        "medians_ms": med,
        "cpu_medians_ms": cpu_med,
        "p90_ms": {name: round(percentile(v, 0.9), 2) for name, v in samples.items()},
        "launcher_own_ms": round(med["launcher -> true"] - med["true"], 2),
        "launcher_own_cpu_ms": round(cpu_med["launcher -> true"] - cpu_med["true"], 2),
        "plugin_over_recall_hook_ms": round(med["launcher -> recall hook"] - med["recall hook"], 2),
        "plugin_over_recall_hook_cpu_ms": round(cpu_med["launcher -> recall hook"] - cpu_med["recall hook"], 2),
        "plugin_over_recall_hook_ratio": round(med["launcher -> recall hook"] / med["recall hook"], 3),
        "machine": {
            "python": platform.python_version(),
            "cores": os.cpu_count(),
            "load": [round(x, 2) for x in os.getloadavg()],
        },
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def markdown(res: dict) -> str:
    rows = ["| mode | wall, median | wall, p90 | CPU, median |", "| --- | ---: | ---: | ---: |"]
    for name, ms in res["medians_ms"].items():
        rows.append(f"| {name} | {ms:.1f} ms | {res['p90_ms'][name]:.1f} ms | {res['cpu_medians_ms'][name]:.1f} ms |")
    return "\n".join(rows)


def sections(_res: dict | None = None) -> list[str]:
    """docs/benchmarks.md's section, from the committed ``plugin_launcher.json`` (prose in
    benchmarks/prose/plugin-launcher*.md)."""
    from benchmarks.page import prose

    try:
        res = json.loads(OUT.read_text())
    except (OSError, ValueError):
        return [prose("plugin-launcher", figures="Not measured yet.")]
    figures = prose(
        "plugin-launcher-figures",
        table=markdown(res),
        runs=res["runs"],
        date=res["date"],
        python=res["machine"]["python"],
        load=", ".join(map(str, res["machine"]["load"])),
        own_ms=f"{res['launcher_own_ms']:.1f}",
        own_cpu_ms=f"{res['launcher_own_cpu_ms']:.1f}",
        over_ms=f"{res['plugin_over_recall_hook_ms']:+.1f}",
        over_ratio=f"{res['plugin_over_recall_hook_ratio']:.2f}",
        over_cpu_ms=f"{res['plugin_over_recall_hook_cpu_ms']:+.1f}",
        not_ready_ms=f"{res['medians_ms']['launcher, not ready']:.1f}",
    )
    return [prose("plugin-launcher", figures=figures.rstrip("\n"))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.plugin_launcher", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--out", type=Path, default=OUT, help="where to write the JSON (default: beside this file)")
    args = ap.parse_args(argv)
    res = measure(args.runs)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(markdown(res))
    print(
        f"\nlauncher's own: {res['launcher_own_ms']} ms wall, {res['launcher_own_cpu_ms']} ms CPU; plugin over "
        f"recall hook: {res['plugin_over_recall_hook_ms']} ms wall ({res['plugin_over_recall_hook_ratio']}x), "
        f"{res['plugin_over_recall_hook_cpu_ms']} ms CPU"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
