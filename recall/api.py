"""Library functions behind every edge (CLI, hook, MCP): user-level options in, hits out.

``run_search`` turns CLI-style options (``--since 3d``, ``--project .``) into a search.
"""

from __future__ import annotations

import os
from pathlib import Path

from indexer.project import canonical_project
from recall.search import Hit, Searcher
from recall.timespec import parse_since


def resolve_project(project: Path | str | None) -> str | None:
    """``--project PATH`` -> the canonical project root PATH belongs to."""
    if project is None or str(project) == "":
        return None
    return canonical_project(os.path.abspath(os.path.expanduser(str(project))))


def run_search(text: str, *, limit: int = 10, since: str | None = None, project: Path | str | None = None,
               messages: bool = False, exclude_session: str | None = None,
               searcher: Searcher | None = None) -> list[Hit]:
    since_ts = parse_since(since) if since else None
    proj = resolve_project(project)
    s = searcher or Searcher()
    return s.search(text, limit=limit, messages=messages, project=proj, since=since_ts,
                    exclude_session=exclude_session)
