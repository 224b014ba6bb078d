"""Does matching a word's family (decide -> decision, chose -> choose: ``recall.search.query.variants``)
help or hurt ranking? The same search with and without it, on one index per corpus, in one run.

* LoCoMo and LongMemEval-S (``benchmarks.retrieval``: the same conversion, indexer, questions and
  metrics; R@k, recall_all@k, NDCG@k, MRR@10), message level, and session level for LongMemEval.
* The coding history of issue 34 (``benchmarks.coding_history``: three projects, their labelled
  dev and report prompts that have answer sessions): ``recall --raw``'s ranking of sessions
  (``Searcher.search``, limit 10, scoped to the project), R@1 and R@5 of the first answer session, MRR@10.

Both halves of each set are reported (the tune half and the report half, ``split_of`` /
the coding history's own split), and the questions whose ranking moved.

    python -m benchmarks.word_families [--dataset locomo|longmemeval|both|none] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from benchmarks import retrieval as rb

REPO = Path(__file__).resolve().parents[1]
MODES = ("without", "with")  # word families off, on (the shipped search)


@contextlib.contextmanager
def families(on: bool) -> Iterator[None]:
    """The searcher with word families (``on``, as shipped) or without them."""
    import recall.search.searcher as searcher

    real = searcher.variants
    searcher.variants = real if on else (lambda term: ())
    try:
        yield
    finally:
        searcher.variants = real


def dev_sets(datasets: list[str], workdir: Path, limit_questions: int | None = None) -> dict:
    """Both modes over LoCoMo / LongMemEval on one index: per (dataset, level, half) means."""
    cases = rb.load(rb.find_data_dir(), datasets, limit_questions=limit_questions)
    root = workdir / "projects"
    rb.write_transcripts(cases, root)
    with rb.recall_home(workdir / "home"):
        rb.build_index(root)
        from recall.search.searcher import Searcher

        searcher = Searcher()
        records = {}
        for mode in MODES:
            with families(mode == "with"):
                records[mode] = rb.evaluate(cases, searcher, baseline=False)
    out: dict = {}
    for half in ("all", *rb.SPLITS):
        for mode in MODES:
            recs = [r for r in records[mode] if half == "all" or rb.split_of(r["qid"]) == half]
            for (dataset, level), entry in _means(recs).items():
                out.setdefault(f"{dataset} {level} ({half})", {})[mode] = entry
    moved = [
        {
            "dataset": a["dataset"],
            "level": a["level"],
            "question": a["question"],
            "without": a["found"],
            "with": b["found"],
        }
        for a, b in zip(records["without"], records["with"])
        if a["found"] != b["found"]
    ]
    return {"figures": out, "moved": moved}


def _means(recs: list[dict]) -> dict:
    groups: dict = defaultdict(list)
    for r in recs:
        groups[(r["dataset"], r["level"])].append(r)
    return {
        key: {"questions": len(g), **{m: round(sum(r["ours"][m] for r in g) / len(g), 4) for m in rb.METRICS}}
        for key, g in sorted(groups.items())
    }


def coding(workdir: Path) -> dict:
    """Both modes over the coding history's prompts that have answer sessions, on one index."""
    from benchmarks import coding_history as ch

    projects = ch.load_all()
    root = workdir / "projects"
    for p in projects:
        for s in p.sessions:
            ch.write_session(s, root)
    out: dict = {}
    moved = []
    with rb.recall_home(workdir / "home"):
        rb.build_index(root)
        from recall.search.run import resolve_project
        from recall.search.searcher import Searcher

        searcher = Searcher()
        ranked: dict = {}
        for mode in MODES:
            rows: dict = defaultdict(list)
            with families(mode == "with"):
                for p in projects:
                    project = resolve_project(p.cwd)
                    for q in p.prompts:
                        if not q.answers:
                            continue
                        hits = searcher.search(q.text, limit=rb.FETCH, project=project)
                        order = list(dict.fromkeys(h.session_id for h in hits))
                        ranked[(mode, q.pid)] = (q.text, order)
                        first = next((i + 1 for i, s in enumerate(order) if s in q.answers), None)
                        row = (float(first == 1), float(bool(first and first <= 5)), 1.0 / first if first else 0.0)
                        for half in ("all", q.split):
                            rows[f"coding {q.kind} ({half})"].append(row)
                            rows[f"coding all kinds ({half})"].append(row)
            for key, rs in rows.items():
                n = len(rs)
                out.setdefault(key, {})[mode] = {
                    "questions": n,
                    "R@1": round(sum(r[0] for r in rs) / n, 4),
                    "R@5": round(sum(r[1] for r in rs) / n, 4),
                    "mrr@10": round(sum(r[2] for r in rs) / n, 4),
                }
        for (mode, pid), (text, order) in ranked.items():
            if mode == "with" and order[:5] != ranked[("without", pid)][1][:5]:
                moved.append({"prompt": text, "without": ranked[("without", pid)][1][:5], "with": order[:5]})
    return {"figures": dict(sorted(out.items())), "moved": moved}


def table(figures: dict, metrics: tuple[str, ...]) -> str:
    lines = ["| set | n | metric | without families | with (shipped) | change |", "|---|---:|---|---:|---:|---:|"]
    for name, modes in figures.items():
        for m in metrics:
            a, b = modes["without"][m], modes["with"][m]
            lines.append(f"| {name} | {modes['with']['questions']} | {m} | {a:.3f} | {b:.3f} | {b - a:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.word_families", description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=["locomo", "longmemeval", "both", "none"], default="both")
    ap.add_argument("--limit-questions", type=int, default=None, metavar="N", help="at most N questions per dataset")
    ap.add_argument("--no-coding", action="store_true", help="skip the coding history")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "word_families.json")
    args = ap.parse_args(argv)
    report: dict = {}
    datasets = [] if args.dataset == "none" else list(rb.DATASETS) if args.dataset == "both" else [args.dataset]
    if datasets and rb.find_data_dir() is None:
        print("error: no benchmark data: set RECALL_BENCH_DATA or put shared/data beside the repo", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="recall-families-") as tmp:
        if datasets:
            report["dev_sets"] = dev_sets(datasets, Path(tmp) / "dev", args.limit_questions)
            print(table(report["dev_sets"]["figures"], ("recall@5", "recall@10", "ndcg@10", "mrr@10")))
            print(f"\n{len(report['dev_sets']['moved'])} rankings moved\n")
        if not args.no_coding:
            report["coding"] = coding(Path(tmp) / "coding")
            print(table(report["coding"]["figures"], ("R@1", "R@5", "mrr@10")))
            print(f"\n{len(report['coding']['moved'])} prompts' top 5 moved")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
