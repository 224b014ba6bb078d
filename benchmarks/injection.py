"""What the prompt hook injects, and whether it should have: issue 25's measure.

A pooled history: every haystack session of LongMemEval-S (the dev file) written as Claude
Code transcripts into ONE project (``/bench/pool``), with the retrieval benchmark's writer
(``benchmarks.retrieval.write_transcripts``). Prompts of four kinds are asked of it:

* ``answerable``: a question whose evidence sessions (``answer_session_ids``) are in the pool;
* ``abstention``: the ``*_abs`` questions, whose fact was never said;
* ``left-out``: a question whose evidence sessions were left out of the pool;
* ``new-task``: a coding prompt about work the history does not hold
  (``benchmarks.new_task_prompts``, written for this benchmark).

So that every question is asked both ways, there are two pools: pool ``a`` leaves out the
evidence of the questions of group ``a`` (a hash of the question id) and pool ``b`` that of
group ``b``; a question is ``answerable`` in one and ``left-out`` in the other. The abstention
and new-task prompts are asked of both pools.

Each prompt goes through the real hook (``recall hook user-prompt-submit`` in a process of
its own, no model backend, no service) and, for the questions, through ``recall --json
--limit 10`` (the same search and order as ``--raw``). Figures:

* useful: answerable prompts whose injection holds an evidence session;
* false share: injections (of every kind) that hold no evidence session;
* silent: new-task prompts, and unanswerable ones (abstention + left-out), that got nothing;
* R@1, R@5, R@10 and MRR (first evidence session's rank, 10 hits) over the answerable;
* injected characters per prompt (all kinds; 0 for a silent prompt).

In the same run: today's main (``--main``: a checkout with its own virtualenv, made by
``git worktree add`` at ``--main-commit`` when absent) on the same transcripts, and a BM25
baseline (rank_bm25's BM25Okapi over the pool's sessions, LongMemEval's protocol: lowercase
whitespace tokens); the baseline injects its top 3 sessions when the best scores at least a
threshold chosen on the tune half.

Questions are split into halves by ``benchmarks.retrieval.split_of`` (the new-task prompts by
the same hash of their text): the confidence model was fitted on ``tune``; ``report`` is
what the docs quote. Both are reported.

    python -m benchmarks.injection [--data FILE] [--main DIR] [--write-json] [--fit]

``--fit`` refits the confidence model on the tune half and prints the constants to paste
into ``recall/search/confidence.py``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import harness
from benchmarks.injection_figures import (  # noqa: F401
    BM25_TOP,
    KINDS,
    KS,
    POOL_CWD,
    SILENT_NEW_FLOOR,
    SILENT_UNANSWERABLE_FLOOR,
    figures,
    fit_logistic,
)
from benchmarks.retrieval import (
    REPO,
    Case,
    Session,
    find_data_dir,
    longmemeval_haystack,
    split_of,
    uid,
    write_transcripts,
)

DATA_FILE = "longmemeval_s_dev.json.gz"
POOLS = ("a", "b")
MAIN_COMMIT = "f920def"
FETCH = 10
RESULTS = Path(__file__).with_name("injection.json")


@dataclass
class Prompt:
    pid: str
    text: str
    kind: str
    split: str
    evidence: frozenset = frozenset()  # pool session ids that answer it
    category: str = ""


@dataclass
class Pool:
    name: str
    sessions: list[Session]
    prompts: list[Prompt] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def group_of(qid: str) -> str:
    """The pool that leaves a question's evidence out (independent of ``split_of``)."""
    return POOLS[hashlib.sha256(qid.encode("utf-8")).digest()[1] & 1]


