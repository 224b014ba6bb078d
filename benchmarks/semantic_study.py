"""The semantic stage (issue 25 item 3) as a candidate source and a confidence feature, on the
pools of ``benchmarks.injection``: does it move the hook's figures or ``recall --raw``'s R@5?

Run by ``benchmarks.injection`` once each pool's vector store is complete
(``benchmarks.pool_vectors``). For every prompt of both pools, in-process, with the service's
own encoder and each pool's own vector store (``VectorStore.top``: what ``nearest()`` scans):

* the lexical side: the hook's candidates (``recall.prompt.candidates.candidates``, the
  engine's best 60, each with the confidence's features and its cosine to the prompt from the
  store) and ``Searcher.search``'s session order (what ``recall --raw`` prints);
* the dense side: the 400 stored messages nearest to the prompt, for three query texts: the
  prompt as typed, without its framing words ("last time", "remind me"), and the hook's query
  text (stopwords out);
* from these, session rankings: lexical, dense-only (a session by its best message, its best
  two, or the sum of its messages), and the two fused by reciprocal rank fusion (depths, the
  constant and the dense weight chosen on the tune half);
* a session-level confidence over lexical and semantic features (the lexical confidence of
  its best candidate or its three features; the best cosine of its messages; its margin over
  the prompt's 20th session, i.e. how unusual the match is in this history; agreement of the
  two lists; reciprocal ranks), fitted on the tune half and its gate chosen there as the
  shipped one is (the lowest that keeps 90% of new-task and 50% of unanswerable prompts
  silent);
* the separability that bounds any such gate (below);
* the outlier rule the hook uses (``recall.prompt.candidates.semantic_outlier``).

Separability. Every question is asked in two pools that share every session but the left-out
evidence: in its answerable pool and in its left-out twin. A confidence judged hit by hit
gives the twin's sessions the same scores in both pools. So a question can be answered (an
evidence session reaches the gate) in one pool *and* stay silent in the other only if an
evidence session scores above every session of the twin. The issue's targets need at least
``ceil(2/3 × 0.70 × answerable)`` such questions (useful ≥ 0.70 needs U answered; false share
≤ 0.25 allows at most U/3 false injections, so at most U/3 left-out twins may speak), counted
here with one gate for all questions, as the hook has.
"""

from __future__ import annotations

import collections
import math
import re
import statistics

LEX_DEPTH = 60  # lexical candidates collected per prompt (the hook judges the first 24)
HOOK_CANDIDATES = 24
DENSE_DEPTH = 400  # nearest stored messages collected per prompt
RAW_DEPTH = 50  # sessions of Searcher.search collected per prompt
INJECT_SESSIONS = 4  # sessions a gate injects at most (hook.limit 8 hits, at most 3 of a session)
QUERIES = ("prompt", "no-framing", "query-text")


def _noframe(text: str) -> str:
    from recall.search.words import FRAMING

    framing = set(FRAMING)
    kept = [w for w in re.findall(r"\S+", text) if w.strip(".,;:!?()'\"").lower() not in framing]
    return " ".join(kept) or text


