"""A search as every edge asks for it (CLI, MCP): user-level options in, hits out.

``run_search`` turns CLI-style options (``--since 3d``, ``--project .``) into a search, and
runs it in the service when one is up (its index is open and warm), else in-process.
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from recall.core.errors import RecallError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from recall.search.hit import Hit
    from recall.search.searcher import Searcher

# The searcher and state.db are imported where they are needed: with the service running,
# `recall --raw` needs none of them (~25 ms of imports a run), nor ``Hit``'s dataclass
# machinery, ``typing`` or ``datetime`` (~15 ms more): it prints the service's rows as they
# came (``ServiceHit``).

#: ``Hit``'s fields in order (a test keeps them equal), and those every row of the service has
HIT_FIELDS = (
    "session_id",
    "uuid",
    "project",
    "cwd",
    "timestamp",
    "role",
    "text",
    "snippet",
    "score",
    "kind",
    "reply",
    "question",
    "confidence",
    "similarity",
    "echo",
    "stale",
    "author",
    "agent",
    "tags",
    "channel",
    "history",
)
_REQUIRED = frozenset(HIT_FIELDS[:9])
_KNOWN = frozenset(HIT_FIELDS)


class ServiceHit:
    """A hit as the service sent it (a ``Hit.as_json()`` row), read like a ``Hit``: what a
    shell search prints when the service answered, without building ``Hit``s. ``as_json()`` is
    the row itself (``Hit(**row).as_json()`` is the same row); the fields ``as_json`` leaves
    out when unset (``similarity``, ``channel``) read None, as on a ``Hit``."""

    __slots__ = ("_row",)

    def __init__(self, row: dict) -> None:
        self._row = row

    def __getattr__(self, name: str):
        try:
            return self._row[name]
        except KeyError:
            if name in _KNOWN:
                return None
            raise AttributeError(name) from None

    def as_json(self) -> dict:
        return self._row


def _service_rows(rows) -> bool:
    """Whether ``rows`` are hits as this version's service sends them (else: in-process)."""
    return isinstance(rows, list) and all(isinstance(r, dict) and _REQUIRED <= r.keys() <= _KNOWN for r in rows)