def load_pools(path: Path, new_tasks: tuple[str, ...] | None = None) -> dict[str, Pool]:
    """Both pools from a LongMemEval file (every question's haystack, deduplicated by the
    dataset's session id) and the prompts each is asked."""
    from benchmarks.new_task_prompts import PROMPTS

    new_tasks = PROMPTS if new_tasks is None else new_tasks
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    sessions: dict[str, Session] = {}
    questions = []
    for item in data:
        qid = str(item.get("question_id") or "")
        for sess in longmemeval_haystack(item, sessions):
            sessions[sess.source_id] = sess
        if qid and str(item.get("question") or "").strip():
            questions.append(
                (
                    qid,
                    str(item["question"]),
                    str(item.get("question_type") or ""),
                    [str(a) for a in item.get("answer_session_ids") or []],
                )
            )
    pools = {}
    for name in POOLS:
        left_out = {
            a for qid, _, _, answers in questions if not qid.endswith("_abs") and group_of(qid) == name for a in answers
        }
        kept = [s for src, s in sessions.items() if src not in left_out and s.turns]
        present = {s.source_id for s in kept}
        pool = Pool(name, kept)
        for qid, text, category, answers in questions:
            evidence = frozenset(uid("pool", a) for a in answers if a in present)
            if qid.endswith("_abs"):
                kind = "abstention"
            elif group_of(qid) == name or not evidence:
                kind = "left-out"
            else:
                kind = "answerable"
            pool.prompts.append(
                Prompt(qid, text, kind, split_of(qid), evidence if kind == "answerable" else frozenset(), category)
            )
        for i, text in enumerate(new_tasks):
            pool.prompts.append(Prompt(f"task-{i}", text, "new-task", split_of(text)))
        pools[name] = pool
    return pools


def write_pool(pool: Pool, root: Path) -> int:
    """The pool's sessions as Claude Code transcripts of one project below ``root``."""
    return write_transcripts([Case("pool", f"pool-{pool.name}", POOL_CWD, pool.sessions, [])], root)


# ------------------------------------------------------------------------------------
# the code bases compared: this checkout and today's main, each with its own virtualenv


@dataclass
class Codebase:
    name: str
    repo: Path

    @property
    def python(self) -> str:
        return str(self.repo / ".venv" / "bin" / "python")

    @property
    def recall(self) -> str:
        return str(self.repo / ".venv" / "bin" / "recall")


def ensure_main(path: Path | None, commit: str = MAIN_COMMIT) -> Codebase:
    """Today's main as a checkout with its own virtualenv: ``path`` when given, else a git
    worktree at ``commit`` made (once) under the temp directory."""
    if path is None:
        path = Path(tempfile.gettempdir()) / f"recall-injection-main-{commit}"
        if not (path / "pyproject.toml").exists():
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit],
                check=True,
                stdout=subprocess.DEVNULL,
            )
    if not Path(path, ".venv", "bin", "recall").exists():
        subprocess.run([sys.executable, "-m", "venv", str(path / ".venv")], check=True)
        subprocess.run([str(path / ".venv" / "bin" / "pip"), "install", "-q", "-e", f"{path}[test]"], check=True)
    return Codebase("main", Path(path))


def bench_env(home: Path, scratch: Path, service: bool = False) -> dict:
    """A process environment that sees only ``home``: no key, no model backend, no user's files."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "RECALL_", "CLAUDE"))}
    env.update(
        RECALL_HOME=str(home),
        HOME=str(scratch),
        CLAUDE_CONFIG_DIR=str(scratch / ".claude"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    if not service:
        env["RECALL_NO_SERVICE"] = "1"
    return env


def prepare_home(home: Path, config: dict | None = None) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    cfg = {"model": {"backend": "off"}}
    cfg.update(config or {})
    (home / "config.json").write_text(json.dumps(cfg))


def index_pool(code: Codebase, root: Path, home: Path, scratch: Path) -> None:
    """Index the transcripts below ``root`` into ``home`` with ``code``'s own indexer."""
    script = (
        "import sys; from pathlib import Path; from indexer.ingest import Indexer\n"
        "with Indexer() as ix: ix.run([Path(sys.argv[1])])"
    )
    subprocess.run([code.python, "-c", script, str(root)], cwd=code.repo, env=bench_env(home, scratch), check=True)


_CITED = re.compile(r"session ([0-9a-f]{8})\]")


def cited_sessions(text: str, by_prefix: dict[str, str]) -> list[str]:
    """The pool sessions a block cites (``[2023-05-20 session 3c4e0949]``), in order."""
    return list(dict.fromkeys(by_prefix[p] for p in _CITED.findall(text or "") if p in by_prefix))


