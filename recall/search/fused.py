"""Words and meaning in one ranking, where people search: ``recall --raw`` and MCP
``memory_search`` with the service running.

A paraphrase ("what's our convention for money amounts?") shares no distinctive word with the
session that answers it; the lexical ranking alone cannot find it from a shell. The service
holds the semantic channel's vectors (``recall.search.semantic``): its nearest past sessions are
fused with the lexical ranking by reciprocal rank (``fuse``), one entry per past session (or
per memory), and each hit says which channel found it (``Hit.channel``: ``lexical``,
``semantic`` or ``both``; ``--json`` shows it). Without the service, or with ``hook.semantic``
off, the lexical ranking alone, as before.

The semantic side keeps every scope the lexical search was given: the project (else the
caller's folder's project, the one a shell or a Claude Code session stands in), the current
session left out, ``since`` / ``until``, the agent, and the document types (only messages and
memories have vectors). Single messages (``--messages``) are not fused: they are the engine's.
"""

from __future__ import annotations

import os

RRF_K = 10  # reciprocal rank fusion's constant: small, so that first and fifth still differ
SEMANTIC_FLOOR = 0.3  # a semantic pick below this cosine is no evidence (hook.semantic_min_similarity)
SEMANTIC_SESSIONS = 10  # nearest past sessions the semantic side brings


def _slot(hit) -> str:
    """What one entry of the fused ranking stands for: a memory, or a past session."""
    if getattr(hit, "kind", "message") in ("memory", "team"):
        return f"mem:{hit.uuid}"
    return f"s:{hit.session_id}"


def fuse(lexical: list, semantic: list, limit: int) -> list:
    """One ranking of ``lexical`` (best first, one hit per session or memory) and ``semantic``
    (best first, each with its ``similarity``) by reciprocal rank; each hit's ``channel`` set. A
    session both found shows its lexical hit (its snippet has the words in bold), with the
    semantic hit's similarity."""
    entries: dict[str, list] = {}  # slot -> [score, hit, channels]
    for rank, h in enumerate(lexical):
        slot = _slot(h)
        if slot in entries:
            continue
        entries[slot] = [1.0 / (RRF_K + rank + 1), h, {"lexical"}]
    for rank, h in enumerate(s for s in semantic if (s.similarity or 0.0) >= SEMANTIC_FLOOR):
        slot = _slot(h)
        entry = entries.get(slot)
        if entry is None:
            if not h.snippet:
                from recall.core.text import clip

                h.snippet = clip(" ".join((h.text or "").split()), 240)
            entries[slot] = [1.0 / (RRF_K + rank + 1), h, {"semantic"}]
        elif "semantic" not in entry[2]:
            entry[0] += 1.0 / (RRF_K + rank + 1)
            entry[2].add("semantic")
            entry[1].similarity = h.similarity
    order = sorted(entries.values(), key=lambda e: -e[0])
    out = []
    for _score, hit, channels in order[:limit]:
        hit.channel = "both" if len(channels) == 2 else next(iter(channels))
        out.append(hit)
    return out


def semantic_side(searcher, text: str, kw: dict, cwd: str | None) -> list | None:
    """The semantic channel's nearest past sessions for a search with ``kw`` (``Searcher.search``'s
    keyword arguments), in the scope those give; None where it does not apply: no vectors are
    attached (only the service has them), ``hook.semantic`` is off, the search is of single
    messages, its types have no vectors, or no project is known."""
    from recall.search import semantic

    store = semantic.attached()
    if store is None or kw.get("messages"):
        return None
    from recall.core import config
    from recall.core.settings import HookSettings

    if not semantic.enabled(HookSettings.from_config(config.load())):
        return None
    doctypes = kw.get("doctypes")
    if doctypes is not None and not {"message", "memory"} & set(doctypes):
        return None
    project = kw.get("project")
    if not project and cwd:
        from indexer.project import canonical_project

        project = canonical_project(os.path.abspath(cwd))
    if not project:
        return None
    hits = semantic.related(
        searcher,
        store,
        text,
        project,
        exclude_session=kw.get("exclude_session"),
        sessions=SEMANTIC_SESSIONS,
        floor=SEMANTIC_FLOOR,
    )
    return [h for h in hits if _in_scope(h, kw)]


def _in_scope(hit, kw: dict) -> bool:
    from datetime import datetime

    doctypes = kw.get("doctypes")
    if doctypes is not None and hit.kind not in doctypes:
        return False
    agent = kw.get("agent")
    if agent and hit.kind == "message" and (hit.agent or "claude-code") != agent:
        return False
    if kw.get("since") is not None or kw.get("until") is not None:
        try:
            ts = datetime.fromisoformat(hit.timestamp.replace("Z", "+00:00")).timestamp()
        except (ValueError, AttributeError):
            return False
        if kw.get("since") is not None and ts < float(kw["since"]):
            return False
        if kw.get("until") is not None and ts > float(kw["until"]):
            return False
    return True


def fused_search(searcher, text: str, kw: dict, cwd: str | None) -> list:
    """``searcher.search(text, **kw)`` fused with the semantic channel where it applies
    (``semantic_side``); every hit's ``channel`` set when the semantic side ran."""
    lexical = searcher.search(text, **kw)
    try:
        semantic = semantic_side(searcher, text, kw, cwd)
    except Exception as exc:  # noqa: BLE001 - words alone, never a failed search
        from recall.core import log

        log.get("search").warning("the semantic channel was left out of a search: %s", str(exc)[:200])
        return lexical
    if semantic is None:
        return lexical
    return fuse(lexical, semantic, int(kw.get("limit") or 10))
