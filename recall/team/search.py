"""``recall team search QUERY``: the team's items on the server itself, found with
PostgreSQL's full-text search (the ``tsv`` column and its GIN index), for what is not
pulled here: projects this machine does not share, or a sync that has not caught up.

A role sees only the projects granted to it: the server's ``recall_team.search`` function
applies the grants (``recall.team.schema`` says why it is not left to the row-level policy:
the text index could not be used under it). The query's words are matched as all of them
(``websearch_to_tsquery``: quoted phrases and ``-word`` work as on the web); when that
finds fewer than ``limit`` items, any of them. Ranked by
``ts_rank_cd`` with the same mild recency prior as local search. Hits have the shape of
every other hit (``recall.search.hit.Hit``, kind ``team``, with ``author``); ``project``
is the team project (the normalized remote), ``pulled`` says whether this machine has it.
"""

from __future__ import annotations

import math
import time

from recall.core.errors import UsageError
from recall.search.hit import Hit, iso

RECENCY_WEIGHT = 0.10
RECENCY_HALF_LIFE_DAYS = 30.0
MAX_CANDIDATES = 200

_QUERY = """
SELECT id, project, author, kind, mtype, content, extract(epoch FROM updated)::float8, rank
FROM recall_team.search(%s, %s, %s)
"""


def search(conn, text: str, limit: int = 10, pulled: set[str] | None = None) -> list[dict]:
    """Hits (``Hit.as_json()`` plus ``pulled``), best first."""
    from recall.search.query import analyze
    from recall.search.snippets import highlighter, snippet

    text = (text or "").strip()
    if not text:
        raise UsageError("QUERY is empty: pass the words to look for.")
    limit = max(1, min(int(limit), 100))
    fetch = min(MAX_CANDIDATES, limit * 4)
    rows = conn.execute(_QUERY, (text, False, fetch)).fetchall()
    if len(rows) < limit:
        seen = {r[0] for r in rows}
        rows += [r for r in conn.execute(_QUERY, (text, True, fetch)).fetchall() if r[0] not in seen]
    now = time.time()
    pattern = highlighter(analyze(text))
    scored = []
    for item_id, project, author, kind, mtype, content, updated, rank in rows:
        age = max(0.0, (now - (updated or now)) / 86400.0)
        score = float(rank or 0.0) * (1.0 + RECENCY_WEIGHT * math.pow(0.5, age / RECENCY_HALF_LIFE_DAYS))
        scored.append((score, item_id, project, author, kind, mtype, content, updated))
    scored.sort(key=lambda r: r[0], reverse=True)
    out = []
    for score, item_id, project, author, kind, mtype, content, updated in scored[:limit]:
        hit = Hit(
            session_id=f"team:{item_id}",
            uuid=item_id,
            project=project,
            cwd="",
            timestamp=iso(updated or 0),
            role="team",
            text=content,
            snippet=snippet(content, pattern),
            score=score,
            kind="team",
            author=author,
        )
        d = hit.as_json()
        d["type"] = mtype or None
        d["pulled"] = item_id in (pulled or set())
        out.append(d)
    return out