def run_hook(code: Codebase, env: dict, prompt: str, session_id: str) -> tuple[str, float]:
    """The real hook in a process of its own: (the injected text, wall ms)."""
    payload = json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            "cwd": POOL_CWD,
            "session_id": session_id,
            "transcript_path": "",
        }
    )
    wall, _, out, _ = harness.time_process(
        [code.recall, "hook", "user-prompt-submit"], env, payload.encode(), cwd=env["HOME"], timeout=60
    )
    text = ""
    if out.strip():
        try:
            text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            text = ""
    return text, wall * 1000


def run_raw(code: Codebase, env: dict, text: str, limit: int = FETCH) -> tuple[list[str], float]:
    """``recall --json --limit N TEXT`` (the same search and order as ``--raw``): the hits'
    sessions in order, and the wall ms."""
    wall, _, out, _ = harness.time_process(
        [code.recall, "--json", "--limit", str(limit), "--", text], env, cwd=env["HOME"], timeout=60
    )
    try:
        hits = json.loads(out)["hits"]
    except (ValueError, KeyError, TypeError):
        hits = []
    return list(dict.fromkeys(h["session_id"] for h in hits)), wall * 1000


def first_rank(ranked: list[str], evidence) -> int | None:
    return next((i + 1 for i, s in enumerate(ranked) if s in evidence), None)


def ask(code: Codebase, pool: Pool, env: dict, by_prefix: dict[str, str], raw: bool = True) -> list[dict]:
    """Every prompt of ``pool`` through ``code``'s hook (and the questions through --json)."""
    records = []
    for p in pool.prompts:
        sid = str(uuidlib.uuid4())
        text, ms = run_hook(code, env, p.text, sid)
        cited = cited_sessions(text, by_prefix)
        rec = {
            "pool": pool.name,
            "pid": p.pid,
            "kind": p.kind,
            "split": p.split,
            "category": p.category,
            "chars": len(text),
            "cited": cited,
            "evidence_cited": bool(p.evidence & set(cited)),
            "hook_ms": round(ms, 1),
        }
        if raw and p.kind == "answerable":
            ranked, ms = run_raw(code, env, p.text)
            rec["rank"] = first_rank(ranked, p.evidence)
            rec["raw_ms"] = round(ms, 1)
        records.append(rec)
    return records


class BM25Pool:
    """The baseline: BM25Okapi over the pool's sessions (each session's text as one document,
    lowercase whitespace tokens: LongMemEval's protocol)."""

    def __init__(self, pool: Pool) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = [s.session_id for s in pool.sessions]
        self.model = BM25Okapi([("\n".join(t.text for t in s.turns)).lower().split() or [""] for s in pool.sessions])

    def rank(self, text: str, k: int = FETCH) -> tuple[list[str], float]:
        got = self.model.get_scores(text.lower().split())
        order = sorted(range(len(self.ids)), key=lambda i: (-got[i], i))[:k]
        return [self.ids[i] for i in order], float(got[order[0]]) if order else 0.0


def ask_bm25(pool: Pool) -> list[dict]:
    model = BM25Pool(pool)
    out = []
    for p in pool.prompts:
        ranked, best = model.rank(p.text)
        out.append(
            {
                "pool": pool.name,
                "pid": p.pid,
                "kind": p.kind,
                "split": p.split,
                "best": best,
                "top": ranked[:BM25_TOP],
                "rank": first_rank(ranked, p.evidence) if p.evidence else None,
                "evidence": sorted(p.evidence),
            }
        )
    return out


def bm25_gate(records: list[dict], threshold: float) -> list[dict]:
    """The baseline's injections: its top sessions when its best score reaches ``threshold``."""
    out = []
    for r in records:
        inject = r["best"] >= threshold
        cited = r["top"] if inject else []
        out.append({**r, "cited": cited, "chars": None, "evidence_cited": bool(set(cited) & set(r["evidence"]))})
    return out


def tune_bm25_threshold(records: list[dict]) -> float:
    """The threshold that does best on the tune half: useful + silent on new tasks + silent on
    unanswerable questions, each a rate."""
    tune = [r for r in records if r["split"] == "tune"]
    best, best_t = -1.0, 0.0
    for t in sorted({round(r["best"], 2) for r in tune}):
        f = figures(bm25_gate(tune, t))
        j = (f["useful"] or 0) + (f["silent_new_task"] or 0) + (f["silent_unanswerable"] or 0)
        if j > best:
            best, best_t = j, t
    return best_t


