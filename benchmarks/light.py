"""A shell search next to an SQLite FTS5 search process, and the everyday commands' CPU (issue 48
items 4 and 6), at a 200K-message history, this tree next to a baseline checkout in the same run.

Every figure is a whole process, spawned and waited for: its wall time (spawn to exit) and its
CPU time (user + system of the child, ``os.wait4``'s rusage). In each round every command runs
once, in a new random order, so the load of a shared machine falls on all of them alike; the
medians are reported, with the load averages at the start, between the phases and at the end.

* ``python -c pass``: the interpreter alone (the floor of any Python process);
* FTS5: ``benchmarks/fts5_search.py`` over the baseline's FTS5 database of the same messages
  (``benchmarks.backfill``): the interpreter, ``sqlite3``, one MATCH ranked by ``bm25`` with a
  ``snippet()`` per hit, five hits printed (what ``recall --raw --limit 5`` answers);
* ``recall --raw --limit 5 QUERY`` without and with the service (``recall serve`` from this
  tree, idle, ``hook.semantic`` off: see the prose), the queries of ``benchmarks.generate.query_set``
  (all but the long pasted prompts), the same query for FTS5 and recall within a round;
* ``recall status`` without and with the service, ``log``, ``sessions``, ``show ID``,
  ``memories`` and ``stats`` without it.

Each recall command runs as the console script beside this interpreter, with this tree on
``PYTHONPATH``, and again with ``--baseline DIR`` (a checkout of main: ``git worktree add DIR
main``) on it instead. ``PYTHONDONTWRITEBYTECODE`` is dropped: an installed recall has its
bytecode cached.

    python -m benchmarks.light [--messages 200000] [--rounds 20] [--baseline DIR] [--work DIR]
    python -m benchmarks.light ... --write-docs   # and docs/benchmarks.md (benchmarks.report)

``sections()`` renders the committed ``benchmarks/light.json`` (prose: benchmarks/prose/light.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.harness import REPO, WORK, median, percentile, recall_exe, start_service, stop_service, time_process

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "light.json"
FTS5_SEARCH = HERE / "fts5_search.py"
RAW_TARGET = 0.5  # recall --raw ÷ the FTS5 process (issue 48 item 4)
STATUS_CPU_TARGET_MS = 60.0  # recall status's CPU (issue 48 item 6)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def prepare(work: Path, messages: int, seed: int) -> dict:
    """The corpus, a recall home indexed from it and the FTS5 database of the same messages
    (``benchmarks.backfill``; each made once and reused)."""
    from benchmarks import backfill

    claude, info = backfill.corpus(work, messages, seed)
    home = work / "home-index"
    db = work / "baseline-fts5.db"
    if not (home / "index").is_dir():
        backfill.run_index(claude, work)
    if not db.exists():
        backfill.run_fts5(claude, work)
    return {"claude": claude, "home": home, "db": db, "corpus": info}


def _env(home: Path, claude: Path, tree: Path, service: bool) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "RECALL_")) and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    fake_home = home.parent / "fake-home"  # no ~/.claude, no API key: the raw path
    fake_home.mkdir(exist_ok=True)
    env.update(RECALL_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), HOME=str(fake_home), PYTHONPATH=str(tree))
    if not service:
        env["RECALL_NO_SERVICE"] = "1"
    return env


def _rounds(commands: dict, rounds: int, cwd: Path) -> dict:
    """{name: {"wall": [...], "cpu": [...]}}: ``rounds`` rounds, each command once per round in a
    new random order; ``commands[name](i)`` is (argv, env) for round ``i``; one warm-up round."""
    out: dict = {name: {"wall": [], "cpu": []} for name in commands}
    for i in range(rounds + 1):
        order = list(commands)
        random.shuffle(order)
        for name in order:
            argv, env = commands[name](i)
            wall, cpu, _, rc = time_process(argv, env, cwd=cwd)
            if rc != 0:
                raise SystemExit(f"{name} exited {rc}: {argv}")
            if i:
                out[name]["wall"].append(wall)
                out[name]["cpu"].append(cpu)
    return out


def _summary(samples: dict) -> dict:
    return {
        "wall_ms": round(median(samples["wall"]) * 1000, 1),
        "wall_p90_ms": round(percentile(samples["wall"], 0.9) * 1000, 1),
        "cpu_ms": round(median(samples["cpu"]) * 1000, 1),
        "n": len(samples["wall"]),
    }


def measure(work: Path, messages: int, rounds: int, seed: int, baseline: Path | None) -> dict:
    from benchmarks.generate import query_set

    prep = prepare(work, messages, seed)
    home, claude, db = prep["home"], prep["claude"], prep["db"]
    trees = {"this tree": REPO}
    if baseline is not None:
        trees["baseline"] = baseline.resolve()
    texts = [q["text"] for q in query_set(seed) if q["kind"] != "long"]
    exe = recall_exe()
    py = sys.executable
    session = _a_session(home)
    cfg = home / "config.json"  # the semantic channel off: its embedding job would load the machine for an hour
    cfg_data = json.loads(cfg.read_text()) if cfg.exists() else {}
    cfg_data.setdefault("hook", {})["semantic"] = False
    cfg.write_text(json.dumps(cfg_data, indent=2) + "\n")

    def plain(argv):
        return lambda i: (argv, _env(home, claude, REPO, False))

    def query(i):
        return texts[i % len(texts)]

    def phase(service: bool) -> dict:
        cmds: dict = {
            "python -c pass": plain([py, "-c", "pass"]),
            "FTS5 search process": lambda i: (
                [py, str(FTS5_SEARCH), str(db), "5", query(i)],
                _env(home, claude, REPO, False),
            ),
        }
        for label, tree in trees.items():
            cmds[f"recall --raw ({label})"] = lambda i, tree=tree: (
                [*exe, "--raw", "--limit", "5", query(i)],
                _env(home, claude, tree, service),
            )
            cmds[f"recall status ({label})"] = lambda i, tree=tree: (
                [*exe, "status"],
                _env(home, claude, tree, service),
            )
            if not service:
                for name, argv in (
                    ("log", ["log"]),
                    ("sessions", ["sessions"]),
                    ("show ID", ["show", session, "--no-pager"]),
                    ("memories", ["memories"]),
                    ("stats", ["stats"]),
                ):
                    cmds[f"recall {name} ({label})"] = lambda i, tree=tree, argv=argv: (
                        [*exe, *argv],
                        _env(home, claude, tree, False),
                    )
        load_before = _load()
        samples = _rounds(cmds, rounds, work)
        return {"load_before": load_before, "load_after": _load(), "rows": {k: _summary(v) for k, v in samples.items()}}

    res: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_start": _load(),
        "python": sys.version.split()[0],
        "messages": messages,
        "rounds": rounds,
        "queries": len(texts),
        "trees": {k: _commit(v) for k, v in trees.items()},
        "cores": os.cpu_count(),
    }
    print(f"[{time.strftime('%H:%M:%S')}] no service: {rounds} rounds …", file=sys.stderr, flush=True)
    res["no_service"] = phase(False)
    print(f"[{time.strftime('%H:%M:%S')}] with the service: {rounds} rounds …", file=sys.stderr, flush=True)
    service = start_service(_env(home, claude, REPO, True), log=work / "light-serve.log", cwd=work)
    try:
        res["service"] = phase(True)
    finally:
        stop_service(service)
    res["fts5_query_p50_ms"] = _fts5_in_process(db, texts)
    res["redact_import_ms"] = {label: _import_ms("indexer.redact", tree, work) for label, tree in trees.items()}
    res["load_end"] = _load()
    res["targets"] = {"raw_vs_fts5": RAW_TARGET, "status_cpu_ms": STATUS_CPU_TARGET_MS}
    return res


def _fts5_in_process(db: Path, texts: list[str], reps: int = 3) -> float:
    """FTS5's own query time (best of ``reps`` per query, median over the queries), in this process."""
    import sqlite3

    from benchmarks.fts5 import match_expression

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    best = []
    try:
        for text in texts:
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                con.execute(
                    "SELECT session_id, project, role, timestamp, snippet(messages, 0, '', '', '…', 24), "
                    "bm25(messages, 10.0, 2.0, 1.0) AS s FROM messages WHERE messages MATCH ? ORDER BY s LIMIT 5",
                    (match_expression(text),),
                ).fetchall()
                times.append(time.perf_counter() - t0)
            best.append(min(times))
    finally:
        con.close()
    return round(median(best) * 1000, 2)


