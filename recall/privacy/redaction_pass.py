"""The re-redaction pass over every store: history stored under older redaction rules goes
through the current ``redact()`` once (see ``indexer.reredact_archive`` for the record, the stages and
why an interrupted pass loses and duplicates nothing).

``step(ix, budget)`` advances it by about ``budget`` seconds (the service calls it between its
other work, so it keeps answering and indexing); ``run(ix)`` runs it to the end (``recall
index``). The stages: ``messages`` (archive, index, the session facts they fed) and ``facts``
(state.db, the archive's memory log) are the ingest side's; ``memories`` is this floor's: each
project's typed memories in ``.memory/state.json``, their index documents, the CLAUDE.md
block of each project whose memories changed, the session summaries' files, the injection
log's texts and the synthesis cache (emptied); then ``purge``: the replaced documents' bytes
leave the index's segments (``indexer.purge``) and state.db is vacuumed.
"""

from __future__ import annotations

from indexer import reredact_archive as ingest_side
from indexer import reredact_stages
from indexer.forgetting import Selection
from indexer.redact import redact, redact_stated
from recall.core import log
from recall.memory import store
from recall.privacy.forget import known_projects, refresh_briefings, write_memory_docs


def redact_memories(ix) -> tuple[int, list[str]]:
    """Stage ``memories``: (memories rewritten, projects changed)."""
    from recall.memory import index_docs

    rewritten = 0
    changed_projects: list[str] = []
    upserts: list[dict] = []
    deletes: list[str] = []
    for project in known_projects(ix.archive, Selection()):
        if not store.state_path(project).exists():
            continue
        try:
            with store.transaction(project) as state:
                n = 0
                for m in state.memories:
                    content = redact_stated(m.content)  # as a memory is stored (store.add_memory)
                    tags = [redact_stated(t) for t in m.tags]
                    if content is m.content and all(a is b for a, b in zip(tags, m.tags)):
                        continue
                    m.set_content(content)
                    m.tags = tags
                    state.touch(m)
                    n += 1
        except store.StateError as exc:
            log.get("service").warning("memories of %s not re-redacted: %s", project, exc)
            continue
        if n:
            rewritten += n
            changed_projects.append(project)
            up, de = index_docs.changes(project, state.changed, state.removed, state)
            upserts += up
            deletes += de
    write_memory_docs(ix, upserts, deletes)
    return rewritten, changed_projects


def redact_summaries() -> int:
    """The session summaries' files (``$RECALL_HOME/summaries``; their index documents are in
    the memory log, redacted by the ``facts`` stage): how many changed."""
    import json

    from recall.core import paths
    from recall.memory import summaries

    n = 0
    folder = summaries.home()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        rec = summaries.read_record(path)
        if not rec or not isinstance(rec.get("summary"), str):
            continue
        text = redact(rec["summary"])
        if text is rec["summary"]:
            continue
        paths.atomic_write(path, json.dumps(dict(rec, summary=text), ensure_ascii=False))
        n += 1
    return n


def redact_logs() -> int:
    """The injection log's texts (``recall log``) through the current rules, and the synthesis
    cache emptied (its entries were drawn from what the older rules let through); how many
    records and entries changed."""
    from recall.llm.synthesis import clear_cache
    from recall.prompt import injections

    def keep(rec: dict):
        text = rec.get("text")
        if isinstance(text, str) and text:
            rec["text"] = redact(text)
        return rec

    return injections.rewrite_or_warn(keep, "re-redacted", "service") + clear_cache()


def step(ix, budget: float | None = ingest_side.STEP_SECONDS) -> str:
    """Advance the pass: "idle" (stored history is current), "running" (more to do) or "done"
    (finished by this call)."""
    root = ix.archive.root
    st = ingest_side.begin(root)
    if st is None:
        return "idle"
    p = st["pass"]
    if p["stage"] == "messages" and not reredact_stages.messages_step(ix, st, budget):
        return "running"
    if p["stage"] == "facts":
        reredact_stages.facts_step(ix, st)
    if p["stage"] == "memories":
        n, projects = redact_memories(ix)
        p["memories"] = int(p.get("memories") or 0) + n + redact_summaries()
        refresh_briefings(projects)
        p["logs"] = redact_logs()
        p["stage"] = "purge"
        ingest_side.save(root, st)
    from indexer.purge import purge

    p["purged"] = purge(ix).get("documents", 0)  # the replaced documents' bytes leave the index
    done = ingest_side.finish(root, st)
    log.get("service").info(
        "re-redaction done: %d of %d archived messages changed, %d sessions, %d memories (rules %s -> %s) in %.1f s",
        done["rewritten"],
        done["messages"],
        done.get("sessions") or 0,
        done.get("memories") or 0,
        done["from"],
        done["to"],
        done["seconds"],
    )
    return "done"


def run(ix) -> dict | None:
    """Run the pass to the end; its figures, or None when stored history was current."""
    if step(ix, None) == "idle":
        return None
    return ingest_side.read_state(ix.archive.root).get("last_pass")
