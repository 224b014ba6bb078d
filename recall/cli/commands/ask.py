"""``recall ask``: answer a question from the project's memories and past sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from recall.cli.command_utils import PROJECT_HELP, project_root
from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


# ask ---------------------------------------------------------------------------------------
ASK_HITS = 8  # hits printed by --or-hits when no model answers


def _print_hits_instead(question: str, hits: list, why: Exception, as_json: bool) -> None:
    from recall.cli import output as fmt

    if as_json:
        typer.echo(
            json.dumps(
                {"question": question, "answer": None, "why": str(why), "sources": [h.as_json() for h in hits]},
                ensure_ascii=False,
            )
        )
        return
    typer.echo(f"No synthesized answer ({str(why).split(':')[0]}); the best matches from memories and past sessions:")
    fmt.print_hits(hits, question)


def _state_hits(root: str, question: str, limit: int) -> list:
    """Memory hits straight from state.json (when there is no index yet)."""
    from indexer.ledger import shown
    from recall.memory import store
    from recall.search.hit import Hit

    q = store.tokens(question)
    scored = []
    for m in store.load(root).active():
        overlap = len(q & m.tokens)
        if overlap:
            scored.append((overlap / (len(m.tokens) or 1) + overlap, m))
    scored.sort(key=lambda x: x[0], reverse=True)
    hits = [
        Hit(
            session_id=(m.sessions or [""])[0],
            uuid=m.id,
            project=root,
            cwd="",
            timestamp=store.iso(m.updated) or "",
            role="memory",
            text=m.content,
            snippet=m.content[:240],
            score=s,
            kind="memory",
        )
        for s, m in scored
    ]
    return shown(hits)[:limit]  # the readers' gate: an excluded project's memories are not an answer


def gather(question: str, project: str | None, limit: int | None = None) -> list:
    """The top ``limit`` matches from memories and transcripts (``recall.search.merged``)."""
    from recall.core.errors import IndexMissing
    from recall.search.merged import ASK_MATCHES, merged_search
    from recall.search.searcher import Searcher

    limit = ASK_MATCHES if limit is None else limit

    try:
        s = Searcher()
    except IndexMissing:
        return _marked(_state_hits(project, question, limit)) if project else []
    hits = merged_search(s, question, limit=limit, project=project)
    if project and not any(h.kind == "memory" for h in hits):
        hits = (_state_hits(project, question, 5) + hits)[:limit]
    return _marked(hits)


def _marked(hits: list) -> list:
    """``hits`` with their stale marks, files judged where the command runs."""
    import os

    from recall.search.stale import mark_hits

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    return mark_hits(hits, cwd)


def _with_ways_out(message: str, cap: bool = False) -> str:
    """A failed model call's message, with the ways out named (issue 36): ``--or-hits``, and
    what gives recall a model (an API key, Claude Code's login)."""
    ways = "`recall ask --or-hits ...` prints the best matches without a model"
    if not cap:
        ways += (
            "; give recall an API key (export ANTHROPIC_API_KEY or `recall config set api_key KEY`); or log "
            "Claude Code in (`claude /login`)"
        )
    return f"{message.rstrip('.')}. Ways out: {ways}."


def _known_project(root: str) -> bool:
    """Whether recall has anything of ``root``: memories, or a past session indexed."""
    from recall.core.errors import IndexMissing
    from recall.memory import store

    if store.state_path(root).exists():
        return True
    try:
        import tantivy

        from recall.search.searcher import Searcher

        s = Searcher()
        q = tantivy.Query.term_query(s.schema, "project", root, index_option="basic")
        return s.index.searcher().search(q, 1, count=True).count > 0
    except IndexMissing:
        return False


@commands.command("ask", help="Answer a question from the project's memories and past sessions.")
def ask_cmd(
    question: List[str] = typer.Argument(..., help="The question."),
    project: Optional[Path] = typer.Option(None, "--project", help=PROJECT_HELP),
    everywhere: bool = typer.Option(False, "--all-projects", help="Search every project."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer and its sources as JSON."),
    or_hits: bool = typer.Option(
        False,
        "--or-hits",
        help="Without a model backend (no key, the daily cap, a model error), print the best hits instead of failing.",
    ),
) -> None:
    from recall.llm.synthesis import answer_question
    from recall.memory import note_access

    text = " ".join(question).strip()
    if not text:
        raise UsageError('Ask something: recall ask "why did we pick tantivy?"')
    root = None if everywhere else project_root(project)
    from recall.llm import backend
    from recall.llm.errors import CapReached, ModelError, NoKey

    hits = gather(text, root)
    if not hits and root is not None and not _known_project(root):
        raise UsageError(
            f"No past session ran in {root} and it has no memories, so there is nothing to ask about "
            "here: run `recall ask` inside a project, pass --project DIR, or ask across every "
            "project with --all-projects."
        )
    try:
        backend.require()
        answer = answer_question(text, hits)
    except (NoKey, CapReached, ModelError) as exc:
        if not or_hits:
            from recall.core.errors import RecallError

            raise RecallError(_with_ways_out(str(exc), isinstance(exc, CapReached))) from None
        note_access(hits)
        _print_hits_instead(text, hits[:ASK_HITS], exc, as_json)
        return
    note_access(hits)
    if as_json:
        typer.echo(
            json.dumps({"question": text, "answer": answer, "sources": [h.as_json() for h in hits]}, ensure_ascii=False)
        )
        return
    typer.echo(answer)
