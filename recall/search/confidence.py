"""How sure recall is that a hit bears on a query: one calibrated confidence per candidate.

The prompt hook injects only hits whose confidence reaches ``hook.min_confidence``, and
nothing when none does; ``recall --raw``, MCP ``memory_search`` and the hits ``recall ask``
sends are ordered by the same confidence (``Searcher.search`` calls ``judge``). It replaces
the old relative floor ("within 35% of the best hit"), which in a big history always let
something through: common words ("toggle", "settings", "page") always find a best hit.

The confidence is a logistic model over a few general features of a (query, hit) pair,
fitted on the tune half of ``benchmarks.injection`` (a pooled LongMemEval history with
answerable, unanswerable and new-task prompts) and shipped here as constants (``LEXICAL``);
``python -m benchmarks.injection --fit`` refits them. Features:

* ``rare``: the idf-weighted share (squared: the rarest terms dominate) of the query's
  informative terms the hit holds, in its text or the exchange around it (the reply a
  question got, the question a reply answered). A term no past session contains is the
  rarest of all: the query is about something never said. Framing words ("last time",
  "remind me", "did we decide") are not terms. (``coverage``, the plain idf-weighted share,
  is computed too; fitted beside ``rare`` it added nothing, so the model leaves it out.)
* ``proximity``: the share of the query's adjacent informative-term pairs found close
  together in the hit (a phrase, not scattered words).
* ``score``: the engine's score (BM25 fields and bonuses, recency prior) over what a
  document holding every term once would score: how strongly, not only whether, it matches.

The semantic stage's cosine (issue 25 item 3) is not a feature: fitted beside these, as a
re-rank signal, a fused candidate list or a margin over the history, it moved neither the
gate's figures nor R@5 on the report half (docs/benchmarks.md), so it is not shipped (branch
``i25-hybrid`` holds it, with a rule that adds a lone paraphrase no word of the prompt finds).

A hit that restates what recall itself injected (a reply quoting a recalled block, a
session summary of such a session, a ``/recall`` or ``/remember`` session) is marked
``echo`` at ingest (``indexer.transcripts.mark_echo``; a summary by its tag) and its confidence scaled by ``ECHO_FACTOR``: the session
it came from ranks first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from recall.search.query import W_CONTENT, analyze
from recall.search.words import FRAMING, PROMPT_STOPWORDS

PSEUDO_DOCS = 100        # smoothing of the idf weights for small indexes
LONG_QUERY_TERMS = 12    # a longer query (a pasted log) is judged by its rarest terms that occur
PROXIMITY_WINDOW = 4     # two query words this close (in terms) in a hit count as together
MAX_TEXT = 20000         # characters of a hit read for its features
ECHO_FACTOR = 0.35       # a hit that restates recall's own output keeps this share of its confidence

FEATURES = ("rare", "proximity", "score")


@dataclass(frozen=True)
class Model:
    """A logistic model: confidence = 1 / (1 + exp(-(bias + Σ weight × feature)))."""

    bias: float
    weights: dict[str, float]


# Fitted on the tune half of benchmarks.injection (python -m benchmarks.injection --fit): 4,128
# candidates of 172 prompts, 185 of them of an evidence session. Calibrated on that mix, a good
# hit's confidence is low in absolute terms (most candidates of most prompts bear on nothing):
# DEFAULT_MIN_CONFIDENCE is the lowest gate that kept 90% of new-task prompts and 50% of
# unanswerable ones silent on the tune half.
LEXICAL = Model(bias=-5.193, weights={"rare": 1.948, "proximity": 1.76, "score": 1.292})
DEFAULT_MIN_CONFIDENCE = 0.11


_stop: frozenset[str] | None = None


def _stops() -> frozenset[str]:
    """Prompt stopwords and framing words, as written and as analysed (stemmed)."""
    global _stop
    if _stop is None:
        words = [*PROMPT_STOPWORDS, *FRAMING]
        _stop = frozenset(words) | frozenset(t for w in words for t in analyze(w))
    return _stop


def informative_terms(text: str) -> list[str]:
    """The query's analysed terms that say what it is about: no stopwords, no framing words,
    no 1-letter terms; in order, once each."""
    stop = _stops()
    return list(dict.fromkeys(t for t in analyze(text) if t not in stop and (len(t) > 1 or not t.isascii())))


@dataclass
class QueryStats:
    """What the features need to know of a query, computed once per query."""

    terms: list[str]
    weights: dict[str, float]        # idf of each judged term
    present: dict[str, float] = field(default_factory=dict)  # those the index holds
    pairs: list[tuple[str, str]] = field(default_factory=list)
    self_score: float = 1.0          # the engine's score of a document holding each present term once

    @property
    def total(self) -> float:
        return sum(self.weights.values())


def query_stats(index_searcher, text: str, terms: list[str] | None = None) -> QueryStats | None:
    """``QueryStats`` for ``text`` over an open Tantivy searcher; None when the text has no
    informative term (then nothing can be judged relevant to it)."""
    terms = informative_terms(text) if terms is None else terms
    if not terms:
        return None
    docs = max(1, index_searcher.num_docs)
    n = docs + PSEUDO_DOCS
    weights, present, engine = {}, {}, {}
    for t in terms:
        try:
            df = index_searcher.doc_freq("content", t)
        except Exception:
            df = 0
        w = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        weights[t] = w
        if df:
            present[t] = w
            engine[t] = math.log(1.0 + (docs - df + 0.5) / (df + 0.5))  # BM25's own idf, as Tantivy scores
    if len(weights) > LONG_QUERY_TERMS:
        keep = sorted(present, key=present.get)[-LONG_QUERY_TERMS:]
        weights = {t: weights[t] for t in keep}
        present = {t: present[t] for t in keep}
    judged = [t for t in terms if t in weights]
    pairs = list(zip(judged, judged[1:]))
    # on the engine's own scale, whatever the size of the index; when the index holds none of
    # the judged terms, whatever a hit matched ("what" of "what's") is no match: score 0
    self_score = W_CONTENT * sum(engine[t] for t in present) if present else math.inf
    return QueryStats(judged, weights, present, pairs, self_score)


def _positions(tokens: list[str], wanted: set[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, t in enumerate(tokens):
        if t in wanted:
            out.setdefault(t, []).append(i)
    return out


def features(q: QueryStats, text: str, score: float, context: str = "", note: bool = False) -> dict[str, float]:
    """The lexical features of a hit (its ``text``, the exchange around it in ``context``,
    the engine's ``score``) for the query ``q``. ``note``: the hit is a memory (a line of
    MEMORY.md or CLAUDE.md, a typed memory): a distilled note a few words long, judged on
    the query's terms the history holds (a word it never says does not count against it)."""
    tokens = analyze((text or "")[:MAX_TEXT])
    around = set(analyze(context[:MAX_TEXT])) if context else set()
    held = set(tokens) | around
    total = q.total or 1.0
    coverage = sum(w for t, w in q.weights.items() if t in held) / total
    judged = q.present if note else q.weights
    sq = sum(w * w for w in judged.values())
    rare = sum(w * w for t, w in judged.items() if t in held) / sq if sq else 0.0
    proximity = 0.0
    if q.pairs:
        pos = _positions(tokens, {t for p in q.pairs for t in p})
        near = 0
        for a, b in q.pairs:
            pa, pb = pos.get(a), pos.get(b)
            if pa and pb and any(abs(i - j) <= PROXIMITY_WINDOW for i in pa for j in pb):
                near += 1
        proximity = near / len(q.pairs)
    return {"coverage": coverage, "rare": rare, "proximity": proximity,
            "score": min(3.0, max(0.0, score) / q.self_score)}


