"""``recall setup``, ``recall doctor``, ``recall config`` and the synthesized answer of
``recall QUERY`` (registered on the app in ``recall.cli``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from recall import config, paths
from recall.cli import app
from recall.errors import RecallError, UsageError


# ------------------------------------------------------------------------------ recall QUERY
def print_search_result(text: str, hits: list, raw: bool) -> None:
    """Hits for ``--raw``; otherwise a synthesized answer first when a key exists, or the hits
    plus one line saying synthesis is off and how to turn it on."""
    from recall import format as fmt
    from recall import llm

    if raw or not hits:
        fmt.print_hits(hits, text)
        return
    from recall.synthesis import answer_question

    try:
        answer = answer_question(text, hits, timeout=30)
    except llm.NoKey:
        fmt.print_hits(hits, text)
        print("Synthesis is off (no Anthropic API key): set ANTHROPIC_API_KEY or run "
              "`recall config set api_key KEY` to get an answer above the hits; --raw hides this line.")
        return
    except (llm.ModelError, llm.CapReached) as exc:
        fmt.print_hits(hits, text)
        print(f"No synthesized answer ({exc}); the hits above are complete. Try again, or use --raw.")
        return
    print(answer.strip())
    print()
    print("Sources:")
    print()
    fmt.print_hits(hits, text)


# ------------------------------------------------------------------------------ setup
def _service_step(report, start: bool) -> None:
    """Install the service (systemd user unit / launchd agent) and start it."""
    if not start:
        report.notes.append("skipped the service (--no-service): `recall service install` sets it up later")
        return
    import subprocess

    from recall.setup import recall_executable

    try:
        proc = subprocess.run([*recall_executable(), "service", "install"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        report.notes.append(f"could not run `recall service install` ({exc}): run it yourself")
        return
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    if proc.returncode != 0:
        report.notes.append(f"`recall service install` failed ({lines[-1] if lines else proc.returncode}): "
                            "`recall doctor` says what to do")
        return
    report.changes.append(f"installed the service ({lines[-1] if lines else 'done'})")
    from recall.commands.service import start_service

    try:
        message, _pid = start_service()
    except RecallError as exc:
        report.notes.append(f"the service did not start: {exc}")
        return
    report.changes.append(message)


def _backfill_step(report, run: bool) -> None:
    if not run:
        report.notes.append("skipped the first backfill (--no-index): run `recall index`")
        return
    from indexer.ingest import index_all
    from recall import format as fmt
    from recall.commands.service import index_via_service
    from recall.errors import IndexBusy

    try:
        summary = index_via_service([], False, quiet=True)  # a running service holds the writer
        if summary is None:
            with fmt.progress("Indexing past sessions") as update:
                summary = index_all(progress=update)
    except IndexBusy as exc:
        report.notes.append(f"the first backfill did not run: {exc}")
        return
    report.changes.append(f"indexed {summary.messages} messages from {summary.changed} of {summary.files} "
                          f"transcript files in {summary.seconds:.1f} s")


@app.command("setup", help="Wire recall into Claude Code: hooks in .claude/settings.json, the MCP server "
                           "in .mcp.json, the background service, the first backfill.")
def setup_cmd(
    global_: bool = typer.Option(False, "--global", help="Use ~/.claude/settings.json (every project)."),
    project: Optional[Path] = typer.Option(None, "--project", help="The project (default: the working directory)."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Remove exactly what setup added."),
    no_service: bool = typer.Option(False, "--no-service", help="Do not install or start the service."),
    no_index: bool = typer.Option(False, "--no-index", help="Do not run the first backfill."),
    no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not register the MCP server."),
) -> None:
    from recall import setup as st

    if global_ and project is not None:
        raise UsageError("--global and --project exclude each other: pick one.")
    if uninstall:
        report = st.uninstall_files(project, global_)
        for line in report.lines():
            typer.echo(line)
        typer.echo("The service and the index are left as they are "
                   "(`recall service stop` stops it; the index is under " f"{paths.recall_home()}).")
        return
    report = st.install_files(project, global_, mcp=not no_mcp)
    _backfill_step(report, not no_index)
    _service_step(report, not no_service)
    for line in report.changes:
        typer.echo(f"changed: {line}")
    for line in report.unchanged:
        typer.echo(f"ok:      {line}")
    for line in report.notes:
        typer.echo(f"note:    {line}")
    typer.echo("Done. `recall doctor` checks every piece.")


# ------------------------------------------------------------------------------ doctor
@app.command("doctor", help="Check every piece (hooks, service, index, API key, MCP) and print the fix "
                            "for each failure.")
def doctor_cmd(
    project: Optional[Path] = typer.Option(None, "--project", help="The project (default: the working directory)."),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    from recall import setup as st

    checks = st.doctor(project)
    failed = [c for c in checks if not c.ok and not c.warn]
    if as_json:
        typer.echo(json.dumps([c.__dict__ for c in checks]))
    else:
        for c in checks:
            mark = "ok  " if c.ok else ("warn" if c.warn else "FAIL")
            typer.echo(f"{mark}  {c.name}: {c.detail}")
            if not c.ok and c.fix:
                typer.echo(f"      fix: {c.fix}")
        if not failed:
            warned = sum(1 for c in checks if not c.ok)
            typer.echo("All good." if not warned else
                       f"No problems; {warned} optional piece(s) off (see warn lines).")
    if failed:
        raise RecallError(f"{len(failed)} problem(s) found: each one's fix is printed above.")


# ------------------------------------------------------------------------------ config
config_app = typer.Typer(help="Show or change settings in $RECALL_HOME/config.json.", no_args_is_help=True,
                         add_completion=False, rich_markup_mode=None)
app.add_typer(config_app, name="config")

_SECRET_KEYS = {"api_key"}


def _mask(value):
    if isinstance(value, str) and value:
        return value[:7] + "…" + value[-4:] if len(value) > 16 else "…"
    return value


def _masked(cfg: dict) -> dict:
    out = dict(cfg)
    for k in _SECRET_KEYS:
        if out.get(k):
            out[k] = _mask(out[k])
    return out


def _lookup(cfg: dict, dotted: str):
    node = cfg
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise UsageError(f"no setting {dotted!r}: `recall config show` lists them.")
        node = node[part]
    return node


def _default_of(dotted: str):
    node = config.DEFAULTS
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None, False
        node = node[part]
    return node, True


def parse_value(dotted: str, text: str):
    """The typed value of ``text`` for setting ``dotted`` (checked against its default's type)."""
    default, known = _default_of(dotted)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if not known or default is None:
        return text if known else value  # api_key and other free-text settings stay strings
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if str(text).lower() in ("on", "yes", "true", "1"):
            return True
        if str(text).lower() in ("off", "no", "false", "0"):
            return False
        raise UsageError(f"{dotted} is true or false, not {text!r}.")
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise UsageError(f"{dotted} is a number >= 0, not {text!r}.")
        return float(value) if isinstance(default, float) else int(value)
    if isinstance(default, list):
        if isinstance(value, list):
            return [str(v) for v in value]
        return [s.strip() for s in str(text).split(",") if s.strip()]
    if isinstance(default, dict):
        raise UsageError(f"{dotted} is a group of settings: set one of its keys, e.g. {dotted}."
                         f"{next(iter(default), 'key')}.")
    return str(text)


@config_app.command("show", help="Print every setting (defaults merged with your file; the key masked).")
def config_show() -> None:
    problems = config.problems()
    for p in problems:
        typer.echo(f"recall: {p}", err=True)
    typer.echo(json.dumps(_masked(config.load()), indent=2))


@config_app.command("get", help="Print one setting, e.g. `recall config get hook.max_chars`.")
def config_get(key: str = typer.Argument(..., help="Dotted name, e.g. hook.budget_seconds.")) -> None:
    value = _lookup(config.load(), key)
    if key in _SECRET_KEYS:
        value = _mask(value)
    typer.echo(value if isinstance(value, str) else json.dumps(value))


@config_app.command("set", help="Change one setting, e.g. `recall config set hook.max_chars 2000` or "
                                "`recall config set api_key KEY`.")
def config_set(key: str = typer.Argument(..., help="Dotted name."),
               value: str = typer.Argument(..., help="New value (JSON or plain text).")) -> None:
    if not key or any(not part for part in key.split(".")):
        raise UsageError(f"{key!r} is not a setting name: use a dotted name like hook.max_chars.")
    _, known = _default_of(key)
    if not known and key.split(".")[0] not in config.DEFAULTS:
        raise UsageError(f"no setting {key!r}: `recall config show` lists them.")
    problems = config.problems()
    if problems:  # setting a value would replace the broken file with that one value
        raise UsageError(problems[0])
    parts = key.split(".")
    current = config.load()
    for i in range(1, len(parts)):  # every prefix must be a group, in the defaults and in the file
        prefix = ".".join(parts[:i])
        default, has = _default_of(prefix)
        node = current
        for part in parts[:i]:
            node = node.get(part) if isinstance(node, dict) else None
        if (has and not isinstance(default, dict)) or (node is not None and not isinstance(node, dict)):
            raise UsageError(f"{prefix} is a single setting, not a group: "
                             f"`recall config set {prefix} VALUE` changes it.")
    parsed = parse_value(key, value)
    path = config.set_value(key, parsed)
    shown = _mask(parsed) if key in _SECRET_KEYS else json.dumps(parsed)
    typer.echo(f"{key} = {shown} (saved in {path})")


@config_app.command("unset", help="Go back to the default for one setting.")
def config_unset(key: str = typer.Argument(..., help="Dotted name.")) -> None:
    if not config.unset_value(key):
        typer.echo(f"{key} was not set; it is at its default.")
        return
    typer.echo(f"{key} is back to its default.")
