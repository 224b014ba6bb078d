"""Consolidation: the model reviews each type's memories and answers keep / merge / drop.

When: at SessionEnd (if anything was extracted since the last consolidation), after every
``EVERY_EXTRACTIONS`` extractions, when more than ``MAX_ACTIVE`` memories are active, and on
``recall consolidate``. One call per type with at least ``MIN_PER_TYPE`` active memories
that changed since the last consolidation (every such type when forced), so a project that
stays above ``MAX_ACTIVE`` costs at most one call per changed type. The answer is
validated, retried once when malformed, and applied atomically under the state lock against
the state as it is then (ids that changed meanwhile are left alone).

Lineage: a merge writes a new memory with ``mergedFrom`` = the merged ids (confidence the
highest, accessCount the sum, sessions the union, ``updated`` the latest of them so decay is
not reset); the merged ones become ``superseded`` with ``supersededBy``. Dropped memories
are ``archived`` (still searchable). Afterwards fully faded memories are archived and
superseded / archived ones older than 14 days are pruned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from recall.core import config
from recall.llm import backend
from recall.llm import messages_api as llm
from recall.core import log
from recall.memory import TYPES, store

MIN_PER_TYPE = 5
EVERY_EXTRACTIONS = 10
MAX_ACTIVE = 80
MAX_TOKENS = 4096

SYSTEM = """You curate the long-term memory of one software project for Claude Code. You get all \
active memories of one type. Make the set smaller and sharper without losing information:
- merge: memories that say the same thing or belong together become ONE memory (give its full \
content: one or two specific sentences, keeping every fact worth keeping, and its tags);
- drop: memories that are obsolete, contradicted by a newer memory, trivial, or no longer useful;
- keep: everything else, unchanged.
Every id goes in exactly one place. When in doubt, keep. Prefer newer memories over older ones \
when they conflict.

Answer with JSON only, no prose:
{"keep": ["id", ...], "merge": [{"ids": ["id", "id"], "content": "...", "tags": ["..."]}], "drop": ["id", ...]}"""


@dataclass
class Result:
    project: str
    types: list[str] = field(default_factory=list)   # types reviewed by the model
    calls: int = 0
    merged: int = 0        # new memories written by merges
    merged_away: int = 0   # memories folded into them
    dropped: int = 0
    archived_faded: int = 0
    pruned: int = 0
    stopped: str = ""
    skipped: list[str] = field(default_factory=list)  # types whose answer was unusable
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    def as_dict(self) -> dict:
        return {"project": self.project, "types": self.types, "calls": self.calls, "merged": self.merged,
                "merged_away": self.merged_away, "dropped": self.dropped,
                "archived_faded": self.archived_faded, "pruned": self.pruned, "stopped": self.stopped,
                "skipped": self.skipped}


def due(state: store.State, event: str = "") -> bool:
    active = len(state.active())
    if active > MAX_ACTIVE or state.extractions >= EVERY_EXTRACTIONS:
        return True
    return event == "session-end" and state.extractions > 0


def _changed_since(mems: list[store.Memory], since: float | None) -> bool:
    if since is None:
        return True
    return any(max(m.created, m.updated) > since for m in mems)


def build_prompt(mtype: str, mems: list[store.Memory], now: float) -> str:
    lines = [f"TYPE: {mtype}", f"{len(mems)} ACTIVE MEMORIES (id | last updated | times used | content):"]
    for m in sorted(mems, key=lambda m: m.updated):
        lines.append(f"{m.id} | {store.iso(m.updated)[:10]} | {m.access_count} | {m.content}")
    lines += ["", "Answer with the JSON object only."]
    return "\n".join(lines)


def ask_model(mtype: str, mems: list[store.Memory], now: float, cfg: dict):
    from recall.memory.model import BadAnswer, parse_consolidation

    settings = cfg.get("memory") or {}
    timeout = float(settings.get("timeout_seconds") or 60.0)
    cap = settings.get("daily_call_cap")
    prompt = build_prompt(mtype, mems, now)
    problem = None
    for attempt in (1, 2):
        reply = backend.complete(SYSTEM, prompt, purpose="consolidation", max_tokens=MAX_TOKENS, timeout=timeout,
                             cap=int(cap) if cap is not None else None)
        try:
            return parse_consolidation(reply)
        except BadAnswer as exc:
            problem = exc
            log.get("memory").warning("consolidation answer for %s malformed (attempt %d): %s",
                                      mtype, attempt, exc)
    raise BadAnswer(str(problem))


def apply(state: store.State, mtype: str, answer, now: float, result: Result) -> None:
    """Apply one type's answer to ``state`` (already locked and fresh)."""
    live = {m.id: m for m in state.active(mtype)}
    used: set[str] = set()
    for merge in answer.merge:
        ids = [i for i in dict.fromkeys(merge.ids) if i in live and i not in used]
        content = store.clean_content(merge.content)
        if len(ids) < 2 or not content:
            continue
        from indexer.redact import redact

        sources = [live[i] for i in ids]
        new = store.Memory(
            id=store.new_id({m.id for m in state.memories}), type=mtype, content=store.clean_content(redact(content)),
            tags=store.clean_tags(merge.tags) or store._merge_list(*(m.tags for m in sources), limit=store.MAX_TAGS),
            created=min(m.created for m in sources), updated=max(m.updated for m in sources),
            confidence=max(m.confidence for m in sources), access_count=sum(m.access_count for m in sources),
            merged_from=ids, sessions=store._merge_list(*(m.sessions for m in sources), limit=store.MAX_SESSIONS),
            origin="consolidation",
        )
        state.memories.append(new)
        state.touch(new)
        for m in sources:
            store.retire(state, m, "superseded", now, by=new.id)
        used.update(ids)
        result.merged += 1
        result.merged_away += len(ids)
    for mid in dict.fromkeys(answer.drop):
        if mid in live and mid not in used:
            store.retire(state, live[mid], "archived", now)
            used.add(mid)
            result.dropped += 1