def collect(pools: dict, homes: dict, code_name: str = "ours") -> list[dict]:
    """Per prompt of both pools: its lexical candidates, ``--raw`` session order and dense
    neighbours (see the module's docstring)."""
    from benchmarks.injection_figures import POOL_CWD
    from benchmarks.retrieval import recall_home
    from indexer import encoder, vectors
    from recall.prompt.candidates import candidates, informative_terms, query_text
    from recall.search import confidence as conf
    from recall.search.searcher import Searcher

    enc = encoder.shared()
    np = enc.np
    out = []
    for pool in pools.values():
        home, _ = homes[(code_name, pool.name)]
        session_of = {"m:" + t.uuid: s.session_id for s in pool.sessions for t in s.turns}
        with recall_home(home):
            store = vectors.VectorStore(root=home / "vectors", model_id=enc.model_id)
            project = next(iter(store.files))
            s = Searcher()
            idx = s.index.searcher()
            for p in pool.prompts:
                qt = query_text(p.text)
                terms = informative_terms(qt)
                qvs = {
                    "prompt": enc.encode(p.text),
                    "no-framing": enc.encode(_noframe(p.text)),
                    "query-text": enc.encode(qt or p.text),
                }
                dense = {
                    name: [(session_of.get(k), round(c, 4)) for k, c in store.top(project, qv, DENSE_DEPTH)]
                    for name, qv in qvs.items()
                }
                lex = []
                if terms:
                    q = conf.query_stats(idx, qt, terms)
                    hits = candidates(s, qt, LEX_DEPTH, POOL_CWD, None)
                    rows = store.rows_of([f"m:{h.uuid}" for h in hits if h.kind == "message"])
                    for h in hits:
                        r = rows.get(f"m:{h.uuid}")
                        lex.append(
                            {
                                "session": h.session_id,
                                "f": conf.features(q, h.text, h.score, conf.hit_context(h)),
                                "echo": bool(h.echo),
                                "cos": {n: float(r[0].astype(np.float32) @ v) / r[1] for n, v in qvs.items()}
                                if r
                                else None,
                            }
                        )
                raw = [h.session_id for h in s.search(p.text, limit=RAW_DEPTH)]
                shown = [h.session_id for h in s.search(p.text, limit=10)]  # `recall --raw --limit 10`
                out.append(
                    {
                        "pool": pool.name,
                        "pid": p.pid,
                        "kind": p.kind,
                        "split": p.split,
                        "evidence": sorted(p.evidence),
                        "lex": lex,
                        "raw": list(dict.fromkeys(raw)),
                        "raw10": list(dict.fromkeys(shown)),
                        "dense": dense,
                    }
                )
            store.close()
    return out


# ------------------------------------------------------------------------------------------
# session rankings


def dense_sessions(rec: dict, query: str = "prompt", depth: int = DENSE_DEPTH, agg: str = "max") -> list[tuple]:
    """(session, value) best first: a session by the best of its messages among the nearest
    ``depth`` (``top2``: best + half the second; ``sum``: all of them)."""
    got: dict = collections.defaultdict(list)
    for s, c in rec["dense"][query][:depth]:
        if s:
            got[s].append(c)
    if agg == "max":
        val = {s: max(c) for s, c in got.items()}
    elif agg == "top2":
        val = {s: sorted(c)[-1] + 0.5 * (sorted(c)[-2] if len(c) > 1 else 0.0) for s, c in got.items()}
    else:
        val = {s: sum(c) for s, c in got.items()}
    return sorted(val.items(), key=lambda x: -x[1])


def rrf(lists: list[list[str]], weights: list[float], k: float) -> list[str]:
    score: dict = collections.defaultdict(float)
    for ranked, w in zip(lists, weights):
        for i, s in enumerate(ranked):
            score[s] += w / (k + i + 1)
    return sorted(score, key=lambda s: -score[s])


def ranking_figures(orders: list[list[str]], recs: list[dict]) -> dict:
    out = {}
    for k in (1, 5, 10):
        out[f"R@{k}"] = round(sum(bool(set(o[:k]) & set(r["evidence"])) for o, r in zip(orders, recs)) / len(recs), 4)
    rr = 0.0
    for o, r in zip(orders, recs):
        rank = next((i + 1 for i, s in enumerate(o[:10]) if s in r["evidence"]), None)
        rr += 1.0 / rank if rank else 0.0
    out["MRR"] = round(rr / len(recs), 4)
    return out


