"""Issue 47's measure: how long the prompt hook holds the prompt when the model takes 2 s.

The target: with the model taking 2 s (a stand-in with that delay), the hook holds the prompt over
500 ms for at most 0.20 of all prompts and 0.05 of new tasks, and its p50 hold is within 10 ms of
the raw path's.

The history: the three projects of ``benchmarks.coding_history`` (~113 Claude Code sessions),
written as transcripts (``coding_history.write_session``) into each code base's Claude Code folder,
indexed once, whole, and embedded for the semantic channel (``benchmarks/injection_driver.py``'s
``index`` op, as ``benchmarks.injection_sizes`` does), then served by that code base's own
``recall serve``. The prompts: the held-out report half (``*.report.json``), every question,
paraphrase and task prompt and a seeded sample of the new tasks (the same for every code base).
Each project lives in a real folder of its own under the run's temp directory (the sessions' cwd
rewritten to it), so the hook runs in it as Claude Code runs it.

The model: a loopback Messages API stand-in (``tests/support/standin.py``) answering every
synthesis request after ``MODEL_SECONDS`` with a briefing that cites the first session of the
request's excerpts (NONE when it holds none), the api backend pointed at it with a dummy key.

Code bases, interleaved prompt by prompt (the order rotating):

  ours     this tree (HEAD, frozen at the start: ``git archive`` imported through ``PYTHONPATH``,
           so commits landing during the run change nothing; ``--live``: the files as they are),
           the model path (the 2 s stand-in)
  raw      this tree with no model backend (no key, ``model.backend off``): the raw path
  main     today's main before issue 47 (``MAIN_COMMIT``), the same stand-in: every model prompt waits
  floor    ``python -c pass``

Each sample runs the real ``recall hook user-prompt-submit`` as Claude Code does (the payload on
stdin, cwd the project's folder, a fresh session id) and takes its hold as Claude Code sees it:
from the spawn to its first stdout line when that line is the async marker
(``{"async": true, ...}``), else to its exit. The way the hook took is read from the injection log
(``$RECALL_HOME/injections.jsonl``: ``way`` and ``held_ms``; main logs no way: its outcome says it).
The process is waited for before the next sample, so one prompt's background briefing never
competes with another's hold.

    python -m benchmarks.hold [--main DIR] [--new-tasks N] [--work DIR [--reuse]] [--live] [--write-json]

``--write-json`` keeps every earlier run's headline figures in ``runs`` (the page lists them).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path

from benchmarks import coding_history as ch
from benchmarks.harness import REPO, percentile
from benchmarks.injection import Codebase, bench_env, ensure_main, prepare_home, start_service
from benchmarks.injection_sizes import Driver, Here

MAIN_COMMIT = "325fc0b"  # main before issue 47: every model prompt waited for the model
RESULTS = Path(__file__).with_name("hold.json")
MODEL_SECONDS = 2.0
HELD_MS = 500.0  # a hold the user feels
TARGET_ALL, TARGET_NEW_TASK, TARGET_P50_MS = 0.20, 0.05, 10.0
NEW_TASKS = 60  # of the report half's new-task prompts, sampled (seeded); every other kind is asked whole
KINDS = ("question", "paraphrase", "task", "new-task")
CODES = ("ours", "raw", "main")
LABELS = {
    "ours": "recall, model path (2 s stand-in)",
    "raw": "recall, raw path (no model)",
    "main": f"main {MAIN_COMMIT} (2 s stand-in)",
    "floor": "`python -c pass`",
}
MODEL_CONFIG = {"model": {"backend": "api"}, "memory": {"enabled": False}}
RAW_CONFIG = {"model": {"backend": "off"}, "memory": {"enabled": False}}
KEY = "bench-key-not-real"
WARMUP = 3
SEED = 47
_CITE = re.compile(r"\[(\d{4}-\d{2}-\d{2}) session ([0-9a-f]{8})\]")
_EXAMPLE = "3c4e0949"  # the synthesis prompt's own example citation


# ------------------------------------------------------------------------------------
# the stand-in model


def briefing(req: dict):
    """The stand-in's answer to a synthesis request, after ``MODEL_SECONDS``: a briefing citing
    the first session of its excerpts, or NONE when it holds none."""
    from tests.support.standin import hang, is_messages_request, last_user_text, text

    if not is_messages_request(req):
        return None
    found = [m.groups() for m in _CITE.finditer(last_user_text(req)) if m.group(2) != _EXAMPLE]
    if not found:
        return hang(MODEL_SECONDS, text("NONE"))
    day, sid = found[0]
    return hang(MODEL_SECONDS, text(f"- What the earlier session settled bears on this [{day} session {sid}]"))


# ------------------------------------------------------------------------------------
# the history and the prompts


def placed(projects: list[ch.CodingProject], root: Path) -> list[ch.CodingProject]:
    """``projects`` with each one's cwd (and its sessions') a real folder below ``root``."""
    out = []
    for proj in projects:
        cwd = root / proj.slug
        cwd.mkdir(parents=True, exist_ok=True)
        sessions = [dataclasses.replace(s, cwd=str(cwd)) for s in proj.sessions]
        out.append(dataclasses.replace(proj, cwd=str(cwd), sessions=sessions))
    return out


def sample(projects: list[ch.CodingProject], new_tasks: int = NEW_TASKS, seed: int = SEED) -> list[ch.CodingPrompt]:
    """The report half's prompts asked: every one of each kind but the new tasks, of which
    ``new_tasks`` (an equal share per project, seeded), in a seeded shuffled order."""
    rng = random.Random(seed)
    report = [p for proj in projects for p in proj.prompts if p.split == "report"]
    chosen = [p for p in report if p.kind != "new-task"]
    per = max(1, new_tasks // max(1, len(projects)))
    for proj in projects:
        pool = sorted((p for p in report if p.kind == "new-task" and p.project == proj.slug), key=lambda p: p.pid)
        chosen += rng.sample(pool, min(per, len(pool)))
    rng.shuffle(chosen)
    return chosen


def report_mix(projects: list[ch.CodingProject]) -> dict[str, int]:
    """How many prompts of each kind the whole report half holds."""
    mix = dict.fromkeys(KINDS, 0)
    for proj in projects:
        for p in proj.prompts:
            if p.split == "report":
                mix[p.kind] = mix.get(p.kind, 0) + 1
    return mix


# ------------------------------------------------------------------------------------
# one hook process, timed as Claude Code sees it


def is_async_marker(line: bytes) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("async") is True


def hold(argv: list[str], env: dict, stdin: bytes, cwd: str, timeout: float = 60) -> dict:
    """Run ``argv`` once: its hold (ms, spawn to the first stdout line when that line is the
    async marker, else to its exit), its whole run (ms, spawn to exit), whether it went async."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    try:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        first = proc.stdout.readline()
        t_first = time.perf_counter()
        proc.stdout.read()
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    t_exit = time.perf_counter()
    went_async = is_async_marker(first)
    return {
        "hold_ms": round(((t_first if went_async else t_exit) - t0) * 1000, 1),
        "exit_ms": round((t_exit - t0) * 1000, 1),
        "async": went_async,
        "rc": proc.returncode,
    }


