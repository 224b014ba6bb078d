"""``recall forget``: remove a selection (``indexer.forgetting.Selection``) from every store
at once, one named step per store:

1. ``archive``, ``index``, ``offsets`` and the tombstones: ``indexer.forgetting.forget_messages``
   (messages and session facts; a rebuild never brings them back);
2. ``memories``: the typed memories drawn from what was forgotten, in each project's
   ``.memory/state.json``, their index documents and the archive's memory log;
3. ``claude_md``: the briefing block of each project whose memories changed.

``plan`` says what ``forget_everywhere`` would remove without touching anything (the
confirmation shown before it runs). Both run on the index writer: the service's when it
runs (op "forget"), else an ``Indexer`` of the caller's own.
"""

from __future__ import annotations

from indexer.archive import Archive
from indexer.forgetting import Selection, forget_messages
from indexer.forgetting import plan as plan_messages
from recall.core import log, paths
from recall.memory import store
from recall.memory.store import Memory, State


def known_projects(archive: Archive, sel: Selection) -> list[str]:
    """Projects whose memories the selection may reach."""
    if sel.project:
        return [sel.project]
    found = set(archive.projects())
    found.update(str(d.get("project") or "") for d in archive.memory_docs().values())
    return sorted(p for p in found if p)


def memories_to_change(state: State, sel: Selection, gone_sessions: set[str]) -> tuple[list[Memory], list[Memory]]:
    """(memories to delete, memories to rewrite) in one project's state: those drawn from a
    forgotten session, holding the forgotten text, dated before ``--before`` (extracted
    ones; what the user added by hand stays), or holding the secret (rewritten)."""
    if sel.whole and sel.project and not sel.sessions:
        return list(state.memories), []
    drop, rewrite = [], []
    needle = sel.match.casefold() if sel.match else None
    for m in state.memories:
        if gone_sessions and set(m.sessions) & gone_sessions:
            drop.append(m)
        elif needle is not None and (needle in m.content.casefold()
                                     or any(needle in t.casefold() for t in m.tags)):
            if sel.before is None or (m.created and m.created < sel.before):
                drop.append(m)
        elif sel.before is not None and needle is None and not sel.sessions and m.origin != "manual" \
                and m.created and m.created < sel.before:
            drop.append(m)
        elif sel.secret is not None and (sel.secret in m.content or any(sel.secret in t for t in m.tags)):
            rewrite.append(m)
    return drop, rewrite


def _gone(sel: Selection, emptied) -> set[str]:
    gone = set(emptied)
    if sel.whole:
        gone |= set(sel.sessions)
    return gone


def plan(sel: Selection) -> dict:
    """What forgetting ``sel`` would remove: sessions, messages, memories (nothing changes)."""
    sel.check()
    archive = Archive(paths.archive_dir())
    out = plan_messages(archive.root, sel)
    gone = _gone(sel, out["emptied"])
    memories = rewritten = 0
    for project in known_projects(archive, sel):
        try:
            state = store.load(project)
        except store.StateError:
            continue
        drop, rew = memories_to_change(state, sel, gone)
        memories += len(drop)
        rewritten += len(rew)
    out["memories"] = memories
    out["memories_rewritten"] = rewritten
    return out


def remove_from_memories(ix, sel: Selection, gone: set[str], projects: list[str]) -> tuple[int, int, list[str]]:
    """Step ``memories``: (deleted, rewritten, projects changed)."""
    from indexer.forgetting import SECRET_MARK
    from recall.memory import index

    deleted = rewritten = 0
    changed_projects: list[str] = []
    upserts: list[dict] = []
    deletes: list[str] = []
    for project in projects:
        if not store.state_path(project).exists():
            continue
        try:
            with store.transaction(project) as state:
                drop, rew = memories_to_change(state, sel, gone)
                for m in drop:
                    store.forget(state, m.id)
                for m in rew:
                    m.set_content(m.content.replace(sel.secret, SECRET_MARK))
                    m.tags = [t.replace(sel.secret, SECRET_MARK) for t in m.tags]
                    state.touch(m)
        except store.StateError as exc:
            log.get("cli").warning("memories of %s not changed by forget: %s", project, exc)
            continue
        if drop or rew:
            deleted += len(drop)
            rewritten += len(rew)
            changed_projects.append(project)
            up, de = index.changes(project, state.changed, state.removed, state)
            upserts += up
            deletes += de
    if upserts:
        ix.upsert_memory_docs(upserts)
    if deletes:
        ix.delete_keys(deletes)
    if upserts or deletes:
        # the log keeps every version of a memory document: only the current ones stay
        ix.archive.compact_memory()
        ix.commit()
    return deleted, rewritten, changed_projects


def refresh_briefings(projects: list[str]) -> int:
    """Step ``claude_md``: rewrite the briefing block of each changed project."""
    from recall.memory import briefing

    n = 0
    for project in projects:
        try:
            if briefing.write_briefing(project) is not None:
                n += 1
        except Exception as exc:  # noqa: BLE001 - a read-only project must not undo the rest
            log.get("cli").warning("briefing of %s not refreshed after forget: %s", project, exc)
    return n


def forget_everywhere(ix, sel: Selection) -> dict:
    """Remove ``sel`` from every store at once (see the module docstring); what was removed."""
    sel.check()
    projects = known_projects(ix.archive, sel)  # before the archive loses them
    out = forget_messages(ix, sel)              # archive, index, offsets state, tombstones
    gone = _gone(sel, out["emptied"])
    deleted, rewritten, changed = remove_from_memories(ix, sel, gone, projects)
    out["memories"] = deleted
    out["memories_rewritten"] = rewritten
    out["briefings"] = refresh_briefings(changed)
    return out


def drop_sessions(ix, session_ids: list[str]) -> None:
    """What memories drew from sessions a `recall: off` prompt switched off (the indexer has
    already removed their messages): registered as ``Indexer.on_drop``."""
    sel = Selection(sessions=list(session_ids))
    projects = known_projects(ix.archive, sel)
    _, _, changed = remove_from_memories(ix, sel, set(session_ids), projects)
    refresh_briefings(changed)


def attach(ix) -> None:
    """Hook ``drop_sessions`` into an Indexer (the service's, `recall index`'s)."""
    ix.on_drop.append(lambda sids: drop_sessions(ix, sids))
