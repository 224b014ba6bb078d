"""A search as every edge asks for it (CLI, MCP): user-level options in, hits out.

``run_search`` turns CLI-style options (``--since 3d``, ``--project .``) into a search, and
runs it in the service when one is up (its index is open and warm), else in-process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from recall.core.errors import RecallError
from recall.search.hit import Hit
from recall.search.timespec import parse_since

if TYPE_CHECKING:
    from recall.search.searcher import Searcher

# The searcher and state.db are imported where they are needed: with the
# service running, `recall --raw` needs none of them (~25 ms of imports a run).


def resolve_project(project: Path | str | None) -> str | None:
    """``--project PATH`` -> the project PATH belongs to.

    That is its canonical project (git root) when that is indexed; otherwise the deepest
    indexed project that contains PATH (a subfolder of a project outside git); otherwise
    the canonical project, which then simply has no hits.
    """
    if project is None or str(project) == "":
        return None
    from indexer.project import canonical_project
    from indexer.state import known_projects
    from recall.core import paths

    path = os.path.abspath(os.path.expanduser(str(project)))
    canonical = canonical_project(path)
    known = known_projects(paths.state_db_path())
    if canonical in known:
        return canonical
    inside = [p for p in known if path == p or path.startswith(p.rstrip(os.sep) + os.sep)]
    return max(inside, key=len) if inside else canonical


def run_search(text: str, *, limit: int = 10, since: str | None = None, project: Path | str | None = None,
               messages: bool = False, exclude_session: str | None = None,
               doctypes: tuple[str, ...] | None = None, searcher: Searcher | None = None) -> list[Hit]:
    """Search, through the running service when there is one (its index is open and warm),
    else in-process. Given a ``searcher``, always in-process (the service's own path)."""
    since_ts = parse_since(since) if since else None
    proj = resolve_project(project)
    if searcher is None:
        from recall.core import service_client as client

        try:
            rows = client.call("search", {"text": text, "limit": limit, "since": since_ts, "project": proj,
                                          "messages": messages, "exclude_session": exclude_session,
                                          "doctypes": list(doctypes) if doctypes else None})
            return _noted([Hit(**row) for row in rows])
        except client.RemoteError as exc:
            raise RecallError(str(exc)) from None
        except (client.Unavailable, TypeError):  # TypeError: an answer of another shape
            pass
        from recall.search.searcher import Searcher

        searcher = Searcher()
    return _noted(searcher.search(text, limit=limit, messages=messages, project=proj, since=since_ts,
                                  exclude_session=exclude_session, doctypes=doctypes))


def _noted(hits: list[Hit]) -> list[Hit]:
    """Memories shown to the user count as used (accessCount, folded in batches)."""
    if any(h.kind == "memory" for h in hits):
        from recall.memory import note_access

        note_access(hits)
    return hits