def prepare(pools: dict[str, Pool], workdir: Path, codes: list[Codebase], config: dict | None = None) -> dict:
    """Write each pool's transcripts once and index them with each code base into a home of
    its own: ``{(code, pool): (home, scratch)}``."""
    homes = {}
    for pool in pools.values():
        root = workdir / f"transcripts-{pool.name}" / "projects"
        if not root.exists():
            write_pool(pool, root)
        for code in codes:
            home = workdir / code.name / pool.name / "home"
            scratch = workdir / code.name / pool.name / "scratch"
            scratch.mkdir(parents=True, exist_ok=True)
            if not (home / "index").exists():
                prepare_home(home, config)
                index_pool(code, root, home, scratch)
            homes[(code.name, pool.name)] = (home, scratch)
    return homes


# ------------------------------------------------------------------------------------
# fitting the confidence model (recall.search.confidence) on the tune half


def candidate_rows(
    pools: dict[str, Pool], homes: dict, code_name: str = "ours", split: str | None = None
) -> list[dict]:
    """Every hook candidate of every prompt (in-process, the hook's own ``candidates``), with
    its features and its label: 1 when its session is an evidence session of the prompt."""
    from benchmarks.retrieval import recall_home
    from recall.prompt.candidates import CANDIDATES, candidates, informative_terms, query_text
    from recall.search import confidence as conf
    from recall.search.searcher import Searcher

    rows = []
    for pool in pools.values():
        home, _ = homes[(code_name, pool.name)]
        with recall_home(home):
            s = Searcher()
            idx = s.index.searcher()
            for p in pool.prompts:
                if split is not None and p.split != split:
                    continue
                text = query_text(p.text)
                terms = informative_terms(text)
                if not terms:
                    continue
                q = conf.query_stats(idx, text, terms)
                hits = candidates(s, text, CANDIDATES, POOL_CWD, None)
                for rank, h in enumerate(hits):
                    f = conf.features(q, h.text, h.score, conf.hit_context(h))
                    rows.append(
                        {
                            "pool": pool.name,
                            "pid": p.pid,
                            "kind": p.kind,
                            "split": p.split,
                            "rank": rank,
                            "session": h.session_id,
                            "label": int(h.session_id in p.evidence),
                            "f": f,
                        }
                    )
    return rows


def gate_figures(rows: list[dict], pools: dict[str, Pool], model, threshold: float, split: str) -> dict:
    """The hook's decision simulated on candidate rows (which sessions it would inject)."""
    by_prompt: dict = {}
    for r in rows:
        c = _score(model, r["f"])
        by_prompt.setdefault((r["pool"], r["pid"]), []).append((c, r["session"]))
    recs = []
    for pool in pools.values():
        for p in pool.prompts:
            if p.split != split:
                continue
            cands = sorted(by_prompt.get((pool.name, p.pid), []), reverse=True)
            cited = list(dict.fromkeys(s for c, s in cands if c >= threshold))
            recs.append(
                {"kind": p.kind, "split": p.split, "cited": cited, "evidence_cited": bool(set(cited) & p.evidence)}
            )
    return figures(recs)


def _score(model, f: dict) -> float:
    """``recall.search.confidence.confidence`` with a candidate model (bias, weights)."""
    from recall.search import confidence as conf

    bias, weights = model
    return conf.confidence(f, conf.Model(bias, weights))


def choose_threshold(rows: list[dict], pools: dict[str, Pool], model) -> float:
    """The lowest ``hook.min_confidence`` at which the tune half's silent rates meet the
    issue's floors: of the gates that keep quiet enough, the one that injects the most."""
    for t in [x / 100 for x in range(2, 96)]:
        f = gate_figures(rows, pools, model, t, "tune")
        if (f["silent_new_task"] or 0) >= SILENT_NEW_FLOOR and (
            f["silent_unanswerable"] or 0
        ) >= SILENT_UNANSWERABLE_FLOOR:
            return t
    return 0.95