def resolve_project(project: Path | str | None, strict: bool = False) -> str | None:
    """``--project PATH`` -> the project PATH belongs to.

    That is its canonical project (git root) when that is indexed; otherwise the deepest
    indexed project that contains PATH (a subfolder of a project outside git); otherwise
    the canonical project, which then simply has no hits, unless ``strict`` (a user typed
    PATH): then a PATH that does not exist, or holds no indexed session, is a UsageError
    saying so (rather than "No matches"). A deleted folder whose sessions are indexed is
    still searched: its history outlives it.
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
    if inside:
        return max(inside, key=len)
    if strict and not os.path.exists(path):  # (a deleted folder's indexed history is found above)
        raise UsageError(
            f"--project {project}: no such folder, and nothing indexed under it. Pass a "
            "folder of an indexed project, or leave --project out to search every project."
        )
    if strict and known:  # (no state at all: the search says there is no index yet)
        raise UsageError(
            f"--project {project}: nothing of {canonical} is indexed. Run `recall index` "
            "if Claude Code has sessions there, or leave --project out to search every project."
        )
    return canonical


def run_search(
    text: str,
    *,
    limit: int = 10,
    since: str | None = None,
    project: Path | str | None = None,
    messages: bool = False,
    exclude_session: str | None = None,
    doctypes: tuple[str, ...] | None = None,
    searcher: Searcher | None = None,
    strict_project: bool = False,
    cwd: str | None = None,
    agent: str | None = None,
    noted: bool = True,
    light: bool = False,
) -> list[Hit]:
    """Search, through the running service when there is one (its index is open and warm),
    else in-process. Given a ``searcher``, always in-process (the service's own path).
    ``strict_project``: ``project`` is what a user typed, and must name something indexed
    (``resolve_project``). Each hit carries its stale marks (``recall.search.stale``), the
    files judged as they are in the working tree ``cwd`` is in (default: the current one).
    ``agent``: only that agent's sessions (``--agent codex``; ``check_agent``).
    ``noted=False``: the memories among the hits do not count as used (a search as you type,
    whose prefixes nobody reads). ``light``: the service's hits are ``ServiceHit``s (a shell
    search that only prints them), not ``Hit``s."""
    cwd = cwd or _cwd()
    agent = check_agent(agent)
    if since:
        from recall.search.timespec import parse_since

        since_ts = parse_since(since)
    else:
        since_ts = None
    proj = resolve_project(project, strict=strict_project)
    if searcher is None:
        from recall.core import service_client as client

        try:
            rows = client.call(
                "search",
                {
                    "text": text,
                    "limit": limit,
                    "since": since_ts,
                    "project": proj,
                    "messages": messages,
                    "exclude_session": exclude_session,
                    "doctypes": list(doctypes) if doctypes else None,
                    "cwd": cwd,
                    **({"agent": agent} if agent else {}),
                },
            )
            if light:
                if not _service_rows(rows):
                    raise TypeError("not this version's hits")
                hits = [ServiceHit(row) for row in rows]
            else:
                from recall.search.hit import Hit

                hits = [Hit(**row) for row in rows]
            return _noted(hits) if noted else hits
        except client.RemoteError as exc:
            raise RecallError(str(exc)) from None
        except (client.Unavailable, TypeError):  # TypeError: an answer of another shape
            pass
        from recall.search.searcher import Searcher

        searcher = Searcher()
    from recall.search.stale import mark_hits

    hits = mark_hits(
        searcher.search(
            text,
            limit=limit,
            messages=messages,
            project=proj,
            since=since_ts,
            exclude_session=exclude_session,
            doctypes=doctypes,
            agent=agent,
        ),
        cwd,
    )
    return _noted(hits) if noted else hits


class IndexLag(namedtuple("IndexLag", "kind files", defaults=(0,))):
    """Why the index may not hold everything said yet (``index_lag``): ``missing`` (no index),
    ``service`` (the running service is still indexing: a backfill, a rebuild, ``files`` waiting)
    or ``files`` (no service, and that many transcript files have lines past their saved offsets).
    (A named tuple, not a dataclass: a shell search that found nothing asks for one.)"""

    __slots__ = ()


_SERVICE_BUSY = ("starting", "backfilling", "rebuilding", "retrying")


def index_lag() -> IndexLag | None:
    """Whether the index is behind the transcripts, as ``recall status`` (the service's backlog
    and backfill) and ``recall doctor`` (files with unread lines) tell; None when it is up to
    date. What a search that found nothing says next: run `recall index`, wait for the service,
    or try other words."""
    from recall.core import paths
    from recall.core import service_client as client

    try:
        live = client.call("status", {}, timeout=1.0)
    except client.Unavailable:
        live = None
    if isinstance(live, dict):  # the service's own count (no index import on the fast path)
        waiting = int(live.get("backlog_files") or 0)
        if live.get("backfill") or waiting or live.get("state") in _SERVICE_BUSY:
            return IndexLag("service", waiting)
        return None
    from indexer.schema import index_exists

    if not index_exists(paths.index_dir()):
        return IndexLag("missing")
    waiting = files_waiting()
    return IndexLag("files", waiting) if waiting else None


def files_waiting() -> int:
    """Transcript files (every agent's) that state.db does not record as read to their end:
    what `recall index` would read."""
    import stat

    from indexer import sources
    from indexer.state import StateDB
    from indexer.transcripts import path_text
    from recall.core import paths

    known: dict = {}
    if paths.state_db_path().exists():
        state = StateDB(paths.state_db_path())
        try:
            known = state.all_files()
        finally:
            state.close()
    waiting = 0
    for path in sources.discover(sources.all_roots()):
        try:
            st = path.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # a FIFO or device named *.jsonl: never indexed, never behind
        k = known.get(path_text(path))
        if k is None or k.size != st.st_size or k.inode != st.st_ino or k.offset != st.st_size:
            waiting += 1  # (indexer.ingest.Indexer.plan's test)
    return waiting


def check_agent(agent: str | None) -> str | None:
    """``--agent NAME`` checked: one of the sources' names, or a UsageError naming them."""
    if agent is None or agent == "":
        return None
    from indexer.sources import NAMES  # here: only the registry (no parser, no index), and only with --agent

    if agent not in NAMES:
        raise UsageError(
            f"--agent {agent}: no such agent. Pass one of {', '.join(NAMES)} (`recall sources` lists them)."
        )
    return agent


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the current folder was deleted
        return None


def _noted(hits: list[Hit]) -> list[Hit]:
    """Memories shown to the user count as used (accessCount, folded in batches)."""
    if any(h.kind == "memory" for h in hits):
        from recall.memory import note_access

        note_access(hits)
    return hits