def logged(home: Path, session_id: str) -> dict:
    """The injection log's record of the prompt of ``session_id`` ({} when none)."""
    try:
        lines = (home / "injections.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("session") == session_id:
            return rec
    return {}


def way_of(rec: dict) -> str:
    """The way a prompt took: the log's ``way``; for a checkout that logs none (main before
    issue 47, where a model call was always waited for), from its outcome."""
    if rec.get("way"):
        return rec["way"]
    if not rec:
        return "?"
    why = str(rec.get("why") or "")
    if rec.get("outcome") == "synthesized" or why.startswith("the model found nothing"):
        return "wait"
    if rec.get("backend") not in ("", "off", None) and why.split(";")[0] in ("deadline", "error", "cap"):
        return "wait"  # the model was asked and waited for, then its fallback printed
    return "raw" if rec.get("chars") else "nothing"


def ask(code: Codebase, env: dict, home: Path, prompt: ch.CodingPrompt, cwd: str) -> dict:
    sid = str(uuidlib.uuid4())
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt.text,
        "cwd": cwd,
        "session_id": sid,
        "transcript_path": "",
    }
    got = hold([code.recall, "hook", "user-prompt-submit"], env, json.dumps(payload).encode(), cwd)
    rec = logged(home, sid)
    return {
        **got,
        "way": way_of(rec),
        "outcome": rec.get("outcome", ""),
        "why": rec.get("why", ""),
        "held_ms_logged": rec.get("held_ms"),
        "chars": rec.get("chars", 0),
    }


