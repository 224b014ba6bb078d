"""The ``recall`` command line, assembled: the typer app, whose commands are the modules of
``recall.cli.commands`` (one per command or group, merged in here), the default command
(``recall "some question"`` is ``recall search "some question"``), plain metavars, and ``run``,
which prints each error once as one line (errors are ``RecallError``s).
"""

from __future__ import annotations

import sys

import click
import typer
from typer.core import TyperGroup

from recall import __version__
from recall.cli.commands import (
    ask,
    config,
    doctor,
    exclude,
    forget,
    index,
    log,
    mcp,
    memories,
    pause,
    remember,
    rules,
    search,
    service,
    sessions,
    setup,
    sources,
    stats,
    status,
    team,
    ui,
)
from recall.core.errors import RecallError, UsageError, report


class DefaultSearchGroup(TyperGroup):
    """Anything that is not a subcommand is a search: ``recall --raw "query"``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            if len(args) == 1:
                typo = near_command(args[0], [c for c in self.commands if c != "hook"])
                if typo:
                    raise UsageError(
                        f"no command `{args[0]}`: did you mean `{typo}`? (To search for the word: "
                        f"`recall search {args[0]}`.)"
                    )
            args = ["search", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [c for c in self.commands if c != "hook"]


def near_command(word: str, commands: list[str]) -> str | None:
    """The command a lone word is a typo of (``statsu`` -> ``status``), or None."""
    import difflib

    if len(word) < 3 or not word.isalpha():
        return None
    word = word.lower()
    close = difflib.get_close_matches(word, commands, n=3, cutoff=0.8)
    # two letters swapped beat one too many: `statsu` is `status`, not `stats`
    swapped = [c for c in close if sorted(c) == sorted(word)]
    return (swapped or close or [None])[0]


#: metavars by option name where typer would print a Python type (``<list[Path]>``)
METAVARS = {
    "source": "DIR",
    "project": "PATH",
    "since": "SPAN",
    "before": "DATE",
    "limit": "N",
    "show": "N",
    "weeks": "N",
    "session": "ID",
    "mtype": "TYPE",
    "type_": "TYPE",
    "tags": "A,B",
    "expires": "DATE",
    "path": "GLOB",
    "tool": "NAME",
    "regex": "RE",
    "any_": "WORDS",
    "all_": "WORDS",
    "match": "TEXT",
    "secret": "VALUE",
    "text": "TEXT",
    "clear": "FIELD",
    "for_": "DURATION",
    "duration": "DURATION",
}


def plain_metavars(command: click.Command) -> click.Command:
    """Give every option and argument of the command tree a plain metavar (``--source DIR``,
    ``TEXT...``) instead of the type typer shows by default."""
    for param in command.params:
        argument = param.param_type_name == "argument"
        if argument:  # typer shows an argument's Python type beside its name: drop it
            param.display_type_rich = lambda ctx=None: None
        if getattr(param, "is_flag", False) or param.metavar is not None:
            continue
        if argument:
            param.metavar = (param.name or "arg").upper() + ("..." if param.nargs != 1 else "")
        else:
            param.metavar = METAVARS.get(param.name or "", (param.name or "value").strip("_").upper())
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    return command


_CLI: click.Command | None = None


def cli_command() -> click.Command:
    """The click command tree of ``app``, built once, with plain metavars."""
    global _CLI
    if _CLI is None:
        _CLI = plain_metavars(typer.main.get_command(app))
    return _CLI


app = typer.Typer(
    cls=DefaultSearchGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Persistent memory for Claude Code. `recall QUERY` searches your past sessions; "
    "the commands below index, serve and set it up.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"recall {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    pass


def _click_errors():
    """typer vendors its own copy of click; catch both its exceptions and real click's."""
    usage, other, exits, aborts = (
        [click.UsageError],
        [click.ClickException],
        [click.exceptions.Exit],
        [click.exceptions.Abort],
    )
    try:
        from typer._click import exceptions as tce

        usage.append(tce.UsageError)
        other.append(tce.ClickException)
    except ImportError:  # an older typer that uses click itself
        pass
    exits.append(typer.Exit)
    aborts.append(typer.Abort)
    return tuple(usage), tuple(other), tuple(exits), tuple(aborts)


_USAGE, _CLICK, _EXIT, _ABORT = _click_errors()


#: pydantic's wording of a value typer could not convert, and ours (issue 36)
_CONVERSIONS = (
    (r"Input should be a valid integer", "takes a whole number"),
    (r"Input should be a valid number", "takes a number"),
    (r"Input should be a valid boolean", "takes true or false"),
    (r"Input should be greater than or equal to (\S+)", r"takes a number of at least \1"),
    (r"Input should be less than or equal to (\S+)", r"takes a number of at most \1"),
)


def _usage_line(exc) -> str:
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", "") or "recall"
    message = exc.format_message().rstrip(".")
    import re

    for theirs, ours in _CONVERSIONS:
        found = re.search(theirs, message)
        if found:
            param = getattr(exc, "param", None)
            names = "/".join(getattr(param, "opts", None) or []) or getattr(exc, "param_hint", None) or "this value"
            message = f"{names} {found.expand(ours)}"
            break
    return f"recall: {message}. Run `{where} --help` to see what it takes."


def run(args: list[str]) -> int:
    """Entry for the console script: run the app, turning errors into one line each."""
    try:
        result = cli_command().main(args=args, prog_name="recall", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except RecallError as exc:
        return report(exc)
    except _EXIT as exc:
        return getattr(exc, "exit_code", 0) or 0
    except _USAGE as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `recall memories` style groups: show help
            typer.echo(exc.ctx.get_help() if getattr(exc, "ctx", None) else exc.format_message())
            return 0
        typer.echo(_usage_line(exc), err=True)
        return 2
    except _CLICK as exc:
        typer.echo(f"recall: {exc.format_message()}", err=True)
        return getattr(exc, "exit_code", 1) or 1
    except _ABORT:
        typer.echo("recall: aborted.", err=True)
        return 130
    except (KeyboardInterrupt, Exception) as exc:  # one line, never a traceback for users
        return report(exc)


def main() -> None:  # pragma: no cover
    sys.exit(run(sys.argv[1:]))


# The commands: each module of recall.cli.commands holds its own ``commands``; they are merged
# here in this order (`recall --help` lists them so); none imports this module or another command module.
COMMAND_MODULES = (
    search,
    index,
    mcp,
    setup,
    doctor,
    config,
    service,
    status,
    sources,
    forget,
    exclude,
    pause,
    memories,
    remember,
    rules,
    sessions,
    ask,
    log,
    stats,
    team,
    ui,
)
for _module in COMMAND_MODULES:
    app.registered_commands.extend(_module.commands.registered_commands)
for _module in COMMAND_MODULES:
    app.registered_groups.extend(_module.commands.registered_groups)
