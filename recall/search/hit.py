"""``Hit``: one search result, as the searcher, the service's socket and every edge pass it.

Its own module so that the edges that only print hits from the service (``recall --raw``,
the prompt hook) need not import the searcher and Tantivy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone


@dataclass
class Hit:
    session_id: str
    uuid: str
    project: str
    cwd: str
    timestamp: str  # ISO 8601, UTC
    role: str
    text: str
    snippet: str
    score: float
    kind: str = "message"  # message | session | memory | team
    # a user prompt's hit: the reply it got (recall.search.exchange); on the model path any
    # message's hit: what followed it in its turn, the conclusion first (Searcher.with_turns)
    reply: str | None = None
    question: str | None = None  # an assistant message's (on the model path any message's) hit: its turn's prompt
    confidence: float | None = None  # that it bears on the query (recall.search.confidence)
    similarity: float | None = None  # a semantic hit's cosine to the prompt (recall.search.semantic)
    echo: bool = False  # it restates what recall itself recalled (ranked below its source)
    # files it names or its session wrote that changed since (recall.search.stale): [] when none
    stale: list = field(default_factory=list)
    author: str | None = None  # a team item's hit: the teammate (PostgreSQL role) who shared it
    agent: str | None = None  # a message's or session's: the agent it came from (indexer.sources)
    tags: list = field(default_factory=list)  # a memory's tags (judged with its text: recall.search.confidence)
    channel: str | None = None  # which channel found it, where both ran: lexical | semantic | both (search.fused)
    # a prompt hook candidate's: the documents of the history it was judged in (the raw path's gate rises with it)
    history: int | None = None

    def as_json(self) -> dict:
        d = asdict(self)
        d["score"] = round(self.score, 4)
        if self.confidence is not None:
            d["confidence"] = round(self.confidence, 4)
        if self.similarity is None:
            d.pop("similarity")
        if self.channel is None:
            d.pop("channel")
        if self.history is None:
            d.pop("history")
        return d


def iso(ts: int | float) -> str:
    if not ts:
        return ""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
