"""How fast the everyday commands start (issue 27): ``recall status``, ``log``, ``sessions``,
``show`` and ``memories`` next to ``recall --raw`` (the search path) and ``python -c pass`` (the
interpreter alone), and ``recall config show`` (a command that still goes through typer).

Each figure is the wall time of a whole process, start to exit, in a fresh ``RECALL_HOME``
holding a small indexed history (no service running: the in-process path every command falls
back to). The commands are run in rounds, each round in a new random order, and the medians
are reported with their ratio to ``python -c pass`` of the same rounds, so the load of a shared
machine falls on all of them alike.

    python -m benchmarks.startup                # measure, write benchmarks/startup.json
    python -m benchmarks.startup --write-docs   # and docs/benchmarks.md again (benchmarks.report)

``sections()`` renders the committed JSON (``benchmarks.report`` adds it to docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.harness import median, ms, percentile, recall_exe, time_process

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "startup.json"
TARGET_MS = 200.0


def _history(root: Path, sessions: int = 200) -> str:
    """``sessions`` small Claude Code transcripts under ``root``; returns one session id."""
    words = "cart webhook stripe migration index flaky fixture deploy rollback cache token retry".split()
    rng = random.Random(7)
    sid = ""
    for i in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        cwd = f"/home/dev/proj{i % 7}"
        d = root / ("-" + cwd.strip("/").replace("/", "-"))
        d.mkdir(parents=True, exist_ok=True)
        with open(d / f"{sid}.jsonl", "w", encoding="utf-8") as fh:
            for j in range(10):
                role = "user" if j % 2 == 0 else "assistant"
                text = " ".join(rng.choice(words) for _ in range(12))
                content = text if role == "user" else [{"type": "text", "text": text}]
                fh.write(
                    json.dumps(
                        {
                            "type": role,
                            "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                            "sessionId": sid,
                            "cwd": cwd,
                            "timestamp": f"2026-11-{1 + i % 28:02d}T10:{j:02d}:00Z",
                            "message": {"role": role, "content": content},
                        }
                    )
                    + "\n"
                )
    return sid


def measure(rounds: int = 15) -> dict:
    exe_argv = recall_exe()
    with tempfile.TemporaryDirectory(prefix="recall-startup-") as tmp:
        tmp_p = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "RECALL_"))}
        env.update(
            HOME=str(tmp_p / "home"),
            RECALL_HOME=str(tmp_p / "recall"),
            CLAUDE_CONFIG_DIR=str(tmp_p / "claude"),
            RECALL_NO_SERVICE="1",
        )
        (tmp_p / "home").mkdir()
        sid = _history(tmp_p / "claude" / "projects")
        subprocess.run([*exe_argv, "index"], env=env, check=True, capture_output=True, cwd=tmp)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "recall --raw QUERY": [*exe_argv, "--raw", "--limit", "5", "flaky fixture"],
            "recall status": [*exe_argv, "status"],
            "recall log": [*exe_argv, "log"],
            "recall sessions": [*exe_argv, "sessions"],
            "recall show ID": [*exe_argv, "show", sid[:8], "--no-pager"],
            "recall memories": [*exe_argv, "memories"],
            "recall config show (typer)": [*exe_argv, "config", "show"],
        }
        times: dict[str, list[float]] = {k: [] for k in commands}
        for name, argv in commands.items():  # warm the page cache once
            subprocess.run(argv, env=env, capture_output=True, cwd=tmp)
        for _ in range(rounds):
            order = list(commands)
            random.shuffle(order)
            for name in order:
                with tempfile.TemporaryFile() as err:
                    wall, _, _, rc = time_process(commands[name], env, cwd=tmp, stderr=err)
                    if rc != 0:
                        err.seek(0)
                        raise SystemExit(f"{name} failed: {err.read().decode(errors='replace')[-300:]}")
                times[name].append(wall)
    base = median(times["python -c pass"])
    rows = []
    for name, ts in times.items():
        med = median(ts)
        rows.append(
            {
                "command": name,
                "median_ms": round(med * 1000, 1),
                "p90_ms": ms(percentile(ts, 0.9)),
                "vs_python": round(med / base, 2),
                "over_python_ms": round((med - base) * 1000, 1),
            }
        )
    return {
        "rounds": rounds,
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
        "rows": rows,
        "target_ms": TARGET_MS,
    }


def sections(res: dict | None = None) -> list[str]:
    """docs/benchmarks.md's section, from ``res`` or the committed benchmarks/startup.json
    (prose in benchmarks/prose/startup.md)."""
    from benchmarks.page import prose

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    rows = [
        f"| `{r['command']}` | {r['median_ms']:.0f} ms | {r['p90_ms']:.0f} ms | {r['vs_python']:.2f} | "
        f"{r['over_python_ms']:+.0f} ms |"
        for r in res["rows"]
    ]
    slow = [
        r["command"]
        for r in res["rows"]
        if r["command"].startswith("recall ") and "typer" not in r["command"] and r["median_ms"] > res["target_ms"]
    ]
    table = "\n".join(
        [
            "| command | median | p90 | × `python -c pass` | over `python -c pass` |",
            "| --- | ---: | ---: | ---: | ---: |",
            *rows,
        ]
    )
    return [
        prose(
            "startup",
            rounds=res["rounds"],
            load=res["load"],
            date=res["date"],
            python=res["python"],
            table=table,
            target=f"{res['target_ms']:.0f}",
            verdict="met." if not slow else f"missed by {', '.join(slow)} in this run.",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    res = measure(args.rounds)
    RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print("\n".join(sections(res)))
    if args.write_docs:  # the whole page again, from the committed results (this one among them)
        return subprocess.run([sys.executable, "-m", "benchmarks.report"], cwd=HERE.parent).returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
