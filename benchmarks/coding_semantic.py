"""The semantic channel's ranking on the coding history (issue 34 item 2): the encoder recall
ships (``recall.search.minilm``: all-MiniLM-L6-v2, int8 ONNX) ranking a prompt's visible
sessions (those up to the session it is asked after) by their best user prompt or assistant
reply, next to ``recall --raw``'s ranking of the same prompts (``benchmarks.injection_sizes``,
each project alone). A ranking only: what the hook does with it is measured there.

    python -m benchmarks.coding_semantic [--write-json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks import coding_history as ch

RESULTS = Path(__file__).with_name("coding_semantic.json")
ANSWERABLE = ("question", "task", "paraphrase")


def messages(s: ch.CodingSession) -> list[str]:
    out = []
    for t in s.turns:
        text = str(t.get("user") or t.get("assistant") or "").strip()[:2000]
        if text:
            out.append(text)
    return out


def run() -> dict:
    import numpy as np

    from recall.search.minilm import MiniLM

    model = MiniLM()

    def embed(texts: list[str]):
        return np.asarray(model.embed(texts), dtype=np.float32)

    records = []
    for proj in ch.load_all():
        order = [s.sid for s in proj.sessions]
        vecs = {s.session_id: embed(messages(s)) for s in proj.sessions if messages(s)}
        for p in proj.prompts:
            if p.kind not in ANSWERABLE or not p.answers:
                continue
            visible = [s.session_id for s in proj.sessions[: order.index(p.asked_after) + 1] if s.session_id in vecs]
            q = embed([p.text])[0]
            best = {sid: float((vecs[sid] @ q).max()) for sid in visible}
            ranked = sorted(best, key=lambda sid: -best[sid])
            rank = next((i + 1 for i, sid in enumerate(ranked) if sid in p.answers), None)
            records.append({"project": proj.slug, "kind": p.kind, "split": p.split, "rank": rank})
    out: dict = {}
    for split in ("tune", "report"):
        for kind in (*ANSWERABLE, "all"):
            rs = [r for r in records if r["split"] == split and (kind == "all" or r["kind"] == kind)]
            if not rs:
                continue
            out.setdefault(split, {})[kind] = {
                "prompts": len(rs),
                **{
                    f"R@{k}": round(sum(r["rank"] is not None and r["rank"] <= k for r in rs) / len(rs), 4)
                    for k in (1, 3, 5)
                },
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.coding_semantic", description=__doc__.split("\n")[0])
    ap.add_argument("--write-json", action="store_true")
    args = ap.parse_args(argv)
    res = run()
    print(json.dumps(res, indent=1))
    if args.write_json:
        RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
