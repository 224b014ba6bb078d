"""``recall forget``: remove a selection (``indexer.forgetting.Selection``) from every store
at once, one named step per store, each recorded as done in the forget's *intent*
(``archive/forgetting.json``, written before anything is removed):

1. ``tombstones``: what is forgotten is never indexed or archived again (a re-read transcript,
   a rebuild), from the moment the intent exists;
2. ``archive``, ``index``, ``offsets``: ``indexer.forgetting`` (messages and session facts);
3. ``memories``: the typed memories drawn from what was forgotten, in each project's
   ``.memory/state.json``, their index documents, the archive's memory log and the memory
   documents queued for the index;
4. ``claude_md``: the briefing block of each project whose memories changed;
5. ``summaries``: the session summary of every session the selection touched (a summary
   may repeat any of its messages), its index document and any pending retry, and the
   record of which rules fired in a session that is gone whole;
6. ``injection_log``: the prompt hook's records (``recall log``) of the prompts of those
   sessions and of every injection drawn from them, or holding the matched text; a
   forgotten secret is cut out of the injected text kept there;
7. ``synthesis_cache``: the cached syntheses and answers (``cache/synthesis``), emptied;
8. ``team`` (with a team joined): teammates' items pulled here that the selection covers, and
   the withdrawal from the team server of what this machine shared and no longer has
   (``recall.team.forget``), so a teammate's copy goes too;
9. ``purge``: the bytes of deleted documents leave the index's segment files, and state.db
   is vacuumed with its WAL emptied (``indexer.purge``).

Every step is idempotent, so a forget interrupted anywhere (Ctrl-C, ``kill -9``, an OOM kill,
a restart of the service) is finished by ``resume``: run by the next ``recall forget``,
``recall index`` and the service as it starts. ``forget_completed`` is the one point where
a forget is over (logged there; the team is told by step 8).

``plan`` says what ``forget_everywhere`` would remove without touching anything (the
confirmation shown before it runs). Both run on the index writer: the service's when it
runs (op "forget"), else an ``Indexer`` of the caller's own.
"""

from __future__ import annotations

from indexer import forgetting
from indexer.archive import Archive
from indexer.forgetting import Selection
from indexer.forgetting import plan as plan_messages
from recall.core import log, paths
from recall.memory import store
from recall.memory.store import Memory, State

STEPS = (*forgetting.INGEST_STEPS, "memories", "claude_md", "summaries", "injection_log", "synthesis_cache", "purge")


def known_projects(archive: Archive, sel: Selection) -> list[str]:
    """Projects whose memories the selection may reach."""
    return forgetting.projects_reached(archive, sel)


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
        elif needle is not None and (needle in m.content.casefold() or any(needle in t.casefold() for t in m.tags)):
            if sel.before is None or (m.created and m.created < sel.before):
                drop.append(m)
        elif (
            sel.before is not None
            and needle is None
            and not sel.sessions
            and m.origin != "manual"
            and m.created
            and m.created < sel.before
        ):
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

    held = summaries.get_many(sorted(set(out.get("sessions") or []) | gone))
    if sel.secret:  # only those holding the secret change (it is cut out); a session gone whole loses its own
        out["summaries"] = sum(1 for sid, rec in held.items() if sid in gone or sel.secret in rec["summary"])
    else:
        out["summaries"] = len(held)
    from recall.team import forget as team_forget

    out["team_items"] = team_forget.plan(sel)
    return out


def remove_from_memories(ix, sel: Selection, gone: set[str], projects: list[str]) -> tuple[int, int, list[str], int]:
    """Step ``memories``: (deleted, rewritten, projects changed, their CLAUDE.md blocks rewritten). Within each project's lock,
    the index documents and the memory log change (committed) before state.json is saved:
    a crash between the two leaves the memories in state.json, found again by the re-run."""
    from indexer.forgetting import SECRET_MARK
    from recall.memory import index_docs

    index_docs.apply_pending(ix)  # memory documents queued for the index: theirs first, ours after
    deleted = rewritten = briefed = 0
    changed_projects: list[str] = []
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
                if drop or rew:
                    up, de = index_docs.changes(project, state.changed, state.removed, state)
                    write_memory_docs(ix, up, de)
        except store.StateError as exc:
            log.get("cli").warning("memories of %s not changed by forget: %s", project, exc)
            continue
        if drop or rew:
            deleted += len(drop)
            rewritten += len(rew)
            changed_projects.append(project)
            briefed += refresh_briefings([project])  # at once: the block follows state.json (claude_md re-checks)
    if not changed_projects:
        ix.archive.compact_memory()  # a re-run: the log may still hold what the first run removed
    return deleted, rewritten, changed_projects, briefed


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
    """Remove ``sel`` from every store at once (see the module docstring); what was removed.
    A forget left unfinished earlier is finished first."""
    sel.check()
    resume(ix)
    projects = known_projects(ix.archive, sel)  # before the archive loses them
    intent = forgetting.begin(ix, sel, memory_projects=projects)
    return run(ix, intent)


