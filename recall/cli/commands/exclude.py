"""``recall exclude add|list|remove``: projects whose sessions are never archived, indexed,
searched, injected or used for memories (the ``exclude`` list of config.json, read by
``indexer.ledger``). Thin: options in, config and ``recall.privacy.forget`` do the work."""

from __future__ import annotations

import glob
import json
import os
import shlex

import typer

from recall.core import config
from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app
exclude_app = typer.Typer(
    help="Projects recall never captures, searches or injects (worktrees included).", no_args_is_help=True
)
commands.add_typer(exclude_app, name="exclude")

PATTERN_HELP = "A project path (a folder inside it excludes the whole project), or a glob such as '~/clients/*'."


def normalize(raw: str, must_exist: bool = True) -> str:
    """A plain path -> its canonical project (the main repository for a worktree); a glob ->
    absolute. UsageError for an empty pattern or a path that does not exist."""
    from indexer.ledger import is_glob
    from indexer.project import canonical_project

    raw = (raw or "").strip()
    if not raw:
        raise UsageError("Give a project path or a glob: recall exclude add ~/clients/acme.")
    expanded = os.path.abspath(os.path.expanduser(raw))
    if is_glob(raw):
        return expanded
    if not os.path.isdir(expanded):
        if must_exist:
            raise UsageError(f"{raw} is not a directory: give the path of a project (or a glob in quotes).")
        return expanded.rstrip("/") or "/"
    return canonical_project(expanded)


def matching_projects(pattern: str) -> dict[str, dict]:
    """The archived projects an exclusion pattern covers, with their sessions and messages."""
    from indexer.forgetting import archived_projects
    from indexer.ledger import pattern_matches

    return {p: n for p, n in archived_projects().items() if pattern_matches(pattern, p)}


def matching_sessions(pattern: str, projects: dict[str, dict]) -> dict[str, dict]:
    """The indexed sessions of other projects the pattern covers by their working directory
    (``'~/mono/clients/*'`` inside one repository): ``{session: {"project", "messages"}}``."""
    from indexer.ledger import pattern_matches
    from indexer.state import list_sessions

    return {
        s.session_id: {"project": s.project, "messages": s.messages}
        for s in list_sessions()
        if s.project not in projects and s.cwd and pattern_matches(pattern, s.cwd)
    }


def _counts(found: dict[str, dict], by_cwd: dict[str, dict] | None = None) -> str:
    by_cwd = by_cwd or {}
    sessions = sum(n["sessions"] for n in found.values()) + len(by_cwd)
    messages = sum(n["messages"] for n in found.values()) + sum(n["messages"] for n in by_cwd.values())
    projects = len(set(found) | {n["project"] for n in by_cwd.values()})
    from recall.cli.output import counted

    return f"{counted(messages, 'message')} in {counted(sessions, 'session')}" + (
        f" of {projects} projects" if projects > 1 else ""
    )


def _besides_history(pat: str) -> str:
    """What a project with no transcript indexed may still have here: its memories (indexed,
    now hidden) and what it shares with the team (withdrawn at the next sync); "" when none."""
    from indexer.ledger import is_glob

    if is_glob(pat):
        return ""
    parts = []
    try:
        from recall.memory import store

        n = sum(1 for m in store.load(pat).memories if m.active)
    except Exception:  # noqa: BLE001 - an unreadable state.json is said elsewhere
        n = 0
    if n:
        from recall.cli.output import counted

        parts.append(
            f"its {counted(n, 'memory')} (kept in {pat}/.memory/state.json) "
            f"{'is' if n == 1 else 'are'} hidden from every search from now on"
        )
    try:
        from recall.team import local

        if local.db_path().exists():
            with local.TeamDB() as db:
                if pat in db.shares():
                    parts.append("what it shared with the team is withdrawn at the next sync")
    except Exception:  # noqa: BLE001
        pass
    if not parts:
        return ""
    return "No transcript of it is indexed; " + "; ".join(parts) + "."