# ------------------------------------------------------------------------------------
# the run


def wait_ready(code: Codebase, env: dict, timeout: float = 600) -> dict:
    """Until ``code``'s service watches and its semantic channel has nothing waiting to be
    embedded (or says it is off); its status."""
    from benchmarks.harness import service_status

    t0 = time.monotonic()
    st: dict = {}
    while time.monotonic() < t0 + timeout:
        st = service_status(env, code.python, env["HOME"])
        sem = st.get("semantic")
        if st.get("state") == "watching":
            if sem and (sem.get("on") is False or sem.get("waiting") == 0):
                return st
            if sem is None and time.monotonic() > t0 + 60:  # a channel that never reports
                return st
        time.sleep(1.0)
    raise SystemExit(f"the {code.name} service was not ready within {timeout:g} s: {st}")


def run(
    main_dir: Path | None,
    work: Path,
    new_tasks: int = NEW_TASKS,
    limit: int | None = None,
    reuse: bool = False,
    freeze: bool = True,
    log=print,
) -> dict:
    from tests.support.standin import StandIn

    t_start = time.time()
    load_start = os.getloadavg()
    dirty, commit = _dirty(REPO), _commit(REPO)
    tree = snapshot(work / "tree") if freeze else None  # this tree's code as committed now, whatever lands later
    projects = placed(ch.load_all(), work / "projects")
    prompts = sample(projects, new_tasks)[:limit]
    cwd_of = {p.slug: p.cwd for p in projects}
    codes = {"ours": Here("ours", REPO), "raw": Here("raw", REPO), "main": ensure_main(main_dir, MAIN_COMMIT)}
    warm = [p for proj in projects for p in proj.prompts if p.split == "tune"][:WARMUP]
    services: dict = {}
    homes: dict = {}
    envs: dict = {}
    setup: dict = {}
    loads: list[float] = []
    records: list[dict] = []
    with StandIn(briefing) as api:
        try:
            for name, code in codes.items():
                home, scratch = work / name / "home", work / name / "scratch"
                t0 = time.perf_counter()
                if name == "raw":  # the same tree: the model path's transcripts
                    scratch = work / "ours" / "scratch"
                if reuse and (home / "config.json").exists():  # indexed and embedded by an earlier run
                    for left in ("cache", "turns", "injections.jsonl", "usage.jsonl"):  # no briefing cached
                        if (home / left).is_dir():
                            shutil.rmtree(home / left)
                        elif (home / left).exists():
                            (home / left).unlink()
                    res = {}
                elif name == "raw":  # ... and its index and vectors (copied)
                    (home / "config.json").write_text(json.dumps(RAW_CONFIG))
                    res = {}
                else:
                    prepare_home(home, MODEL_CONFIG)
                    root = scratch / ".claude" / "projects"
                    for proj in projects:
                        for s in proj.sessions:
                            ch.write_session(s, root)
                    with _importing(tree if name != "main" else None):
                        d = Driver(code, home, scratch)
                    res = d.call({"op": "index", "roots": [str(root)], "embed": list(cwd_of.values())})
                    d.close()
                    if name == "ours":  # copied for raw before its service writes anything
                        shutil.copytree(home, work / "raw" / "home")
                env = bench_env(home, scratch, service=True)
                env.pop("PYTHONPATH", None)
                if tree is not None and name != "main":
                    env["PYTHONPATH"] = str(tree)
                if name != "raw":
                    env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY)
                services[name] = start_service(code, env)
                st = wait_ready(code, env)
                setup[name] = {
                    "index_seconds": res.get("seconds"),
                    "embed_seconds": res.get("embed_seconds"),
                    "ready_seconds": round(time.perf_counter() - t0, 1),
                    "semantic": st.get("semantic"),
                }
                homes[name], envs[name] = home, env
                log(f"  {name}: ready in {setup[name]['ready_seconds']} s: {setup[name]}")
            for p in warm:  # first processes pay cold caches: not counted
                for name, code in codes.items():
                    ask(code, envs[name], homes[name], p, cwd_of[p.project])
            order = [*CODES, "floor"]
            t_loop = time.perf_counter()
            for i, p in enumerate(prompts):
                loads.append(os.getloadavg()[0])
                turn = order[i % len(order) :] + order[: i % len(order)]
                cwd = cwd_of[p.project]
                for name in turn:
                    if name == "floor":
                        got = hold([sys.executable, "-c", "pass"], envs["raw"], b"", cwd)
                        got.update(way="", outcome="")
                    else:
                        got = ask(codes[name], envs[name], homes[name], p, cwd)
                    records.append({"code": name, "pid": p.pid, "kind": p.kind, "project": p.project, **got})
                if (i + 1) % 10 == 0:
                    left = (time.perf_counter() - t_loop) / (i + 1) * (len(prompts) - i - 1)
                    log(f"  {i + 1}/{len(prompts)} prompts, ~{left / 60:.1f} min left, load {loads[-1]:.1f}")
        finally:
            for proc in services.values():
                from benchmarks.harness import stop_service

                stop_service(proc)
        synth_requests = sum(1 for r in api.snapshot() if r.get("_path") == "/v1/messages")
    mix = report_mix(projects)
    res = {
        "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime(t_start)),
        "seconds": round(time.time() - t_start, 1),
        "commit": commit,
        "uncommitted": [] if tree is not None else dirty,
        "frozen": tree is not None,
        "main": MAIN_COMMIT,
        "model_seconds": MODEL_SECONDS,
        "held_ms": HELD_MS,
        "targets": {"all": TARGET_ALL, "new_task": TARGET_NEW_TASK, "p50_vs_raw_ms": TARGET_P50_MS},
        "cores": os.cpu_count(),
        "load_start": [round(x, 2) for x in load_start],
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "load_median": round(percentile(loads, 0.5) or 0.0, 2),
        "sessions": sum(len(p.sessions) for p in projects),
        "prompts": {k: sum(1 for p in prompts if p.kind == k) for k in KINDS},
        "report_mix": mix,
        "synthesis_requests": synth_requests,
        "warmup": len(warm),
        "setup": setup,
        "figures": figures(records, mix),
        "records": records,
    }
    return res


