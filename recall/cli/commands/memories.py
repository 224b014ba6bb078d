"""``recall memories [list|show|add|forget]`` and ``recall consolidate``. Thin: options in,
``recall.memory`` functions, output.

Every command works on the project that ``--project PATH`` (default: the current
directory) belongs to: its canonical root's ``.memory/state.json``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import List, Optional

import typer

from recall.core.errors import RecallError, UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


memories_app = typer.Typer(
    help="The project's typed memories (architecture, decision, pattern, gotcha, progress, context).",
    invoke_without_command=True, add_completion=False, rich_markup_mode=None,
)
commands.add_typer(memories_app, name="memories")

_PROJECT_HELP = "The project PATH belongs to (default: the current directory)."


def _project(project: Optional[Path]) -> str:
    from indexer.project import canonical_project

    raw = os.path.abspath(os.path.expanduser(str(project))) if project else os.getcwd()
    if not os.path.isdir(raw):
        raise UsageError(f"--project {project} is not a directory: pass a folder of the project.")
    return canonical_project(raw)


def _check_type(mtype: Optional[str]) -> Optional[str]:
    from recall.memory import TYPES

    if mtype is None:
        return None
    t = mtype.strip().lower()
    if t not in TYPES:
        raise UsageError(f"{mtype!r} is not a memory type: use one of {', '.join(TYPES)}.")
    return t


def _after_change(project: str, state) -> None:
    """Briefing file and index documents follow a state change."""
    from recall.memory import briefing, index

    briefing.write_briefing(project, state)
    index.sync(project, state.changed, state.removed, state)


def _short(text: str, n: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


# list --------------------------------------------------------------------------------------
@memories_app.callback()
def memories_list(
    ctx: typer.Context,
    mtype: Optional[str] = typer.Option(None, "--type", "-t", help="Only this type."),
    project: Optional[Path] = typer.Option(None, "--project", help=_PROJECT_HELP),
    all_: bool = typer.Option(False, "--all", help="Also superseded and archived memories."),
    stale: bool = typer.Option(False, "--stale", help="Only memories whose files changed substantially, moved "
                                                       "or were deleted since they were written."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the project's memories, best first per type (the default subcommand)."""
    if ctx.invoked_subcommand is not None:
        return
    from recall.memory import TYPES, store
    from recall.memory.stale import mark_text

    t = _check_type(mtype)
    root = _project(project)
    store.fold_access()
    state = store.load(root)
    store.refresh_stale(root, state)
    now = time.time()
    mems = [m for m in state.memories if (all_ or m.active) and (t is None or m.type == t)
            and (not stale or m.stale)]
    mems.sort(key=lambda m: (TYPES.index(m.type), not m.active, -store.rank(m, now)))
    if as_json:
        out = []
        for m in mems:
            d = m.to_json()
            d["effectiveConfidence"] = round(store.effective_confidence(m, now), 4)
            out.append(d)
        typer.echo(json.dumps({"project": root, "memories": out}, ensure_ascii=False))
        return
    if not mems:
        what = f"{t} memories" if t else "memories"
        if stale:
            typer.echo(f"No {what} of {root} name a file that changed substantially, moved or was deleted "
                       "since they were written.")
            return
        typer.echo(f"No {what} for {root} yet. They are extracted when a session goes idle or ends "
                   "(needs an API key); add one with `recall memories add TYPE TEXT`.")
        return
    current = None
    for m in mems:
        if m.type != current:
            if current is not None:
                typer.echo("")
            current = m.type
            typer.echo(f"{m.type}:")
        conf = store.effective_confidence(m, now)
        flag = "" if m.active else f" [{m.status}]"
        faded = " (faded: not in the briefing)" if m.active and conf < store.BRIEFING_FLOOR else ""
        typer.echo(f"  {m.id}  {conf:.2f}  used {m.access_count:<3} {_short(m.content)}{flag}{faded}")
        if m.stale:
            typer.echo(f"                      ! {mark_text(m)}")


