"""What the raw path's signals can reach (issue 34): studies on the records of
``benchmarks.injection_sizes`` (``--records``), no new run of the hook.

* **bound**: one logistic decision over every signal the raw path has for a candidate session
  (its best lexical confidence, its best cosine, its rank in each channel, both channels'
  margins, the lexical features ``specific``, ``held``, ``proximity``), injecting the best-scored
  session of a prompt when it passes a threshold. Fitted once on the tune half (what could be
  shipped) and once on the report half itself: that fit has seen the answers, so what it reaches
  there is an upper bound for a decision made of these signals, not a result.
* **floors**: the model path's semantic floor (``hook.semantic_min_similarity``), absolute and
  relative to the prompt's similarity to the whole project (``z``: standard deviations above the
  mean of every vector), as what the model is asked on new tasks against the answering session
  being among what it reads.
* **companions**: once a raw injection is decided, filling it up to three sessions with the next
  sessions at or above a lower confidence.

    python -m benchmarks.decision_bound --records RECORDS.json [--write-json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).with_name("decision_bound.json")
ANSWERABLE = ("question", "task", "paraphrase", "answerable")
FEATURES = ("c", "sim", "ltop", "ntop", "lrr", "nrr", "csim", "smarg", "lmarg", "specific", "held", "proximity")
FORM = ("asks", "asks_sim")  # the prompt's form: a question back, not a request (the generous bound)
THRESHOLDS = tuple(round(0.2 + 0.025 * i, 3) for i in range(31))  # 0.2 … 0.95
NO_COSINE = 0.3  # a session the semantic channel did not bring: at most its floor
GATE = 0.6  # hook.min_confidence
CORROBORATE = (0.5, 0.4)  # semantic.RAW_MIN_SIMILARITY, RAW_MIN_CONFIDENCE
GROUPS = (("coding", None), ("longmemeval", "100"), ("longmemeval", "1000"), ("longmemeval", "full"))


def lexical(r: dict) -> list[tuple[float, str, int]]:
    """``(confidence, session, label)`` of each candidate session, best first (the raw path's
    ``DECISION`` model on the recorded features; an echo keeps ``ECHO_FACTOR`` of it)."""
    from recall.search.confidence import DECISION, ECHO_FACTOR, confidence

    best: dict[str, tuple[float, int]] = {}
    for row in r.get("rows") or []:
        c = confidence(row["f"], DECISION) * (ECHO_FACTOR if row.get("echo") else 1.0)
        if c > best.get(row["session"], (-1.0, 0))[0]:
            best[row["session"]] = (c, int(row["label"]))
    return sorted(((c, s, lab) for s, (c, lab) in best.items()), reverse=True)


_REQUEST = re.compile(r"\b(can|could|would|will) you\b|^(please|pls|plz)\b", re.I)
_ASKS = re.compile(
    r"^(hey|ok|so|quick one)?[, ]*(why|what|what's|whats|how|when|where|which|who|whose|is|are|was|were|do|does|did|"
    r"have|has|had|should|remind me|any idea|is there|tell me)\b",
    re.I,
)


def asks(text: str) -> bool:
    """Whether a prompt asks something back (a question) rather than asking for work."""
    t = " ".join(text.split()).lower()
    if _REQUEST.search(t):
        return False
    return "?" in t or any(_ASKS.match(x) for x in re.split(r"(?<=[.?!])\s", t))


def prompt_texts() -> dict[str, str]:
    """Each record's prompt by ``pid``: the coding history's, LongMemEval's questions, the new tasks."""
    from benchmarks import coding_history as ch
    from benchmarks.injection import DATA_FILE
    from benchmarks.new_task_prompts import PROMPTS
    from benchmarks.retrieval import find_data_dir

    out = {f"task-{i}": t for i, t in enumerate(PROMPTS)}
    projects = ch.load_all()
    ch.add_new_tasks(projects)
    out.update({p.pid: p.text for proj in projects for p in proj.prompts})
    data = find_data_dir()
    if data is not None and (data / DATA_FILE).exists():
        with gzip.open(data / DATA_FILE, "rt", encoding="utf-8") as f:
            out.update({str(item["question_id"]): str(item["question"]) for item in json.load(f)})
    return out


def prepared(records: list[dict]) -> list[dict]:
    """This tree's records (``ours``) with ``lex`` and ``asks`` set."""
    texts = prompt_texts()
    out = []
    for r in records:
        if r.get("code") != "ours":
            continue
        r = dict(r)
        r["lex"] = lexical(r)
        r["asks"] = float(asks(texts.get(r["pid"], "")))
        out.append(r)
    return out