def fit(pools: dict[str, Pool], homes: dict) -> dict:
    """Fit the confidence model on the tune half's candidates; its figures on both halves."""
    from recall.search.confidence import FEATURES

    rows = candidate_rows(pools, homes)
    names = FEATURES
    use = [r for r in rows if r["split"] == "tune"]
    bias, weights = fit_logistic(use, names)
    threshold = choose_threshold(rows, pools, (bias, weights))
    return {
        "bias": round(bias, 3),
        "weights": {k: round(v, 3) for k, v in weights.items()},
        "min_confidence": threshold,
        "candidates": len(rows),
        "positives": sum(r["label"] for r in use),
        "tune": gate_figures(rows, pools, (bias, weights), threshold, "tune"),
        "report": gate_figures(rows, pools, (bias, weights), threshold, "report"),
    }


# ------------------------------------------------------------------------------------
# budgets: the hook with the service and `recall --raw`, this checkout next to main


def start_service(code: Codebase, env: dict) -> subprocess.Popen:
    """``code``'s ``recall serve`` in ``env``, once it answers."""
    return harness.start_service(
        env,
        argv=[code.recall, "serve"],
        python=code.python,
        cwd=env["HOME"],
        timeout=300,
        poll=0.3,
        name=f"`recall serve` of {code.name}",
    )


def budgets(codes: list[Codebase], homes: dict, pool: Pool, runs: int = 40) -> dict:
    """p50 / p95 wall ms of the hook with the service, and of ``recall --json`` with and
    without it, for each code base on the same pool, prompt by prompt alternating the code
    bases (so the machine's load hits both alike)."""
    prompts = [p.text for p in pool.prompts if p.kind in ("answerable", "new-task")][:runs]
    times: dict = {c.name: {"hook_service": [], "raw_service": [], "raw_no_service": []} for c in codes}
    envs = {c.name: bench_env(*homes[(c.name, pool.name)], service=True) for c in codes}
    procs = {}
    try:
        for c in codes:
            procs[c.name] = start_service(c, envs[c.name])
        for text in prompts:
            for c in codes:
                times[c.name]["hook_service"].append(run_hook(c, envs[c.name], text, str(uuidlib.uuid4()))[1])
                times[c.name]["raw_service"].append(run_raw(c, envs[c.name], text, 5)[1])
    finally:
        for p in procs.values():
            harness.stop_service(p, 30)
    for text in prompts:
        for c in codes:
            env = bench_env(*homes[(c.name, pool.name)])
            times[c.name]["raw_no_service"].append(run_raw(c, env, text, 5)[1])

    return {
        c: {
            mode: {"p50": round(harness.median(xs), 1), "p95": round(harness.percentile(xs, 0.95), 1), "n": len(xs)}
            for mode, xs in modes.items()
        }
        for c, modes in times.items()
    }


# ------------------------------------------------------------------------------------
# the run


def run(data: Path, main_dir: Path | None, workdir: Path, budget_runs: int = 40, retrieval: bool = True) -> dict:
    t0 = time.perf_counter()
    pools = load_pools(data)
    ours = Codebase("ours", REPO)
    main = ensure_main(main_dir)
    homes = prepare(pools, workdir, [ours, main])
    records: dict[str, list] = {"ours": [], "main": [], "bm25": []}
    for pool in pools.values():
        by_prefix = {s.session_id[:8]: s.session_id for s in pool.sessions}
        for code in (ours, main):
            records[code.name] += ask(code, pool, bench_env(*homes[(code.name, pool.name)]), by_prefix)
        records["bm25"] += ask_bm25(pool)
    extra: dict = {}
    timed = [ours, main]
    threshold = tune_bm25_threshold(records["bm25"])
    bm25 = bm25_gate(records["bm25"], threshold)
    out = {
        "data": data.name,
        "main": MAIN_COMMIT,
        "commit": _commit(REPO),
        "pools": {p.name: {"sessions": len(p.sessions), "messages": p.messages} for p in pools.values()},
        "bm25_threshold": threshold,
        "figures": {
            name: {split: figures(recs if name != "bm25" else bm25, split) for split in ("tune", "report")}
            for name, recs in records.items()
        },
        "budgets": budgets(timed, homes, pools["a"], budget_runs),
        **extra,
    }
    if retrieval:
        out["retrieval"] = {c.name: _retrieval(c, workdir) for c in (ours, main)}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    out["per_prompt"] = {k: v for k, v in records.items() if k != "bm25"}
    return out


