"""``recall rules add|list|show|edit|remove|test``: triggered rules (docs/rules.md). Thin:
options in, ``recall.rules`` functions, output."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Optional

import typer

from recall.cli.command_utils import PROJECT_HELP, project_root
from recall.core.errors import UsageError
from recall.core.text import one_line

commands = typer.Typer()  # merged into the app by recall.cli.app

rules_app = typer.Typer(
    help="Triggered rules: text injected whenever a prompt matches words, a regex, file paths or "
    "tools (docs/rules.md).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(rules_app, name="rules")

_CLEARABLE = ("any", "all", "regex", "paths", "tools", "expires")


def _line(rule, accepted: bool = True) -> str:
    text = one_line(rule.text, 90)
    where = "global" if rule.scope == "global" else "project"
    flag = " [expired]" if rule.expired() else ""
    if not accepted:
        flag += " [not accepted: never fires until `recall rules trust`]"
    return f"{rule.id}  {where:7}  when {rule.condition()}{flag}\n          {text}"


def _problems(root: str) -> list[str]:
    from recall.rules import store

    return store.problems(store.project_file(root), "project", root) + store.problems(store.global_file(), "global")


def _show(rule) -> None:
    typer.echo(f"id:       {rule.id}")
    typer.echo(f"scope:    {rule.scope}" + (f" ({rule.project})" if rule.project else ""))
    typer.echo(f"when:     {rule.condition()}")
    typer.echo(f"expires:  {rule.expires or 'never'}" + (" (expired)" if rule.expired() else ""))
    typer.echo(f"created:  {rule.created}  updated: {rule.updated}  by: {rule.origin}")
    typer.echo("")
    typer.echo(rule.text)


def _fields(text=None, paths=None, any_=None, all_=None, regex=None, tools=None, expires=None) -> dict:
    out = {}
    for key, value in (
        ("text", text),
        ("paths", paths),
        ("any", any_),
        ("all", all_),
        ("regex", regex),
        ("tools", tools),
        ("expires", expires),
    ):
        if value is not None and value != []:
            out[key] = value
    return out


@rules_app.command("add")
def rules_add(
    text: str = typer.Argument(..., help="What to tell Claude when the rule fires."),
    path: List[str] = typer.Option([], "--path", help="A file-path glob, like 'migrations/**' (repeatable)."),
    any_: Optional[str] = typer.Option(None, "--any", help="Fire when the prompt has any of these words."),
    all_: Optional[str] = typer.Option(None, "--all", help="Fire when the prompt has all of these words."),
    regex: Optional[str] = typer.Option(None, "--regex", help="Fire when this (RE2) pattern is in the prompt."),
    tool: List[str] = typer.Option([], "--tool", help="Fire when a recent turn used this tool (repeatable)."),
    global_: bool = typer.Option(False, "--global", help="For every project (kept under RECALL_HOME)."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    expires: Optional[str] = typer.Option(None, "--expires", help="Stop firing after: 2026-12-31, 30d, 2w."),
    as_json: bool = typer.Option(False, "--json", help="Print the new rule as JSON."),
) -> None:
    """Add a rule; says its id and when it fires."""
    from recall.rules import index_docs, store

    if global_ and project is not None:
        raise UsageError("--global and --project exclude each other: a rule is for one project or all.")
    root = "" if global_ else project_root(project)
    rule = store.add(_fields(text, path, any_, all_, regex, tool, expires), "global" if global_ else "project", root)
    index_docs.sync([rule])
    if as_json:
        typer.echo(json.dumps(rule.public()))
        return
    where = "every project" if global_ else root
    typer.echo(f"Added rule {rule.id} for {where}: told to Claude when {rule.condition()}.")
    typer.echo(f"`recall rules test \"PROMPT\"` shows when it fires; `recall rules edit {rule.id}` changes it.")


@rules_app.command("list")
def rules_list(
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The project's rules, the global ones, and Claude Code's own .claude/rules files (read-only)."""
    from recall.rules import store
    from recall.rules.native import native_rules
    from recall.rules.trust import untrusted

    root = project_root(project)
    rules = store.load_all(root)  # a file that cannot be read: its one-line error
    problems = _problems(root)
    waiting = {id(r) for r in untrusted(rules)}
    native = native_rules(root)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "project": root,
                    "rules": [{**r.public(), "accepted": id(r) not in waiting} for r in rules],
                    "native": [n.public() for n in native],
                    "problems": problems,
                }
            )
        )
        return
    for line in problems:
        typer.echo(f"warning: {line}", err=True)
    if not rules and not native:
        typer.echo("No rules yet. Add one: recall rules add \"Run make test, not pytest\" --any test")
        return
    for r in rules:
        typer.echo(_line(r, id(r) not in waiting))
    if native:
        typer.echo("")
        typer.echo("Claude Code's own rule files (read-only; Claude Code loads them itself):")
        for n in native:
            when = f"when Claude reads {', '.join(n.paths)}" if n.paths else "every session"
            typer.echo(f"native   {n.scope:7}  {when}\n          {n.path}: {n.summary}")


