"""The semantic stage's vectors for the injection benchmark's pools, computed once.

The service embeds every user prompt and assistant reply of its index in the background
(``recall.service.embedding``), one message at a time at a low priority: on this 2-core
machine that is hours per pool, and the two pools of ``benchmarks.injection`` share all but
the left-out evidence sessions. So the benchmark embeds the *union* of the two pools'
messages once, with the service's own encoder (``indexer.encoder.shared()``) on the service's
own texts (each message's archived text, read at its index position exactly as the
embedding walk reads it), in a few worker processes, and seeds each pool's vector store
(``indexer.vectors.VectorStore`` under the pool's ``RECALL_HOME``, the encoder's model id in
its header) from that cache. A vector is cached by a hash of the model id, the message key
and its text: a changed text or model is embedded again. The service then starts on a
complete store: its walk finds every message embedded and has nothing to do.

    python -m benchmarks.pool_vectors HOME [HOME ...] --cache FILE [--workers 2]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

ROLES = ("user", "assistant")


def message_texts(home: Path) -> dict[str, tuple[str, str]]:
    """``{key: (project, text)}`` of every user prompt and assistant reply indexed under
    ``home``, the text read from the archive at the document's position (as the service's
    embedding walk reads it)."""
    import tantivy

    from benchmarks.retrieval import recall_home
    from indexer.archive_files import read_message
    from recall.core import paths
    from recall.search.searcher import Searcher

    out: dict[str, tuple[str, str]] = {}
    with recall_home(home):
        index = Searcher().index
        index.reload()
        searcher = index.searcher()
        schema = index.schema
        Q, Must = tantivy.Query, tantivy.Occur.Must
        q = Q.boolean_query([(Must, Q.term_query(schema, "doctype", "message", index_option="basic")),
                             (Must, Q.term_set_query(schema, "role", list(ROLES)))])
        n = searcher.search(q, 1, count=True).count
        root = paths.archive_dir()
        for _, addr in searcher.search(q, n).hits:
            d = searcher.doc(addr)
            key = str(d.get_first("key"))
            project = str(d.get_first("project") or "")
            pos = d.get_first("apos")
            rec = read_message(root, project, str(d.get_first("session_id") or ""), int(pos), key[2:]) \
                if pos is not None else None
            if rec is not None:
                out[key] = (project, str(rec.get("text") or ""))
    return out


def cache_id(model_id: str, key: str, text: str) -> bytes:
    return hashlib.sha1(f"{model_id}\0{key}\0{text}".encode("utf-8", "surrogateescape")).digest()


def _load_cache(path: Path, np) -> tuple[dict[bytes, object], float]:
    """The cached vectors and the CPU-seconds their encoding cost."""
    try:
        with np.load(path) as z:
            ids, vecs = z["ids"], z["vecs"]
            cpu = float(z["cpu"]) if "cpu" in z.files else 0.0
    except (OSError, ValueError, KeyError):
        return {}, 0.0
    return {bytes(i): v for i, v in zip(ids, vecs)}, cpu


def _save_cache(path: Path, cache: dict, np, cpu: float) -> None:
    ids = np.array([np.frombuffer(k, np.uint8) for k in cache], dtype=np.uint8).reshape(len(cache), 20)
    vecs = np.array(list(cache.values()), dtype=np.float32).reshape(len(cache), -1)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, ids=ids, vecs=vecs, cpu=np.float64(cpu))
    os.replace(tmp, path)


def _encode_chunk(texts: list[str]):
    from indexer import encoder

    enc = encoder.shared()
    return [enc.encode(t) for t in texts]


def _init_worker() -> None:
    try:
        os.nice(10)
    except OSError:
        pass


def embed(homes: list[Path], cache_path: Path, workers: int = 2, chunk: int = 64, log=print) -> dict:
    """Embed the union of the homes' messages (what the cache lacks) and seed each home's
    vector store. Returns counts and the CPU time spent."""
    try:
        from indexer import encoder, vectors
    except ImportError:
        raise SystemExit("benchmarks.pool_vectors needs the semantic stage (indexer/encoder.py, indexer/vectors.py "
                         "of branch i25-semantic): run it on branch i25-hybrid") from None

    np = encoder.numpy()
    model_id = encoder.shared().model_id
    per_home = {h: message_texts(h) for h in homes}
    cache, cached_cpu = _load_cache(cache_path, np)
    union: dict[bytes, str] = {}
    for items in per_home.values():
        for key, (_, text) in items.items():
            union[cache_id(model_id, key, text)] = text
    todo = [(cid, text) for cid, text in union.items() if cid not in cache]
    log(f"pool vectors: {sum(len(v) for v in per_home.values()):,} messages in {len(homes)} homes, "
        f"{len(todo):,} to embed ({len(cache):,} cached)")
    t0, c0 = time.monotonic(), _children_cpu()
    if todo:
        import multiprocessing as mp

        chunks = [todo[i:i + chunk] for i in range(0, len(todo), chunk)]
        ctx = mp.get_context("fork")
        with ctx.Pool(workers, initializer=_init_worker) as pool:
            done = 0
            for n, vecs in enumerate(pool.imap(_encode_chunk, [[t for _, t in c] for c in chunks])):
                for (cid, _), v in zip(chunks[n], vecs):
                    cache[cid] = v
                done += len(vecs)
                if n % 50 == 49:
                    _save_cache(cache_path, cache, np, cached_cpu + _children_cpu() - c0)
                    rate = done / max(1e-6, time.monotonic() - t0)
                    log(f"pool vectors: {done:,}/{len(todo):,} embedded, {rate:.1f}/s")
    cpu = _children_cpu() - c0
    if todo:
        _save_cache(cache_path, cache, np, cached_cpu + cpu)
    for home, items in per_home.items():
        root = home / "vectors"
        if root.exists():
            for p in root.iterdir():
                p.unlink()
        store = vectors.VectorStore(root=root, model_id=model_id)
        for key, (project, text) in items.items():
            store.add(key, project, cache[cache_id(model_id, key, text)])
        store.close()
    return {"messages": {str(h): len(v) for h, v in per_home.items()}, "union": len(union),
            "embedded_now": len(todo), "cpu_seconds_now": round(cpu, 1),
            "cpu_seconds": round(cached_cpu + cpu, 1),  # the whole cache's encoding, this run's included
            "wall_seconds": round(time.monotonic() - t0, 1), "model": model_id}


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pool_vectors", description=__doc__.split("\n")[0])
    ap.add_argument("homes", nargs="+", type=Path)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    print(embed(args.homes, args.cache, args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