def _import_ms(module: str, tree: Path, cwd: Path, runs: int = 7) -> float:
    """CPU milliseconds of ``import module`` (its own cost, the interpreter started), median of ``runs``."""
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    out = [
        float(subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True).stdout)
        for _ in range(runs)
    ]
    return round(median(out) * 1000, 1)


def _a_session(home: Path) -> str:
    import sqlite3

    con = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        return con.execute("SELECT session_id FROM sessions ORDER BY messages DESC LIMIT 1").fetchone()[0][:8]
    finally:
        con.close()


def _commit(tree: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


# ---------------------------------------------------------------------------- the page
def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "—"


def _over(rows: dict, name: str) -> str:
    """``name``'s CPU over ``python -c pass``'s in the same rounds, in ms ("?" when not measured)."""
    if name not in rows:
        return "?"
    return f"{rows[name]['cpu_ms'] - rows['python -c pass']['cpu_ms']:.0f}"


def table(phase: dict, trees: list[str]) -> str:
    rows = phase["rows"]
    base = rows["python -c pass"]
    fts5 = rows["FTS5 search process"]
    lines = [
        "| process | wall median | wall p90 | CPU median | wall × FTS5 | CPU × FTS5 | CPU over `python -c pass` |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in rows.items():
        lines.append(
            f"| `{name}` | {r['wall_ms']:.1f} ms | {r['wall_p90_ms']:.1f} ms | {r['cpu_ms']:.1f} ms | "
            f"{_ratio(r['wall_ms'], fts5['wall_ms'])} | {_ratio(r['cpu_ms'], fts5['cpu_ms'])} | "
            f"{r['cpu_ms'] - base['cpu_ms']:+.1f} ms |"
        )
    return "\n".join(lines)


def sections(res: dict | None = None) -> list[str]:
    """docs/benchmarks.md's section, from ``res`` or the committed benchmarks/light.json."""
    from benchmarks.page import prose

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    trees = list(res["trees"])
    ns, sv = res["no_service"]["rows"], res["service"]["rows"]

    def fig(rows, name, key):
        return rows.get(name, {}).get(key)

    def pair(rows, name):
        this, base = fig(rows, f"{name} (this tree)", "cpu_ms"), fig(rows, f"{name} (baseline)", "cpu_ms")
        return f"{base:.0f} → {this:.0f} ms" if this is not None and base is not None else f"{this:.0f} ms"

    fts5_ns, fts5_sv = fig(ns, "FTS5 search process", "wall_ms"), fig(sv, "FTS5 search process", "wall_ms")
    raw_ns, raw_sv = fig(ns, "recall --raw (this tree)", "wall_ms"), fig(sv, "recall --raw (this tree)", "wall_ms")
    pass_ns = fig(ns, "python -c pass", "wall_ms")
    status_cpu = fig(ns, "recall status (this tree)", "cpu_ms")
    status_sv_cpu = fig(sv, "recall status (this tree)", "cpu_ms")
    return [
        prose(
            "light",
            date=res["date"],
            messages=f"{res['messages']:,}",
            rounds=res["rounds"],
            queries=res["queries"],
            python=res["python"],
            cores=res.get("cores", "?"),
            this=res["trees"].get("this tree", "?"),
            baseline=res["trees"].get("baseline", "none"),
            load_start=res["load_start"],
            load_ns=f"{res['no_service']['load_before']} → {res['no_service']['load_after']}",
            load_sv=f"{res['service']['load_before']} → {res['service']['load_after']}",
            load_end=res["load_end"],
            table_ns=table(res["no_service"], trees),
            table_sv=table(res["service"], trees),
            raw_sv_ratio=_ratio(raw_sv, fts5_sv),
            raw_ns_ratio=_ratio(raw_ns, fts5_ns),
            pass_ratio=_ratio(pass_ns, fts5_ns),
            pass_sv_ratio=_ratio(fig(sv, "python -c pass", "wall_ms"), fts5_sv),
            raw_sv_over=_over(sv, "recall --raw (this tree)"),
            raw_sv_base_over=_over(sv, "recall --raw (baseline)"),
            raw_sv_cpu=pair(sv, "recall --raw"),
            raw_ns_cpu=pair(ns, "recall --raw"),
            status_cpu=pair(ns, "recall status"),
            status_sv_cpu=pair(sv, "recall status"),
            status_verdict="met"
            if status_cpu is not None and status_cpu <= res["targets"]["status_cpu_ms"]
            else "missed",
            status_over_pass=f"{status_cpu - fig(ns, 'python -c pass', 'cpu_ms'):.0f}" if status_cpu else "?",
            status_sv_over_pass=f"{status_sv_cpu - fig(sv, 'python -c pass', 'cpu_ms'):.0f}" if status_sv_cpu else "?",
            pass_cpu=f"{fig(ns, 'python -c pass', 'cpu_ms'):.0f}",
            fts5_query=res["fts5_query_p50_ms"],
            redact_import=" → ".join(
                f"{res['redact_import_ms'][k]:.1f}" for k in ("baseline", "this tree") if k in res["redact_import_ms"]
            ),
            everyday=", ".join(
                f"{n} {pair(ns, f'recall {n}')}" for n in ("log", "sessions", "show ID", "memories", "stats")
            ),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.light", description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", type=Path, default=None, help="a checkout of main to run next to this tree")
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    res = measure(args.work, args.messages, args.rounds, args.seed, args.baseline)
    RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print("\n".join(sections(res)))
    if args.write_docs:
        return subprocess.run([sys.executable, "-m", "benchmarks.report"], cwd=REPO).returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