@rules_app.command("show")
def rules_show(
    rule_id: str = typer.Argument(..., metavar="ID", help="The rule's id (a unique prefix is enough)."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One rule in full."""
    from recall.rules import store

    rule = store.find(rule_id, project_root(project))
    if as_json:
        typer.echo(json.dumps(rule.public()))
    else:
        _show(rule)


@rules_app.command("edit")
def rules_edit(
    rule_id: str = typer.Argument(..., metavar="ID", help="The rule's id (a unique prefix is enough)."),
    text: Optional[str] = typer.Option(None, "--text", help="New text."),
    path: List[str] = typer.Option([], "--path", help="Replace the path globs (repeatable)."),
    any_: Optional[str] = typer.Option(None, "--any", help="Replace the any-words."),
    all_: Optional[str] = typer.Option(None, "--all", help="Replace the all-words."),
    regex: Optional[str] = typer.Option(None, "--regex", help="Replace the pattern."),
    tool: List[str] = typer.Option([], "--tool", help="Replace the tool names (repeatable)."),
    expires: Optional[str] = typer.Option(None, "--expires", help="New expiry (never: none)."),
    clear: List[str] = typer.Option(
        [], "--clear", help="Drop a condition: any, all, regex, paths, tools, expires (repeatable)."
    ),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    """Change a rule: each option given replaces that field."""
    from recall.rules import index_docs, store

    fields = _fields(text, path, any_, all_, regex, tool, expires)
    for name in clear:
        if name not in _CLEARABLE:
            raise UsageError(f"--clear {name!r}: use one of {', '.join(_CLEARABLE)}.")
        if name in fields:
            raise UsageError(f"--clear {name} and a new {name} exclude each other: give one.")
        fields[name] = None
    if not fields:
        raise UsageError("Nothing to change: give --text, --path, --any, --all, --regex, --tool, --expires or --clear.")
    rule = store.update(rule_id, fields, project_root(project))
    index_docs.sync([rule])
    typer.echo(f"Updated {rule.id}: when {rule.condition()}.")


@rules_app.command("remove")
def rules_remove(
    rule_id: str = typer.Argument(..., metavar="ID", help="The rule's id (a unique prefix is enough)."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    """Delete a rule."""
    from recall.rules import index_docs, store

    rule = store.remove(rule_id, project_root(project))
    index_docs.sync([], [rule.id])
    typer.echo(f"Removed {rule.id}.")


@rules_app.command("trust")
def rules_trust(
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask first."),
    as_json: bool = typer.Option(False, "--json", help="Print the rules accepted as JSON."),
) -> None:
    """Accept the project's rules you did not make (a clone or a pull brought them): only then
    are they injected as your rules."""
    from recall.cli.command_utils import interactive
    from recall.rules import store, trust

    root = project_root(project)
    waiting = trust.untrusted(store.load("project", root))
    if not waiting:
        if as_json:
            typer.echo(json.dumps({"project": root, "accepted": []}))
        else:
            typer.echo(f"Every rule of {root} is yours or accepted already.")
        return
    lines = [f"{r.id} (when {r.condition()}): {' '.join(r.text.split())[:200]}" for r in waiting]
    if not yes:
        if not interactive():
            raise UsageError(
                f"Nothing accepted: {len(waiting)} rules of {store.project_file(root)} wait (review "
                "them with `recall rules list`). There is no terminal to ask: run `recall rules "
                "trust --yes` to accept them."
            )
        typer.echo(
            f"These rules of {store.project_file(root)} were not made by you; accepted, they are "
            "injected into your prompts as rules you set:"
        )
        for line in lines:
            typer.echo(f"  {line}")
        if not typer.confirm("Accept them as your rules?", default=False):
            typer.echo("Nothing accepted.")
            return
    trust.record(root, add=waiting)
    if as_json:
        typer.echo(json.dumps({"project": root, "accepted": [r.public() for r in waiting]}))
    else:
        typer.echo(f"Accepted {len(waiting)} rule{'s' if len(waiting) > 1 else ''} of {root}: they fire from now on.")


@rules_app.command("test")
def rules_test(
    prompt: str = typer.Argument(..., help="A prompt to test the rules on."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    path: List[str] = typer.Option([], "--path", help="Also count this file as touched (repeatable)."),
    tool: List[str] = typer.Option([], "--tool", help="Also count this tool as used (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Which rules would fire on PROMPT, and why (nothing is recorded or injected)."""
    from recall.rules.match import Situation, compiled_rules, fire

    root = project_root(project)
    situation = Situation.build(prompt, path, tool, [root, os.getcwd()])
    fired = fire(situation, compiled_rules(root))
    for line in _problems(root):
        typer.echo(f"warning: {line}", err=True)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "prompt": prompt,
                    "project": root,
                    "paths": situation.paths,
                    "fired": [{**f.rule.public(), "reasons": f.reasons} for f in fired],
                }
            )
        )
        return
    if not fired:
        typer.echo("No rule fires on this prompt.")
        return
    for f in fired:
        typer.echo(f"{f.rule.id}  fires: {'; '.join(f.reasons)}\n          {' '.join(f.rule.text.split())}")
