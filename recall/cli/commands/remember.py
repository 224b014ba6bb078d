"""``recall remember TEXT``: save a memory now, its type guessed (``recall.memory.remember``);
what ``/remember`` runs inside Claude Code. A standing instruction ("always run make lint
before committing") becomes a triggered rule of the project instead (``recall.rules``): it
then reaches Claude in every session, not only when a prompt's words match it. Thin: text
in, the library saves, one line out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from recall.cli.command_utils import PROJECT_HELP, after_change, check_type, project_root
from recall.core.errors import UsageError
from recall.core.text import one_line

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command(
    "remember",
    help="Save a memory of this project now (its type guessed from the words; "
    "--type to choose). `/remember TEXT` in Claude Code runs this.",
)
def remember_cmd(
    text: List[str] = typer.Argument(None, metavar="TEXT", help="What to remember, one or two sentences."),
    mtype: Optional[str] = typer.Option(
        None, "--type", help="architecture, decision, pattern, gotcha, progress or context."
    ),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the memory as JSON."),
) -> None:
    from indexer.redact import redact_stated
    from recall.memory.remember import is_standing_instruction, remember

    content = " ".join(text or []).strip()
    if not content:
        raise UsageError('Say what to remember: recall remember "the billing tests need docker running".')
    content = redact_stated(content)  # a memory or a rule: cut as its team copy is
    root = project_root(project)
    if mtype is None and is_standing_instruction(content):
        _remember_as_rule(root, content, as_json)
        return
    out, state = remember(root, content, check_type(mtype))
    after_change(root, state)
    m = out.memory
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "action": out.action,
                    "id": m.id,
                    "type": m.type,
                    "content": m.content,
                    "project": root,
                    "instruction": is_standing_instruction(content),
                }
            )
        )
        return
    if out.action == "refreshed":
        typer.echo(f"Already remembered as {m.type} {m.id}; refreshed it.")
    elif out.action == "superseded":
        typer.echo(f"Remembered as {m.type} {m.id} (replaces {out.replaced.id}: {one_line(out.replaced.content, 60)}).")
    else:
        typer.echo(f"Remembered as {m.type} {m.id}: {one_line(m.content, 80)}")


def _remember_as_rule(root: str, content: str, as_json: bool) -> None:
    """A standing instruction: a rule of the project with no condition (it fires once in
    every session of the project; `recall rules edit ID` narrows it)."""
    from recall.rules import index_docs, store

    rule = store.add({"text": content}, "project", root, origin="remember")
    index_docs.sync([rule])
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "action": "rule",
                    "id": rule.id,
                    "type": "rule",
                    "content": rule.text,
                    "project": root,
                    "instruction": True,
                }
            )
        )
        return
    typer.echo(
        f"Saved as rule {rule.id} (a standing instruction: Claude gets it once in every session of this "
        f"project; narrow it with `recall rules edit {rule.id}`): {one_line(rule.text, 80)}"
    )
