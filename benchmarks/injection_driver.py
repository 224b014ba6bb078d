"""One code base's prompt hook, kept warm in a process of its own, for ``benchmarks.injection_sizes``.

Run with a checkout's own interpreter (``<checkout>/.venv/bin/python path/to/injection_driver.py``,
``RECALL_HOME`` set, no model backend): it imports *that* checkout's ``recall`` and answers one JSON
request per stdin line with one JSON line on stdout:

* ``{"op": "index", "roots": [...]}``: index the transcripts below the roots (incrementally);
* ``{"op": "ask", "prompt": ..., "cwd": ..., "rows": bool}``: what the hook injects for the prompt
  (``recall.prompt.context.build_context``, in-process as without the service: the same decision the
  service makes), the sessions ``recall --raw --project .`` ranks (10 hits), and, where the checkout has
  them (issue 34 on), the model path's candidates (``model``) and every candidate's features (``rows``).

With ``--no-service`` the semantic channel is never attached (no vector is embedded or read): the
hook as it works when no service runs. Without it the driver embeds what the service would.

Uses only what both today's main and this branch have, and the newer pieces where present.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")  # the benchmark embeds whole pools at once: both cores
import time
import uuid


def _background(store, encoder, prompt: str, project: str) -> dict:
    """The prompt's cosine against every vector of ``project``: each session's best, the top 30
    (best first), and the mean and spread of all: how far the nearest stands out."""
    import numpy as np

    keys, owners, _hashes, m = store.matrix(project)
    if not keys:
        return {}
    sims = m @ encoder.embed([prompt])[0]
    best: dict = {}
    for sid, sim in zip(owners, sims.tolist()):
        if sim > best.get(sid, -1.0):
            best[sid] = sim
    top = sorted(best.values(), reverse=True)
    return {
        "sessions": [round(x, 4) for x in top[:30]],
        "n_sessions": len(top),
        "n": len(keys),
        "mean": round(float(sims.mean()), 4),
        "std": round(float(sims.std()), 4),
        "p99": round(float(np.quantile(sims, 0.99)), 4),
    }


class _Asked(Exception):
    """What the model would have been sent: the hook falls back as after a failed call."""


def _model_pass(rc, payload: dict, searcher) -> dict:
    """The hook once more as with a model backend (``choose_path`` says ``model``): whether the
    model would be asked (``asked``), the exact request it would read (``request``: system and
    user text, as ``recall.llm.synthesis`` builds it), the way the prompt takes (``way``, where the
    checkout has ways) and the sessions it would read (``read``). The model is never called: the
    synthesis is replaced by a recorder that fails, so the hook falls back as after an error."""
    from recall.llm import synthesis

    seen: dict = {}

    def record(prompt, hits, timeout, max_chars=3000):
        seen["prompt"], seen["hits"], seen["max_chars"] = prompt, list(hits), max_chars
        raise _Asked()

    real_choose, real_synth = rc.choose_path, synthesis.synthesize_recall
    rc.choose_path = lambda hook, cfg: ("model", "api")
    synthesis.synthesize_recall = record
    trace: dict = {}
    try:
        rc.build_context(dict(payload), time.time() + 30, searcher=searcher, trace=trace)
    finally:
        rc.choose_path, synthesis.synthesize_recall = real_choose, real_synth
    out = {"way": trace.get("way"), "asked": "hits" in seen}
    if "hits" in seen:
        hits = seen["hits"]
        if hasattr(synthesis, "recall_request"):
            system, user = synthesis.recall_request(seen["prompt"], hits, seen["max_chars"])
        else:  # main before issue 47: the same formula, its own excerpts
            chars = max(300, int(seen["max_chars"]) - 250)
            system = synthesis.RECALL_SYSTEM.format(chars=chars)
            user = synthesis._redact(
                f"New prompt:\n{seen['prompt'][:4000]}\n\nExcerpts of past sessions:\n\n{synthesis._excerpts(hits)}"
            )
        out["request"] = {"system": system, "user": user}
        out["read"] = list(dict.fromkeys(h.session_id for h in hits))
    return out


def main() -> int:
    from indexer.project import canonical_project
    from recall.prompt import context as rc
    from recall.search.searcher import Searcher

    try:
        from recall.prompt import candidates as cand
    except ImportError:  # pragma: no cover - every checkout has it
        cand = None
    searcher = None
    store = encoder = None
    try:  # the semantic channel (issue 34 on): the model path's candidates by meaning
        from recall.search import semantic
    except ImportError:
        semantic = None
    if "--no-service" in sys.argv[1:]:  # as the hook works with no service running: words alone
        semantic = None
    if semantic is not None:
        from indexer.vectors import VectorStore
        from recall.search.minilm import MiniLM

        store = VectorStore()
        encoder = MiniLM()
        semantic.attach(store)
    out = sys.stdout
    states: dict = {}  # project -> the typed memories written so far (op "memories")
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "index":
            from pathlib import Path

            from indexer.ingest import Indexer

            t0 = time.perf_counter()
            with Indexer() as ix:
                ix.run([Path(r) for r in req["roots"]])
            if searcher is not None:
                searcher.refresh()
            res = {"ok": True, "seconds": round(time.perf_counter() - t0, 2)}
            if store is not None and req.get("embed"):
                if searcher is None:
                    searcher = Searcher()
                t1 = time.perf_counter()
                projects = [canonical_project(os.path.abspath(c)) for c in req["embed"]]
                res["embedded"] = semantic.embed_all(searcher, store, projects, encoder)
                res["embed_seconds"] = round(time.perf_counter() - t1, 2)
        elif op == "memories":
            # typed memories as the extraction writes them (``add_memory``: redaction, dedup,
            # supersession) into a state kept here, not in the project folder (the benchmark's
            # projects do not exist on this machine); then their index documents, in the form
            # ``Indexer.upsert_memory_docs`` takes (main's checkout has no ``index_docs`` yet)
            from indexer.ingest import Indexer
            from recall.memory import store as mstore

            project = canonical_project(os.path.abspath(req["cwd"]))
            state = states.setdefault(project, mstore.State(project=project))
            changed: set = set()
            for m in req["items"]:
                outcome = mstore.add_memory(
                    state,
                    m["type"],
                    m["content"],
                    m.get("tags") or (),
                    session_id=m["session_id"],
                    supersedes_content=m.get("supersedes_content"),
                    now=float(m["ts"]),
                )
                changed.update(x.id for x in (outcome.memory, outcome.replaced) if x is not None)
            upserts, deletes = [], []
            for mid in sorted(changed):
                m = state.by_id(mid)
                if m is None or m.status != "active":
                    deletes.append(f"mem:{mid}")
                    continue
                upserts.append(
                    {
                        "id": m.id,
                        "project": project,
                        "type": m.type,
                        "content": m.content,
                        "tags": list(m.tags),
                        "updated": float(m.updated or m.created),
                        "session_ids": list(m.sessions),
                    }
                )
            with Indexer() as ix:
                if upserts:
                    ix.upsert_memory_docs(upserts)
                if deletes:
                    ix.delete_keys(deletes)
            res = {"ok": True, "memories": len(state.active())}
        elif op == "ask":
            if searcher is None:
                searcher = Searcher()
            else:
                searcher.refresh()
            prompt, cwd = req["prompt"], req["cwd"]
            payload = {
                "prompt": prompt,
                "cwd": cwd,
                "session_id": str(uuid.uuid4()),
                "hook_event_name": "UserPromptSubmit",
                "transcript_path": "",
            }
            trace: dict = {}
            t0 = time.perf_counter()
            hook = rc.build_context(payload, time.time() + 30, searcher=searcher, trace=trace)
            ms = (time.perf_counter() - t0) * 1000
            text = hook["hookSpecificOutput"]["additionalContext"] if hook else ""
            project = canonical_project(os.path.abspath(cwd))
            ranked = [h.session_id for h in searcher.search(prompt, limit=10, project=project)]
            try:  # with the service (issue 47 on): words and meaning fused, as `recall --raw` gets them
                from recall.search.fused import fused_search
            except ImportError:
                fused_search = None
            ranked_service = (
                [h.session_id for h in fused_search(searcher, prompt, {"limit": 10, "project": project}, cwd)]
                if fused_search is not None and store is not None
                else None
            )
            res = {
                "text": text,
                "ms": round(ms, 1),
                "ranked": list(dict.fromkeys(ranked)),
                **({"ranked_service": list(dict.fromkeys(ranked_service))} if ranked_service is not None else {}),
                "outcome": trace.get("outcome"),
                "injected": trace.get("injected"),
                "memory_hits": sum(1 for line in text.splitlines() if " memory]" in line),
                "best": trace.get("best"),
            }
            res.update(_model_pass(rc, payload, searcher))
            if cand is not None and hasattr(cand, "judged_candidates"):
                from recall.prompt.settings import hook_settings

                hs = hook_settings()
                judged, s = cand.judged_candidates(prompt, cwd, None, hs, searcher)
                judged = rc.without_rule_docs(judged)
                lexical = cand.model_decision(judged, hs).hits
                res["model"] = list(dict.fromkeys(h.session_id for h in lexical))
                if store is not None:
                    res["model_lexical"] = res["model"]
                    near = cand.nearest_sessions(prompt, cwd, None, hs, searcher)
                    res["near"] = [[h.session_id, h.similarity] for h in near[:5]]
                    if req.get("rows"):
                        res["background"] = _background(store, encoder, prompt, canonical_project(os.path.abspath(cwd)))
                    raw_hits = cand.raw_decision(judged, hs).hits
                    found, _raw_extra = cand.semantic_picks(near, judged, lexical, raw_hits, hs)
                    res["model"] = list(dict.fromkeys(h.session_id for h in cand.model_candidates(lexical, found, hs)))
                if req.get("rows") and judged:
                    from recall.search import confidence as conf

                    idx = searcher.index.searcher()
                    text_q = cand.query_text(prompt)
                    terms = cand.informative_terms(text_q)
                    scoped = None
                    if hasattr(searcher, "doc_freqs"):
                        scoped = searcher.doc_freqs(terms, project)
                    q = (
                        conf.query_stats(idx, text_q, terms, scoped)
                        if scoped is not None
                        else conf.query_stats(idx, text_q, terms)
                    )
                    engine = sorted(judged, key=lambda h: -h.score)  # margins read the engine's order
                    feats = conf.hit_features(q, engine) if q is not None else []
                    res["rows"] = [
                        {
                            "session": h.session_id,
                            "f": {k: round(v, 4) for k, v in f.items()},
                            "echo": bool(h.echo),
                            "kind": h.kind,
                        }
                        for h, f in zip(engine, feats)
                    ]
        else:
            res = {"error": f"unknown op {op!r}"}
        out.write(json.dumps(res) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
