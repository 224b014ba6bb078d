"""The pieces of docs/benchmarks.md every section is made of: its prose, kept in
``benchmarks/prose/<name>.md`` with ``${placeholders}`` filled from results, and Markdown
tables. Imports nothing of ours: every benchmark's ``sections`` can use it."""

from __future__ import annotations

from pathlib import Path
from string import Template

PROSE = Path(__file__).resolve().parent / "prose"


def prose(name: str, **values) -> str:
    """``benchmarks/prose/<name>.md`` with its ``${placeholders}`` filled from ``values``, ending
    in one newline: a block of the page (the page puts a blank line after it)."""
    text = Template((PROSE / f"{name}.md").read_text(encoding="utf-8")).substitute(values)
    return text.rstrip("\n") + "\n"


def rows(head: str, rule: str, lines: list[str]) -> str:
    """A Markdown table: its head, its rule, its rows."""
    return "\n".join([head, rule, *lines])
