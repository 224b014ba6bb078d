"""When to ask the model at all (issue 47, item 4): the share of new-task prompts that cause a
model call against the share of answerable prompts whose answering session is in the request.

Reads the records of ``benchmarks.injection_sizes`` (``--records``; this tree's, with the model
pass: ``asked``, ``read_has_evidence``, the candidates' features ``rows`` and the semantic
channel's ``near``); reruns nothing. A gate asks the model only when the best lexical candidate's
confidence reaches ``lexical`` or the nearest session's cosine reaches ``semantic`` (below both,
the prompt goes on with nothing, as when no candidate passes today's floors). The pair is chosen
on the tune half: the one that asks about the fewest new tasks while the answer stays in the
request for at least ``TARGET`` of the answerable prompts, or, where asking about every prompt
reads less than that, within ``TOLERANCE`` of what it reads; every figure is then quoted on the
report half, per history size.

    python -m benchmarks.call_gate --records R.json [--write-json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

RESULTS = Path(__file__).with_name("call_gate.json")
ANSWERABLE = ("question", "task", "paraphrase", "answerable")
TARGET = 0.92
TOLERANCE = 0.05  # of the answer in the request a gate may give up on the tune half (at most 3 of 60)
LEXICAL = tuple(round(0.25 + 0.05 * i, 2) for i in range(12))  # 0.25 … 0.80
SEMANTIC = tuple(round(0.30 + 0.025 * i, 3) for i in range(13))  # 0.30 … 0.60


def signals(r: dict) -> tuple[float, float]:
    """(best lexical confidence, best cosine) the hook had for a prompt."""
    from recall.search.confidence import DECISION, ECHO_FACTOR, confidence

    lex = 0.0
    for row in r.get("rows") or []:
        c = confidence(row["f"], DECISION) * (ECHO_FACTOR if row.get("echo") else 1.0)
        lex = max(lex, c)
    sem = max((float(n[1]) for n in r.get("near") or []), default=0.0)
    return lex, sem


def figures(recs: list[dict], lexical: float, semantic: float) -> dict:
    def passes(r) -> bool:
        lex, sem = r["_signals"]
        return bool(r["asked"]) and (lex >= lexical or sem >= semantic)

    ans = [r for r in recs if r["kind"] in ANSWERABLE]
    new = [r for r in recs if r["kind"] == "new-task"]

    def share(xs):
        xs = list(xs)
        return round(sum(1 for x in xs if x) / len(xs), 4) if xs else None

    return {
        "read_recall": share(passes(r) and r["read_has_evidence"] for r in ans),
        "asked_new_task": share(passes(r) for r in new),
        "asked": share(passes(r) for r in recs),
        "answerable": len(ans),
        "new_tasks": len(new),
    }


def study(records: list[dict]) -> dict:
    ours = [r for r in records if r["code"] == "ours" and r["corpus"] == "coding" and "asked" in r]
    for r in ours:
        r["_signals"] = signals(r)
    tune = [r for r in ours if r["split"] == "tune"]
    sweep = []
    for lx in LEXICAL:
        for sm in SEMANTIC:
            f = figures(tune, lx, sm)
            sweep.append((lx, sm, f))
    today = figures(tune, 0.0, 0.0)
    # the answer must stay in the request: the 0.92, or, where asking about every prompt
    # does not reach it on this dev set, within TOLERANCE of what asking about every prompt reads
    floor = min(TARGET, (today["read_recall"] or 0.0) - TOLERANCE)
    ok = [s for s in sweep if (s[2]["read_recall"] or 0) >= floor - 1e-9]
    chosen = min(ok, key=lambda s: (s[2]["asked_new_task"], -s[2]["read_recall"], s[0], s[1])) if ok else None
    sizes = sorted({r["size"] for r in ours})
    out = {
        "target": TARGET,
        "tolerance": TOLERANCE,
        "chosen": {"lexical": chosen[0], "semantic": chosen[1]} if chosen else None,
        "tune": {"today": figures(tune, 0.0, 0.0), **({"gate": chosen[2]} if chosen else {})},
        "report": {},
    }
    for size in sizes:
        rep = [r for r in ours if r["split"] == "report" and r["size"] == size]
        out["report"][size] = {"today": figures(rep, 0.0, 0.0)}
        if chosen:
            out["report"][size]["gate"] = figures(rep, chosen[0], chosen[1])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.call_gate")
    ap.add_argument("--records", type=Path, required=True)
    ap.add_argument("--write-json", action="store_true")
    args = ap.parse_args(argv)
    res = study(json.loads(args.records.read_text(encoding="utf-8")))
    print(json.dumps(res, indent=1))
    if args.write_json:
        RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def sections(res: dict | None = None) -> list[str]:
    """The section of docs/benchmarks.md (``benchmarks.report``), from ``res`` or the committed
    ``benchmarks/call_gate.json``; prose in benchmarks/prose/call_gate.md."""
    from benchmarks.page import prose, rows

    if res is None:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []

    def f(x):
        return "–" if x is None else f"{x:.2f}"

    body = []
    halves = [("tune", "all sizes", res["tune"])] + [("report", size, t) for size, t in res["report"].items()]
    for half, size, t in halves:
        for name in ("today", "gate"):
            fig = t.get(name)
            if fig:
                label = "every prompt with a candidate" if name == "today" else "the gate"
                body.append(
                    f"| {half} | {size} | {label} | {f(fig['read_recall'])} | {f(fig['asked_new_task'])} "
                    f"| {f(fig['asked'])} |"
                )
    table = rows(
        "| half | history | the model is asked about | answer in the request | new tasks asked | prompts asked |",
        "|---|---|---|---|---|---|",
        body,
    )
    chosen = res.get("chosen") or {}
    return [
        prose(
            "call_gate",
            table=table,
            lexical=chosen.get("lexical", "–"),
            semantic=chosen.get("semantic", "–"),
            tolerance=res.get("tolerance", "–"),
            target=res.get("target", "–"),
        )
    ]