def run(ix, intent: dict) -> dict:
    """The steps of ``intent`` not done yet, each recorded as it ends; then the intent is
    removed and ``forget_completed`` told. What the forget removed."""
    root = ix.archive.root
    sel = Selection.from_args(intent["selection"])
    forgetting.run_ingest_steps(ix, intent)
    done = intent["done"]
    gone = set(intent.get("emptied") or []) | (set(sel.sessions) if sel.whole else set())
    touched = set(intent.get("sessions") or []) | gone
    if "memories" not in done:
        deleted, rewritten, changed, briefed = remove_from_memories(ix, sel, gone, intent.get("memory_projects") or [])
        forgetting.step_done(
            root,
            intent,
            "memories",
            memories=deleted,
            memories_rewritten=rewritten,
            changed_projects=changed,
            briefings=briefed,
        )
    if "claude_md" not in done:
        # every project whose memories the forget may have changed: a run cut short after the
        # memories step changed them cannot tell which it did (an unchanged block is not rewritten)
        projects = intent.get("memory_projects") if intent.get("resumed") else intent["result"].get("changed_projects")
        forgetting.step_done(
            root,
            intent,
            "claude_md",
            briefings=int(intent["result"].get("briefings") or 0) + refresh_briefings(projects or []),
        )
    if "summaries" not in done:
        if sel.secret:  # a secret is cut out of the summaries that hold it; the others stay as they are
            forgetting.step_done(
                root,
                intent,
                "summaries",
                summaries=remove_summaries(ix, gone, gone),
                summaries_rewritten=cut_secret_from_summaries(ix, touched - gone, sel.secret),
            )
        else:
            forgetting.step_done(root, intent, "summaries", summaries=remove_summaries(ix, touched, gone))
    if "injection_log" not in done:
        logged = gone if sel.secret else touched  # a secret is only cut out
        forgetting.step_done(root, intent, "injection_log", injection_log=clean_injection_log(sel, logged))
    if "synthesis_cache" not in done:
        forgetting.step_done(root, intent, "synthesis_cache", synthesis_cache=clear_synthesis_cache())
    if "team" not in done:
        forgetting.step_done(root, intent, "team", **forget_team(ix, sel))
    if "purge" not in done:
        from indexer.purge import purge

        purged = purge(ix)
        forgetting.step_done(root, intent, "purge", purged=purged.get("documents", 0))
    forgetting.end_intent(root, intent)
    forget_completed(intent)
    return forgetting.outcome(intent)


def resume(ix) -> list[dict]:
    """Finish every forget (and `recall: off` drop) an interruption left unfinished, oldest
    first; what each removed (with its ``selection``)."""
    out = []
    for intent in forgetting.intents(ix.archive.root):
        intent.setdefault("done", [])
        intent["resumed"] = True
        log.get("cli").info(
            "finishing an interrupted forget (%s) left after step %s",
            describe_selection(intent["selection"], reveal=False),
            (intent["done"] or ["intent"])[-1],
        )
        res = run(ix, intent)
        out.append(dict(res, selection=intent["selection"], kind=intent.get("kind", "forget")))
    return out


def pending() -> list[dict]:
    """The forgets under way or interrupted (for `recall doctor`, `recall status`, the CLI)."""
    return forgetting.intents(paths.archive_dir())


def describe_selection(args: dict, reveal: bool = True) -> str:
    """A selection in words; ``reveal=False`` (for the log) leaves out the matched text."""
    bits = []
    if args.get("sessions"):
        bits.append("session " + ", ".join(str(s)[:13] for s in args["sessions"][:3]))
    if args.get("project"):
        bits.append(f"project {args['project']}")
    if args.get("before") is not None:
        from datetime import datetime

        bits.append(f"messages before {datetime.fromtimestamp(float(args['before'])).strftime('%Y-%m-%d %H:%M')}")
    if args.get("match"):
        bits.append(f"messages containing {args['match']!r}" if reveal else "messages containing a text")
    if args.get("secret"):
        bits.append("a secret")
    return ", ".join(bits) or "?"


def forget_completed(intent: dict) -> None:
    """The one point where a forget is over: every store is rid of it, the intent removed."""
    log.get("cli").info("forget done: %s", describe_selection(intent.get("selection") or {}, reveal=False))


