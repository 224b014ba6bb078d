"""``recall --raw ...`` and ``recall --json ...`` without typer.

A shell search should cost a search, not the ~100 ms of importing typer, click and every
command module. ``parse`` accepts exactly the plain search forms that need no model
(``--raw`` or ``--json``, with ``--limit/-n``, ``--since``, ``--project``, ``--agent``,
``--messages``, ``--team``);
anything else (help, a subcommand, an unknown or invalid option) returns None and the
typer CLI handles it, errors included, so both paths give the same answers.
"""

from __future__ import annotations

import sys

# The typer app's top-level command names (a test keeps this in step with recall.cli.app).
COMMANDS = frozenset(
    {
        "ask",
        "config",
        "consolidate",
        "doctor",
        "exclude",
        "forget",
        "hook",
        "index",
        "log",
        "mcp",
        "memories",
        "pause",
        "remember",
        "resume",
        "rules",
        "serve",
        "service",
        "sessions",
        "setup",
        "show",
        "sources",
        "stats",
        "status",
        "team",
        "ui",
    }
)
_FLAGS = {"--raw": "raw", "--json": "as_json", "--messages": "messages", "--team": "team"}
_VALUES = {"--limit": "limit", "-n": "limit", "--since": "since", "--project": "project", "--agent": "agent"}
MAX_LIMIT = 1000


def parse(args: list[str]) -> dict | None:
    """The search options in ``args``, or None when the typer CLI should handle them."""
    if not args:
        return None
    if args[0] == "search":
        args = args[1:]
    elif args[0] in COMMANDS or args[0] in ("--help", "-h", "--version"):
        return None
    opts: dict = {
        "raw": False,
        "as_json": False,
        "messages": False,
        "team": False,
        "limit": "10",
        "since": None,
        "project": None,
        "agent": None,
    }
    words: list[str] = []
    i, only_words = 0, False
    while i < len(args):
        a = args[i]
        i += 1
        if only_words or not a.startswith("-") or a == "-":
            words.append(a)
        elif a == "--":
            only_words = True
        elif a in _FLAGS:
            opts[_FLAGS[a]] = True
        else:
            name, eq, value = a.partition("=") if a.startswith("--") else (a[:2], "", a[2:])
            if name not in _VALUES:
                return None
            if not eq and not value:
                if i >= len(args):
                    return None
                value = args[i]
                i += 1
            opts[_VALUES[name]] = value
    try:
        limit = int(opts["limit"])
    except ValueError:
        return None
    if not words or not (opts["raw"] or opts["as_json"]) or not 1 <= limit <= MAX_LIMIT:
        return None
    opts["limit"] = limit
    opts["text"] = " ".join(words)
    return opts


def query_text(words: list[str]) -> str:
    """The query the words make; UsageError when there is nothing to search for."""
    text = " ".join(words)
    if not text.strip():
        from recall.core.errors import UsageError

        raise UsageError('Nothing to search for: give a query, like `recall --raw "stripe webhook"`.')
    return text


def run(opts: dict) -> int:
    """Search and print exactly what ``recall search`` prints for the same options."""
    from pathlib import Path

    from recall.search.run import run_search

    text = query_text([opts["text"]])
    project = Path(opts["project"]) if opts["project"] is not None else None
    hits = run_search(
        text,
        limit=opts["limit"],
        since=opts["since"],
        project=project,
        messages=opts["messages"],
        strict_project=True,
        doctypes=("team",) if opts["team"] else None,
        agent=opts["agent"],
        light=True,  # the service's rows printed as they came: no Hit dataclass to import
    )
    from recall.cli import output as fmt

    if opts["as_json"]:
        fmt.print_hits_json(text, hits)
    else:
        fmt.print_hits(hits, text, team=opts["team"])
    sys.stdout.flush()
    fmt.note_catching_up()
    return 0
