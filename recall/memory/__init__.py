"""Typed project memories: extracted from sessions by a small model, deduplicated, decayed,
consolidated, and briefed to Claude at every session start (see docs/memory.md).

This package module is import-light on purpose (stdlib + recall.core.paths): the hooks, the
prompt hook and the MCP tools import it to note memory hits.

Layout of the package:
  model        what the model must answer, validated strictly (pydantic; the worker only)
  extract      a session's new lines -> memories: transcript cursor, compact rendering,
               chunking, the extraction call
  consolidate  per-type keep / merge / drop by the model, pruning, the re-check of stale memories
  store        ``<project>/.memory/state.json``: memories, lock, dedup, decay, lineage
  briefing     the CLAUDE.md block, CLAUDE.local.md, or SessionStart context
  index_docs   memory documents in the Tantivy index (service op, own writer, or pending file)
  remember     ``/remember`` and ``recall remember``: a memory saved now, its type guessed
  queue        the capture queue: triggers, failed work kept and retried
  worker       the one worker that drains the queue (detached, or in the service)
  status       what ``recall status`` and ``recall doctor`` say of memory
  summarize    a session's summary, by the model
  summaries    session summaries: storage, pending work, their index documents
  sessions     ``recall sessions``/``show``: a session's facts and transcript
  backfill     memories and summaries of past sessions (``recall memories --backfill``)
  stale        the files a memory names, fingerprinted, and whether they changed since
The service's ops of this feature are ``recall.service.ops.memory``.
"""

from __future__ import annotations

import os
from pathlib import Path

from recall.core import paths

TYPES = ("architecture", "decision", "pattern", "gotcha", "progress", "context")


def memory_home() -> Path:
    """recall's own memory bookkeeping (queue, cursors, access log), under RECALL_HOME."""
    return paths.recall_home() / "memory"


def access_log_path() -> Path:
    return memory_home() / "access.log"


def note_access(items) -> int:
    """Record that memories were shown to someone (a search hit, the prompt hook, an MCP tool).

    ``items`` are ``recall.search.hit.Hit``-like objects (``kind == "memory"``, ``uuid`` = memory
    id, ``project``), dicts with ``id``/``project`` (and ``kind`` "memory" when present), or
    ``(project, id)`` pairs. One append to ``$RECALL_HOME/memory/access.log`` (no lock, no
    state.json rewrite); the worker folds the log into ``accessCount`` in batches. Returns
    how many were noted; never raises.
    """
    lines = []
    for it in items or ():
        try:
            if isinstance(it, tuple):
                project, mid = it
            elif isinstance(it, dict):
                if it.get("kind", "memory") != "memory":
                    continue
                project, mid = it.get("project"), it.get("id")
            else:
                if getattr(it, "kind", "memory") != "memory":
                    continue
                project, mid = getattr(it, "project", ""), getattr(it, "uuid", "") or getattr(it, "id", "")
        except (TypeError, ValueError):
            continue
        if project and mid and "\t" not in f"{project}{mid}" and "\n" not in f"{project}{mid}":
            lines.append(f"{project}\t{mid}\n")
    if not lines:
        return 0
    try:
        paths.ensure_dir(memory_home())
        fd = os.open(access_log_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, "".join(lines).encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        return 0
    return len(lines)
