"""``recall search QUERY`` (the default command: ``recall QUERY``): ranked hits from past
sessions, after a synthesized answer when a model is reachable. Thin: options in,
``recall.search.run`` finds, ``recall.llm.synthesis`` answers, ``recall.cli.output`` prints.
The plain ``--raw``/``--json`` forms run without typer in ``recall.cli.fast_search``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

commands = typer.Typer()  # merged into the app by recall.cli.app


@commands.command("search", help="Search past sessions (the default command: `recall QUERY`).")
def search_cmd(
    query: List[str] = typer.Argument(..., help="What to look for; any text."),
    raw: bool = typer.Option(False, "--raw", help="Print ranked hits only; never call a model."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=1000, help="How many hits."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (schema in docs/cli.md)."),
    since: Optional[str] = typer.Option(None, "--since", help="Only after: 2h, 3d, 1w, or a date."),
    project: Optional[Path] = typer.Option(None, "--project", help="Only the project PATH belongs to."),
    messages: bool = typer.Option(False, "--messages", help="Rank single messages, not sessions."),
    team: bool = typer.Option(False, "--team", help="Only the team's items (`recall team`), each with its author."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Only one agent's sessions: claude-code, codex, gemini."),
) -> None:
    from recall.cli import output as fmt
    from recall.cli.fast_search import query_text
    from recall.search.run import run_search

    text = query_text(query)
    hits = run_search(
        text,
        limit=limit,
        since=since,
        project=project,
        messages=messages,
        strict_project=True,
        doctypes=("team",) if team else None,
        agent=agent,
    )
    if as_json:
        fmt.print_hits_json(text, hits)
    else:
        print_search_result(text, hits, raw=raw, team=team)
    sys.stdout.flush()
    fmt.note_catching_up()


def print_search_result(text: str, hits: list, raw: bool, team: bool = False) -> None:
    """Hits for ``--raw``; otherwise a synthesized answer first when a key exists, or the hits
    plus one line saying synthesis is off and how to turn it on."""
    from recall.cli import output as fmt
    from recall.llm.errors import CapReached, ModelError, NoKey

    if raw or not hits:
        fmt.print_hits(hits, text, team=team)
        return
    from recall.llm.synthesis import answer_question

    try:
        answer = answer_question(text, hits, timeout=30)
    except NoKey as exc:
        fmt.print_hits(hits, text)
        print(f"Synthesis is off. {exc} --raw hides this line.")
        return
    except (ModelError, CapReached) as exc:
        fmt.print_hits(hits, text)
        print(f"No synthesized answer ({exc}); the hits above are complete. Try again, or use --raw.")
        return
    print(answer.strip())
    print()
    print("Sources:")
    print()
    fmt.print_hits(hits, text)