@exclude_app.command("add", help="Never capture, search or inject the sessions of a project (or a glob of them).")
def exclude_add(
    pattern: str = typer.Argument(..., metavar="PATH_OR_GLOB", help=PATTERN_HELP),
    purge: bool = typer.Option(False, "--purge", help="Also remove what is already indexed of it, from every store."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --purge: do not ask first."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from indexer.ledger import exclusions, is_glob
    from indexer.project import worktrees_of

    pat = normalize(pattern)
    if not is_glob(pat):
        worktrees_of(pat)  # remembered: its worktrees stay excluded after `git worktree remove`
    # in force before anything is counted: a backfill running meanwhile keeps it out at once
    current = exclusions()
    added = pat not in current
    if added:
        config.set_value("exclude", [*current, pat])
    found = matching_projects(pat)
    by_cwd = matching_sessions(pat, found)
    if is_glob(pat) and not found and not by_cwd and not glob.glob(pat):
        if added:
            config.set_value("exclude", [p for p in exclusions() if p != pat])
        raise UsageError(
            f"{pattern} matches no directory and nothing recall has indexed: check the pattern "
            "(quote it so that the shell does not expand it)."
        )
    if added:
        from recall.privacy.forget import hide_excluded

        hide_excluded(pat, sorted(found), sorted(by_cwd))  # the injection log and the synthesis cache
    purged = None
    if purge and (found or by_cwd):
        from recall.cli.command_utils import confirm_or_stop, run_forget
        from recall.cli.output import counted

        lines = [
            f"{p}: {counted(n['messages'], 'message')} in {counted(n['sessions'], 'session')}"
            for p, n in sorted(found.items())
        ]
        if by_cwd:
            lines.append(
                f"{counted(len(by_cwd), 'session')} of other projects held in it "
                f"({counted(sum(n['messages'] for n in by_cwd.values()), 'message')})"
            )
        lines.append("and the memories and CLAUDE.md block drawn from them")
        if confirm_or_stop(f"what is indexed of {pat}", lines, yes, "recall exclude add --purge"):
            purged = [run_forget({"project": p}) for p in sorted(found)]
            purged += [run_forget({"session": s}) for s in sorted(by_cwd)]
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "pattern": pat,
                    "added": added,
                    "indexed": found,
                    "indexed_by_cwd": by_cwd,
                    "purged": purged is not None,
                    "removed": purged or [],
                }
            )
        )
        return
    typer.echo(f"Excluded {pat}." if added else f"{pat} was already excluded.")
    if not found and not by_cwd:
        typer.echo(_besides_history(pat) or "Nothing of it is indexed.")
    elif purged is not None:
        typer.echo(f"Removed {_counts(found, by_cwd)} from the archive, the index and the memories.")
    elif purge:
        typer.echo(f"Nothing was removed; {_counts(found, by_cwd)} stay hidden from every search.")
    else:
        typer.echo(
            f"Already indexed: {_counts(found, by_cwd)}, hidden from every search from now on; "
            f"`recall exclude add {shlex.quote(pattern)} --purge` removes them."
        )


@exclude_app.command("list", help="The excluded projects and globs, with what is indexed of each.")
def exclude_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    from indexer.ledger import exclusions

    rows = []
    for p in exclusions():
        found = matching_projects(p)
        rows.append({"pattern": p, "indexed": found, "indexed_by_cwd": matching_sessions(p, found)})
    if as_json:
        typer.echo(json.dumps(rows))
        return
    if not rows:
        typer.echo("Nothing is excluded: `recall exclude add PATH_OR_GLOB` keeps a project out.")
        return
    for r in rows:
        extra = (
            f" ({_counts(r['indexed'], r['indexed_by_cwd'])} indexed before, hidden)"
            if r["indexed"] or r["indexed_by_cwd"]
            else ""
        )
        typer.echo(f"{r['pattern']}{extra}")


@exclude_app.command("remove", help="Capture a project again (what was excluded meanwhile is not recovered).")
def exclude_remove(
    pattern: str = typer.Argument(..., metavar="PATH_OR_GLOB", help=PATTERN_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from indexer.ledger import exclusions

    current = exclusions()
    pat = pattern.strip() if pattern.strip() in current else normalize(pattern, must_exist=False)
    if pat not in current:
        raise UsageError(f"{pattern} is not excluded: `recall exclude list` shows what is.")
    config.set_value("exclude", [p for p in current if p != pat])
    if as_json:
        typer.echo(json.dumps({"pattern": pat, "removed": True}))
        return
    typer.echo(
        f"{pat} is captured again from now on; what was said while it was excluded comes back only "
        "with `recall index --rebuild` (from the transcripts Claude Code still keeps)."
    )