def sessions(r: dict, form: bool = False) -> list[tuple[list[float], int]]:
    """The candidate sessions of a prompt (lexical top 5 and semantic top 5): features (with
    ``form``: and the prompt's form), label."""
    lx, near = r["lex"], r.get("near") or []
    label: dict[str, int] = {s: lab for _c, s, lab in lx}
    for s, _sim, ok in near:
        label[s] = int(ok) or label.get(s, 0)
    l0 = lx[0][0] if lx else 0.0
    l1 = lx[1][0] if len(lx) > 1 else 0.0
    s0 = near[0][1] if near else NO_COSINE
    s1 = near[1][1] if len(near) > 1 else NO_COSINE
    out = []
    for sid in dict.fromkeys([s for _c, s, _l in lx[:5]] + [s for s, _sim, _ok in near[:5]]):
        c = max((c for c, s, _l in lx if s == sid), default=0.0)
        sim = max((x for s, x, _ok in near if s == sid), default=NO_COSINE)
        lrank = next((i for i, (_c, s, _l) in enumerate(lx) if s == sid), 9)
        nrank = next((i for i, (s, _x, _ok) in enumerate(near) if s == sid), 9)
        rows = [row["f"] for row in r.get("rows") or [] if row["session"] == sid]
        f = {
            "c": c,
            "sim": sim,
            "ltop": float(lrank == 0),
            "ntop": float(nrank == 0),
            "lrr": 1 / (1 + lrank),
            "nrr": 1 / (1 + nrank),
            "csim": c * sim,
            "smarg": s0 - s1 if nrank == 0 else 0.0,
            "lmarg": l0 - l1 if lrank == 0 else 0.0,
            **{k: max((x.get(k, 0.0) for x in rows), default=0.0) for k in ("specific", "held", "proximity")},
        }
        f["asks"] = r.get("asks", 0.0)
        f["asks_sim"] = f["asks"] * sim
        out.append(([f[k] for k in FEATURES + (FORM if form else ())], label.get(sid, 0)))
    return out


def fit(records: list[dict], form: bool = False, iters: int = 4000, l2: float = 1e-3):
    """A logistic model over ``FEATURES`` (and ``FORM``; standardised), each prompt weighing the same."""
    import numpy as np

    xs, ys, ws = [], [], []
    for r in records:
        ss = sessions(r, form)
        for x, y in ss:
            xs.append(x)
            ys.append(y)
            ws.append(1.0 / len(ss))
    x = np.array(xs, float)
    y = np.array(ys, float)
    w = np.array(ws)
    w /= w.mean()
    mu, sd = x.mean(0), x.std(0) + 1e-9
    xn = np.c_[np.ones(len(x)), (x - mu) / sd]
    b = np.zeros(xn.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(xn @ b)))
        b -= 0.5 * (xn.T @ ((p - y) * w) / len(y) + l2 * np.r_[0.0, b[1:]])

    def score(feats: list[float]) -> float:
        z = float(b[0] + ((np.array(feats) - mu) / sd) @ b[1:])
        return 1 / (1 + math.exp(-max(-40.0, min(40.0, z))))

    return score


def figures(records: list[dict], picks) -> dict:
    """Useful, false share and silent on new tasks of ``picks(r)`` (the labels of the sessions a
    prompt's raw injection holds; empty: silent)."""
    chosen = [(r, picks(r)) for r in records]
    ans = [c for r, c in chosen if r["kind"] in ANSWERABLE]
    new = [c for r, c in chosen if r["kind"] == "new-task"]
    inj = [c for _r, c in chosen if c]
    hits = [x for r, c in chosen if r["kind"] in ANSWERABLE for x in c]

    def share(xs) -> float | None:
        xs = list(xs)
        return round(sum(xs) / len(xs), 4) if xs else None

    return {
        "useful": share(any(c) for c in ans),
        "false_share": share(not any(c) for c in inj),
        "silent_new_task": share(not c for c in new),
        "injections": len(inj),
        "hits_per_injection": round(sum(len(c) for c in inj) / len(inj), 2) if inj else 0.0,
        "hit_precision": share(hits),
    }


def today(r: dict) -> list[int]:
    """The labels of the raw decision as shipped (``shipped``)."""
    return list(shipped(r).values())


