"""Memories and transcripts ranked together: the one ranking behind `recall ask` and the MCP
tools (``memory_search``, ``memory_ask``).

Two searches, merged by score: the typed memories (this machine's and the team's), one hit
each in the engine's order, and the transcripts (messages and session documents, one hit per
session, ordered by confidence). A distilled memory's score is multiplied by
``MERGED_MEMORY_WEIGHT`` before the merge, on top of the ``MEMORY_WEIGHT`` the searcher's own
ranking gives a memory (``recall.search.searcher.rank_score``, which only orders hits within
one search): a curated memory outranks a transcript hit of the same score.
"""

from __future__ import annotations

from recall.search.searcher import DISTILLED, Searcher, echoes_last

#: A memory's score against a transcript hit's, when the two lists are merged. 1.5 is what
#: both former copies (`recall ask`, the MCP tools) used.
MERGED_MEMORY_WEIGHT = 1.5
#: How many merged matches a question is answered from (`recall ask`, ``memory_ask``).
ASK_MATCHES = 30
TRANSCRIPTS = ("message", "session")


def merged_search(
    searcher: Searcher,
    text: str,
    *,
    limit: int,
    mtype: str | None = None,
    project: str | None = None,
    team: bool = False,
) -> list:
    """The best ``limit`` hits for ``text`` from the memories and the transcripts, best first.

    With ``mtype`` only memories of that type (transcripts carry no type); with ``team`` only
    the team's items. The hits carry no stale marks yet (``recall.search.stale.mark_hits``:
    the caller knows where the files are judged)."""
    # messages=True: memories are ranked one by one, never grouped by session
    memories = searcher.search(
        text, limit=limit, messages=True, doctypes=("team",) if team else DISTILLED, mtype=mtype, project=project
    )
    for h in memories:
        h.score *= MERGED_MEMORY_WEIGHT
    transcript = (
        []
        if mtype or team
        else searcher.search(text, limit=limit, messages=False, project=project, doctypes=TRANSCRIPTS)
    )
    # an echo (a question asked before and answered "OK.", recall's own block restated) never
    # outranks what it points to: merged by score, echoes after the rest
    return echoes_last(sorted([*memories, *transcript], key=lambda h: h.score, reverse=True))[:limit]
