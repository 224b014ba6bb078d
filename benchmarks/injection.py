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
import statistics
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.retrieval import (REPO, TURN_STEP, Case, Session, Turn, find_data_dir, parse_longmemeval_date,
                                  split_of, uid, write_transcripts)

DATA_FILE = "longmemeval_s_dev.json.gz"
POOL_CWD = "/bench/pool"
POOLS = ("a", "b")
KINDS = ("answerable", "abstention", "left-out", "new-task")
MAIN_COMMIT = "f920def"
KS = (1, 5, 10)
FETCH = 10
BM25_TOP = 3  # sessions the BM25 baseline injects
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
        ids = item.get("haystack_session_ids") or []
        dates = item.get("haystack_dates") or []
        for n, turns in enumerate(item.get("haystack_sessions") or []):
            source = str(ids[n]) if n < len(ids) else f"{qid}-session-{n}"
            if source in sessions:
                continue
            start = parse_longmemeval_date(dates[n] if n < len(dates) else None) or parse_longmemeval_date(
                "2023/01/01 (Sun) 12:00")
            sess = Session(uid("pool", source), source)
            for i, turn in enumerate(turns or []):
                text = str(turn.get("content") or "").strip()
                if text:
                    role = "assistant" if turn.get("role") == "assistant" else "user"
                    sess.turns.append(Turn(uid("pool", source, i), role, text, start + TURN_STEP * i))
            sessions[source] = sess
        if qid and str(item.get("question") or "").strip():
            questions.append((qid, str(item["question"]), str(item.get("question_type") or ""),
                              [str(a) for a in item.get("answer_session_ids") or []]))
    pools = {}
    for name in POOLS:
        left_out = {a for qid, _, _, answers in questions if not qid.endswith("_abs") and group_of(qid) == name
                    for a in answers}
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
            pool.prompts.append(Prompt(qid, text, kind, split_of(qid),
                                       evidence if kind == "answerable" else frozenset(), category))
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
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit], check=True,
                           stdout=subprocess.DEVNULL)
    if not Path(path, ".venv", "bin", "recall").exists():
        subprocess.run([sys.executable, "-m", "venv", str(path / ".venv")], check=True)
        subprocess.run([str(path / ".venv" / "bin" / "pip"), "install", "-q", "-e", f"{path}[test]"], check=True)
    return Codebase("main", Path(path))


def bench_env(home: Path, scratch: Path, service: bool = False) -> dict:
    """A process environment that sees only ``home``: no key, no model backend, no user's files."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "RECALL_", "CLAUDE"))}
    env.update(RECALL_HOME=str(home), HOME=str(scratch), CLAUDE_CONFIG_DIR=str(scratch / ".claude"),
               PYTHONDONTWRITEBYTECODE="1")
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
    script = ("import sys; from pathlib import Path; from indexer.ingest import Indexer\n"
              "with Indexer() as ix: ix.run([Path(sys.argv[1])])")
    subprocess.run([code.python, "-c", script, str(root)], cwd=code.repo, env=bench_env(home, scratch), check=True)


_CITED = re.compile(r"session ([0-9a-f]{8})\]")


def cited_sessions(text: str, by_prefix: dict[str, str]) -> list[str]:
    """The pool sessions a block cites (``[2023-05-20 session 3c4e0949]``), in order."""
    return list(dict.fromkeys(by_prefix[p] for p in _CITED.findall(text or "") if p in by_prefix))


def run_hook(code: Codebase, env: dict, prompt: str, session_id: str) -> tuple[str, float]:
    """The real hook in a process of its own: (the injected text, wall ms)."""
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": POOL_CWD,
                          "session_id": session_id, "transcript_path": ""})
    t0 = time.perf_counter()
    out = subprocess.run([code.recall, "hook", "user-prompt-submit"], input=payload, capture_output=True,
                         text=True, env=env, timeout=60, cwd=env["HOME"])
    ms = (time.perf_counter() - t0) * 1000
    text = ""
    if out.stdout.strip():
        try:
            text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            text = ""
    return text, ms


def run_raw(code: Codebase, env: dict, text: str, limit: int = FETCH) -> tuple[list[str], float]:
    """``recall --json --limit N TEXT`` (the same search and order as ``--raw``): the hits'
    sessions in order, and the wall ms."""
    t0 = time.perf_counter()
    out = subprocess.run([code.recall, "--json", "--limit", str(limit), "--", text], capture_output=True, text=True,
                         env=env, timeout=60, cwd=env["HOME"])
    ms = (time.perf_counter() - t0) * 1000
    try:
        hits = json.loads(out.stdout)["hits"]
    except (ValueError, KeyError, TypeError):
        hits = []
    return list(dict.fromkeys(h["session_id"] for h in hits)), ms


def first_rank(ranked: list[str], evidence) -> int | None:
    return next((i + 1 for i, s in enumerate(ranked) if s in evidence), None)


def ask(code: Codebase, pool: Pool, env: dict, by_prefix: dict[str, str], raw: bool = True) -> list[dict]:
    """Every prompt of ``pool`` through ``code``'s hook (and the questions through --json)."""
    records = []
    for p in pool.prompts:
        sid = str(uuidlib.uuid4())
        text, ms = run_hook(code, env, p.text, sid)
        cited = cited_sessions(text, by_prefix)
        rec = {"pool": pool.name, "pid": p.pid, "kind": p.kind, "split": p.split, "category": p.category,
               "chars": len(text), "cited": cited, "evidence_cited": bool(p.evidence & set(cited)),
               "hook_ms": round(ms, 1)}
        if raw and p.kind == "answerable":
            ranked, ms = run_raw(code, env, p.text)
            rec["rank"] = first_rank(ranked, p.evidence)
            rec["raw_ms"] = round(ms, 1)
        records.append(rec)
    log = env["RECALL_HOME"] + "/injections.jsonl"
    try:
        with open(log, encoding="utf-8") as fh:
            lines = [json.loads(x) for x in fh if x.strip()]
        by_session = {r.get("session"): r for r in lines}
    except OSError:
        by_session = {}
    return records


