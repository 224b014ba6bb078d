"""``recall setup``: wire recall into Claude Code (hooks, MCP server, service, first backfill)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Optional

import typer

from recall.core.errors import RecallError, UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


def _print_report(report) -> None:
    """setup's report: what it changed, what was already right, what the user should know."""
    for line in report.changes:
        typer.echo(f"changed: {line}")
    for line in report.unchanged:
        typer.echo(f"ok:      {line}")
    for line in report.notes:
        typer.echo(f"note:    {line}")


def _service_step(report, start: bool) -> str | None:
    """Install the service (systemd user unit / launchd agent) and start it. Returns "started"
    when this setup started it, "running" when it already ran, None when none runs. One line
    says what happened and whether anything is left to do (issue 36)."""
    if not start:
        report.notes.append("skipped the service (--no-service): `recall service install` sets it up later")
        return None
    import subprocess

    from recall.control import units
    from recall.control.lifecycle import live_service, start_service

    before = live_service()
    try:
        proc = subprocess.run(
            [*units.recall_executable(), "service", "install"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        report.notes.append(f"could not run `recall service install` ({exc}): run it yourself")
        return None
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    if proc.returncode != 0:
        report.notes.append(
            f"`recall service install` failed ({lines[-1] if lines else proc.returncode}): "
            "`recall doctor` says what to do"
        )
        return None
    line = lines[-1] if lines else ""
    managed = line.startswith("Installed and started")
    try:
        _message, pid = start_service()
    except RecallError as exc:
        report.notes.append(f"wrote the service's unit, but the service did not start: {exc}")
        return None
    if managed:
        report.changes.append(f"installed the service ({line})")
        return "started"
    path = units.unit_path()
    if before and before.get("pid") == pid:
        report.unchanged.append(f"the recall service already runs (pid {pid}); its unit is {path}")
        return "running"
    import re

    why = re.search(r"the service manager refused \((.*?)\)\. Run:", line)
    reason = f"the service manager refused it ({why.group(1)})" if why else "no service manager is available here"
    enable = units.one_line(units.manager_commands(units.platform(), path)["enable"])
    report.changes.append(
        f"started the recall service without a service manager (pid {pid}), as {reason}: it "
        f"runs now, but nothing starts it again after a reboot or logout -- run `recall service "
        f"start` then, or `{enable}` where a user service manager runs (its unit: {path})"
    )
    return "started"


def _repair_modes(report, project: Optional[Path], global_: bool) -> None:
    """Folders an earlier setup made 0700 get their mode back where the evidence says so
    (``recall.setup.folder_modes``)."""
    from recall.setup import folder_modes
    from recall.setup.install import project_root

    root = None if global_ else project_root(project)
    changed, left = folder_modes.repair(folder_modes.candidates(root, global_))
    report.changes += changed
    report.notes += left


def _still_wired(global_: bool) -> bool:
    """Whether recall's hooks are still in Claude Code's user settings or a project setup wired."""
    from recall.setup import install as st

    files = [] if global_ else [st.settings_file(None, True)]
    files += [st.settings_file(Path(p), False) for p in st.wired_projects()]
    for f in files:
        try:
            data = st.load_json(f) or {}
        except RecallError:
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        if any(
            st.ours(h)
            for groups in hooks.values()
            if isinstance(groups, list)
            for g in groups
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"]
        ):
            return True
    return False


def _uninstall(
    project: Optional[Path], global_: bool, purge: bool, yes: bool, keep_records: Optional[bool] = None
) -> None:
    """Unwire (with --global: every project setup wired too), stop and remove the service
    once nothing is wired, say what is left on disk, and with --purge remove that too."""
    from recall.setup import install as st
    from recall.setup import uninstall as un

    root = None if global_ else st.project_root(project)
    projects = un.known_projects() if global_ else [root]
    if purge:
        left = un.leftovers(projects)
        if not global_:
            left["home"] = None  # a project's purge keeps the history of every other project
        lines = un.leftover_lines(left)
        if lines:
            from recall.cli.command_utils import confirm_or_stop, interactive

            scope = "recall's data" if global_ else f"recall's data in {root}"
            records = un.privacy_records() if left.get("home") else {}
            if records:
                lines.append(
                    f"but not the records of what you forgot, paused and excluded ({un.records_text(records)}; "
                    "they hold no text of it): Claude Code still keeps its transcripts, and a new `recall setup` "
                    "would index all of that again without them (--drop-records drops them too)"
                    if keep_records is not False
                    else f"and the records of what you forgot, paused and excluded ({un.records_text(records)}): "
                    "Claude Code still keeps its transcripts, so a new `recall setup` will index all of that again"
                )
            again = (
                "recall setup --uninstall --global --purge"
                if global_
                else f"recall setup --uninstall --project {shlex.quote(str(root))} --purge"
            )
            if keep_records is False and global_:
                again += " --drop-records"
            if not confirm_or_stop(scope, lines, yes, again):
                typer.echo("Nothing was removed.")
                return
            if records and keep_records is None and not yes and interactive():
                keep_records = typer.confirm(
                    "Keep the records of what you forgot, paused and excluded (no text "
                    "of it), so a new `recall setup` does not bring it back?",
                    default=True,
                )
    report = st.uninstall_files(root, global_)
    if global_:
        for p in st.wired_projects():
            if os.path.isdir(p):
                sub = st.uninstall_files(p, False)
                report.changes += sub.changes
                report.notes += sub.notes
    _repair_modes(report, project, global_)
    if global_ or not _still_wired(global_):
        from recall.control.lifecycle import remove_service
        from recall.setup.uninstall import stop_worker

        try:
            line = remove_service()
            (report.unchanged if line.endswith("nothing to do.") else report.changes).append(line)
        except RecallError as exc:
            report.notes.append(str(exc))
        stopped = stop_worker()
        if stopped:
            report.changes.append(stopped)
        from recall.setup import agent_wiring

        for agent in agent_wiring.AGENTS:  # the other agents' entries run the command removed next
            try:
                agent_wiring.UNINSTALL[agent](report)
            except RecallError as exc:
                report.notes.append(str(exc))
        st.unlink_command(report)
    else:
        report.notes.append(
            "the service keeps running: recall is still set up for every project or another "
            "one (`recall setup --uninstall --global` removes it all)"
        )
    if purge:
        report.changes += (
            un.purge(projects, keep_records=keep_records is not False) if global_ else un.purge([root], home=False)
        )
    _print_report(report)
    if purge:
        typer.echo("Done: recall is removed." if global_ else f"Done: recall is removed from {root}.")
        return
    left = un.leftovers(projects if global_ else [root])
    lines = un.leftover_lines(left)
    if lines:
        typer.echo("Left on disk, so that a new `recall setup` picks up where you left off:")
        for line in lines:
            typer.echo(f"  {line}")
        command = (
            "recall setup --uninstall --global --purge"
            if global_
            else f"recall setup --uninstall --project {shlex.quote(str(root))} --purge"
        )
        typer.echo(f"To remove those too: `{command}` (it asks first; it removes only what recall wrote).")
    typer.echo("Nothing captures your sessions any more." if global_ or not _still_wired(global_) else "Done.")


FIRST_COMMIT_WAIT = 15.0  # seconds setup waits for the service to make the newest sessions searchable


def _background_backfill(report, fresh: bool = True) -> bool:
    """The service started by setup backfills newest first: wait until its first commit (the
    newest session searchable) or its end, and say where it is. A service that already ran
    (``fresh`` False) did its backfill before: that is no change of this run. False when it
    does not answer."""
    import time

    from recall.cli.output import backfill_text
    from recall.core import service_client as client

    deadline = time.monotonic() + FIRST_COMMIT_WAIT
    st: dict = {}
    while time.monotonic() < deadline:
        try:
            st = client.call("status", {}, timeout=2.0) or {}
        except client.Unavailable:
            st = {}
        done = st.get("last_backfill")
        if done and not st.get("backfill"):
            from recall.cli.output import counted

            if not fresh or not done.get("changed"):
                report.unchanged.append(
                    f"the recall service keeps the index current "
                    f"({counted(done.get('files', 0), 'transcript file')} indexed)"
                )
                return True
            report.changes.append(
                f"indexed {counted(done.get('messages', 0), 'message')} from {done.get('changed', 0)} "
                f"of {counted(done.get('files', 0), 'transcript file')} in {done.get('seconds', 0):.1f} s"
            )
            return True
        bf = st.get("backfill") or {}
        if bf.get("files_done") and st.get("commits"):
            report.changes.append(
                f"the service is indexing your history in the background, newest sessions "
                f"first: {backfill_text(bf)}; your last sessions are searchable now, "
                "`recall status` shows how far it is"
            )
            return True
        time.sleep(0.2)
    if st.get("state") in ("starting", "backfilling"):
        report.changes.append(
            "the service is indexing your history in the background, newest sessions first: "
            "`recall status` shows how far it is"
        )
        return True
    return False


def _backfill_step(report, run: bool, service_up: bool = False, fresh: bool = True) -> None:
    if not run:
        report.notes.append("skipped the first backfill (--no-index): run `recall index`")
        return
    if service_up and _background_backfill(report, fresh):
        return
    from indexer.ingest import index_all
    from recall.cli import output as fmt
    from recall.cli.command_utils import index_through_service
    from recall.core.errors import IndexBusy

    try:
        summary = index_through_service([], False, quiet=True)  # a running service holds the writer
        if summary is None:
            with fmt.progress("Indexing past sessions") as update:
                summary = index_all(progress=update)
    except IndexBusy as exc:
        report.notes.append(f"the first backfill did not run: {exc}")
        return
    if not summary.changed:
        report.unchanged.append(
            f"the index is up to date ({fmt.counted(summary.files, 'transcript file')}, nothing new)"
        )
        return
    report.changes.append(
        f"indexed {fmt.counted(summary.messages, 'message')} from {summary.changed} of "
        f"{fmt.counted(summary.files, 'transcript file')} in {summary.seconds:.1f} s"
    )


def _other_agents(agents: list[str], uninstall: bool, purge: bool) -> None:
    """``recall setup --codex`` / ``--gemini`` (``--uninstall``): recall's MCP server in those agents
    (``recall.setup.agent_wiring``); their sessions are indexed by the service whatever this says."""
    from recall.setup import agent_wiring
    from recall.setup import install as st

    if purge:
        raise UsageError(
            "--purge removes recall itself: run `recall setup --uninstall --global --purge` "
            "without --codex or --gemini."
        )
    report = st.Report()
    for agent in agents:
        (agent_wiring.UNINSTALL if uninstall else agent_wiring.INSTALL)[agent](report)
        if not uninstall:
            from indexer import sources

            if not sources.setting()[agent]:
                report.notes.append(
                    f"{agent_wiring.LABELS[agent]}'s sessions are not read (`recall sources {agent} on` turns that on)"
                )
    if uninstall and not report.changes:
        report.unchanged += [f"the recall MCP server is not registered in {agent_wiring.LABELS[a]}" for a in agents]
    _print_report(report)
    if not uninstall:
        typer.echo(
            "Done. " + " and ".join(agent_wiring.LABELS[a] for a in agents) + " can call recall's tools "
            "(memory_search, memory_related, memory_ask) from their next session; `recall doctor` checks it."
        )


def _plugin_stand_down(project: Optional[Path], global_: bool, no_index: bool) -> bool:
    """When recall's Claude Code plugin is enabled here, setup wires nothing of its own (hooks,
    MCP server, commands, service: two would inject twice) and says so; it still runs the first
    backfill. Returns whether it stood down."""
    from recall.core import service_client as client
    from recall.core.wiring import plugin
    from recall.setup import install as st

    found = plugin(None if global_ else st.project_root(project))
    if found is None:
        return False
    report = st.Report()
    _backfill_step(report, not no_index, service_up=client.ping(timeout=1.0) is not None, fresh=False)
    _print_report(report)  # (nothing is unchanged here: the report is the backfill's alone)
    typer.echo(
        f"recall's Claude Code plugin ({found.id}, enabled in {found.settings}) already wires recall into "
        "Claude Code: its hooks, MCP server, slash commands and service. setup added none of its own, so "
        f"nothing runs twice. To wire this install instead: `claude plugin uninstall {found.id}`, then run "
        "`recall setup` again."
    )
    return True


@commands.command(
    "setup",
    help="Wire recall into Claude Code: hooks in .claude/settings.json, the MCP server "
    "in .mcp.json, the /recall, /recall-search and /remember slash commands, the "
    "background service, the first backfill.",
)
def setup_cmd(
    global_: bool = typer.Option(False, "--global", help="Use ~/.claude/settings.json (every project)."),
    project: Optional[Path] = typer.Option(None, "--project", help="The project (default: the working directory)."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Remove exactly what setup added."),
    no_service: bool = typer.Option(False, "--no-service", help="Do not install or start the service."),
    no_index: bool = typer.Option(False, "--no-index", help="Do not run the first backfill."),
    no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not register the MCP server."),
    no_commands: bool = typer.Option(
        False, "--no-commands", help="Do not install the /recall, /recall-search and /remember slash commands."
    ),
    purge: bool = typer.Option(
        False,
        "--purge",
        help="With --uninstall: also delete your history ($RECALL_HOME), "
        "each project's memories, recall's CLAUDE.md blocks and "
        ".git/info/exclude lines (asks first).",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --purge: do not ask first."),
    keep_records: Optional[bool] = typer.Option(
        None,
        "--keep-records/--drop-records",
        help="With --purge: keep (the default, even without a terminal) or drop the records of "
        "what you forgot, paused and excluded; kept, a new setup does not index it again "
        "(asked when there is a terminal and neither is given).",
    ),
    no_keep_records: bool = typer.Option(False, "--no-keep-records", hidden=True),  # older spelling of --drop-records
    codex: bool = typer.Option(
        False,
        "--codex",
        help="Register recall's MCP server in Codex CLI (~/.codex/config.toml); with --uninstall, remove it.",
    ),
    gemini: bool = typer.Option(
        False,
        "--gemini",
        help="Register recall's MCP server in Gemini CLI (~/.gemini/settings.json); with --uninstall, remove it.",
    ),
) -> None:
    from recall.setup import install as st

    if global_ and project is not None:
        raise UsageError("--global and --project exclude each other: pick one.")
    if codex or gemini:
        _other_agents([a for a, on in (("codex", codex), ("gemini", gemini)) if on], uninstall, purge)
        return
    if purge and not uninstall:
        raise UsageError("--purge goes with --uninstall: `recall setup --uninstall --global --purge`.")
    if no_keep_records:
        if keep_records:
            raise UsageError("--keep-records and --no-keep-records exclude each other: pick one.")
        keep_records = False
    if keep_records is not None and not purge:
        raise UsageError(
            "--keep-records and --drop-records go with --purge: "
            "`recall setup --uninstall --global --purge --drop-records`."
        )
    if uninstall:
        _uninstall(project, global_, purge, yes, keep_records)
        return
    if _plugin_stand_down(project, global_, no_index):
        return
    report = st.install_files(project, global_, mcp=not no_mcp, commands=not no_commands)
    _repair_modes(report, project, global_)
    # the service first: it backfills in the background, newest sessions first (setup only waits
    # for its first commit); without it, the backfill runs here, newest first too
    service = _service_step(report, not no_service)
    _backfill_step(report, not no_index, service is not None, fresh=service == "started")
    report.notes.append(
        "sessions from before recall was set up get no memories or summaries by themselves: "
        "`recall memories --backfill --since 30d` makes them (it shows the calls and cost first)"
    )
    _print_report(report)
    typer.echo("Done. `recall doctor` checks every piece.")
