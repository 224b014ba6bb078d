"""Issue 34's measure: what the prompt hook injects, at every history size, on coding work and on
LongMemEval, next to today's main and BM25 in the same run.

Two corpora, each at several sizes:

* **coding**: the coding history of ``benchmarks.coding_history`` (three projects of Claude Code
  work, ~36 sessions each over four months, labelled prompts: ``question``, ``task``,
  ``paraphrase``, ``new-task``). A prompt is asked right after the session its label names
  (``asked_after``), of the history up to then: the transcripts are written and indexed in time
  order, the prompts asked in between. Sizes: ``project`` (each project alone: a prompt sees its
  project's 5–36 sessions; reported as ``≤10`` and ``11–36`` sessions), ``3 projects`` (all three
  in one history, ~100 sessions at the end), ``+1k`` and ``+4k`` (the same with 1,000 and
  4,000 sessions of other projects indexed first: LongMemEval's chat sessions and generated
  coding sessions, ``benchmarks.generate``, each in a project of its own, as a heavy user's
  machine holds them; the hook searches the current project, so they change the statistics
  it judges by, not its candidates).
* **longmemeval**: pools of LongMemEval-S sessions in one project, as issue 25's benchmark
  (``benchmarks.injection``), at 5, 30, 100 and 1,000 sessions (several draws of the small
  ones) and the two full pools (~3,800): each draw holds the evidence sessions of a few
  questions (``answerable``) plus random others; other questions are ``left-out``, the
  ``*_abs`` ones ``abstention``, and the new-task coding prompts of
  ``benchmarks.new_task_prompts`` are asked of every pool. Asked by name (``--lme-sizes pool``),
  issue 47's chat pool: every distinct session of the dev file (3,881) in one project, every
  answerable question, the abstention ones and the new tasks (``chat_pool``; its section of the
  page: ``--chat-pool``, ``benchmarks/chat_pool.json``). ``--no-service``: the hook as without
  the service (no semantic channel); the same ``--work`` reuses the indexes.

Every prompt goes through each code base's real hook (``build_context`` in a warm process of
the checkout's own: ``benchmarks/injection_driver.py``; no model backend: the raw path) and its
``recall --raw`` ranking (10 hits, the current project). For this tree also the model path's
candidates (what the synthesis would read: recall of the answering session among them) and every
candidate's features (``--fit`` refits ``recall.search.confidence``'s model on the tune half).

Figures per corpus, size, kind and half (``tune``: the coding dev prompts and LongMemEval's tune
half, which the model was fitted on; ``report``: the held-out prompts): useful (an answerable
prompt's injection cites an answering session), false share (injections citing none), silent on
new tasks, R@1 / R@5 of ``--raw``, characters per injection, and the model path's candidate recall.

    python -m benchmarks.injection_sizes [--main DIR] [--sizes ...] [--write-json] [--fit]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import coding_history as ch
from benchmarks.injection import DATA_FILE, Codebase, bench_env, cited_sessions, ensure_main, first_rank, prepare_home
from benchmarks.retrieval import REPO, Case, find_data_dir, longmemeval_haystack, split_of, uid, write_transcripts

MAIN_COMMIT = "325fc0b"
RESULTS = Path(__file__).with_name("injection_sizes.json")
CHAT_POOL = Path(__file__).with_name("chat_pool.json")  # issue 47 item 8 (``chat_pool_result``)
DRIVER = Path(__file__).with_name("injection_driver.py")
CODING_SIZES = ("project", "memories", "3 projects", "+1k", "+4k")
ALONE = ("project", "memories")  # sizes that ask each project of its own history
FILLER = {"+1k": 1000, "+4k": 4000}
LME_SIZES = {"5": 8, "30": 4, "100": 2, "1000": 1, "full": 2, "pool": 1}  # size -> draws
ANSWERABLE = ("question", "task", "paraphrase", "answerable")
BM25_TOP = 3
SEED = 34


# ------------------------------------------------------------------------------------
# a code base's hook in a warm process


class Here(Codebase):
    """This checkout, run with the interpreter running the benchmark."""

    @property
    def python(self) -> str:
        return sys.executable

    @property
    def recall(self) -> str:
        return str(Path(sys.executable).parent / "recall")


class Driver:
    """``benchmarks/injection_driver.py`` under ``code``'s interpreter, with its own home."""

    #: ``--no-service``: every driver works as the hook does with no service running (no semantic channel)
    service = True

    def __init__(self, code: Codebase, home: Path, scratch: Path, config: dict | None = None) -> None:
        if not (home / "config.json").exists():
            prepare_home(home, config)
        self.code = code
        self.proc = subprocess.Popen(
            [code.python, str(DRIVER), *([] if self.service else ["--no-service"])],
            cwd=str(code.repo),
            env=bench_env(home, scratch),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def call(self, req: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.code.name} driver ended (exit {self.proc.poll()})")
        return json.loads(line)

    def index(self, *roots: Path, embed: list[str] | None = None) -> float:
        """Index ``roots``; with ``embed`` (the cwds prompts are asked in), embed those projects
        for the semantic channel too (a checkout without it ignores the key): the seconds both took."""
        req = {"op": "index", "roots": [str(r) for r in roots]}
        if embed:
            req["embed"] = list(embed)
        res = self.call(req)
        return res.get("seconds", 0.0) + res.get("embed_seconds", 0.0)

    def memories(self, session: ch.CodingSession) -> None:
        """Write ``session``'s typed memories, as the extraction does after it (``coding_history``)."""
        items = [{**m, "session_id": session.session_id, "ts": session.end.timestamp()} for m in session.memories]
        if items:
            self.call({"op": "memories", "cwd": session.cwd, "items": items})

    def ask(self, prompt: str, cwd: str, rows: bool = False) -> dict:
        return self.call({"op": "ask", "prompt": prompt, "cwd": cwd, "rows": rows})

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


#: every synthesis request of the run, by its hash (``--requests DIR`` writes them, one file each)
REQUESTS: dict[str, dict] = {}


def request_hash(request: dict) -> str:
    """A synthesis request's key: what the model reads, system and user text."""
    import hashlib

    return hashlib.sha256(f"{request['system']}\0{request['user']}".encode("utf-8")).hexdigest()[:20]


def record(
    code: str,
    corpus: str,
    size: str,
    pid: str,
    kind: str,
    split: str,
    evidence: frozenset,
    res: dict,
    by_prefix: dict[str, str],
    sessions_seen: int,
    extra: dict | None = None,
) -> dict:
    """One prompt's record from a driver's answer."""
    text = res.get("text") or ""
    cited = cited_sessions(text, by_prefix)
    if res.get("memory_hits") and res.get("injected"):  # a memory cites no session: count its source
        cited = list(dict.fromkeys([*cited, *res["injected"]]))
    rec = {
        "code": code,
        "corpus": corpus,
        "size": size,
        "pid": pid,
        "kind": kind,
        "split": split,
        "chars": len(text),
        "cited": cited,
        "evidence_cited": bool(evidence & set(cited)),
        "evidence_cited_3": bool(evidence & set(cited[:3])),  # among its first three sessions
        "rank": first_rank(res.get("ranked") or [], evidence) if evidence else None,
        # `recall --raw` with the service: words and meaning fused (where the checkout fuses them)
        "rank_service": first_rank(res.get("ranked_service") or res.get("ranked") or [], evidence)
        if evidence
        else None,
        "sessions": sessions_seen,
        "ms": res.get("ms"),
    }
    if "model" in res:
        rec["model_candidates"] = len(res["model"])
        rec["model_has_evidence"] = bool(evidence & set(res["model"]))
    if "model_lexical" in res:
        rec["model_lexical_has_evidence"] = bool(evidence & set(res["model_lexical"]))
        rec["near"] = [[sid, sim, sid in evidence] for sid, sim in res.get("near") or []]
    if "asked" in res:  # the model pass (``injection_driver._model_pass``): with a model backend
        rec["asked"] = bool(res["asked"])
        rec["way"] = res.get("way")
        rec["read_has_evidence"] = bool(evidence & set(res.get("read") or []))
        rec["read"] = list(res.get("read") or [])
        rec["evidence"] = sorted(evidence)
        if res.get("request"):
            rec["request"] = request_hash(res["request"])
            REQUESTS[rec["request"]] = res["request"]
    if res.get("background"):
        rec["background"] = res["background"]
        rec["evidence"] = sorted(evidence)
    if res.get("rows"):
        rec["rows"] = [{**r, "label": int(r["session"] in evidence)} for r in res["rows"]]
    rec.update(extra or {})
    return rec


# ------------------------------------------------------------------------------------
# filler: other projects' sessions


def lme_sessions(data: Path) -> list:
    opener = gzip.open if str(data).endswith(".gz") else open
    with opener(data, "rt", encoding="utf-8") as fh:
        items = json.load(fh)
    sessions: dict = {}
    questions = []
    for item in items:
        for s in longmemeval_haystack(item, sessions):
            if s.turns:
                sessions[s.source_id] = s
        if str(item.get("question") or "").strip():
            questions.append(item)
    return [sessions, questions]


def write_filler(root: Path, count: int, data: Path) -> int:
    """``count`` sessions of other projects below ``root``: LongMemEval's (in projects of ~200
    sessions each) and, past those, generated coding sessions (``benchmarks.generate``)."""
    if (root / ".done").exists():
        return int((root / ".done").read_text())
    sessions, _ = lme_sessions(data)
    chat = list(sessions.values())[:count]
    cases = [
        Case("filler", f"chat-{i}", f"/home/dev/chat-notes-{i}", chat[i * 200 : (i + 1) * 200], [])
        for i in range((len(chat) + 199) // 200)
    ]
    write_transcripts(cases, root)
    written = len(chat)
    left = count - written
    if left > 0:
        from benchmarks.generate import generate

        # the generator's sessions hold ~107 indexable messages each
        generate(root / "generated", messages=left * 107, seed=SEED, projects=max(3, left // 300))
        written += sum(1 for p in (root / "generated").rglob("*.jsonl") if "subagents" not in p.parts)
    (root / ".done").write_text(str(written))
    return written


# ------------------------------------------------------------------------------------
# the coding history


@dataclass
class Event:
    when: float
    order: int
    session: ch.CodingSession | None = None
    prompt: ch.CodingPrompt | None = None


def coding_events(projects: list[ch.CodingProject]) -> list[Event]:
    """Every session, and every prompt right after the session it is asked after, in time order."""
    events = []
    for proj in projects:
        at = {s.sid: s.start.timestamp() for s in proj.sessions}
        for s in proj.sessions:
            events.append(Event(s.start.timestamp(), 0, session=s))
        for p in proj.prompts:
            events.append(Event(at[p.asked_after] + 0.5, 1, prompt=p))
    events.sort(key=lambda e: (e.when, e.order))
    return events


def run_coding(
    size: str, projects: list[ch.CodingProject], codes: list[Codebase], work: Path, data: Path, log=print
) -> list[dict]:
    """Every coding prompt at ``size`` through each code base (and BM25 over the project's sessions)."""
    groups = [[p] for p in projects] if size in ALONE else [projects]
    out: list[dict] = []
    for group in groups:
        tag = size.replace(" ", "-").replace("+", "plus") + ("-" + group[0].slug if size in ALONE else "")
        base = work / "coding" / tag
        filler_root = None
        if size in FILLER:
            filler_root = work / "filler" / size.replace("+", "plus")
            n = write_filler(filler_root, FILLER[size], data)
            log(f"  filler {size}: {n} sessions")
        drivers = {}
        for code in codes:
            home, scratch = base / code.name / "home", base / code.name / "scratch"
            if home.exists():
                import shutil

                shutil.rmtree(home)
            scratch.mkdir(parents=True, exist_ok=True)
            drivers[code.name] = Driver(code, home, scratch)
            if filler_root is not None:
                t = drivers[code.name].index(filler_root)
                log(f"  {code.name}: filler indexed in {t:.0f} s")
        root = base / "transcripts"
        if root.exists():
            import shutil

            shutil.rmtree(root)
        root.mkdir(parents=True)
        by_prefix: dict[str, str] = {}
        seen: dict[str, list[ch.CodingSession]] = {}
        pending = False
        unsent: list[ch.CodingSession] = []  # sessions whose typed memories are not written yet (``memories``)
        try:
            for ev in coding_events(group):
                if ev.session is not None:
                    ch.write_session(ev.session, root)
                    by_prefix[ev.session.session_id[:8]] = ev.session.session_id
                    seen.setdefault(ev.session.project, []).append(ev.session)
                    if size == "memories":
                        unsent.append(ev.session)
                    pending = True
                    continue
                p = ev.prompt
                if pending:
                    for d in drivers.values():
                        d.index(root, embed=[pr.cwd for pr in group])
                        for s in unsent:
                            d.memories(s)
                    unsent = []
                    pending = False
                cwd = next(pr.cwd for pr in group if pr.slug == p.project)
                visible = seen.get(p.project, [])
                for code in codes:
                    res = drivers[code.name].ask(p.text, cwd, rows=code.name == "ours")
                    out.append(
                        record(
                            code.name,
                            "coding",
                            size,
                            p.pid,
                            p.kind,
                            p.split,
                            p.answers,
                            res,
                            by_prefix,
                            len(visible),
                            {"project": p.project},
                        )
                    )
                out.append(
                    bm25_record(
                        "coding",
                        size,
                        p.pid,
                        p.kind,
                        p.split,
                        p.answers,
                        p.text,
                        [(s.session_id, session_text(s)) for s in visible],
                        len(visible),
                        {"project": p.project},
                    )
                )
        finally:
            for d in drivers.values():
                d.close()
    return out


def session_text(s: ch.CodingSession) -> str:
    parts = []
    for t in s.turns:
        if "user" in t:
            parts.append(str(t["user"]))
        else:
            parts.append(str(t.get("assistant") or ""))
            for call in t.get("tools") or []:
                parts.append(json.dumps(call.get("input") or {}))
                parts.append(str(call.get("result") or ""))
    return "\n".join(parts)


# ------------------------------------------------------------------------------------
# BM25 (rank_bm25's BM25Okapi, LongMemEval's protocol: lowercase whitespace tokens)


def bm25_record(corpus, size, pid, kind, split, evidence, prompt, docs, sessions_seen, extra=None) -> dict:
    from rank_bm25 import BM25Okapi

    ranked, best = [], 0.0
    if docs:
        model = BM25Okapi([d.lower().split() or [""] for _, d in docs])
        got = model.get_scores(prompt.lower().split())
        order = sorted(range(len(docs)), key=lambda i: (-got[i], i))[:10]
        ranked, best = [docs[i][0] for i in order], float(got[order[0]])
    rec = {
        "code": "bm25",
        "corpus": corpus,
        "size": size,
        "pid": pid,
        "kind": kind,
        "split": split,
        "best": best,
        "top": ranked[:BM25_TOP],
        "rank": first_rank(ranked, evidence) if evidence else None,
        "evidence": sorted(evidence),
        "sessions": sessions_seen,
        "chars": None,
    }
    rec.update(extra or {})
    return rec


def bm25_gate(records: list[dict], threshold: float) -> list[dict]:
    out = []
    for r in records:
        cited = r["top"] if r["best"] >= threshold else []
        out.append({**r, "cited": cited, "evidence_cited": bool(set(cited) & set(r["evidence"]))})
    return out


def tune_bm25(records: list[dict]) -> float:
    """The threshold best on the tune half: useful + silent on new tasks (rates)."""
    tune = [r for r in records if r["split"] == "tune"]
    best, best_t = -1.0, 0.0
    for t in sorted({round(r["best"], 1) for r in tune}):
        f = figures(bm25_gate(tune, t))
        j = (f["useful"] or 0) + (f["silent_new_task"] or 0)
        if j > best:
            best, best_t = j, t
    return best_t


# ------------------------------------------------------------------------------------
# LongMemEval pools at every size


@dataclass
class Draw:
    name: str
    size: str
    sessions: list
    prompts: list[tuple[str, str, str, str, frozenset]] = field(
        default_factory=list
    )  # pid, text, kind, split, evidence


def lme_draws(data: Path, sizes: dict[str, int], new_tasks: tuple[str, ...]) -> list[Draw]:
    """Pools of LongMemEval sessions at each size: each holds the evidence of a few questions
    (answerable) and random other sessions; the other questions are left-out (at most 12), the
    abstention ones and every new-task prompt are asked too. ``full``: issue 25's two pools."""
    from benchmarks.injection import load_pools

    sessions, questions = lme_sessions(data)
    rng = random.Random(SEED)
    qs = [
        (str(q["question_id"]), str(q["question"]), [str(a) for a in q.get("answer_session_ids") or []])
        for q in questions
    ]
    answerable = [q for q in qs if not q[0].endswith("_abs") and q[2] and all(a in sessions for a in q[2])]
    abstention = [q for q in qs if q[0].endswith("_abs")]
    evidence_all = {a for q in qs for a in q[2]}
    others = [s for src, s in sessions.items() if src not in evidence_all]
    draws = []
    for size, count in sizes.items():
        if size == "pool":
            draws.append(chat_pool(sessions, answerable, abstention, new_tasks))
            continue
        if size == "full":
            for name, pool in load_pools(data, new_tasks).items():
                d = Draw(f"full-{name}", "full", pool.sessions)
                d.prompts = [(p.pid, p.text, p.kind, p.split, p.evidence) for p in pool.prompts]
                draws.append(d)
            continue
        n = int(size)
        order = answerable[:]
        rng.shuffle(order)
        per = max(1, min(len(order) // count, n // 6 or 1))
        for k in range(count):
            chosen, ev = [], set()
            for q in order[k * per : (k + 1) * per]:
                if len(ev | set(q[2])) > max(1, n // 2) and chosen:
                    break
                chosen.append(q)
                ev |= set(q[2])
            fill = rng.sample(others, max(0, n - len(ev)))
            pool = [sessions[a] for a in sorted(ev)] + fill
            d = Draw(f"{size}-{k}", size, pool)
            present = {s.source_id for s in pool}
            for qid, text, answers in chosen:
                d.prompts.append((qid, text, "answerable", split_of(qid), frozenset(uid("pool", a) for a in answers)))
            left = [q for q in answerable if q not in chosen and not set(q[2]) & present]
            for qid, text, _ in rng.sample(left, min(12, len(left))):
                d.prompts.append((qid, text, "left-out", split_of(qid), frozenset()))
            for qid, text, _ in abstention:
                d.prompts.append((qid, text, "abstention", split_of(qid), frozenset()))
            for i, text in enumerate(new_tasks):
                d.prompts.append((f"task-{i}", text, "new-task", split_of(text), frozenset()))
            draws.append(d)
    return draws


def chat_pool(sessions: dict, answerable: list, abstention: list, new_tasks: tuple[str, ...]) -> Draw:
    """Issue 47 item 8's chat pool: every distinct session of the dev file (3,881 of
    LongMemEval-S's haystacks, deduplicated by the dataset's session id; none repeated to make
    it look bigger) in one project, every answerable question (its evidence is all in it), the
    abstention questions and every new-task prompt."""
    d = Draw("pool", "pool", list(sessions.values()))
    for qid, text, answers in answerable:
        d.prompts.append((qid, text, "answerable", split_of(qid), frozenset(uid("pool", a) for a in answers)))
    for qid, text, _ in abstention:
        d.prompts.append((qid, text, "abstention", split_of(qid), frozenset()))
    for i, text in enumerate(new_tasks):
        d.prompts.append((f"task-{i}", text, "new-task", split_of(text), frozenset()))
    return d


POOL_CWD = "/bench/pool"


def run_lme(draw: Draw, codes: list[Codebase], work: Path, log=print) -> list[dict]:
    base = work / "lme" / draw.name
    root = base / "transcripts"
    if not (root / ".done").exists():
        write_transcripts([Case("pool", f"pool-{draw.name}", POOL_CWD, draw.sessions, [])], root)
        (root / ".done").write_text("1")
    by_prefix = {s.session_id[:8]: s.session_id for s in draw.sessions}
    docs = [(s.session_id, "\n".join(t.text for t in s.turns)) for s in draw.sessions]
    out = []
    seeded = None  # the first code base's vectors (the same encoder, the same texts)
    for code in codes:
        home, scratch = base / code.name / "home", base / code.name / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        fresh = not (home / "index").exists()
        if fresh and seeded is not None and not (home / "vectors.db").exists():
            # a vector is the encoder's for its text: copied, it spares minutes of embedding; a
            # text the other checkout indexes otherwise (another redaction) has another hash
            # there and is embedded again (``semantic.Backlog.scan``)
            import shutil

            prepare_home(home)
            for tail in ("", "-wal"):  # the driver has ended: the file and its log are one state
                if Path(f"{seeded}{tail}").exists():
                    shutil.copyfile(f"{seeded}{tail}", home / f"vectors.db{tail}")
        d = Driver(code, home, scratch)
        try:
            t = d.index(root, embed=[POOL_CWD])
            if fresh:
                log(f"  {draw.name} {code.name}: indexed {len(draw.sessions)} sessions in {t:.0f} s")
            if seeded is None and (home / "vectors.db").exists():
                seeded = home / "vectors.db"
            for pid, text, kind, split, ev in draw.prompts:
                res = d.ask(text, POOL_CWD, rows=code.name == "ours")
                out.append(
                    record(
                        code.name,
                        "longmemeval",
                        draw.size,
                        pid,
                        kind,
                        split,
                        ev,
                        res,
                        by_prefix,
                        len(draw.sessions),
                        {"draw": draw.name},
                    )
                )
        finally:
            d.close()
    from rank_bm25 import BM25Okapi

    model = BM25Okapi([d_.lower().split() or [""] for _, d_ in docs])
    for pid, text, kind, split, ev in draw.prompts:
        got = model.get_scores(text.lower().split())
        order = sorted(range(len(docs)), key=lambda i: (-got[i], i))[:10]
        ranked = [docs[i][0] for i in order]
        out.append(
            {
                "code": "bm25",
                "corpus": "longmemeval",
                "size": draw.size,
                "pid": pid,
                "kind": kind,
                "split": split,
                "best": float(got[order[0]]) if order else 0.0,
                "top": ranked[:BM25_TOP],
                "rank": first_rank(ranked, ev) if ev else None,
                "evidence": sorted(ev),
                "sessions": len(draw.sessions),
                "chars": None,
                "draw": draw.name,
            }
        )
    return out


# ------------------------------------------------------------------------------------
# figures


def figures(recs: list[dict]) -> dict:
    def share(xs):
        xs = list(xs)
        return round(sum(xs) / len(xs), 4) if xs else None

    def injected(r):
        return bool(r["cited"] or (r.get("chars") or 0) > 0)

    answerable = [r for r in recs if r["kind"] in ANSWERABLE]
    inj = [r for r in recs if injected(r)]
    out = {
        "prompts": len(recs),
        "answerable": len(answerable),
        "paraphrases": sum(r["kind"] == "paraphrase" for r in answerable),
        "useful": share(r["evidence_cited"] for r in answerable),
        "false_share": share(not r["evidence_cited"] for r in inj),
        "injected_share": share(injected(r) for r in recs),
        "silent_new_task": share(not injected(r) for r in recs if r["kind"] == "new-task"),
        "silent_unanswerable": share(not injected(r) for r in recs if r["kind"] in ("abstention", "left-out")),
    }
    if answerable and all("evidence_cited_3" in r for r in answerable):
        out["useful_first3"] = share(r["evidence_cited_3"] for r in answerable)
    for kind in ("question", "task", "paraphrase"):
        ks = [r for r in answerable if r["kind"] == kind]
        if ks:
            out[f"useful_{kind}"] = share(r["evidence_cited"] for r in ks)
    for k in (1, 5):
        out[f"R@{k}"] = share(r["rank"] is not None and r["rank"] <= k for r in answerable)
    if answerable and all("rank_service" in r for r in answerable):
        out["R@5_service"] = share(r["rank_service"] is not None and r["rank_service"] <= 5 for r in answerable)
        out["MRR_service"] = round(
            sum(1 / r["rank_service"] for r in answerable if r["rank_service"]) / len(answerable), 4
        )
        out["MRR"] = round(sum(1 / r["rank"] for r in answerable if r["rank"]) / len(answerable), 4)
        para = [r for r in answerable if r["kind"] == "paraphrase"]
        if para:
            out["R@5_paraphrase"] = share(r["rank"] is not None and r["rank"] <= 5 for r in para)
            out["R@5_service_paraphrase"] = share(
                r["rank_service"] is not None and r["rank_service"] <= 5 for r in para
            )
    if recs and all(r.get("chars") is not None for r in recs):
        out["chars_per_injection"] = round(sum(r["chars"] for r in inj) / len(inj), 1) if inj else 0
        out["max_chars"] = max(r["chars"] for r in recs)
    model = [r for r in answerable if "model_has_evidence" in r]
    if model:
        out["model_candidate_recall"] = share(r["model_has_evidence"] for r in model)
        for kind in ("question", "task", "paraphrase"):
            ks = [r for r in model if r["kind"] == kind]
            if ks:
                out[f"model_candidate_recall_{kind}"] = share(r["model_has_evidence"] for r in ks)
        lexical = [r for r in model if "model_lexical_has_evidence" in r]
        if lexical:
            out["model_lexical_candidate_recall"] = share(r["model_lexical_has_evidence"] for r in lexical)
    asked = [r for r in recs if "asked" in r]
    if asked:
        new_asked = [r for r in asked if r["kind"] == "new-task"]
        if new_asked:
            out["asked_new_task"] = share(r["asked"] for r in new_asked)
        ans = [r for r in asked if r["kind"] in ANSWERABLE]
        if ans:
            out["read_recall"] = share(r["read_has_evidence"] for r in ans)
            out["asked_answerable"] = share(r["asked"] for r in ans)
        if any(r.get("way") for r in asked):
            out["waits"] = share(r.get("way") == "wait" for r in asked)
            if new_asked:
                out["waits_new_task"] = share(r.get("way") == "wait" for r in new_asked)
    if model:
        new = [r for r in recs if r["kind"] == "new-task" and "model_candidates" in r]
        out["model_silent_new_task"] = share(r["model_candidates"] == 0 for r in new)
        out["model_candidates_per_prompt"] = round(
            sum(r["model_candidates"] for r in recs if "model_candidates" in r) / max(1, len(recs)), 2
        )
    return out


def size_bucket(r: dict) -> str:
    """The row a record is reported in: a coding prompt of the ``project`` size by the sessions it saw."""
    if r["corpus"] == "coding" and r["size"] == "memories":
        return "memories"
    if r["corpus"] == "coding" and r["size"] == "project":
        return "≤10" if r["sessions"] <= 10 else "11–36"
    return r["size"]


def table(records: list[dict], bm25_thresholds: dict[str, float]) -> dict:
    """``{corpus: {size: {code: {split: figures}}}}``."""
    out: dict = {}
    gated = []
    for r in records:
        if r["code"] == "bm25":
            r = bm25_gate([r], bm25_thresholds[r["corpus"]])[0]
        gated.append(r)
    keys = sorted({(r["corpus"], size_bucket(r), r["code"]) for r in gated})
    for corpus, size, code in keys:
        rs = [r for r in gated if r["corpus"] == corpus and size_bucket(r) == size and r["code"] == code]
        out.setdefault(corpus, {}).setdefault(size, {})[code] = {
            split: figures([r for r in rs if r["split"] == split]) for split in ("tune", "report")
        }
    return out


# ------------------------------------------------------------------------------------
# fitting the confidence model on the tune half of both corpora, every size


def fit(records: list[dict]) -> dict:
    """``recall.search.confidence.DECISION``: the logistic model over ``DECISION_FEATURES`` fitted
    on the tune half's candidates of every corpus and size (each corpus × size weighted alike),
    and its gates, chosen on the tune half by replaying the decision (``simulate``):
    ``min_confidence`` (the raw path), the lowest that keeps new-task prompts silent (≥ 0.95 at
    every size but the full LongMemEval pools, ≥ 0.93 there); ``model_min_confidence``, the
    lowest at which the model path sends at most 3.5 past sessions a prompt at every size."""
    from benchmarks.injection_figures import fit_logistic
    from recall.search.confidence import DECISION_FEATURES

    ours = [r for r in records if r["code"] == "ours" and r.get("rows") is not None and r["split"] == "tune"]
    rows = []
    groups: dict = {}
    for r in ours:
        groups.setdefault((r["corpus"], size_bucket(r)), []).append(r)
    for key, rs in groups.items():
        n = sum(len(r["rows"]) for r in rs) or 1
        for r in rs:
            for row in r["rows"]:
                rows.append({"f": row["f"], "label": row["label"], "w": 1.0 / n})
    bias, weights = fit_logistic(rows, DECISION_FEATURES)

    def silent_enough(gate: float) -> bool:
        sim = simulate(ours, bias, weights, gate)
        for (corpus, size), rs in groups.items():
            ids = {id(r) for r in rs}
            f = figures([s for s, r in zip(sim, ours) if id(r) in ids])
            floor = 0.93 if (corpus, size) == ("longmemeval", "full") else 0.95
            if (f["silent_new_task"] if f["silent_new_task"] is not None else 1) < floor:
                return False
        return True

    def few_enough(gate: float) -> bool:
        sim = simulate(ours, bias, weights, gate, limit=8)
        for rs in groups.values():
            ids = {id(r) for r in rs}
            got = [len(s["cited"]) for s, r in zip(sim, ours) if id(r) in ids]
            if got and sum(got) / len(got) > 3.5:
                return False
        return True

    gates = [g / 100 for g in range(5, 96)]
    raw = next((g for g in gates if silent_enough(g)), 0.95)
    model = next((g for g in gates if few_enough(g)), raw)
    return {
        "bias": round(bias, 3),
        "weights": {k: round(v, 3) for k, v in weights.items()},
        "rows": len(rows),
        "min_confidence": raw,
        "model_min_confidence": model,
    }


def simulate(records: list[dict], bias: float, weights: dict, gate: float, limit: int = 3) -> list[dict]:
    """The raw path's decision replayed on ``ours``' candidate rows with another model and gate."""
    import math

    out = []
    for r in records:
        if r["code"] != "ours" or "rows" not in r:
            continue
        scored = []
        for row in r.get("rows") or []:
            z = bias + sum(w * row["f"].get(k, 0.0) for k, w in weights.items())
            c = 1 / (1 + math.exp(-max(-40, min(40, z))))
            if row.get("echo"):
                c *= 0.35
            scored.append((c, row["session"], row["label"]))
        scored.sort(key=lambda x: -x[0])
        cited = []
        for c, s, _ in scored:
            if c < gate or len(cited) >= limit:
                break
            if s not in cited:
                cited.append(s)
        ev = {row["session"] for row in r.get("rows") or [] if row["label"]}
        out.append({**r, "code": "sim", "cited": cited, "chars": None, "evidence_cited": bool(ev & set(cited))})
    return out


# ------------------------------------------------------------------------------------
# the run


def run(args) -> dict:
    t0 = time.perf_counter()
    data = args.data or ((find_data_dir() or Path(".")) / DATA_FILE)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    codes: list[Codebase] = [Here("ours", REPO)]
    if not args.no_main:
        codes.append(ensure_main(args.main, MAIN_COMMIT))
    from benchmarks.new_task_prompts import PROMPTS

    records: list[dict] = []
    projects = [ch.load(p) for p in args.projects] if args.projects else ch.load_all()
    if args.tune_only:  # while developing: the report half is neither asked nor seen
        for p in projects:
            p.prompts = [q for q in p.prompts if q.split == "tune"]
    print(f"coding projects: {[p.slug for p in projects]}", flush=True)
    for size in args.coding_sizes:
        if not projects:
            break
        print(f"coding {size}", flush=True)
        records += run_coding(size, projects, codes, work, data)
        _save_partial(args, records)
    lme_sizes = {k: v for k, v in LME_SIZES.items() if k in args.lme_sizes}
    timed = None
    for draw in lme_draws(data, lme_sizes, PROMPTS):
        if draw.name == "full-a":
            timed = draw
        if args.tune_only:
            draw.prompts = [q for q in draw.prompts if q[3] == "tune"]
        print(f"longmemeval {draw.name}: {len(draw.sessions)} sessions, {len(draw.prompts)} prompts", flush=True)
        records += run_lme(draw, codes, work)
        _save_partial(args, records)
    budgets = None
    if timed is not None and len(codes) > 1 and args.budget_runs:
        from benchmarks import injection as inj

        print("budgets: the hook with the service, this tree and main alternated", flush=True)
        homes = {
            (c.name, timed.name): (
                work / "lme" / timed.name / c.name / "home",
                work / "lme" / timed.name / c.name / "scratch",
            )
            for c in codes
        }
        pool = inj.Pool(
            timed.name,
            [],
            [
                inj.Prompt(pid, text, "answerable" if kind == "answerable" else kind, split)
                for pid, text, kind, split, _ in timed.prompts
            ],
        )
        budgets = inj.budgets(codes, homes, pool, args.budget_runs)
    thresholds = {
        c: tune_bm25([r for r in records if r["code"] == "bm25" and r["corpus"] == c])
        for c in {r["corpus"] for r in records}
    }
    held_out = len({p.pid.split("@")[0] for proj in projects for p in proj.prompts if "@" in p.pid})
    filler = {
        size: int((work / "filler" / size.replace("+", "plus") / ".done").read_text())
        for size in FILLER
        if (work / "filler" / size.replace("+", "plus") / ".done").exists()
    }
    out = {
        "main": MAIN_COMMIT,
        "commit": _commit(),
        "coding_projects": [p.slug for p in projects],
        "held_out_new_tasks": held_out,
        "filler": filler,
        "bm25_thresholds": thresholds,
        "table": table(records, thresholds),
        "budgets": budgets,
        "service": Driver.service,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return out, records


def chat_pool_result(runs: Path, notes: dict) -> dict:
    """``benchmarks/chat_pool.json`` from the runs in ``runs`` (each written by this module):

    * ``pool-after-nosvc.json`` / ``records-pool-after-nosvc.json``: ``--lme-sizes pool --no-service``, this tree and main;
    * ``records-nosvc.json``: the same at the tree before the change (``notes['before']``);
    * ``records-lme-nosvc.json``: ``--lme-sizes 1000 full --no-service`` (the gate's calibration, tune half);
    * ``coding-after-svc.json``, ``coding-before-svc.json``: ``--coding-sizes ...`` with the service,
      this tree and the tree before; ``coding-main-svc.json``: main's figures where the after run
      left main out (``--no-main``).

    ``notes``: sessions, messages, the commits, the embedding rate and the load averages, as seen."""
    import math

    from recall.search.confidence import DECISION, RAW_GATE_DOCS, raw_gate
    from recall.search.semantic import RAW_MIN_CONFIDENCE

    after = json.loads((runs / "pool-after-nosvc.json").read_text())["table"]["longmemeval"]["pool"]
    before_recs = [r for r in json.loads((runs / "records-nosvc.json").read_text()) if r["code"] == "ours"]
    before = {split: figures([r for r in before_recs if r["split"] == split]) for split in ("tune", "report")}
    pool_codes = {
        f"recall {notes['commit']}": after["ours"],
        f"recall {notes['before']} (before)": before,
        f"main {MAIN_COMMIT}": after["main"],
        "BM25 (top 3 over its tune threshold)": after["bm25"],
    }
    # with the service: what the semantic channel could add to the raw path, at most (no vectors)
    docs = notes["messages"]
    gate = raw_gate(0.6, docs)
    floor = RAW_MIN_CONFIDENCE + gate - 0.6
    after_recs = [r for r in json.loads((runs / "records-pool-after-nosvc.json").read_text()) if r["code"] == "ours"]

    def conf_of(row):
        z = DECISION.bias + sum(w * row["f"].get(k, 0.0) for k, w in DECISION.weights.items())
        return 1 / (1 + math.exp(-max(-40, min(40, z)))) * (0.35 if row.get("echo") else 1)

    bound = {}
    for split in ("tune", "report"):
        rs = [r for r in after_recs if r["split"] == split]
        ans = [r for r in rs if r["kind"] in ANSWERABLE]
        inj = [r for r in rs if r["cited"]]
        false = sum(not r["evidence_cited"] for r in inj)
        useful = sum(r["evidence_cited"] for r in ans)
        wrong = right = 0
        for r in rs:
            if len(r["cited"]) >= 3:
                continue
            elig: dict = {}
            for row in r.get("rows") or []:
                if conf_of(row) >= floor and row["session"] not in r["cited"]:
                    elig[row["session"]] = max(elig.get(row["session"], 0), row["label"])
            if not r["cited"] and any(v == 0 for v in elig.values()):
                wrong += 1
            if r["kind"] in ANSWERABLE and not r["evidence_cited"] and any(v == 1 for v in elig.values()):
                right += 1
        bound[split] = {
            "useful": round(useful / len(ans), 4),
            "false_share": round(false / max(1, len(inj)), 4),
            "added_wrong": wrong,
            "added_right": right,
            "worst_false_share": round((false + wrong) / max(1, len(inj) + wrong), 4),
            "best_useful": round((useful + right) / len(ans), 4),
        }
    # the calibration: the tune half of every LongMemEval draw of ~1,000 sessions and more, replayed
    lme = [r for r in json.loads((runs / "records-lme-nosvc.json").read_text()) if r["code"] == "ours"]
    draws = {"1000-0": lme, "full-a": lme, "full-b": lme, "pool": before_recs}
    draw_docs = notes["draw_messages"]
    calibration = []
    for step in (0.0, 0.025, 0.05, 0.06, 0.075, 0.1, 0.125, 0.15):
        cells, k, n = {}, 0, 0
        for d, recs in draws.items():
            rs = [r for r in recs if r["draw"] == d and r["split"] == "tune"]
            extra = step * math.log2(draw_docs[d] / RAW_GATE_DOCS) if draw_docs[d] > RAW_GATE_DOCS else 0.0
            g = max(0.6, min(0.95, 0.6 + extra))
            sim = simulate(rs, DECISION.bias, DECISION.weights, g)
            f = figures(sim)
            i = sum(1 for x in sim if x["cited"])
            w = sum(1 for x in sim if x["cited"] and not x["evidence_cited"])
            if d != "1000-0":
                k, n = k + w, n + i
            cells[d] = f"{f['useful']:.2f} / {w} of {i}"
        calibration.append({"step": step, "cells": cells, "pooled_false": f"{k / max(1, n):.2f} ({k} of {n})"})

    def coding_table(name: str) -> dict:
        path = runs / name
        return json.loads(path.read_text())["table"].get("coding", {}) if path.exists() else {}

    coding_after = coding_table("coding-after-svc.json")
    coding_before = coding_table("coding-before-svc.json")
    coding_main = coding_table("coding-main-svc.json")  # main's, where the after run did not run it
    coding = {
        size: {
            "after": (coding_after.get(size) or {}).get("ours"),
            "before": (coding_before.get(size) or {}).get("ours"),
            "main": (coding_after.get(size) or {}).get("main") or (coding_main.get(size) or {}).get("main"),
        }
        for size in SIZE_ORDER
        if size in coding_after or size in coding_before
    }
    same = "—"
    if (runs / "records-coding-after-svc.json").exists() and (runs / "records-coding-before-svc.json").exists():
        ours = [
            {
                (r["pid"], r["size"]): (r["cited"], r["chars"])
                for r in json.loads((runs / n).read_text())
                if r["code"] == "ours"
            }
            for n in ("records-coding-after-svc.json", "records-coding-before-svc.json")
        ]
        shared = set(ours[0]) & set(ours[1])
        same = f"{sum(ours[0][k] == ours[1][k] for k in shared)} of {len(shared)}"
    return {
        **notes,
        "main": MAIN_COMMIT,
        "gate": gate,
        "coding_same": same,
        "pool_codes": pool_codes,
        "service_bound": bound,
        "calibration_draws": list(draws),
        "calibration_labels": [
            f"{'1,000 sessions' if d == '1000-0' else d} ({draw_docs[d]:,} messages)" for d in draws
        ],
        "calibration": calibration,
        "coding": coding,
    }


def _save_partial(args, records) -> None:
    if args.records:
        with open(args.records, "w", encoding="utf-8") as fh:
            json.dump(records, fh)
    if getattr(args, "requests", None):
        args.requests.mkdir(parents=True, exist_ok=True)
        for key, req in REQUESTS.items():
            path = args.requests / f"{key}.json"
            if not path.exists():
                path.write_text(json.dumps(req, ensure_ascii=False), encoding="utf-8")


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.injection_sizes", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--main", type=Path, default=None, help=f"a checkout of main ({MAIN_COMMIT}) with its own .venv")
    ap.add_argument("--no-main", action="store_true")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "recall-injection-sizes")
    ap.add_argument("--projects", nargs="*", default=None, help="coding projects (default: every complete one)")
    ap.add_argument("--coding-sizes", nargs="*", default=list(CODING_SIZES))
    ap.add_argument(
        "--lme-sizes",
        nargs="*",
        default=[k for k in LME_SIZES if k != "pool"],
        help="LongMemEval sizes (default: all but pool, the chat pool, which is asked by name: with the service "
        "its 20,000 vectors take hours to embed on a small machine)",
    )
    ap.add_argument(
        "--records",
        type=Path,
        default=None,
        help="write every prompt's record (with its candidates' features) here, for --fit",
    )
    ap.add_argument(
        "--requests",
        type=Path,
        default=None,
        help="write every synthesis request the hook would send (system and user text) here, one file per hash",
    )
    ap.add_argument("--fit", type=Path, default=None, help="fit the model on the tune half of these records")
    ap.add_argument("--write-json", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS, help="where --write-json writes")
    ap.add_argument("--budget-runs", type=int, default=40, help="prompts timed through the hook with the service")
    ap.add_argument("--tune-only", action="store_true", help="ask only the tune half (while tuning)")
    ap.add_argument(
        "--no-service",
        action="store_true",
        help="the hook as without the service: no semantic channel (the same --work reuses the indexes)",
    )
    ap.add_argument(
        "--chat-pool",
        type=Path,
        default=None,
        help="write benchmarks/chat_pool.json from the runs in this folder (chat_pool_result) and notes.json there",
    )
    args = ap.parse_args(argv)
    if args.chat_pool:
        notes = json.loads((args.chat_pool / "notes.json").read_text())
        CHAT_POOL.write_text(json.dumps(chat_pool_result(args.chat_pool, notes), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {CHAT_POOL}")
        return 0
    if args.fit:
        records = json.loads(args.fit.read_text())
        print(json.dumps(fit(records), indent=1))
        return 0
    Driver.service = not args.no_service
    res, _ = run(args)
    print(json.dumps(res["table"], indent=1)[:20000])
    if args.write_json:
        args.out.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


# ------------------------------------------------------------------------------------
# docs/benchmarks.md: this benchmark's section, from the committed results

SIZE_ORDER = ("≤10", "11–36", "memories", "3 projects", "+1k", "+4k", "5", "30", "100", "1000", "full")
SIZE_LABELS = {
    "≤10": "one project, ≤10 sessions",
    "11–36": "one project, 11–36 sessions",
    "memories": "one project, with typed memories",
    "3 projects": "3 projects (~100 sessions)",
    "+1k": "3 projects + 1,000 others",
    "+4k": "3 projects + 4,000 others",
    "5": "5",
    "30": "30",
    "100": "100",
    "1000": "1,000",
    "full": "~3,800 (issue 25's pools)",
}
CODES = ("ours", "main", "bm25")


def _cell(figs: dict, key: str, codes=CODES) -> str:
    def one(code):
        x = (figs.get(code) or {}).get(key)
        return "—" if x is None else (f"{x:,.0f}" if abs(x) >= 10 else f"{x:.2f}")

    return " / ".join(one(c) for c in codes)


def _prompts(figs: dict) -> str:
    f = figs.get("ours") or {}
    return f"{f.get('answerable', 0)} + {f.get('prompts', 0) - f.get('answerable', 0)}"


def labels(res: dict | None) -> dict:
    """``SIZE_LABELS`` with the other projects' sessions as counted in the run."""
    out = dict(SIZE_LABELS)
    for size, n in ((res or {}).get("filler") or {}).items():
        out[size] = f"3 projects + {n:,} others"
    return out


def corpus_table(tab: dict, split: str, coding: bool, names: dict | None = None) -> str:
    names = names or SIZE_LABELS
    head = (
        "| history | prompts (answerable + other) | useful | false share | silent on new tasks | "
        + ("" if coding else "silent on unanswerable | ")
        + "`--raw` R@1 | `--raw` R@5 | characters per injection "
        "| model path: answering session among its candidates | model path: new tasks with no candidate |"
    )
    rule = "|---|---:|---:|---:|---:|" + ("" if coding else "---:|") + "---:|---:|---:|---:|---:|"
    lines = []
    for size in SIZE_ORDER:
        if size not in tab:
            continue
        figs = {c: (tab[size].get(c) or {}).get(split) or {} for c in CODES}
        lines.append(
            f"| {names[size]} | {_prompts(figs)} | {_cell(figs, 'useful')} | "
            f"{_cell(figs, 'false_share')} | {_cell(figs, 'silent_new_task')} | "
            + ("" if coding else f"{_cell(figs, 'silent_unanswerable')} | ")
            + f"{_cell(figs, 'R@1')} | {_cell(figs, 'R@5')} | "
            f"{_cell(figs, 'chars_per_injection', ('ours', 'main'))} | "
            f"{_cell(figs, 'model_candidate_recall', ('ours',))} | "
            f"{_cell(figs, 'model_silent_new_task', ('ours',))} |"
        )
    return "\n".join([head, rule, *lines])


def kinds_table(tab: dict, split: str, names: dict | None = None) -> str:
    names = names or SIZE_LABELS
    head = "| history | question | task | paraphrase |"
    lines = [head, "|---|---:|---:|---:|"]
    for size in SIZE_ORDER:
        if size not in tab:
            continue
        figs = {c: (tab[size].get(c) or {}).get(split) or {} for c in CODES}
        lines.append(
            f"| {names[size]} | {_cell(figs, 'useful_question')} | {_cell(figs, 'useful_task')} | "
            f"{_cell(figs, 'useful_paraphrase')} |"
        )
    return "\n".join(lines)


def model_table(tab: dict, split: str, names: dict | None = None) -> str:
    """The model path's reading per size (recall only): the answering session among the
    candidates the synthesis reads, from the lexical gate alone and with the semantic channel,
    by kind, and the new tasks for which no model call is made."""
    names = names or SIZE_LABELS
    head = (
        "| history | lexical candidates only | with the semantic channel | questions | tasks | paraphrases "
        "| new tasks with no candidate | past sessions read per prompt |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size in SIZE_ORDER:
        if size not in tab:
            continue
        f = ((tab[size].get("ours") or {}).get(split)) or {}
        if "model_candidate_recall" not in f:
            continue

        def c(key: str) -> str:
            x = f.get(key)
            return "—" if x is None else f"{x:.2f}"

        lines.append(
            f"| {names[size]} | {c('model_lexical_candidate_recall')} | {c('model_candidate_recall')} | "
            f"{c('model_candidate_recall_question')} | {c('model_candidate_recall_task')} | "
            f"{c('model_candidate_recall_paraphrase')} | {c('model_silent_new_task')} | "
            f"{f.get('model_candidates_per_prompt', '—')} |"
        )
    return "\n".join(lines)


def clopper_pearson_upper(k: int, n: int, alpha: float = 0.05) -> float:
    """The exact (Clopper–Pearson) one-sided upper bound at 1 - ``alpha`` of a share seen as
    ``k`` of ``n``: the largest p with P(X <= k | n, p) >= alpha."""
    from math import comb

    if n == 0:
        return 1.0
    if k >= n:
        return 1.0

    def cdf(p: float) -> float:
        return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) >= alpha:
            lo = mid
        else:
            hi = mid
    return lo


def false_bound(tab: dict, corpus: str, split: str) -> tuple[int, int, float]:
    """Over every size of ``corpus`` (``split``): injections holding no answer, injections, and
    the 95% upper bound of the false share."""
    k = n = 0
    for size, codes in tab.get(corpus, {}).items():
        if size in ("≤10", "11–36", "memories"):  # the project rows: counted once, below; memories: apart
            continue
        f = (codes.get("ours") or {}).get(split) or {}
        inj = round((f.get("injected_share") or 0) * (f.get("prompts") or 0))
        n += inj
        k += round((f.get("false_share") or 0) * inj)
    for size in ("≤10", "11–36"):
        f = ((tab.get(corpus, {}).get(size) or {}).get("ours") or {}).get(split) or {}
        inj = round((f.get("injected_share") or 0) * (f.get("prompts") or 0))
        n += inj
        k += round((f.get("false_share") or 0) * inj)
    return k, n, clopper_pearson_upper(k, n)


def _pooled(tab: dict, sizes: tuple[str, ...], key: str, code: str = "ours", split: str = "report") -> str:
    """``key`` over the rows ``sizes`` together (weighted by their answerable prompts, or by the
    paraphrases for a paraphrase figure): the project rows are one history cut in two."""
    num = den = 0.0
    for size in sizes:
        f = ((tab.get("coding", {}).get(size) or {}).get(code) or {}).get(split) or {}
        if f.get(key) is None:
            continue
        n = f.get("answerable") or 0
        if key.endswith("paraphrase"):
            n = f.get("paraphrases") or n
        elif key == "false_share":  # a share of the injections
            n = (f.get("injected_share") or 0) * (f.get("prompts") or 0)
        num += f[key] * n
        den += n
    return f"{num / den:.2f}" if den else "—"


def _asked(tab: dict) -> str:
    """The share of the coding report half's new tasks the model would be asked about (some
    candidate to read), as a span over the sizes."""
    xs = [
        1 - f["model_silent_new_task"]
        for name, size in tab.get("coding", {}).items()
        if name != "memories"
        for f in [((size.get("ours") or {}).get("report") or {})]
        if f.get("model_silent_new_task") is not None
    ]
    if not xs:
        return "—"
    lo, hi = f"{min(xs):.2f}", f"{max(xs):.2f}"
    return lo if lo == hi else f"{lo}–{hi}"


def _cost_values() -> dict:
    """``benchmarks/semantic_cost.json``'s figures for the prose (— when not measured)."""
    path = Path(__file__).with_name("semantic_cost.json")
    try:
        c = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        c = {}
    q = c.get("query") or {}

    def f(x, fmt):
        return "—" if x is None else format(x, fmt)

    return {
        "load_s": f(c.get("load_seconds"), ".2f"),
        "rss_mb": f(c.get("model_rss_mb"), ".0f"),
        "rate": f(c.get("messages_per_second_1_thread"), ".0f"),
        "minutes_20k": f(None if c.get("hours_per_20k_messages") is None else c["hours_per_20k_messages"] * 60, ".0f"),
        "mean_chars": f(c.get("mean_chars"), ".0f"),
        "q1k": f((q.get("1000") or {}).get("p50_ms"), ".1f"),
        "q20k": f((q.get("20000") or {}).get("p50_ms"), ".1f"),
    }


def sections(res: dict | None = None) -> list[str]:
    """The section of docs/benchmarks.md (``benchmarks.report``), from ``res`` or the committed
    ``benchmarks/injection_sizes.json``; prose in benchmarks/prose/sizes*.md."""
    from benchmarks.page import prose

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return [prose("sizes-missing")]
    tab = res["table"]
    out = [
        prose(
            "sizes",
            main=res["main"],
            projects=", ".join(res.get("coding_projects") or []),
            bm25_coding=f"{res['bm25_thresholds'].get('coding', 0):.1f}",
            bm25_lme=f"{res['bm25_thresholds'].get('longmemeval', 0):.1f}",
            new_tasks=res.get("held_out_new_tasks", 0),
        )
    ]
    for split in ("report", "tune"):
        if "coding" in tab:
            out.append(
                prose(
                    "sizes-half",
                    corpus="Coding history",
                    half=split,
                    table=corpus_table(tab["coding"], split, True, labels(res)),
                )
            )
            out.append(prose("sizes-kinds", half=split, table=kinds_table(tab["coding"], split, labels(res))))
            out.append(prose("sizes-model", half=split, table=model_table(tab["coding"], split, labels(res))))
        if "longmemeval" in tab:
            out.append(
                prose(
                    "sizes-half",
                    corpus="LongMemEval pools",
                    half=split,
                    table=corpus_table(tab["longmemeval"], split, False),
                )
            )
            out.append(prose("sizes-model", half=split, table=model_table(tab["longmemeval"], split)))
    b = res.get("budgets")
    if b:
        rows = ["| process | recall | main | recall − main | budget |", "|---|---:|---:|---:|---|"]
        for mode, label, budget in (
            ("hook_service", "prompt hook, with the service", "≤ +10 ms"),
            ("raw_service", "`recall --raw --limit 5`, with the service", ""),
            ("raw_no_service", "`recall --raw --limit 5`, no service", ""),
        ):
            o, m = b["ours"][mode], b["main"][mode]
            rows.append(
                f"| {label} | {o['p50']} / {o['p95']} | {m['p50']} / {m['p95']} | "
                f"{o['p50'] - m['p50']:+.1f} | {budget} |"
            )
        out.append(prose("sizes-budgets", table="\n".join(rows)))
    k, n, bound = false_bound(tab, "coding", "report")

    def span(corpus: str, code: str, key: str, split: str = "report", least: int = 10) -> str:
        """The range of ``key`` over the sizes whose cell counts at least ``least`` answerable
        prompts (a row of 4 says little)."""
        cells = [
            ((tab.get(corpus, {}).get(size) or {}).get(code) or {}).get(split, {})
            for size in SIZE_ORDER
            if size in tab.get(corpus, {}) and size != "memories"  # the histories as they are: apart
        ]
        xs = [c.get(key) for c in cells if (c.get("answerable") or 0) >= least]
        xs = [x for x in xs if x is not None]
        if not xs:
            return "—"
        lo, hi = min(xs), max(xs)
        fmt = (lambda x: f"{x:,.0f}") if hi >= 10 else (lambda x: f"{x:.2f}")
        return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"

    def at(corpus: str, size: str, code: str, key: str, split: str = "report") -> str:
        x = ((tab.get(corpus, {}).get(size) or {}).get(code) or {}).get(split, {}).get(key)
        return "—" if x is None else f"{x:.2f}"

    lat = ""
    if b:
        lat = f"{b['ours']['hook_service']['p50'] - b['main']['hook_service']['p50']:+.1f}"
    semantic = Path(__file__).with_name("coding_semantic.json")
    reading_at = len(out)
    if semantic.exists():
        sem = json.loads(semantic.read_text(encoding="utf-8")).get("report", {})

        def r(kind: str, k: int) -> str:
            x = (sem.get(kind) or {}).get(f"R@{k}")
            return "—" if x is None else f"{x:.2f}"

        lex = [
            ((tab.get("coding", {}).get(size) or {}).get("ours") or {}).get("report", {}).get("R@1")
            for size in ("11–36", "3 projects")
        ]
        out.append(
            prose(
                "sizes-semantic",
                all_r1=r("all", 1),
                all_r3=r("all", 3),
                para_r1=r("paraphrase", 1),
                para_r3=r("paraphrase", 3),
                task_r1=r("task", 1),
                task_r3=r("task", 3),
                question_r1=r("question", 1),
                lex_r1="–".join(f"{x:.2f}" for x in sorted(set(x for x in lex if x is not None))),
                **_cost_values(),
            )
        )
    out.insert(
        reading_at,
        prose(
            "sizes-reading",
            false_k=k,
            false_n=n,
            false_bound=f"{bound:.2f}",
            coding_useful=span("coding", "ours", "useful"),
            coding_useful_main=span("coding", "main", "useful"),
            coding_useful_bm25=span("coding", "bm25", "useful"),
            coding_false=span("coding", "ours", "false_share"),
            coding_silent=span("coding", "ours", "silent_new_task"),
            coding_question=span("coding", "ours", "useful_question"),
            coding_task=span("coding", "ours", "useful_task"),
            coding_paraphrase=span("coding", "ours", "useful_paraphrase"),
            coding_model=span("coding", "ours", "model_candidate_recall"),
            coding_model_lex=span("coding", "ours", "model_lexical_candidate_recall"),
            coding_model_para=span("coding", "ours", "model_candidate_recall_paraphrase"),
            coding_asked=_asked(tab),
            coding_chars=span("coding", "ours", "chars_per_injection"),
            coding_max=span("coding", "ours", "max_chars"),
            lme_silent=span("longmemeval", "ours", "silent_new_task"),
            lme_full_useful=at("longmemeval", "full", "ours", "useful"),
            lme_full_useful_main=at("longmemeval", "full", "main", "useful"),
            lme_full_useful_main3=at("longmemeval", "full", "main", "useful_first3"),
            mem_useful=at("coding", "memories", "ours", "useful"),
            mem_plain=_pooled(tab, ("≤10", "11–36"), "useful"),
            mem_para=at("coding", "memories", "ours", "useful_paraphrase"),
            mem_para_plain=_pooled(tab, ("≤10", "11–36"), "useful_paraphrase"),
            mem_false=at("coding", "memories", "ours", "false_share"),
            mem_false_plain=_pooled(tab, ("≤10", "11–36"), "false_share"),
            mem_model_para_plain=_pooled(tab, ("≤10", "11–36"), "model_candidate_recall_paraphrase"),
            mem_model_para_tune=at("coding", "memories", "ours", "model_candidate_recall_paraphrase", "tune"),
            mem_model_para_tune_plain=_pooled(tab, ("≤10", "11–36"), "model_candidate_recall_paraphrase", split="tune"),
            mem_silent=at("coding", "memories", "ours", "silent_new_task"),
            mem_model=at("coding", "memories", "ours", "model_candidate_recall"),
            mem_model_para=at("coding", "memories", "ours", "model_candidate_recall_paraphrase"),
            lme_1000_useful=at("longmemeval", "1000", "ours", "useful"),
            lme_1000_useful_main=at("longmemeval", "1000", "main", "useful"),
            lme_1000_useful_main3=at("longmemeval", "1000", "main", "useful_first3"),
            lme_useful=span("longmemeval", "ours", "useful"),
            lme_useful_main=span("longmemeval", "main", "useful"),
            lme_model=span("longmemeval", "ours", "model_candidate_recall"),
            latency=lat or "not measured",
        ),
    )
    return out


# ------------------------------------------------------------------------------------
# issue 47 item 8: the raw path at chat-pool scale (benchmarks/chat_pool.json)

POOL_KEYS = (
    ("useful", "useful"),
    ("false_share", "false share"),
    ("injected_share", "injected on"),
    ("silent_new_task", "new tasks silent"),
    ("silent_unanswerable", "abstention silent"),
)


def _fig(f: dict | None, key: str) -> str:
    x = (f or {}).get(key)
    return "—" if x is None else f"{x:.2f}"


def _injections(f: dict | None) -> str:
    f = f or {}
    if f.get("injected_share") is None or not f.get("prompts"):
        return "—"
    inj = round(f["injected_share"] * f["prompts"])
    return f"{round((f.get('false_share') or 0) * inj)} of {inj}"


def chat_pool_sections(res: dict | None = None) -> list[str]:
    """The chat pool's section of docs/benchmarks.md, from ``res`` or ``benchmarks/chat_pool.json``
    (written from the runs it names; prose in benchmarks/prose/chat-pool.md)."""
    from benchmarks.page import prose
    from benchmarks.page import rows as table_of

    if res is None:
        try:
            res = json.loads(CHAT_POOL.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    codes = res["pool_codes"]  # label -> {split: figures}
    pool_rows = []
    for split in ("report", "tune"):
        for label, by_split in codes.items():
            f = by_split.get(split) or {}
            pool_rows.append(
                f"| {split} | {label} | {f.get('answerable', 0)} + {f.get('prompts', 0) - f.get('answerable', 0)} | "
                + " | ".join(_fig(f, k) for k, _ in POOL_KEYS)
                + f" | {_injections(f)} |"
            )
    pool_table = table_of(
        "| half | code | prompts (answerable + other) | "
        + " | ".join(n for _, n in POOL_KEYS)
        + " | false / injections |",
        "|---|---|---:|" + "---:|" * (len(POOL_KEYS) + 1),
        pool_rows,
    )
    b = res["service_bound"]
    bound_rows = [
        f"| {split} | {x['useful']:.2f} | {x['false_share']:.2f} | {x['added_wrong']} | {x['added_right']} | "
        f"{x['worst_false_share']:.2f} | {x['best_useful']:.2f} |"
        for split in ("report", "tune")
        for x in [b[split]]
    ]
    bound_table = table_of(
        "| half | useful, words alone | false share, words alone | prompts the service could give a wrong session "
        "| prompts it could give the answer | false share at worst | useful at best |",
        "|---|---:|---:|---:|---:|---:|---:|",
        bound_rows,
    )
    calib_rows = [
        f"| {c['step']} | " + " | ".join(c["cells"][d] for d in res["calibration_draws"]) + f" | {c['pooled_false']} |"
        for c in res["calibration"]
    ]
    calib_table = table_of(
        "| step per doubling | " + " | ".join(res["calibration_labels"]) + " | false share of the three ~3,800 draws |",
        "|---:|" + "---:|" * (len(res["calibration_draws"]) + 1),
        calib_rows,
    )
    coding_rows = []
    for size, by_code in res["coding"].items():
        for split in ("report",):
            cells = []
            for key in ("useful", "false_share", "silent_new_task"):
                cells.append(
                    " / ".join(_fig((by_code.get(c) or {}).get(split), key) for c in ("after", "before", "main"))
                )
            coding_rows.append(f"| {labels(None).get(size, size)} | " + " | ".join(cells) + " |")
    coding_table = table_of(
        "| history | useful | false share | new tasks silent |", "|---|---:|---:|---:|", coding_rows
    )
    return [
        prose(
            "chat-pool",
            sessions=f"{res['sessions']:,}",
            messages=f"{res['messages']:,}",
            commit=res["commit"],
            before=res["before"],
            main=res["main"],
            gate=f"{res['gate']:.2f}",
            pool_table=pool_table,
            bound_table=bound_table,
            calib_table=calib_table,
            coding_table=coding_table,
            embed_rate=res["embed_rate"],
            loads=res["loads"],
            coding_main_from=res.get("coding_main_from", "main's from the same run"),
            coding_prompts=res.get("coding_same", "—"),
        )
    ]


if __name__ == "__main__":
    sys.exit(main())