class BM25Pool:
    """The baseline: BM25Okapi over the pool's sessions (each session's text as one document,
    lowercase whitespace tokens: LongMemEval's protocol)."""

    def __init__(self, pool: Pool) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = [s.session_id for s in pool.sessions]
        self.model = BM25Okapi([("\n".join(t.text for t in s.turns)).lower().split() or [""]
                                for s in pool.sessions])

    def rank(self, text: str, k: int = FETCH) -> tuple[list[str], float]:
        got = self.model.get_scores(text.lower().split())
        order = sorted(range(len(self.ids)), key=lambda i: (-got[i], i))[:k]
        return [self.ids[i] for i in order], float(got[order[0]]) if order else 0.0


def ask_bm25(pool: Pool) -> list[dict]:
    model = BM25Pool(pool)
    out = []
    for p in pool.prompts:
        ranked, best = model.rank(p.text)
        out.append({"pool": pool.name, "pid": p.pid, "kind": p.kind, "split": p.split, "best": best,
                    "top": ranked[:BM25_TOP], "rank": first_rank(ranked, p.evidence) if p.evidence else None,
                    "evidence": sorted(p.evidence)})
    return out


def bm25_gate(records: list[dict], threshold: float) -> list[dict]:
    """The baseline's injections: its top sessions when its best score reaches ``threshold``."""
    out = []
    for r in records:
        inject = r["best"] >= threshold
        cited = r["top"] if inject else []
        out.append({**r, "cited": cited, "chars": None, "evidence_cited": bool(set(cited) & set(r["evidence"]))})
    return out


def figures(records: list[dict], split: str | None = None) -> dict:
    """The issue's figures over ``records`` (one half, or all)."""
    recs = [r for r in records if split in (None, "all") or r["split"] == split]

    def share(xs):
        xs = list(xs)
        return round(sum(xs) / len(xs), 4) if xs else None

    answerable = [r for r in recs if r["kind"] == "answerable"]
    injected = [r for r in recs if r["cited"] or (r.get("chars") or 0) > 0]
    unanswerable = [r for r in recs if r["kind"] in ("abstention", "left-out")]
    new = [r for r in recs if r["kind"] == "new-task"]
    out = {
        "prompts": {k: sum(r["kind"] == k for r in recs) for k in KINDS},
        "useful": share(r["evidence_cited"] for r in answerable),
        "false_share": share(not r["evidence_cited"] for r in injected),
        "injected_share": share(bool(r["cited"] or (r.get("chars") or 0) > 0) for r in recs),
        "silent_new_task": share(not (r["cited"] or (r.get("chars") or 0) > 0) for r in new),
        "silent_unanswerable": share(not (r["cited"] or (r.get("chars") or 0) > 0) for r in unanswerable),
    }
    ranked = [r for r in answerable if "rank" in r]
    if ranked:
        for k in KS:
            out[f"R@{k}"] = share(r["rank"] is not None and r["rank"] <= k for r in ranked)
        out["MRR"] = round(sum(1.0 / r["rank"] for r in ranked if r["rank"]) / len(ranked), 4)
    if all(r.get("chars") is not None for r in recs) and recs:
        out["chars_per_prompt"] = round(sum(r["chars"] for r in recs) / len(recs), 1)
        out["chars_per_injection"] = round(sum(r["chars"] for r in injected) / len(injected), 1) if injected else 0
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