def shipped(r: dict) -> dict[str, int]:
    """The raw decision as shipped, from the records (session: label): hits at ``GATE``, one per
    session, at most three, and the nearest session where words and meaning agree."""
    chosen: dict[str, int] = {}
    for c, s, lab in r["lex"]:
        if c >= GATE and len(chosen) < 3:
            chosen[s] = lab
    near = r.get("near") or []
    if near and len(chosen) < 3:
        s0, sim, ok = near[0]
        lon = max((c for c, s, _l in r["lex"] if s == s0), default=0.0)
        if s0 not in chosen and sim >= CORROBORATE[0] and lon >= CORROBORATE[1]:
            chosen[s0] = int(ok)
    return chosen


def group(records: list[dict], corpus: str, size: str | None, split: str) -> list[dict]:
    """The records of ``corpus`` at ``size`` (None: every size but ``memories``, another history)."""
    return [
        r
        for r in records
        if r["corpus"] == corpus
        and r["split"] == split
        and (r["size"] == size if size is not None else r["size"] != "memories")
    ]


def bound(records: list[dict]) -> dict:
    """The logistic decision fitted on each half, swept over ``THRESHOLDS`` on both halves (the
    coding history with its sizes pooled: the same prompts asked of each history; and the
    LongMemEval pools); ``chosen``: the most useful threshold within the issue's targets (false
    share ≤ 0.20, new tasks ≥ 0.95 silent) on the half it was fitted on."""
    out: dict = {"today": {}, "fits": {}}
    for half in ("tune", "report"):
        out["today"][half] = {
            f"{corpus} {size or 'all sizes'}": figures(group(records, corpus, size, half), today)
            for corpus, size in GROUPS
        }
    for fitted, form in (("tune", False), ("report", False), ("report", True)):
        model = fit(group(records, "coding", None, fitted), form)
        sweep: dict = {}
        for t in THRESHOLDS:

            def picks(r, t=t, form=form):
                scored = sorted(((model(x), y) for x, y in sessions(r, form)), key=lambda p: -p[0])
                return [y for p, y in scored[:1] if p >= t]

            sweep[str(t)] = {
                half: {
                    f"{corpus} {size or 'all sizes'}": figures(group(records, corpus, size, half), picks)
                    for corpus, size in GROUPS
                }
                for half in ("tune", "report")
            }
        ok = [
            (v[fitted]["coding all sizes"]["useful"] or 0.0, t)
            for t, v in sweep.items()
            if (v[fitted]["coding all sizes"]["false_share"] or 0.0) <= 0.20
            and (v[fitted]["coding all sizes"]["silent_new_task"] or 0.0) >= 0.95
        ]
        out["fits"][fitted + (" + form" if form else "")] = {"sweep": sweep, "chosen": max(ok)[1] if ok else None}
    return out


def floors(records: list[dict]) -> dict:
    """The model path's semantic floor: what share of new tasks the model is asked about
    (lexical candidates at ``hook.model_min_confidence`` 0.25, or a session by meaning) and the
    share of answerable prompts whose answering session it reads."""
    variants = {
        "cosine 0.30 (shipped)": lambda r, sim: sim >= 0.3,
        "cosine 0.35": lambda r, sim: sim >= 0.35,
        "cosine 0.40": lambda r, sim: sim >= 0.4,
        "z ≥ 3": lambda r, sim: sim >= 0.3 and _z(r, sim) >= 3,
        "z ≥ 4": lambda r, sim: sim >= 0.3 and _z(r, sim) >= 4,
        "no semantic channel": lambda r, sim: False,
    }
    out: dict = {}
    for name, keep in variants.items():
        for corpus, size in GROUPS:
            rs = group(records, corpus, size, "report")
            asked, has = [], []
            for r in rs:
                lex = {s: lab for c, s, lab in r["lex"] if c >= 0.25}
                extra = [ok for s, sim, ok in r.get("near") or [] if s not in lex and keep(r, sim)][:3]
                if r["kind"] == "new-task":
                    asked.append(bool(lex or extra))
                elif r["kind"] in ANSWERABLE:
                    has.append(any(lex.values()) or any(extra))
            out.setdefault(name, {})[f"{corpus} {size or 'all sizes'}"] = {
                "candidate_recall": round(sum(has) / len(has), 4) if has else None,
                "asked_new_task": round(sum(asked) / len(asked), 4) if asked else None,
            }
    return out


def _z(r: dict, sim: float) -> float:
    bg = r.get("background") or {}
    return (sim - bg.get("mean", 0.0)) / max(1e-6, bg.get("std", 1.0))