def _commit(repo: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def _retrieval(code: Codebase, workdir: Path) -> dict:
    """The scoped LongMemEval and LoCoMo figures of ``benchmarks.retrieval`` for ``code``."""
    out = workdir / f"retrieval-{code.name}.json"
    env = {**os.environ, "RECALL_BENCH_DATA": str(find_data_dir() or "")}
    subprocess.run(
        [code.python, "-m", "benchmarks.retrieval", "--no-analyzed-baseline", "--out", str(out)],
        cwd=code.repo,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(out.read_text())["summary"]


# ------------------------------------------------------------------------------------
# docs/benchmarks.md: this benchmark's section, from the committed results


ROWS = (
    ("useful", "useful (answerable prompts whose injection holds an evidence session)", "≥ 0.70"),
    ("false_share", "false share (injections holding no evidence session)", "≤ 0.25"),
    ("silent_new_task", "silent on new-task prompts", "≥ 0.90"),
    ("silent_unanswerable", "silent on unanswerable questions (abstention + evidence left out)", "≥ 0.50"),
    ("R@1", "`recall --raw` R@1", ""),
    ("R@5", "`recall --raw` R@5", "≥ main + 0.08"),
    ("R@10", "`recall --raw` R@10", ""),
    ("MRR", "`recall --raw` MRR (10 hits)", ""),
    ("chars_per_prompt", "injected characters per prompt", ""),
    ("injected_share", "prompts with an injection", ""),
)


def _num(x) -> str:
    if x is None:
        return "—"
    return f"{x:,.1f}" if isinstance(x, float) and abs(x) >= 10 else f"{x:.3f}" if isinstance(x, float) else str(x)


def sections(res: dict | None = None) -> list[str]:
    """The section of docs/benchmarks.md (``benchmarks.report``), from ``res`` or from the
    committed ``benchmarks/injection.json``; prose in benchmarks/prose/injection*.md."""
    from benchmarks.page import prose

    if res is None or "figures" not in res:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return [prose("injection-missing")]
    fig = res["figures"]
    pools = res["pools"]
    n = fig["ours"]["report"]["prompts"]
    sem = "ours+semantic" in fig
    out = [
        prose(
            "injection",
            a_sessions=f"{pools['a']['sessions']:,}",
            b_sessions=f"{pools['b']['sessions']:,}",
            a_messages=f"{pools['a']['messages']:,}",
            b_messages=f"{pools['b']['messages']:,}",
            main=res.get("main"),
            bm25_top=BM25_TOP,
            bm25_threshold=f"{res['bm25_threshold']:.1f}",
            semantic_columns=" " + prose("injection-semantic-columns").rstrip("\n") if sem else "",
            answerable=n["answerable"],
            left_out=n["left-out"],
            abstention=n["abstention"],
            new_task=n["new-task"],
        )
    ]
    study = res.get("semantic_study") or {}
    dense = None
    if study:  # the dense-only baseline: its gate and its ranking (benchmarks.semantic_study)
        dense = {
            sp: {**study["dense_gate"][sp], **study["retrieval"]["dense"][sp]["prompt"]} for sp in ("tune", "report")
        }
    for split in ("report", "tune"):
        rows = [
            "| figure | recall, lexical (no service) | "
            + ("recall + semantic stage (service) | " if sem else "")
            + "main | BM25 | "
            + ("dense only | " if dense else "")
            + "target |",
            "|---|---:|" + ("---:|" if sem else "") + "---:|---:|" + ("---:|" if dense else "") + "---|",
        ]
        for key, label, target in ROWS:
            mid = f" {_num(fig['ours+semantic'][split].get(key))} |" if sem else ""
            tail = f" {_num(dense[split].get(key))} |" if dense else ""
            rows.append(
                f"| {label} | {_num(fig['ours'][split].get(key))} |{mid} {_num(fig['main'][split].get(key))} | "
                f"{_num(fig['bm25'][split].get(key))} |{tail} {target} |"
            )
        out.append(prose("injection-half", half=split.capitalize(), table="\n".join(rows)))
    o, m = fig["ours"]["report"], fig["main"]["report"]

    def pct(x):
        return f"{100 * (x or 0):.0f}%"

    out.append(
        prose(
            "injection-reading",
            main_injected=pct(m["injected_share"]),
            main_chars=f"{m.get('chars_per_prompt') or 0:,.0f}",
            main_new_task=pct(1 - (m["silent_new_task"] or 0)),
            main_unanswerable=pct(1 - (m["silent_unanswerable"] or 0)),
            silent_new_task=pct(o["silent_new_task"]),
            silent_unanswerable=pct(o["silent_unanswerable"]),
            chars=f"{o.get('chars_per_prompt') or 0:,.0f}",
            useful=f"{o['useful']:.3f}",
            main_useful=f"{m['useful']:.3f}",
            r5=f"{o.get('R@5') or 0:.3f}",
            main_r5=f"{m.get('R@5') or 0:.3f}",
        )
    )
    if sem:
        from benchmarks import semantic_study

        out += semantic_study.section(res)
    b = res.get("budgets")
    if b:
        labels = {
            "ours": "recall" + (" with the semantic stage" if "ours-lexical" in b else ""),
            "ours-lexical": "recall without it (as shipped)",
            "main": "main",
        }
        rows = [
            "| process | "
            + " | ".join(labels[c] for c in b)
            + " | "
            + " | ".join(f"{labels[c]} − main" for c in b if c != "main")
            + " | budget |",
            "|---|" + "---:|" * (2 * len(b) - 1) + "---|",
        ]
        for mode, label, budget in (
            ("hook_service", "prompt hook, with the service", "≤ +15 ms"),
            ("raw_service", "`recall --raw --limit 5`, with the service", "≤ +20 ms"),
            ("raw_no_service", "`recall --raw --limit 5`, no service", "≤ +20 ms"),
        ):
            cells = [f"{b[c][mode]['p50']} / {b[c][mode]['p95']}" for c in b]
            diffs = [f"{b[c][mode]['p50'] - b['main'][mode]['p50']:+.1f}" for c in b if c != "main"]
            rows.append(f"| {label} | " + " | ".join(cells + diffs) + f" | {budget} |")
        out.append(prose("injection-budgets", table="\n".join(rows)))
    r = res.get("retrieval")
    if r:
        rows = ["| figure | recall | main |", "|---|---:|---:|"]
        for ds, level, metric in (
            ("longmemeval", "session", "recall@5"),
            ("longmemeval", "session", "recall_all@5"),
            ("longmemeval", "session", "ndcg@10"),
            ("longmemeval", "message", "recall@10"),
            ("longmemeval", "message", "ndcg@10"),
            ("locomo", "message", "recall@10"),
            ("locomo", "message", "ndcg@10"),
        ):
            try:
                o = r["ours"][ds][level][metric]["ours"]
                m = r["main"][ds][level][metric]["ours"]
            except KeyError:
                continue
            rows.append(f"| {ds} {level} {metric} | {o:.3f} | {m:.3f} |")
        out.append(prose("injection-retrieval", table="\n".join(rows)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.injection", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"a LongMemEval-S file (default: {DATA_FILE} in $RECALL_BENCH_DATA or shared/data)",
    )
    ap.add_argument(
        "--main",
        type=Path,
        default=None,
        help="a checkout of today's main with its own .venv "
        f"(default: a git worktree at {MAIN_COMMIT} made under the temp directory)",
    )
    ap.add_argument("--work", type=Path, default=None, help="keep transcripts and indexes here (reused)")
    ap.add_argument("--budget-runs", type=int, default=40)
    ap.add_argument("--no-retrieval", action="store_true", help="skip the scoped retrieval figures")
    ap.add_argument("--write-json", action="store_true", help=f"write {RESULTS.name} (docs/benchmarks.md reads it)")
    ap.add_argument("--fit", action="store_true", help="refit the confidence model on the tune half and print it")
    args = ap.parse_args(argv)
    data = args.data or ((find_data_dir() or Path(".")) / DATA_FILE)
    if not data.exists():
        print(f"error: no {data}: pass --data or set RECALL_BENCH_DATA", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(
        prefix="recall-injection-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
    ) as tmp:
        work = args.work or Path(tmp)
        if args.fit:
            pools = load_pools(data)
            homes = prepare(pools, work, [Codebase("ours", REPO)])
            print(json.dumps(fit(pools, homes), indent=1))
            return 0
        res = run(data, args.main, work, args.budget_runs, not args.no_retrieval)
    print("\n".join(sections(res)))
    if args.write_json:
        RESULTS.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