def clear_synthesis_cache() -> int:
    """Step ``synthesis_cache``: every cached synthesis and answer goes. Judgment call: the
    cache only saves model calls; which hits an entry was drawn from cannot be traced back
    after the fact (a memory hit, a summary), so forgetting anything empties it."""
    from recall.llm.synthesis import clear_cache

    return clear_cache()


def hide_excluded(pattern: str, projects: list[str], sessions_by_cwd: list[str] = ()) -> dict:
    """`recall exclude add`: what the derived stores hold of the excluded ``projects`` (or of
    prompts written where ``pattern`` matches) goes: the injection log's records of prompts
    there or drawn from their sessions, and the synthesis cache (emptied). The archive and the
    index keep it hidden (``--purge`` removes it from them too)."""
    from indexer.archive_files import project_slug
    from indexer.ledger import excluded_by

    sessions: set[str] = set(sessions_by_cwd)  # sessions of other projects the pattern covers by cwd
    for project in projects:
        sessions.update(p.stem for p in (paths.archive_dir() / "sessions" / project_slug(project)).glob("*.jsonl"))

    def keep(rec: dict):
        hit_sessions = {str(h.get("session")) for h in rec.get("hits") or [] if isinstance(h, dict)}
        cwd = str(rec.get("project") or "")
        if hit_sessions & sessions or rec.get("session") in sessions or (cwd and excluded_by(cwd, cwd, [pattern])):
            return None
        return rec

    from recall.prompt import injections

    logged = injections.rewrite_or_warn(keep, "cleaned by exclude", "cli")
    return {"injection_log": logged, "synthesis_cache": clear_synthesis_cache()}


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
        if (
            sel.before is not None
            and isinstance(rec.get("t"), (int, float))
            and rec["t"] < sel.before
            and not sel.sessions
            and not sel.project
        ):
            return None
        text = str(rec.get("text") or "")
        if needle and needle in text.lower():
            return None
        if sel.secret and sel.secret in text:
            rec["text"] = text.replace(sel.secret, SECRET_MARK)
        return rec

    return injections.rewrite_or_warn(keep, "cleaned by forget", "cli")


def remove_summaries(ix, touched, gone: set[str]) -> int:
    """Step ``summaries``: drop the summaries of the ``touched`` sessions, and the rule-firing
    records of the sessions ``gone`` whole; how many summaries went."""
    from recall.memory import summaries
    from recall.rules.inject import forget_sessions

    removed = summaries.remove(sorted(set(touched) | set(gone)), ix)
    forget_sessions(gone)
    return removed


def cut_secret_from_summaries(ix, sessions, secret: str) -> int:
    """A forgotten secret replaced in the summaries of ``sessions`` that hold it (file, index
    document, the archive's memory log); summaries without it are left alone. How many changed."""
    from indexer.forgetting import SECRET_MARK
    from recall.memory import summaries

    docs = []
    for sid, rec in summaries.get_many(sorted(sessions)).items():
        if secret in rec["summary"]:
            docs.append(summaries.index_doc(summaries.rewrite(sid, rec["summary"].replace(secret, SECRET_MARK))))
    write_memory_docs(ix, docs, [])
    return len(docs)


def drop_sessions(ix, intent: dict) -> None:
    """What memories, summaries, the logs and the cache drew from sessions a `recall: off`
    prompt switched off (the indexer has already removed their messages, its steps recorded
    in ``intent``): registered as ``Indexer.on_drop``."""
    run(ix, intent)


def attach(ix, finish: bool = True) -> None:
    """Hook ``drop_sessions`` into an Indexer (the service's, `recall index`'s) and, with
    ``finish``, finish what an interrupted forget left (before anything else is indexed).
    A forget that cannot be finished now stays recorded (and `recall doctor` says so). The
    rolling hashes of rules written before the key leave ``forgotten.json`` here."""
    ix.on_drop.append(lambda intent: drop_sessions(ix, intent))
    tombstones = ix.archive.tombstones
    if tombstones is not None and tombstones.rules:
        try:
            if tombstones.strip_linear():  # rules written before the key (indexer.forget_rules)
                log.get("service").info("dropped the rolling hashes of the forget rules written before the key")
        except OSError as exc:
            log.get("service").warning("forget rules not rewritten without their rolling hashes: %s", exc)
    if finish and forgetting.intents(ix.archive.root):
        from recall.core.errors import StorageError

        try:
            resume(ix)
        except StorageError:
            raise
        except Exception as exc:  # noqa: BLE001 - indexing goes on; the intent is kept for the next try
            log.get("service").error(
                "an interrupted forget could not be finished (%s: %s); it is tried "
                "again at the next start or `recall forget`",
                type(exc).__name__,
                exc,
            )