def consolidate(project: str, *, force: bool = False, event: str = "", cfg: dict | None = None,
                now: float | None = None) -> Result:
    """Review the project's memories with the model (see module docstring)."""
    from recall.memory.model import BadAnswer

    cfg = cfg or config.load()
    now_fn = (lambda: now) if now is not None else time.time
    logger = log.get("memory")
    result = Result(project=project)
    state = store.load(project)
    todo = []
    for t in TYPES:
        mems = state.active(t)
        if len(mems) >= MIN_PER_TYPE and (force or _changed_since(mems, state.last_consolidation)):
            todo.append(t)
    from recall.llm import backend

    if todo and not backend.available(cfg):
        result.stopped = "no key"
        todo = []
    for t in todo:
        mems = store.load(project).active(t)
        if len(mems) < MIN_PER_TYPE:
            continue
        try:
            answer = ask_model(t, mems, now_fn(), cfg)
        except BadAnswer as exc:
            logger.warning("consolidation of %s in %s skipped: the answer was malformed twice (%s)", t, project, exc)
            result.skipped.append(t)
            continue
        except llm.NoKey:
            result.stopped = "no key"
            break
        except llm.CapReached as exc:
            logger.warning("consolidation stopped: %s", exc)
            result.stopped = "daily cap reached"
            break
        except llm.ModelError as exc:
            logger.warning("consolidation of %s in %s stopped: %s", t, project, exc)
            result.stopped = f"model error: {exc}"
            break
        result.calls += 1
        result.types.append(t)
        with store.transaction(project) as st:
            apply(st, t, answer, now_fn(), result)
            result.changed |= st.changed
            result.removed |= st.removed
    with store.transaction(project) as st:
        t_now = now_fn()
        result.archived_faded = len(store.archive_faded(st, t_now))
        result.pruned = len(store.prune(st, t_now))
        if not result.stopped and st.memories:
            st.extractions = 0
            st.last_consolidation = t_now
            st.dirty = True
        result.changed |= st.changed
        result.removed |= st.removed
    result.changed -= result.removed
    logger.info("consolidated %s: %s", project, result.as_dict())
    return result
