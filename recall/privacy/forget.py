"""``recall forget``: remove a selection (``indexer.forgetting.Selection``) from every store
at once, one named step per store:

1. ``archive``, ``index``, ``offsets`` and the tombstones: ``indexer.forgetting.forget_messages``
   (messages and session facts; a rebuild never brings them back);
2. ``memories``: the typed memories drawn from what was forgotten, in each project's
   ``.memory/state.json``, their index documents and the archive's memory log;
3. ``claude_md``: the briefing block of each project whose memories changed;
4. ``summaries``: the session summary of every session the selection touched (a summary
   may repeat any of its messages), its index document and any pending retry, and the
   record of which rules fired in a session that is gone whole;
5. ``injection_log``: the prompt hook's records (``recall log``) of the prompts of those
   sessions and of every injection drawn from them, or holding the matched text; a
   forgotten secret is cut out of the injected text kept there;
6. ``team`` (once everything else is forgotten, with a team joined): teammates' items pulled
   here that the selection covers, and the withdrawal from the team server of what this
   machine shared and no longer has (``recall.team.forget``), so a teammate's copy goes too.

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
    from recall.memory import summaries

    out["summaries"] = len(summaries.get_many(sorted(set(out.get("sessions") or []) | gone)))
    from recall.team import forget as team_forget

    out["team_items"] = team_forget.plan(sel)
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
    write_memory_docs(ix, upserts, deletes)
    return deleted, rewritten, changed_projects


def write_memory_docs(ix, upserts: list[dict], deletes: list[str]) -> None:
    """The changed memories' index documents, written with ``ix`` and committed. The archive's
    memory log keeps every version of a document: it is compacted to the current ones, so a
    rebuild cannot bring back what was forgotten or re-redacted."""
    if upserts:
        ix.upsert_memory_docs(upserts)
    if deletes:
        ix.delete_keys(deletes)
    if upserts or deletes:
        ix.archive.compact_memory()
        ix.commit()


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
    out["summaries"] = remove_summaries(ix, out.get("sessions") or [], gone)
    touched = gone if sel.secret else set(out.get("sessions") or []) | gone  # a secret is only cut out
    out["injection_log"] = clean_injection_log(sel, touched)
    out.update(forget_team(ix, sel))
    return out


def forget_team(ix, sel: Selection) -> dict:
    """Step ``team``: the one point where a completed forget reaches the team (see
    ``recall.team.forget``); {} when this machine never joined one."""
    from recall.team import forget as team_forget

    try:
        return team_forget.step(ix, sel)
    except Exception as exc:  # noqa: BLE001 - what is forgotten here stays forgotten; the next sync withdraws
        log.get("cli").warning("team step of forget: %s", exc)
        return {"team": f"pending: {exc}"}


def clean_injection_log(sel: Selection, sessions: set[str]) -> int:
    """Step ``injection_log``: drop the records of prompts in ``sessions`` or drawn from them,
    or holding the matched text; cut a secret out of the rest. Records changed or dropped."""
    from indexer.forgetting import SECRET_MARK
    from recall.prompt import injections

    needle = sel.match.lower() if sel.match else None

    def keep(rec: dict):
        hit_sessions = {str(h.get("session")) for h in rec.get("hits") or [] if isinstance(h, dict)}
        if rec.get("session") in sessions or hit_sessions & sessions:
            return None
        if sel.before is not None and isinstance(rec.get("t"), (int, float)) and rec["t"] < sel.before \
                and not sel.sessions and not sel.project:
            return None
        text = str(rec.get("text") or "")
        if needle and needle in text.lower():
            return None
        if sel.secret and sel.secret in text:
            rec["text"] = text.replace(sel.secret, SECRET_MARK)
        return rec

    try:
        return injections.rewrite(keep)
    except OSError as exc:
        log.get("cli").warning("the injection log was not cleaned by forget: %s", exc)
        return 0


def remove_summaries(ix, touched, gone: set[str]) -> int:
    """Step ``summaries``: drop the summaries of the ``touched`` sessions, and the rule-firing
    records of the sessions ``gone`` whole; how many summaries went."""
    from recall.memory import summaries
    from recall.rules.inject import forget_sessions

    removed = summaries.remove(sorted(set(touched) | set(gone)), ix)
    forget_sessions(gone)
    return removed


def drop_sessions(ix, session_ids: list[str]) -> None:
    """What memories drew from sessions a `recall: off` prompt switched off (the indexer has
    already removed their messages): registered as ``Indexer.on_drop``."""
    sel = Selection(sessions=list(session_ids))
    projects = known_projects(ix.archive, sel)
    _, _, changed = remove_from_memories(ix, sel, set(session_ids), projects)
    refresh_briefings(changed)
    remove_summaries(ix, session_ids, set(session_ids))
    clean_injection_log(sel, set(session_ids))


def attach(ix) -> None:
    """Hook ``drop_sessions`` into an Indexer (the service's, `recall index`'s)."""
    ix.on_drop.append(lambda sids: drop_sessions(ix, sids))