def snapshot(dest: Path) -> Path:
    """This checkout's product code as committed at HEAD (``git archive``), unpacked in ``dest``:
    the processes of this tree import it (``PYTHONPATH``), so a commit landing during the run
    changes nothing."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "HEAD", "recall", "indexer"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


class _importing:
    """``PYTHONPATH`` set to ``tree`` in this process's environment (what ``bench_env`` copies)
    while inside, as before after."""

    def __init__(self, tree: Path | None) -> None:
        self.tree, self.before = tree, os.environ.get("PYTHONPATH")

    def __enter__(self) -> None:
        os.environ.pop("PYTHONPATH", None)
        if self.tree is not None:
            os.environ["PYTHONPATH"] = str(self.tree)

    def __exit__(self, *exc) -> None:
        os.environ.pop("PYTHONPATH", None)
        if self.before is not None:
            os.environ["PYTHONPATH"] = self.before


def _dirty(repo: Path) -> list[str]:
    """The product's files changed in the work tree (not committed) as the run starts: its
    figures are of the commit plus these."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--", "recall", "indexer"],
            capture_output=True,
            text=True,
        ).stdout
    except OSError:
        return []
    return sorted(line[3:] for line in out.splitlines() if line.strip())


def _commit(repo: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def _share(rs: list[dict]) -> float | None:
    return round(sum(1 for r in rs if r["hold_ms"] > HELD_MS) / len(rs), 3) if rs else None


def figures(records: list[dict], mix: dict[str, int]) -> dict:
    """Per code base: the share of prompts held over ``HELD_MS`` (all asked, new tasks, each kind,
    and all weighted to the report half's mix), p50 / p90 hold, p50 exit, the share per way."""
    out: dict = {}
    raw_by = {r["pid"]: r["hold_ms"] for r in records if r["code"] == "raw"}
    for code in [*CODES, "floor"]:
        rs = [r for r in records if r["code"] == code]
        if not rs:
            continue
        holds = [r["hold_ms"] for r in rs]
        kinds = {k: _share([r for r in rs if r["kind"] == k]) for k in KINDS}
        total = sum(mix.get(k, 0) for k in KINDS if kinds[k] is not None)
        weighted = (
            round(sum(kinds[k] * mix.get(k, 0) for k in KINDS if kinds[k] is not None) / total, 3) if total else None
        )
        ways: dict = {}
        for r in rs:
            ways[r.get("way") or "—"] = ways.get(r.get("way") or "—", 0) + 1
        fig = {
            "prompts": len(rs),
            "over_all": _share(rs),
            "over_new_task": kinds["new-task"],
            "over_weighted": weighted,
            "over_by_kind": kinds,
            "p50_ms": round(percentile(holds, 0.5), 1),
            "p90_ms": round(percentile(holds, 0.9), 1),
            "p99_ms": round(percentile(holds, 0.99), 1),
            "exit_p50_ms": round(percentile([r["exit_ms"] for r in rs], 0.5), 1),
            "ways": {k: round(v / len(rs), 3) for k, v in sorted(ways.items())},
            "failed": sum(1 for r in rs if r.get("rc") not in (0, None)),
        }
        if code != "raw" and raw_by:
            diffs = [r["hold_ms"] - raw_by[r["pid"]] for r in rs if r["pid"] in raw_by]
            fig["vs_raw_paired_p50_ms"] = round(percentile(diffs, 0.5), 1) if diffs else None
        by_way: dict = {}
        for r in rs:
            by_way.setdefault(r.get("way") or "—", []).append(r["hold_ms"])
        fig["p50_by_way_ms"] = {k: round(percentile(v, 0.5), 1) for k, v in sorted(by_way.items())}
        out[code] = fig
    if "ours" in out and "raw" in out:
        out["ours"]["p50_vs_raw_ms"] = round(out["ours"]["p50_ms"] - out["raw"]["p50_ms"], 1)
    if "main" in out and "raw" in out:
        out["main"]["p50_vs_raw_ms"] = round(out["main"]["p50_ms"] - out["raw"]["p50_ms"], 1)
    return out


def headline(res: dict) -> dict:
    """One run's figures the page lists run by run."""
    fig = res["figures"]
    return {
        "started": res["started"],
        "commit": res["commit"],
        "uncommitted": bool(res.get("uncommitted")),
        "frozen": bool(res.get("frozen")),
        "load_median": res["load_median"],
        "prompts": sum(res["prompts"].values()),
        **{f"{c}_{k}": fig.get(c, {}).get(k) for c in (*CODES, "floor") for k in ("over_all", "p50_ms")},
        "ours_over_new_task": fig["ours"]["over_new_task"],
        "raw_over_new_task": fig["raw"]["over_new_task"],
        "ours_vs_raw_paired_p50_ms": fig["ours"].get("vs_raw_paired_p50_ms"),
        "ours_wait": fig["ours"]["ways"].get("wait", 0.0),
    }


def runs_kept(before: dict | None, res: dict) -> list[dict]:
    """Every run's headline, the earlier ones (from the results ``before`` this run) first."""
    runs = list((before or {}).get("runs") or ([headline(before)] if before and "figures" in before else []))
    return [*runs, headline(res)]


# ------------------------------------------------------------------------------------
# docs/benchmarks.md: this benchmark's section


def _pct(x) -> str:
    return "—" if x is None else f"{x:.2f}"


def sections(res: dict | None = None) -> list[str]:
    """docs/benchmarks.md's section (``benchmarks.report``), from ``res`` or the committed
    benchmarks/hold.json; prose in benchmarks/prose/hold.md."""
    from benchmarks.page import prose

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    fig = res["figures"]
    codes = [c for c in (*CODES, "floor") if c in fig]
    t = res["targets"]

    def verdict(ok: bool) -> str:
        return "pass" if ok else "MISS"

    o = fig.get("ours") or {}
    head = "| figure | " + " | ".join(LABELS[c] for c in codes) + " | target (model path) |"
    rule = "|---|" + "---:|" * len(codes) + "---|"
    lines = []

    def row(label, key, fmt, target=""):
        lines.append(f"| {label} | " + " | ".join(fmt(fig[c].get(key)) for c in codes) + f" | {target} |")

    ms = lambda x: "—" if x is None else f"{x:,.0f}"  # noqa: E731
    row(
        f"held over {HELD_MS:.0f} ms, share of the prompts asked",
        "over_all",
        _pct,
        f"≤ {t['all']:.2f}: {verdict((o.get('over_all') or 0) <= t['all'])}",
    )
    row(f"held over {HELD_MS:.0f} ms, share weighted to the report half's mix", "over_weighted", _pct)
    row(
        f"held over {HELD_MS:.0f} ms, share of new tasks",
        "over_new_task",
        _pct,
        f"≤ {t['new_task']:.2f}: {verdict((o.get('over_new_task') or 0) <= t['new_task'])}",
    )
    for k in KINDS[:3]:
        lines.append(
            f"| held over {HELD_MS:.0f} ms, share of {k} prompts | "
            + " | ".join(_pct(fig[c]["over_by_kind"].get(k)) for c in codes)
            + " |  |"
        )
    gap = o.get("p50_vs_raw_ms")
    row(
        "hold p50, ms",
        "p50_ms",
        ms,
        f"≤ raw + {t['p50_vs_raw_ms']:.0f} ms ({gap:+.0f} ms): {verdict(gap is not None and gap <= t['p50_vs_raw_ms'])}"
        if gap is not None
        else "",
    )
    lines.append(
        "| hold over the raw path's on the same prompt, p50 of the differences, ms | "
        + " | ".join("—" if c == "raw" else f"{fig[c].get('vs_raw_paired_p50_ms'):+,.0f}" for c in codes)
        + " |  |"
    )
    row("hold p90, ms", "p90_ms", ms)
    row("hold p99, ms", "p99_ms", ms)
    row("process start to exit p50, ms", "exit_p50_ms", ms)
    table = "\n".join([head, rule, *lines])
    ways = sorted({w for c in codes if c != "floor" for w in fig[c]["ways"]})
    way_lines = [
        f"| {LABELS[c]} | "
        + " | ".join(
            f"{fig[c]['ways'].get(w, 0):.2f} ({ms(fig[c]['p50_by_way_ms'].get(w))} ms)" if w in fig[c]["ways"] else "—"
            for w in ways
        )
        + " |"
        for c in codes
        if c != "floor"
    ]
    way_table = "\n".join(["| code base | " + " | ".join(ways) + " |", "|---|" + "---:|" * len(ways), *way_lines])
    n = res["prompts"]
    mix = res["report_mix"]
    commit = (
        res["commit"]
        + (" as committed, frozen at the run's start" if res.get("frozen") else "")
        + (
            f" plus its uncommitted changes to {', '.join(f'`{f}`' for f in res['uncommitted'])}"
            if res.get("uncommitted")
            else ""
        )
    )
    recs = [r for r in res.get("records") or [] if r["code"] == "ours"]
    waited = [r for r in recs if r.get("way") == "wait"]
    over_else = [r for r in recs if r.get("way") != "wait" and r["hold_ms"] > HELD_MS]
    gaps = [abs(r["hold_ms"] - r["held_ms_logged"]) for r in recs if r.get("held_ms_logged") is not None]
    raw_hold = {r["pid"]: r["hold_ms"] for r in res.get("records") or [] if r["code"] == "raw"}
    went_on = [r["hold_ms"] - raw_hold[r["pid"]] for r in recs if r.get("way") != "wait" and r["pid"] in raw_hold]
    try:  # the page's own run, on an idle machine (benchmarks/run.json)
        idle = json.loads(Path(__file__).with_name("run.json").read_text(encoding="utf-8"))["processes"]
        idle_floor, idle_hook = idle["hook_service"]["python_pass_p50_ms"], idle["hook_service"]["p50_ms"]
    except (OSError, ValueError, KeyError, TypeError):
        idle_floor = idle_hook = None
    kept = res.get("runs") or [headline(res)]
    run_lines = [
        f"| {r['started']} | {r['commit']}{' +' if r.get('uncommitted') else ''}{'' if r.get('frozen') else ' ~'} | "
        f"{r['load_median']:.1f} | "
        f"{r['prompts']} | {_pct(r['ours_over_all'])} | {_pct(r['ours_over_new_task'])} | {_pct(r['ours_wait'])} | "
        f"{ms(r['ours_p50_ms'])} | {ms(r['raw_p50_ms'])} | {r['ours_vs_raw_paired_p50_ms']:+,.0f} | "
        f"{_pct(r['raw_over_all'])} | {_pct(r['main_over_all'])} | {ms(r['main_p50_ms'])} | {ms(r['floor_p50_ms'])} |"
        for r in kept
    ]
    runs_table = "\n".join(
        [
            "| run (UTC) | commit | median load | prompts | model path > 500 ms | new tasks > 500 ms | waited | "
            "p50 ms | raw p50 ms | over raw, paired p50 ms | raw > 500 ms | main > 500 ms | main p50 ms | "
            "`python -c pass` p50 ms |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *run_lines,
        ]
    )
    return [
        prose(
            "hold",
            model_seconds=f"{res['model_seconds']:g}",
            held_ms=f"{res['held_ms']:.0f}",
            main=res["main"],
            commit=commit,
            runs=runs_table,
            waited=_pct(len(waited) / len(recs) if recs else None),
            waited_new_task=sum(1 for r in waited if r["kind"] == "new-task"),
            waited_p50=ms(percentile([r["hold_ms"] for r in waited], 0.5)),
            over_else=_pct(len(over_else) / len(recs) if recs else None),
            raw_over=_pct(fig["raw"]["over_all"]),
            raw_p50=ms(fig["raw"]["p50_ms"]),
            floor_p50=ms(fig["floor"]["p50_ms"]),
            paired=f"{percentile(went_on, 0.5) or 0:+,.0f}",
            idle_floor="—" if idle_floor is None else f"{idle_floor:,.0f}",
            idle_hook="—" if idle_hook is None else f"{idle_hook:,.0f}",
            main_over=_pct(fig["main"]["over_all"]),
            logged_gap=f"{percentile(gaps, 0.5) or 0:,.1f}",
            logged_gap_p90=f"{percentile(gaps, 0.9) or 0:,.1f}",
            sessions=res["sessions"],
            asked=sum(n.values()),
            question=n["question"],
            paraphrase=n["paraphrase"],
            task=n["task"],
            new_task=n["new-task"],
            mix_new_task=mix["new-task"],
            mix_all=sum(mix.values()),
            started=res["started"],
            minutes=f"{res['seconds'] / 60:.0f}",
            cores=res["cores"],
            load_start=" / ".join(f"{x:.2f}" for x in res["load_start"]),
            load_end=" / ".join(f"{x:.2f}" for x in res["load_end"]),
            load_median=f"{res['load_median']:.2f}",
            requests=res["synthesis_requests"],
            warmup=res.get("warmup", WARMUP),
            table=table,
            ways=way_table,
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hold", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--main",
        type=Path,
        default=None,
        help=f"a checkout of main {MAIN_COMMIT} with its own .venv (default: a git worktree under the temp directory)",
    )
    ap.add_argument("--new-tasks", type=int, default=NEW_TASKS, help="new-task prompts sampled from the report half")
    ap.add_argument("--limit", type=int, default=None, help="ask only the first N sampled prompts (a smoke run)")
    ap.add_argument("--work", type=Path, default=None, help="keep the homes here (default: a temp directory)")
    ap.add_argument(
        "--reuse", action="store_true", help="reuse the indexed and embedded homes an earlier run left in --work"
    )
    ap.add_argument(
        "--live", action="store_true", help="run this checkout's files as they are (default: HEAD, frozen at the start)"
    )
    ap.add_argument("--write-json", action="store_true", help=f"write {RESULTS.name} (docs/benchmarks.md reads it)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))  # tests.support.standin
    with tempfile.TemporaryDirectory(prefix="recall-hold-") as tmp:
        work = args.work or Path(tmp)
        if args.work and work.exists() and not args.reuse:
            shutil.rmtree(work)
        res = run(args.main, work, args.new_tasks, args.limit, args.reuse, not args.live)
    print(json.dumps({k: v for k, v in res.items() if k != "records"}, indent=1))
    if args.write_json:
        try:
            before = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = None
        res["runs"] = runs_kept(before, res)
        RESULTS.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS}")
    print("\n".join(sections(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