# show --------------------------------------------------------------------------------------
@memories_app.command("show", help="Everything about one memory: content, tags, dates, lineage.")
def memories_show(
    ref: str = typer.Argument(..., metavar="ID", help="The memory's id (or a unique prefix)."),
    project: Optional[Path] = typer.Option(None, "--project", help=_PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    from recall.memory import store

    from recall.memory.stale import mark_text

    root = _project(project)
    state = store.load(root)
    m = state.find(ref)
    store.refresh_stale(root, state)
    now = time.time()
    if as_json:
        d = m.to_json()
        d["effectiveConfidence"] = round(store.effective_confidence(m, now), 4)
        typer.echo(json.dumps(d, ensure_ascii=False, indent=1))
        return
    typer.echo(f"{m.id}  {m.type}  {m.status}")
    typer.echo(m.content)
    typer.echo("")
    typer.echo(f"tags:        {', '.join(m.tags) or '-'}")
    typer.echo(f"created:     {store.iso(m.created)}   updated: {store.iso(m.updated)}")
    typer.echo(f"confidence:  {store.effective_confidence(m, now):.2f} now ({m.confidence:.2f} stored)   "
               f"used: {m.access_count}")
    typer.echo(f"origin:      {m.origin}   sessions: {', '.join(s[:8] for s in m.sessions) or '-'}")

    def ref_line(label: str, mid: str) -> None:
        other = state.by_id(mid)
        body = f"{other.type}, {other.status}: {_short(other.content, 80)}" if other else "pruned"
        typer.echo(f"{label}{mid}  ({body})")

    if m.files:
        typer.echo(f"files:       {', '.join(f['path'] for f in m.files)}")
        if m.stale:
            typer.echo(f"changed:     {mark_text(m)}")
    if m.supersedes:
        ref_line("supersedes:  ", m.supersedes)
    for mid in m.merged_from:
        ref_line("merged from: ", mid)
    if m.superseded_by:
        ref_line("replaced by: ", m.superseded_by)


# add / forget --------------------------------------------------------------------------------
@memories_app.command("add", help="Add a memory by hand (deduplicated like extracted ones).")
def memories_add(
    mtype: str = typer.Argument(..., metavar="TYPE",
                                help="architecture, decision, pattern, gotcha, progress or context."),
    text: List[str] = typer.Argument(..., metavar="TEXT", help="The memory, one or two sentences."),
    tags: Optional[str] = typer.Option(None, "--tags", help="Comma-separated tags."),
    project: Optional[Path] = typer.Option(None, "--project", help=_PROJECT_HELP),
) -> None:
    from recall.memory import store

    t = _check_type(mtype)
    content = " ".join(text).strip()
    if not content:
        raise UsageError("The memory is empty: pass its text, e.g. recall memories add gotcha \"...\".")
    root = _project(project)
    with store.transaction(root) as state:
        out = store.add_memory(state, t, content, tags or (), origin="manual")
    _after_change(root, state)
    m = out.memory
    if out.action == "refreshed":
        typer.echo(f"Already known as {m.id}; refreshed it.")
    elif out.action == "superseded":
        typer.echo(f"Added {m.type} {m.id}; it supersedes {out.replaced.id} "
                   f"({_short(out.replaced.content, 70)}).")
    else:
        typer.echo(f"Added {m.type} {m.id}.")


@memories_app.command("forget", help="Delete a memory for good (state.json, briefing, index).")
def memories_forget(
    ref: str = typer.Argument(..., metavar="ID", help="The memory's id (or a unique prefix)."),
    project: Optional[Path] = typer.Option(None, "--project", help=_PROJECT_HELP),
) -> None:
    from recall.memory import store

    root = _project(project)
    with store.transaction(root) as state:
        m = store.forget(state, ref)
    _after_change(root, state)
    typer.echo(f"Forgot {m.type} {m.id}: {_short(m.content, 80)}")


# consolidate -------------------------------------------------------------------------------
@commands.command("consolidate", help="Have the model merge and prune the project's memories now.")
def consolidate_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help=_PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.memory import briefing, consolidate, index, store

    root = _project(project)
    if not store.state_path(root).exists():
        raise RecallError(f"No memories for {root} yet: nothing to consolidate.")
    from recall.llm import backend

    backend.require()
    res = consolidate.consolidate(root, force=True)
    briefing.write_briefing(root)
    index.sync(root, res.changed, res.removed)
    if as_json:
        typer.echo(json.dumps(res.as_dict()))
        return
    if res.stopped:
        raise RecallError(f"Consolidation stopped ({res.stopped}); details in the log. "
                          "Run `recall consolidate` again later.")
    if not res.types and not res.rechecked:
        typer.echo(f"Nothing to consolidate: no type has {consolidate.MIN_PER_TYPE} or more active memories.")
    elif res.types:
        typer.echo(f"Reviewed {', '.join(res.types)}: {res.merged} merged memories from {res.merged_away}, "
                   f"{res.dropped} dropped.")
    if res.rechecked:
        typer.echo(f"Re-checked {res.rechecked} memories whose files changed against the newer sessions: "
                   f"{res.recheck_kept} still true, {res.recheck_updated} updated, {res.recheck_dropped} dropped.")
    if res.skipped:
        typer.echo(f"Skipped {', '.join(res.skipped)}: the model's answer was unusable twice (see the log).")
    if res.archived_faded or res.pruned:
        typer.echo(f"Archived {res.archived_faded} faded, pruned {res.pruned} old memories.")