def candidate_rows(pools: dict[str, Pool], homes: dict, code_name: str = "ours", split: str | None = None,
                   semantic: bool = False) -> list[dict]:
    """Every hook candidate of every prompt (in-process, the hook's own ``candidates``), with
    its features and its label: 1 when its session is an evidence session of the prompt."""
    from benchmarks.retrieval import recall_home
    from recall.prompt.candidates import CANDIDATES, candidates, informative_terms, query_text, semantic_scores
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
                sims = semantic_scores(text, hits) if semantic else {}
                for rank, h in enumerate(hits):
                    f = conf.features(q, h.text, h.score, conf.hit_context(h))
                    sim = sims.get(f"m:{h.uuid}")
                    if sim is not None:
                        f["similarity"] = sim
                    rows.append({"pool": pool.name, "pid": p.pid, "kind": p.kind, "split": p.split, "rank": rank,
                                 "session": h.session_id, "label": int(h.session_id in p.evidence), "f": f})
    return rows


def fit_logistic(rows: list[dict], names: tuple[str, ...], l2: float = 1.0, iters: int = 50) -> tuple[float, dict]:
    """Maximum-likelihood logistic regression (Newton's method, an L2 penalty on the
    weights, not the bias): the few constants ``recall.search.confidence`` ships."""
    import numpy as np

    x = np.array([[1.0] + [r["f"].get(n, 0.0) for n in names] for r in rows])
    y = np.array([r["label"] for r in rows], dtype=float)
    w = np.zeros(x.shape[1])
    reg = np.eye(x.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        grad = x.T @ (p - y) + reg @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), {n: float(v) for n, v in zip(names, w[1:])}


def gate_figures(rows: list[dict], pools: dict[str, Pool], model, threshold: float, split: str) -> dict:
    """The hook's decision simulated on candidate rows (which sessions it would inject)."""
    from recall.search import confidence as conf

    by_prompt: dict = {}
    for r in rows:
        f = dict(r["f"])
        sim = f.pop("similarity", None)
        c = _score(model, f, sim)
        by_prompt.setdefault((r["pool"], r["pid"]), []).append((c, r["session"]))
    recs = []
    for pool in pools.values():
        for p in pool.prompts:
            if p.split != split:
                continue
            cands = sorted(by_prompt.get((pool.name, p.pid), []), reverse=True)
            cited = list(dict.fromkeys(s for c, s in cands if c >= threshold))
            recs.append({"kind": p.kind, "split": p.split, "cited": cited,
                         "evidence_cited": bool(set(cited) & p.evidence)})
    return figures(recs)


def _score(model, f: dict, sim) -> float:
    import math

    bias, weights = model
    z = bias + sum(w * (sim if n == "similarity" else f.get(n, 0.0)) for n, w in weights.items()
                   if n != "similarity" or sim is not None)
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


SILENT_NEW_FLOOR = 0.90      # the silence targets: the threshold is the lowest that
SILENT_UNANSWERABLE_FLOOR = 0.50  # meets both on the tune half (the most useful such gate)


def choose_threshold(rows: list[dict], pools: dict[str, Pool], model) -> float:
    """The lowest ``hook.min_confidence`` at which the tune half's silent rates meet the
    issue's floors: of the gates that keep quiet enough, the one that injects the most."""
    for t in [x / 100 for x in range(2, 96)]:
        f = gate_figures(rows, pools, model, t, "tune")
        if (f["silent_new_task"] or 0) >= SILENT_NEW_FLOOR and (f["silent_unanswerable"] or 0) >= SILENT_UNANSWERABLE_FLOOR:
            return t
    return 0.95


def fit(pools: dict[str, Pool], homes: dict, semantic: bool = False) -> dict:
    """Fit the confidence model on the tune half's candidates; its figures on both halves."""
    from recall.search.confidence import FEATURES

    rows = candidate_rows(pools, homes, semantic=semantic)
    names = FEATURES + (("similarity",) if semantic else ())
    use = [r for r in rows if r["split"] == "tune" and (not semantic or "similarity" in r["f"])]
    bias, weights = fit_logistic(use, names)
    threshold = choose_threshold(rows, pools, (bias, weights))
    return {"bias": round(bias, 3), "weights": {k: round(v, 3) for k, v in weights.items()},
            "min_confidence": threshold, "candidates": len(rows), "positives": sum(r["label"] for r in use),
            "tune": gate_figures(rows, pools, (bias, weights), threshold, "tune"),
            "report": gate_figures(rows, pools, (bias, weights), threshold, "report")}