FUSION_GRID = [
    dict(query=q, depth=d, agg=a, lex_depth=ld, k=k, w=w)
    for q in QUERIES
    for d in (20, 50, 100, 400)
    for a in ("max", "top2", "sum")
    for ld in (10, 20, 50)
    for k in (1, 5, 10, 30, 60)
    for w in (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
]


def lexical_order(rec: dict, depth: int) -> list[str]:
    """``recall --raw``'s sessions: its order at ``--limit 10``, deeper from a search of 50."""
    return rec["raw10"] if depth <= 10 else rec["raw"][:depth]


def fused(rec: dict, p: dict) -> list[str]:
    return rrf(
        [lexical_order(rec, p["lex_depth"]), [s for s, _ in dense_sessions(rec, p["query"], p["depth"], p["agg"])]],
        [1.0, p["w"]],
        p["k"],
    )


def retrieval(records: list[dict]) -> dict:
    """R@1/5/10 and MRR of the answerable questions, per half: lexical (``--raw``'s order),
    dense-only, and the fusion whose parameters did best on the tune half (R@5, then MRR);
    also the best any fusion of the grid reaches on the report half (chosen on it: a ceiling)."""
    ans = {sp: [r for r in records if r["kind"] == "answerable" and r["split"] == sp] for sp in ("tune", "report")}
    out: dict = {"lexical": {}, "dense": {}, "fused": {}}
    for sp, recs in ans.items():
        out["lexical"][sp] = ranking_figures([r["raw10"] for r in recs], recs)
        out["dense"][sp] = {
            q: ranking_figures([[s for s, _ in dense_sessions(r, q)] for r in recs], recs) for q in QUERIES
        }
        both = collections.Counter()
        for r in recs:
            ev = set(r["evidence"])
            lex5 = bool(set(r["raw10"][:5]) & ev)
            den5 = bool({s for s, _ in dense_sessions(r)[:5]} & ev)
            both["both" if lex5 and den5 else "lexical only" if lex5 else "dense only" if den5 else "neither"] += 1
        out.setdefault("top5", {})[sp] = dict(both)
    scored = []
    for p in FUSION_GRID:
        t = ranking_figures([fused(r, p) for r in ans["tune"]], ans["tune"])
        rep = ranking_figures([fused(r, p) for r in ans["report"]], ans["report"])
        scored.append((t["R@5"], t["MRR"], p, t, rep))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    best = scored[0]
    out["fused"] = {
        "params": best[2],
        "tune": best[3],
        "report": best[4],
        "grid": len(FUSION_GRID),
        "report_ceiling_R@5": max(x[4]["R@5"] for x in scored),
        "report_above_lexical": sum(x[4]["R@5"] > out["lexical"]["report"]["R@5"] for x in scored),
    }
    return out


# ------------------------------------------------------------------------------------------
# a session-level confidence over lexical and semantic features


FEATURE_SETS = {
    "lexical (the shipped model, per session)": ("lexconf",),
    "cosine": ("cos",),
    "margin": ("margin",),
    "lexical + cosine": ("lexconf", "cos"),
    "lexical + margin + agreement": ("lexconf", "margin", "agree"),
    "lexical features + cosine + margin + agreement": ("rare", "proximity", "score", "cos", "margin", "agree"),
    "lexical features + margin + agreement + reciprocal ranks": (
        "rare",
        "proximity",
        "score",
        "margin",
        "agree",
        "lexrrf",
        "denrrf",
    ),
}
MARGIN_RANK = 20  # the margin is over the cosine of the prompt's 20th-nearest session
DENSE_CANDIDATES = 50  # nearest messages whose sessions become candidates


def session_candidates(rec: dict, query: str = "prompt") -> list[tuple[str, dict]]:
    """The prompt's candidate sessions (the hook's 24 lexical candidates' sessions ∪ the
    sessions of the 50 nearest messages), each with its features."""
    from recall.search import confidence as conf

    S: dict = {}

    def entry(s):
        return S.setdefault(
            s,
            {
                "lexconf": 0.0,
                "rare": 0.0,
                "proximity": 0.0,
                "score": 0.0,
                "cos": None,
                "lexrank": None,
                "denrank": None,
            },
        )

    lexrank = 0
    for x in rec["lex"][:HOOK_CANDIDATES]:
        e = entry(x["session"])
        c = conf.confidence(x["f"]) * (conf.ECHO_FACTOR if x["echo"] else 1.0)
        if c > e["lexconf"]:
            e.update(lexconf=c, rare=x["f"]["rare"], proximity=x["f"]["proximity"], score=x["f"]["score"])
        if e["lexrank"] is None:
            lexrank += 1
            e["lexrank"] = lexrank
        if x["cos"]:
            e["cos"] = x["cos"][query] if e["cos"] is None else max(e["cos"], x["cos"][query])
    denrank = 0
    for s, c in rec["dense"][query][:DENSE_CANDIDATES]:
        e = entry(s)
        e["cos"] = c if e["cos"] is None else max(e["cos"], c)
        if e["denrank"] is None:
            denrank += 1
            e["denrank"] = denrank
    ranked = dense_sessions(rec, query)
    ref = ranked[min(MARGIN_RANK, len(ranked)) - 1][1] if ranked else 0.0
    out = []
    for s, e in S.items():
        cos = e["cos"] if e["cos"] is not None else ref  # not among the nearest: at most the reference
        out.append(
            (
                s,
                {
                    "lexconf": e["lexconf"],
                    "rare": e["rare"],
                    "proximity": e["proximity"],
                    "score": e["score"],
                    "cos": cos,
                    "margin": cos - ref,
                    "agree": float(e["lexrank"] is not None and e["denrank"] is not None),
                    "lexrrf": 1.0 / (10 + e["lexrank"]) if e["lexrank"] else 0.0,
                    "denrrf": 1.0 / (10 + e["denrank"]) if e["denrank"] else 0.0,
                },
            )
        )
    return out


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


class SessionModel:
    def __init__(self, names: tuple[str, ...], rows: list[tuple[dict, int]]) -> None:
        from benchmarks.injection_figures import fit_logistic

        self.names = names
        self.bias, self.weights = fit_logistic([{"f": f, "label": y} for f, y in rows], names)

    def __call__(self, f: dict) -> float:
        return _logistic(self.bias + sum(w * f[n] for n, w in self.weights.items()))


def scored_sessions(rec: dict, model) -> list[tuple[float, str]]:
    return sorted(((model(f), s) for s, f in session_candidates(rec)), reverse=True)


def gate(records: list[dict], scored: dict, threshold: float) -> dict:
    """The figures of a gate that injects a prompt's sessions scoring at least ``threshold``
    (at most ``INJECT_SESSIONS``), and R@k of its session order."""
    from benchmarks.injection_figures import figures

    recs = []
    for r in records:
        ss = scored[(r["pool"], r["pid"])]
        cited = [s for c, s in ss if c >= threshold][:INJECT_SESSIONS]
        rank = next((i + 1 for i, (_, s) in enumerate(ss) if s in r["evidence"]), None) if r["evidence"] else None
        rec = {
            "kind": r["kind"],
            "split": r["split"],
            "cited": cited,
            "evidence_cited": bool(set(cited) & set(r["evidence"])),
        }
        if r["kind"] == "answerable":
            rec["rank"] = rank
        recs.append(rec)
    return figures(recs)


def choose(records: list[dict], scored: dict) -> float:
    """The shipped rule: the lowest gate meeting the silence floors on the tune half."""
    from benchmarks.injection_figures import SILENT_NEW_FLOOR, SILENT_UNANSWERABLE_FLOOR

    tune = [r for r in records if r["split"] == "tune"]
    values = sorted({round(c, 4) for r in tune for c, _ in scored[(r["pool"], r["pid"])]})
    for t in values:
        f = gate(tune, scored, t)
        if (f["silent_new_task"] or 0) >= SILENT_NEW_FLOOR and (
            f["silent_unanswerable"] or 0
        ) >= SILENT_UNANSWERABLE_FLOOR:
            return t
    return 1.0


def _auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    s = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return round(s / (len(pos) * len(neg)), 3)


def separability(records: list[dict], scored: dict) -> dict:
    """Per half: AUC of the prompt's best candidate between answerable and left-out, and
    between answerable and new-task prompts; the twin bound (see the module's docstring)."""
    by = {(r["pool"], r["pid"]): r for r in records}
    twin = {(r["pid"], r["kind"]): (r["pool"], r["pid"]) for r in records}
    out = {}
    for sp in ("tune", "report"):
        best = collections.defaultdict(list)
        pairs = []
        for key, r in by.items():
            if r["split"] != sp:
                continue
            ss = scored[key]
            best[r["kind"]].append(ss[0][0] if ss else 0.0)
            if r["kind"] == "answerable" and (r["pid"], "left-out") in twin:
                ev = max([c for c, s in ss if s in r["evidence"]] or [0.0])
                other = scored[twin[(r["pid"], "left-out")]]
                pairs.append((ev, other[0][0] if other else 0.0))
        cuts = sorted({e for e, _ in pairs} | {x for _, x in pairs})
        one_gate = max((sum(e >= t > x for e, x in pairs) for t in cuts), default=0)
        n = len(pairs)
        out[sp] = {
            "auc_answerable_vs_left_out": _auc(best["answerable"], best["left-out"]),
            "auc_answerable_vs_new_task": _auc(best["answerable"], best["new-task"]),
            "questions": n,
            "evidence_above_twin": sum(e > x for e, x in pairs),
            "one_gate_answers_and_silences": one_gate,
            "needed": math.ceil(2 / 3 * math.ceil(0.70 * n - 1e-9) - 1e-9),
        }
    return out


def frontier(records: list[dict], scored: dict, split: str = "tune") -> list[dict]:
    """Every gate's (useful, false share, silent) on one half: the best pairs there are."""
    recs = [r for r in records if r["split"] == split]
    values = sorted({round(c, 3) for r in recs for c, _ in scored[(r["pool"], r["pid"])]})
    points = []
    for t in values[:: max(1, len(values) // 60)]:
        f = gate(recs, scored, t)
        points.append(
            {
                "gate": t,
                "useful": f["useful"],
                "false_share": f["false_share"],
                "silent_new_task": f["silent_new_task"],
                "silent_unanswerable": f["silent_unanswerable"],
            }
        )

    def dominated(p) -> bool:
        u, f = p["useful"] or 0, p["false_share"] or 0
        return any(
            (q["useful"] or 0) >= u
            and (q["false_share"] or 0) <= f
            and ((q["useful"] or 0) > u or (q["false_share"] or 0) < f)
            for q in points
        )

    pareto = {(p["useful"], p["false_share"]): p for p in points if not dominated(p)}
    return sorted(pareto.values(), key=lambda p: p["useful"] or 0)


def outlier_rule(records: list[dict]) -> dict:
    """The hook's semantic outlier (``recall.prompt.candidates``): on which prompts of each half
    it would add a session, when the lexical gate found nothing."""
    from recall.prompt import candidates as hc
    from recall.search import confidence as conf

    out = {}
    for sp in ("tune", "report"):
        fired = collections.Counter()
        for r in records:
            if r["split"] != sp:
                continue
            lexical = any(
                conf.confidence(x["f"]) * (conf.ECHO_FACTOR if x["echo"] else 1.0) >= conf.DEFAULT_MIN_CONFIDENCE
                for x in r["lex"][:HOOK_CANDIDATES]
            )
            near = [(s, c) for s, c in r["dense"]["prompt"][: hc.SEMANTIC_K]]
            if lexical or not near or near[0][1] < hc.SEMANTIC_MIN_COSINE:
                continue
            others = [c for s, c in near if s != near[0][0]]
            gap = near[0][1] - (others[0] if others else near[-1][1])
            if gap >= hc.SEMANTIC_MIN_GAP:
                fired[f"{r['kind']}{' (evidence)' if near[0][0] in r['evidence'] else ''}"] += 1
        out[sp] = dict(fired)
    return out


def dense_gate(records: list[dict]) -> dict:
    """The dense-only baseline's gate: its 3 nearest sessions when the best cosine reaches a
    threshold chosen on the tune half as BM25's is (useful + both silent rates)."""
    from benchmarks.injection_figures import BM25_TOP, figures

    def recs_at(t, split):
        out = []
        for r in records:
            if r["split"] != split:
                continue
            ds = dense_sessions(r)
            cited = [s for s, _ in ds[:BM25_TOP]] if ds and ds[0][1] >= t else []
            out.append(
                {
                    "kind": r["kind"],
                    "split": split,
                    "cited": cited,
                    "evidence_cited": bool(set(cited) & set(r["evidence"])),
                }
            )
        return out

    best, best_t = -1.0, 1.0
    for t in sorted(
        {round(dense_sessions(r)[0][1], 3) for r in records if r["split"] == "tune" and r["dense"]["prompt"]}
    ):
        f = figures(recs_at(t, "tune"))
        j = (f["useful"] or 0) + (f["silent_new_task"] or 0) + (f["silent_unanswerable"] or 0)
        if j > best:
            best, best_t = j, t
    return {"threshold": best_t, "tune": figures(recs_at(best_t, "tune")), "report": figures(recs_at(best_t, "report"))}


# The issue's small history (tests/search/test_confidence.py): the session a paraphrase should find,
# and what two new tasks that must stay silent come nearest to.
PARAPHRASE = (
    "what's our convention for money amounts?",
    [
        "the invoice totals are off by a cent",
        "Floats caused the rounding errors on invoices: prices are stored as integer cents (price_cents) "
        "and only formatted as dollars on display.",
    ],
)
NEW_TASKS = (
    (
        "add a dark mode toggle to the settings page",
        ["add a toggle for email notifications", "Added the notifications toggle, stored in user_prefs."],
    ),
    (
        "why is the build slow on CI?",
        [
            "last time the deploy took ages, can we cache the docker layers?",
            "Cached the layers; the deploy takes 3 minutes.",
        ],
    ),
)


def issue_examples() -> dict:
    """The best cosine of each example prompt to its session (the encoder the service uses)."""
    from indexer import encoder

    enc = encoder.shared()
    return {
        prompt: round(max(float(enc.encode(prompt) @ enc.encode(t)) for t in texts), 3)
        for prompt, texts in (PARAPHRASE, *NEW_TASKS)
    }


def study(records: list[dict]) -> dict:
    """Everything the docs section quotes, from ``collect``'s records."""
    tune_rows = [
        (f, int(s in r["evidence"])) for r in records if r["split"] == "tune" for s, f in session_candidates(r)
    ]
    models = {}
    for label, names in FEATURE_SETS.items():
        model = SessionModel(names, tune_rows)
        scored = {(r["pool"], r["pid"]): scored_sessions(r, model) for r in records}
        t = choose(records, scored)
        models[label] = {
            "weights": {k: round(v, 3) for k, v in model.weights.items()},
            "bias": round(model.bias, 3),
            "gate": t,
            "tune": gate([r for r in records if r["split"] == "tune"], scored, t),
            "report": gate([r for r in records if r["split"] == "report"], scored, t),
            "separability": separability(records, scored),
            "frontier_tune": frontier(records, scored, "tune"),
        }
    return {
        "retrieval": retrieval(records),
        "dense_gate": dense_gate(records),
        "models": models,
        "outlier": outlier_rule(records),
        "examples": issue_examples(),
        "new_task_best_cosine_median": round(
            statistics.median(
                dense_sessions(r)[0][1] for r in records if r["kind"] == "new-task" and r["dense"]["prompt"]
            ),
            3,
        ),
    }


def run(pools: dict, homes: dict) -> dict:
    return study(collect(pools, homes))


# ------------------------------------------------------------------------------------------
# the docs section


def _top5(ret: dict, sp: str) -> str:
    c = ret.get("top5", {}).get(sp, {})
    return ", ".join(f"{k} {c.get(k, 0)}" for k in ("both", "lexical only", "dense only", "neither"))


def _f(x) -> str:
    return "—" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def section(res: dict) -> list[str]:
    """The semantic part of the injection section of docs/benchmarks.md (prose in
    benchmarks/prose/semantic-*.md)."""
    from benchmarks.page import prose

    sem = res.get("semantic_study")
    if not sem:
        return []
    fig = res["figures"]
    ret = sem["retrieval"]
    fz = ret["fused"]
    p = fz["params"]
    pv = res.get("pool_vectors", {})
    rows = [
        "| ranking | tune R@1 | R@5 | R@10 | MRR | report R@1 | R@5 | R@10 | MRR |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(label, t, r):
        rows.append(
            f"| {label} | "
            + " | ".join(_f(t[k]) for k in ("R@1", "R@5", "R@10", "MRR"))
            + " | "
            + " | ".join(_f(r[k]) for k in ("R@1", "R@5", "R@10", "MRR"))
            + " |"
        )

    for name in ("main", "bm25"):
        t, r = fig[name]["tune"], fig[name]["report"]
        if "R@1" in t:
            row("main (`--raw`)" if name == "main" else "BM25", t, r)
    row("recall, lexical (`--raw --limit 10`, in-process)", ret["lexical"]["tune"], ret["lexical"]["report"])
    for q in QUERIES:
        row(f"dense only ({q}; a session by its best message)", ret["dense"]["tune"][q], ret["dense"]["report"][q])
    row(
        f"fused (RRF k={p['k']}, dense weight {p['w']}, lexical top {p['lex_depth']}, dense top {p['depth']} "
        f"messages by {p['agg']}, {p['query']}; best of {fz['grid']:,} on tune)",
        fz["tune"],
        fz["report"],
    )
    out = [
        prose(
            "semantic-intro",
            union=f"{pv.get('union', 0):,}",
            cpu_seconds=f"{pv.get('cpu_seconds', 0):,.0f}",
            cpu_per_1000=f"{1000 * pv.get('cpu_seconds', 0) / max(1, pv.get('union', 1)):.1f}",
            table="\n".join(rows),
        )
    ]
    lt, lr = ret["lexical"]["tune"], ret["lexical"]["report"]
    n_rep = (
        sum(
            1
            for r in res.get("per_prompt", {}).get("ours", [])
            if r.get("kind") == "answerable" and r.get("split") == "report"
        )
        or 42
    )
    moved = round((fz["report"]["R@5"] - lr["R@5"]) * n_rep)
    questions = "question" if abs(moved) == 1 else "questions"
    out.append(
        prose(
            "semantic-fusion",
            grid=f"{fz['grid']:,}",
            moved=abs(moved),
            more_or_fewer="more" if moved >= 0 else "fewer",
            questions=questions,
            fused_r5=f"{fz['report']['R@5']:.3f}",
            lexical_r5=f"{lr['R@5']:.3f}",
            fused_tune_r5=f"{fz['tune']['R@5']:.3f}",
            lexical_tune_r5=f"{lt['R@5']:.3f}",
            above_lexical=f"{fz['report_above_lexical']:,}",
            ceiling_r5=f"{fz['report_ceiling_R@5']:.3f}",
            goal_r5=f"{(fig['main']['report'].get('R@5') or 0) + 0.08:.3f}",
            top5_tune=_top5(ret, "tune"),
            top5_report=_top5(ret, "report"),
        )
    )
    rows = [
        "| features | gate | report useful | false share | silent new-task | silent unanswerable | R@5 | "
        "tune useful | false share | AUC answerable vs left-out (report) | vs new-task (report) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, m in sem["models"].items():
        r, t, s = m["report"], m["tune"], m["separability"]["report"]
        rows.append(
            f"| {label} | {m['gate']:.3f} | {_f(r['useful'])} | {_f(r['false_share'])} | "
            f"{_f(r['silent_new_task'])} | {_f(r['silent_unanswerable'])} | {_f(r.get('R@5'))} | "
            f"{_f(t['useful'])} | {_f(t['false_share'])} | {_f(s['auc_answerable_vs_left_out'])} | "
            f"{_f(s['auc_answerable_vs_new_task'])} |"
        )
    out.append(prose("semantic-confidence", table="\n".join(rows)))
    lex = sem["models"]["lexical (the shipped model, per session)"]["separability"]["report"]
    hyb = sem["models"]["lexical features + cosine + margin + agreement"]["separability"]["report"]
    rows = [
        "| features | half | questions | needed | evidence above the twin's best | with one gate for all |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for label, m in sem["models"].items():
        for sp in ("tune", "report"):
            s = m["separability"][sp]
            rows.append(
                f"| {label} | {sp} | {s['questions']} | {s['needed']} | {s['evidence_above_twin']} | "
                f"{s['one_gate_answers_and_silences']} |"
            )
    out.append(
        prose(
            "semantic-separability",
            lexical_new_task=_f(lex["auc_answerable_vs_new_task"]),
            hybrid_new_task=_f(hyb["auc_answerable_vs_new_task"]),
            lexical_left_out=_f(lex["auc_answerable_vs_left_out"]),
            hybrid_left_out=_f(hyb["auc_answerable_vs_left_out"]),
            table="\n".join(rows),
        )
    )
    rows = ["| features | (useful, false share) on the tune half, every gate on the Pareto front |", "|---|---|"]
    for label in ("lexical (the shipped model, per session)", "lexical features + cosine + margin + agreement"):
        pts = sem["models"][label]["frontier_tune"]
        rows.append(f"| {label} | " + ", ".join(f"({_f(x['useful'])}, {_f(x['false_share'])})" for x in pts) + " |")
    out.append(prose("semantic-frontier", table="\n".join(rows)))
    dg = sem["dense_gate"]
    out.append(
        prose(
            "semantic-dense-gate",
            threshold=f"{dg['threshold']:.3f}",
            **{
                f"{sp}_{k}": _f(dg[sp][k])
                for sp in ("report", "tune")
                for k in ("useful", "false_share", "silent_new_task", "silent_unanswerable")
            },
        )
    )
    o = sem["outlier"]
    ex = sem["examples"]
    out.append(
        prose(
            "semantic-paraphrases",
            paraphrase=PARAPHRASE[0],
            paraphrase_cosine=f"{ex[PARAPHRASE[0]]:.3f}",
            new_task=NEW_TASKS[0][0],
            new_task_cosine=f"{ex[NEW_TASKS[0][0]]:.3f}",
            build=NEW_TASKS[1][0],
            build_cosine=f"{ex[NEW_TASKS[1][0]]:.3f}",
            new_task_median=f"{sem.get('new_task_best_cosine_median', 0):.3f}",
            tune_fired=o["tune"] or "no prompt",
            report_fired=o["report"] or "no prompt",
        )
    )
    out.append(prose("semantic-decision", moved=abs(moved), questions=questions, report_questions=n_rep))
    return out
