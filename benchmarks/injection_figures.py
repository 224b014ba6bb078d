"""The figures of ``benchmarks.injection`` (and of ``benchmarks.semantic_study``, which
measures the semantic stage on the same pools): what a record of a prompt's injection
counts for, the silence floors a gate is chosen by, and the logistic fit behind the
confidence model. Shared here so the two modules need not import each other."""

from __future__ import annotations

POOL_CWD = "/bench/pool"
KINDS = ("answerable", "abstention", "left-out", "new-task")
KS = (1, 5, 10)
BM25_TOP = 3  # sessions the BM25 baseline injects

SILENT_NEW_FLOOR = 0.90  # the silence targets: the threshold is the lowest that
SILENT_UNANSWERABLE_FLOOR = 0.50  # meets both on the tune half (the most useful such gate)


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


def fit_logistic(rows: list[dict], names: tuple[str, ...], l2: float = 1.0, iters: int = 50) -> tuple[float, dict]:
    """Maximum-likelihood logistic regression (Newton's method, an L2 penalty on the
    weights, not the bias; each row weighted by its ``w``, 1 unless given): the few constants
    ``recall.search.confidence`` ships."""
    import numpy as np

    x = np.array([[1.0] + [r["f"].get(n, 0.0) for n in names] for r in rows])
    y = np.array([r["label"] for r in rows], dtype=float)
    sw = np.array([r.get("w", 1.0) for r in rows], dtype=float)  # a row's weight (1 unless given)
    sw = sw * (len(rows) / sw.sum())
    w = np.zeros(x.shape[1])
    reg = np.eye(x.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        grad = x.T @ (sw * (p - y)) + reg @ w
        hess = (x * (sw * p * (1 - p))[:, None]).T @ x + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), {n: float(v) for n, v in zip(names, w[1:])}