def confidence(feats: dict[str, float], model: Model | None = None) -> float:
    """The calibrated probability that the hit bears on the query (``LEXICAL``; ``model``:
    another, as the fit tries)."""
    model = model or LEXICAL
    z = model.bias + sum(w * feats.get(name, 0.0) for name, w in model.weights.items())
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def hit_context(hit) -> str:
    """The exchange around a hit (``Hit.reply`` / ``Hit.question``), as one text."""
    return " ".join(x for x in (getattr(hit, "reply", None), getattr(hit, "question", None)) if x)


def judge(index_searcher, text: str, hits: list, stats: QueryStats | None = None, reorder: bool = True) -> list:
    """Set ``hit.confidence`` on every hit and return them ordered by it, best first (ties
    keep the engine's order; ``reorder=False`` keeps the engine's order). The one ordering
    every edge shows."""
    q = stats if stats is not None else query_stats(index_searcher, text)
    for h in hits:
        if q is None:
            h.confidence = 0.0
            continue
        feats = features(q, h.text, h.score, hit_context(h),
                         note=h.kind in ("memory", "team") and not str(h.uuid).startswith("sum-"))
        c = confidence(feats)
        if getattr(h, "echo", False):
            c *= ECHO_FACTOR
        h.confidence = c
    if not reorder:
        return hits
    order = sorted(range(len(hits)), key=lambda i: (-hits[i].confidence, i))
    return [hits[i] for i in order]

