"""The FTS5 side of the shell-search comparison (issue 48 item 4): one process that searches
the baseline's SQLite FTS5 database (``benchmarks.fts5``) and prints the top hits, the way a
shell tool over FTS5 would answer ``recall --raw --limit 5 QUERY``.

    python benchmarks/fts5_search.py DB LIMIT QUERY...

It runs as a script (not ``-m``) and imports only ``sqlite3`` and ``re``, so the baseline
pays what an FTS5 tool must (the interpreter, sqlite3, the query) and nothing of
``benchmarks``: the same safe MATCH expression as ``benchmarks.fts5.match_expression`` (a test
keeps the two equal), the same ``bm25(messages, 10, 2, 1)`` ranking, then for each hit its
session, project, role, time and an FTS5 ``snippet()`` of the content, one hit per block.
"""

import re
import sqlite3
import sys

MAX_TERMS = 64
_ALNUM = re.compile(r"[^\W_]", re.UNICODE)
_CHUNKS = re.compile(r'"([^"]*)"|(\S+)')


def match_expression(query: str, max_terms: int = MAX_TERMS) -> str | None:
    terms: dict[str, None] = {}
    for m in _CHUNKS.finditer(query):
        phrase, chunk = m.group(1), m.group(2)
        text = " ".join((phrase if phrase is not None else chunk).split())
        if not text or not _ALNUM.search(text):
            continue
        key = text.lower()
        if key not in terms:
            terms[key] = None
            if len(terms) >= max_terms:
                break
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def main(argv: list[str]) -> int:
    db, limit, query = argv[0], int(argv[1]), " ".join(argv[2:])
    expr = match_expression(query)
    if expr is None:
        print("no searchable words")
        return 1
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT session_id, project, role, timestamp, snippet(messages, 0, '', '', '…', 24), "
        "bm25(messages, 10.0, 2.0, 1.0) AS s FROM messages WHERE messages MATCH ? ORDER BY s LIMIT ?",
        (expr, limit),
    ).fetchall()
    out = []
    for i, (session, project, role, ts, snip, score) in enumerate(rows, 1):
        out.append(f"{i}. [{-score:.2f}] {project} · session {session[:8]} · {ts[:16]} · {role}")
        out.append("   " + " ".join(snip.split()))
    print("\n".join(out) if out else "no hits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
