"""The baseline store: SQLite FTS5 (the seed design), fed the same parsed messages.

One FTS5 table ``messages`` with the indexed columns ``content``, ``files`` and ``tools``
(``tokenize='porter unicode61'``) and the UNINDEXED metadata uuid / session_id / project /
role / timestamp. Ranking is ``bm25(messages, 10.0, 2.0, 1.0)``: content 10×, files 2×,
tools 1×. Scores are returned negated (SQLite's bm25 is "lower is better"), so a higher
score is a better match, as with Tantivy.

Any user text is turned into a safe MATCH expression by :func:`match_expression`: quoted
``"..."`` phrases are kept as phrases, every other whitespace-separated chunk becomes one
quoted FTS5 string (so ``foo.bar_baz`` is the phrase ``foo bar baz``, and ``AND``, ``NEAR``,
``*``, ``^``, brackets or stray quotes are plain text), deduplicated and ORed.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Iterable

COLUMNS = ("content", "files", "tools", "uuid", "session_id", "project", "role", "timestamp")
WEIGHTS = (10.0, 2.0, 1.0)
MAX_TERMS = 64  # a long pasted prompt keeps its first 64 distinct terms

_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(
    content, files, tools,
    uuid UNINDEXED, session_id UNINDEXED, project UNINDEXED, role UNINDEXED, timestamp UNINDEXED,
    tokenize = 'porter unicode61'
)
"""
_ALNUM = re.compile(r"[^\W_]", re.UNICODE)  # what unicode61 keeps as token characters
_CHUNKS = re.compile(r'"([^"]*)"|(\S+)')


def has_fts5() -> bool:
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def match_expression(query: str, max_terms: int = MAX_TERMS) -> str | None:
    """A safe FTS5 MATCH expression for arbitrary ``query`` text, or None if it has no
    searchable token (e.g. only punctuation)."""
    terms: dict[str, None] = {}
    for m in _CHUNKS.finditer(query):
        phrase, chunk = m.group(1), m.group(2)
        text = phrase if phrase is not None else chunk
        text = " ".join(text.split())
        if not text or not _ALNUM.search(text):
            continue
        key = text.lower()
        if key not in terms:
            terms[key] = None
            if len(terms) >= max_terms:
                break
    if not terms:
        return None
    return " OR ".join(_quote(t) for t in terms)


class FTS5Store:
    """Messages in one SQLite FTS5 table (see module doc)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=NORMAL")
        self.con.execute(_SCHEMA)

    def add(self, batch: Iterable[dict]) -> int:
        """Insert a batch of messages in one transaction; return how many."""
        rows = [
            (
                m.get("content") or "",
                m.get("files") or "",
                m.get("tools") or "",
                m.get("uuid"),
                m.get("session_id"),
                m.get("project"),
                m.get("role"),
                m.get("timestamp"),
            )
            for m in batch
        ]
        if not rows:
            return 0
        con = self.con
        con.execute("BEGIN")
        try:
            con.executemany(
                "INSERT INTO messages(content, files, tools, uuid, session_id, project, "
                "role, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        return len(rows)

    def search(
        self, query: str, limit: int = 10, project: str | None = None, max_terms: int = MAX_TERMS
    ) -> list[tuple[str, float]]:
        """Top ``limit`` (uuid, score) for ``query``, best first (higher score = better)."""
        expr = match_expression(query, max_terms)
        if expr is None or limit <= 0:
            return []
        w = ", ".join(str(x) for x in WEIGHTS)
        sql = f"SELECT uuid, bm25(messages, {w}) AS s FROM messages WHERE messages MATCH ?"
        args: list = [expr]
        if project is not None:
            sql += " AND project = ?"
            args.append(project)
        sql += " ORDER BY s LIMIT ?"
        args.append(int(limit))
        return [(u, -s) for u, s in self.con.execute(sql, args)]

    def count(self) -> int:
        return self.con.execute("SELECT count(*) FROM messages").fetchone()[0]

    def optimize(self) -> None:
        """Merge the FTS5 b-trees into one (what a finished bulk load would do)."""
        self.con.execute("INSERT INTO messages(messages) VALUES ('optimize')")
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                total += os.path.getsize(str(self.path) + suffix)
            except OSError:
                pass
        return total

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "FTS5Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
