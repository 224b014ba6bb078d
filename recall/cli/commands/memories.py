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

from recall.cli.command_utils import PROJECT_HELP, after_change, check_type, included_root
from recall.core.errors import RecallError, UsageError
from recall.core.text import one_line

commands = typer.Typer()  # merged into the app by recall.cli.app


memories_app = typer.Typer(
    help="The project's typed memories (architecture, decision, pattern, gotcha, progress, context).",
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(memories_app, name="memories")


# backfill ----------------------------------------------------------------------------------
def _backfill(since: str, project: Optional[str], yes: bool, as_json: bool) -> None:
    """Memories and summaries of past sessions (``recall.memory.backfill``): the estimate
    first, then the work, newest first, one line per session."""
    from datetime import datetime

    from recall.llm import backend
    from recall.memory import backfill
    from recall.search.timespec import parse_since

    cfg = _config()
    choice = backend.require(cfg)  # NoKey: one line saying why there is no backend
    after = parse_since(since)
    p = backfill.plan(after, project, cfg)
    where = f"of {project}" if project else "of every project"
    day = datetime.fromtimestamp(after).strftime("%Y-%m-%d")
    if not p["items"]:
        msg = f"Nothing to backfill: every session {where} active since {day} has its memories and summary."
        if p["active"]:
            msg += f" ({p['active']} still active: the hooks take them when they go idle.)"
        typer.echo(json.dumps({**backfill.plan_json(p), "ran": None}) if as_json else msg)
        return
    lines = _estimate_lines(p, where, day, choice.name)
    if not as_json:
        typer.echo("Backfill: " + lines[0])
        for line in lines[1:]:
            typer.echo(f"  {line}")
    if not yes and not _confirmed(since, project):
        typer.echo("Nothing was done.")
        return

    def on_item(i: int, it, rep: dict) -> None:
        if not as_json:
            typer.echo(_item_line(i, p["sessions"], it, rep))

    try:
        res = backfill.run(p, cfg, on_item)
    except KeyboardInterrupt:
        typer.echo("Stopped. The same command goes on where it stopped.", err=True)
        raise typer.Exit(130)
    _report_backfill(p, res, as_json)


def _estimate_lines(p: dict, where: str, day: str, backend_name: str) -> list[str]:
    """The backfill's estimate (``backfill.plan``), one line each: sessions, calls and tokens,
    cost, the daily cap, the sessions left to the hooks."""
    from recall.cli.output import counted

    lines = [
        f"{counted(p['sessions'], 'session')} {where} active since {day} without memories or a summary",
        f"{counted(p['calls'], 'model call')} ({p['extract_calls']:,} extraction, "
        f"{counted(p['summaries'], 'summary')}; "
        "consolidation now and then), about "
        f"{p['input_tokens']:,} tokens in and {p['output_tokens']:,} out",
        f"est. ${p['cost']:.2f} at {p['model']} API prices"
        + (
            " (through Claude Code: counted against your plan, not billed per call)"
            if backend_name == "claude-code"
            else ""
        )
        + f"; backend: {backend_name}",
    ]
    if p["cap_left"] is not None:
        lines.append(
            f"the daily cap allows {p['cap_left']:,} more calls today "
            f"({p['calls_today']:,} of {p['daily_call_cap']} used): it stops there, and the same "
            "command goes on tomorrow"
        )
    if p["active"]:
        lines.append(
            f"{counted(p['active'], 'session')} still active {'is' if p['active'] == 1 else 'are'} left to the hooks"
        )
    return lines


def _confirmed(since: str, project: Optional[str]) -> bool:
    """Whether the user says to start (asked on a terminal; without one, a UsageError naming --yes)."""
    from recall.cli.command_utils import interactive

    if not interactive():
        flags = f"--since {since}" + ("" if project else " --all-projects")
        raise UsageError(
            f"No model was called: there is no terminal to ask. Run `recall memories --backfill "
            f"{flags} --yes` to start it."
        )
    return typer.confirm("Start the backfill?", default=False)


def _item_line(i: int, total: int, it, rep: dict) -> str:
    """One backfilled session: ``[i/total] day project id: +N memories, summary written``."""
    from datetime import datetime

    from recall.cli.output import counted

    when = datetime.fromtimestamp(it.ended).strftime("%Y-%m-%d") if it.ended else "?"
    bits = []
    if rep.get("calls_ok") or rep.get("added"):
        bits.append(
            f"+{counted(rep.get('added', 0), 'memory')}"
            + (f", {rep['superseded']} updated" if rep.get("superseded") else "")
        )
    summary = rep.get("summary") or {}
    if summary.get("status") == "written":
        bits.append("summary written")
    why = (
        rep.get("stopped")
        or rep.get("problem")
        or (summary.get("problem") if summary.get("status") == "pending" else "")
    )
    if why:
        bits.append(f"stopped: {why}")
    name = os.path.basename(it.project.rstrip("/")) or it.project or "?"
    return f"[{i}/{total}] {when} {name} {it.session_id[:8]}: {', '.join(bits) or 'nothing new'}"


def _report_backfill(p: dict, res: dict, as_json: bool) -> None:
    """What the backfill did: JSON, or one line (a RecallError naming the next step when it stopped)."""
    from recall.cli.output import counted
    from recall.memory import backfill

    if as_json:
        typer.echo(json.dumps({**backfill.plan_json(p), "ran": res}, ensure_ascii=False))
        return
    tail = (
        f"{res['done']} of {counted(res['total'], 'session')} done: {counted(res['memories'], 'memory')}, "
        f"{counted(res['summaries'], 'summary')}."
    )
    if res["stopped"]:
        raise RecallError(f"Backfill stopped ({res['stopped']}). {tail} {_next_step(res['stopped'])}")
    typer.echo(f"Backfill done: {tail}")


def _next_step(stopped: str) -> str:
    """What to do before the same command goes on: the same command alone would stop the same
    way when no model can answer (issue 36)."""
    low = stopped.lower()
    if "not logged in" in low or "/login" in low:
        return (
            "Log Claude Code in (`claude /login`) or give recall an API key (export ANTHROPIC_API_KEY or "
            "`recall config set api_key KEY`), then run the same command again: it goes on where it stopped."
        )
    if "api key" in low or "model calls are off" in low or "no model" in low:
        return (
            "Give recall a model (an API key: export ANTHROPIC_API_KEY or `recall config set api_key KEY`, or "
            "Claude Code logged in), then run the same command again: it goes on where it stopped."
        )
    return "Run the same command again to go on where it stopped (`recall status` shows the backend and the cap)."


def _config() -> dict:
    from recall.core import config

    return config.load()


# list --------------------------------------------------------------------------------------
@memories_app.callback()
def memories_list(
    ctx: typer.Context,
    mtype: Optional[str] = typer.Option(None, "--type", "-t", help="Only this type."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    all_: bool = typer.Option(False, "--all", help="Also superseded and archived memories."),
    stale: bool = typer.Option(
        False,
        "--stale",
        help="Only memories whose files changed substantially, moved or were deleted since they were written.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    backfill: bool = typer.Option(
        False,
        "--backfill",
        help="Make the memories and summaries of past sessions that have none (the calls and cost are shown first).",
    ),
    since: Optional[str] = typer.Option(
        None, "--since", help="With --backfill: sessions active after 30d (the default), 2w, or a date."
    ),
    every_project: bool = typer.Option(
        False, "--all-projects", help="With --backfill: every project, not just this one."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --backfill: do not ask first."),
) -> None:
    """List the project's memories, best first per type (the default subcommand)."""
    if ctx.invoked_subcommand is not None:
        return
    if backfill:
        _backfill(since or "30d", None if every_project else included_root(project), yes, as_json)
        return
    if since is not None or every_project or yes:
        raise UsageError(
            "--since, --all-projects and --yes go with --backfill: `recall memories --backfill --since 30d`."
        )
    from recall.cli import everyday

    everyday.memories(mtype, project, all_, as_json, stale)


@memories_app.command("show", help="Everything about one memory: content, tags, dates, lineage.")
def memories_show(
    ref: str = typer.Argument(..., metavar="ID", help="The memory's id (or a unique prefix)."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    from recall.memory import store
    from recall.memory.stale import mark_text

    root = included_root(project)
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
    typer.echo(
        f"confidence:  {store.effective_confidence(m, now):.2f} now ({m.confidence:.2f} stored)   "
        f"used: {m.access_count}"
    )
    typer.echo(f"origin:      {m.origin}   sessions: {', '.join(s[:8] for s in m.sessions) or '-'}")

    def ref_line(label: str, mid: str) -> None:
        other = state.by_id(mid)
        body = f"{other.type}, {other.status}: {one_line(other.content, 80)}" if other else "pruned"
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
    mtype: str = typer.Argument(
        ..., metavar="TYPE", help="architecture, decision, pattern, gotcha, progress or context."
    ),
    text: List[str] = typer.Argument(..., metavar="TEXT", help="The memory, one or two sentences."),
    tags: Optional[str] = typer.Option(None, "--tags", help="Comma-separated tags."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    from recall.memory import store

    t = check_type(mtype)
    content = " ".join(text).strip()
    if not content:
        raise UsageError("The memory is empty: pass its text, e.g. recall memories add gotcha \"...\".")
    root = included_root(project)
    with store.transaction(root) as state:
        out = store.add_memory(state, t, content, tags or (), origin="manual")
    after_change(root, state)
    m = out.memory
    if out.action == "refreshed":
        typer.echo(f"Already known as {m.id}; refreshed it.")
    elif out.action == "superseded":
        typer.echo(f"Added {m.type} {m.id}; it supersedes {out.replaced.id} ({one_line(out.replaced.content, 70)}).")
    else:
        typer.echo(f"Added {m.type} {m.id}.")


@memories_app.command("forget", help="Delete a memory for good (state.json, briefing, index).")
def memories_forget(
    ref: str = typer.Argument(..., metavar="ID", help="The memory's id (or a unique prefix)."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    from recall.memory import store

    root = included_root(project)
    with store.transaction(root) as state:
        m = store.forget(state, ref)
    after_change(root, state)
    typer.echo(f"Forgot {m.type} {m.id}: {one_line(m.content, 80)}")


# consolidate -------------------------------------------------------------------------------
@commands.command("consolidate", help="Have the model merge and prune the project's memories now.")
def consolidate_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall.memory import briefing, consolidate, index_docs, store

    root = included_root(project)
    if not store.state_path(root).exists():
        raise RecallError(f"No memories for {root} yet: nothing to consolidate.")
    from recall.llm import backend

    backend.require()
    res = consolidate.consolidate(root, force=True)
    briefing.write_briefing(root)
    index_docs.sync(root, res.changed, res.removed)
    if as_json:
        typer.echo(json.dumps(res.as_dict()))
        return
    if res.stopped:
        raise RecallError(
            f"Consolidation stopped ({res.stopped}); details in the log. Run `recall consolidate` again later."
        )
    if not res.types and not res.rechecked:
        typer.echo(f"Nothing to consolidate: no type has {consolidate.MIN_PER_TYPE} or more active memories.")
    elif res.types:
        typer.echo(
            f"Reviewed {', '.join(res.types)}: {res.merged} merged memories from {res.merged_away}, "
            f"{res.dropped} dropped."
        )
    if res.rechecked:
        typer.echo(
            f"Re-checked {res.rechecked} memories whose files changed against the newer sessions: "
            f"{res.recheck_kept} still true, {res.recheck_updated} updated, {res.recheck_dropped} dropped."
        )
    if res.skipped:
        typer.echo(f"Skipped {', '.join(res.skipped)}: the model's answer was unusable twice (see the log).")
    if res.archived_faded or res.pruned:
        typer.echo(f"Archived {res.archived_faded} faded, pruned {res.pruned} old memories.")