def companions(records: list[dict]) -> dict:
    out: dict = {}
    for floor in (None, 0.5, 0.45, 0.4):

        def picks(r, floor=floor):
            chosen = shipped(r)
            if chosen and floor is not None:
                for c, s, lab in r["lex"]:
                    if len(chosen) >= 3:
                        break
                    if c >= floor and s not in chosen:
                        chosen[s] = lab
            return list(chosen.values())

        name = "none (shipped)" if floor is None else f"confidence ≥ {floor}"
        out[name] = {
            f"{corpus} {size or 'all sizes'}": figures(group(records, corpus, size, "report"), picks)
            for corpus, size in GROUPS
        }
    return out


def run(records_path: Path) -> dict:
    records = prepared(json.loads(records_path.read_text(encoding="utf-8")))
    return {"bound": bound(records), "floors": floors(records), "companions": companions(records)}


def _cell(fig: dict | None, *keys: str) -> str:
    if not fig:
        return "–"
    return " / ".join("–" if fig.get(k) is None else f"{fig[k]:.2f}" for k in keys)


def sections(res: dict | None = None) -> list[str]:
    """The section of docs/benchmarks.md (``benchmarks.report``), from ``res`` or the committed
    ``benchmarks/decision_bound.json``; prose in benchmarks/prose/bound.md."""
    from benchmarks.page import prose, rows

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    cols = ("coding all sizes", "longmemeval 1000", "longmemeval full")
    b = res["bound"]
    lines = [
        "| decision (report half) | coding: useful / false share / silent | LME 1,000: useful / false | "
        "LME ~3,800: useful / false |"
    ]
    fits = {
        "tune": "fitted on the tune half, threshold chosen there (what could ship)",
        "report": "fitted on the report half itself (a bound)",
        "report + form": "… and the prompt's form, question or request (a bound)",
    }
    line = [_cell(b["today"]["report"][cols[0]], "useful", "false_share", "silent_new_task")]
    line += [_cell(b["today"]["report"][c], "useful", "false_share") for c in cols[1:]]
    body = ["| today's raw decision (shipped) | " + " | ".join(line) + " |"]
    for key, label in fits.items():
        fit = b["fits"].get(key) or {}
        t = fit.get("chosen")
        figs = fit["sweep"][t]["report"] if t else {}
        line = [_cell(figs.get(cols[0]), "useful", "false_share", "silent_new_task")]
        line += [_cell(figs.get(c), "useful", "false_share") for c in cols[1:]]
        body.append(f"| {label}, p ≥ {t} | " + " | ".join(line) + " |")
    bound_table = rows(lines[0], "|---|---|---|---|", body)
    floors = res["floors"]
    body = []
    for name, figs in floors.items():
        body.append(
            f"| {name} | " + " | ".join(_cell(figs.get(c), "candidate_recall", "asked_new_task") for c in cols) + " |"
        )
    floor_table = rows(
        "| model path's semantic floor (each: answer read / new tasks asked) | coding | LME 1,000 | LME ~3,800 |",
        "|---|---|---|---|",
        body,
    )
    body = []
    for name, figs in res["companions"].items():
        body.append(
            f"| {name} | "
            + " | ".join(_cell(figs.get(c), "useful", "false_share", "hit_precision") for c in cols)
            + " |"
        )
    companion_table = rows(
        "| companions of a raw injection (each: useful / false share / hits right) | coding | LME 1,000 | LME ~3,800 |",
        "|---|---|---|---|",
        body,
    )

    def fig(key: str, half: str = "report") -> dict:
        fit = b["fits"].get(key) or {}
        t = fit.get("chosen")
        return fit["sweep"][t][half][cols[0]] if t else {}

    def num(v) -> str:
        return "–" if v is None else f"{v:.2f}"

    return [
        prose(
            "bound",
            bound=bound_table,
            floors=floor_table,
            companions=companion_table,
            today_useful=num(b["today"]["report"][cols[0]]["useful"]),
            today_false=num(b["today"]["report"][cols[0]]["false_share"]),
            tune_useful=num(fig("tune").get("useful")),
            tune_false=num(fig("tune").get("false_share")),
            tune_false_tune=num(fig("tune", "tune").get("false_share")),
            bound_useful=num(fig("report").get("useful")),
            form_useful=num(fig("report + form").get("useful")),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.decision_bound", description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=Path, required=True, help="records of benchmarks.injection_sizes --records")
    ap.add_argument("--write-json", action="store_true")
    args = ap.parse_args(argv)
    res = run(args.records)
    print(json.dumps(res, indent=1, ensure_ascii=False))
    if args.write_json:
        RESULTS.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
