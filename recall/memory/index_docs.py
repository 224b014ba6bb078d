"""Memories in the Tantivy index (doctype "memory", key "mem:<id>"), so one search finds
memories and transcripts.

Active and archived memories are indexed; superseded, forgotten and pruned ones are deleted.
Delivery, in order of preference:
  1. the running service's op ``memory_docs`` (it owns the index writer);
  2. our own ``indexer.ingest.Indexer`` when no service runs;
  3. when another process holds the writer (``IndexBusy``): the change is appended to
     ``$RECALL_HOME/memory/index-pending.jsonl``, delivered by the next sync, or applied by
     whoever holds the writer via ``apply_pending(indexer)``.
Pending changes are compacted per id (the last change wins) before delivery.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from recall.core import log, paths
from recall.core.jsonio import read_jsonl
from recall.memory import memory_home, store

_service_writer = None  # inside the service: see use_service_writer


def pending_path() -> Path:
    return memory_home() / "index-pending.jsonl"


def doc(m: store.Memory, project: str) -> dict:
    """The index document of a memory, in the form ``Indexer.upsert_memory_docs`` takes."""
    return {
        "id": m.id,
        "project": project,
        "type": m.type,
        "content": m.content,
        "tags": list(m.tags),
        "updated": float(m.updated or m.created or time.time()),
        "session_ids": list(m.sessions),
    }


def changes(project: str, changed, removed, state: store.State | None = None) -> tuple[list[dict], list[str]]:
    """(docs to upsert, keys to delete) for the ids a state change touched."""
    state = state if state is not None else store.load(project)
    upserts, deletes = [], [f"mem:{i}" for i in sorted(set(removed))]
    for mid in sorted(set(changed) - set(removed)):
        m = state.by_id(mid)
        if m is None or m.status == "superseded":
            deletes.append(f"mem:{mid}")
        else:
            upserts.append(doc(m, project))
    return upserts, deletes


def _compact(entries: list[dict]) -> tuple[list[dict], list[str]]:
    final: dict[str, dict | None] = {}
    for e in entries:
        for d in e.get("upsert") or []:
            if isinstance(d, dict) and d.get("id"):
                final["mem:" + str(d["id"])] = d
        for k in e.get("delete") or []:
            final[str(k)] = None
    return [d for d in final.values() if d is not None], [k for k, d in final.items() if d is None]


def _take_pending() -> list[dict]:
    path = pending_path()
    if not path.exists():
        return []
    taken = path.with_name(f".{path.name}.{os.getpid()}.{time.time_ns()}")
    try:
        os.replace(path, taken)
    except FileNotFoundError:
        return []
    try:
        entries = list(read_jsonl(taken))
    finally:
        try:
            taken.unlink()
        except OSError:
            pass
    return entries


def _queue(upserts: list[dict], deletes: list[str]) -> None:
    if not upserts and not deletes:
        return
    paths.ensure_dir(memory_home())
    line = json.dumps({"upsert": upserts, "delete": deletes}, ensure_ascii=False) + "\n"
    fd = os.open(pending_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def apply_pending(indexer) -> int:
    """Apply queued memory-document changes with an open ``Indexer`` (the caller commits).
    For the process that holds the index writer; returns how many changes it applied."""
    upserts, deletes = _compact(_take_pending())
    if upserts:
        indexer.upsert_memory_docs(upserts)
    if deletes:
        indexer.delete_keys(deletes)
    return len(upserts) + len(deletes)


def deliver(upserts: list[dict], deletes: list[str]) -> str:
    """Put these changes (and any pending ones) into the index. Returns how: "service",
    "direct", "pending" or "" (nothing to do). Never raises for a busy or absent index."""
    upserts, deletes = _compact([*_take_pending(), {"upsert": upserts, "delete": deletes}])
    if not upserts and not deletes:
        return ""
    logger = log.get("memory")
    run = _service_writer() if _service_writer is not None else None
    if run is not None:  # inside the service: its writer thread owns the index
        try:
            run(lambda ix: apply_memory_docs(ix, upserts, deletes))
            return "service"
        except Exception as exc:  # noqa: BLE001 - stopping or busy: keep the change for later
            logger.warning("memory documents queued, the service could not take them: %s", exc)
            _queue(upserts, deletes)
            return "pending"
    from recall.core import service_client as client

    try:
        client.call("memory_docs", {"upsert": upserts, "delete": deletes}, timeout=15.0)
        return "service"
    except client.RemoteError as exc:
        logger.warning("the service refused memory documents (%s); writing them directly", exc)
    except client.Unavailable:
        pass
    from recall.core.errors import IndexBusy

    try:
        from indexer.ingest import Indexer

        with Indexer(heap=20_000_000, threads=1) as ix:
            if upserts:
                ix.upsert_memory_docs(upserts)
            if deletes:
                ix.delete_keys(deletes)
        return "direct"
    except IndexBusy:
        _queue(upserts, deletes)
        return "pending"
    except Exception as exc:  # noqa: BLE001 - the index must never lose the memory change
        logger.warning("memory documents queued, the index could not be written: %s", exc)
        _queue(upserts, deletes)
        return "pending"


def use_service_writer(get_runner) -> None:
    """Inside the service (``recall.service.ops.memory`` hands it in): ``get_runner()``
    returns ``run``, where ``run(fn)`` runs ``fn(indexer)`` on the writer thread, or None
    once the service has stopped; ``deliver`` writes through it while there is one."""
    global _service_writer
    _service_writer = get_runner


def normalize_memory_keys(items) -> list[str]:
    keys = []
    for k in items or []:
        k = str(k)
        if k:
            keys.append(k if k.startswith("mem:") else "mem:" + k)
    return keys


def apply_memory_docs(ix, upsert: list, delete: list) -> dict:
    """Upsert then delete memory documents and commit (the service's "memory_docs" op, and
    ``deliver`` inside the service)."""
    from recall.core.errors import UsageError

    if not isinstance(upsert, list) or not isinstance(delete, list):
        raise UsageError("memory_docs takes {'upsert': [memory dicts], 'delete': [ids or 'mem:' keys]}.")
    n_up = ix.upsert_memory_docs(upsert) if upsert else 0
    n_del = ix.delete_keys(normalize_memory_keys(delete)) if delete else 0
    ix.commit()
    return {"upserted": n_up, "deleted": n_del}


def sync(project: str, changed, removed, state: store.State | None = None) -> str:
    """Bring the index in line with a state change (ids from ``state.changed/removed``)."""
    if not changed and not removed and not pending_path().exists():
        return ""
    upserts, deletes = changes(project, changed, removed, state)
    return deliver(upserts, deletes)
