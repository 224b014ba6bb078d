"""How sure recall is that a hit bears on a query: one calibrated confidence per candidate, and
the prompt hook's decision.

``recall --raw``, MCP ``memory_search`` and the hits ``recall ask`` sends are ordered by the
``LEXICAL`` confidence (``Searcher.search`` calls ``judge``). The prompt hook judges its
candidates (``Searcher.candidates``) with the ``DECISION`` model and ``decide`` keeps what passes
a path's gate: the raw path (no model reads the hits) ``hook.min_confidence``, one hit per past
session; the model path (the synthesis decides, and answers NONE when nothing bears on the
prompt) the looser ``hook.model_min_confidence``. Both replace the old relative floor ("within
35% of the best hit"), which in a big history always let something through.

Each model is logistic over a few general features of a (query, hit) pair, shipped here as
constants; ``LEXICAL`` was fitted on issue 25's pooled LongMemEval history
(``python -m benchmarks.injection --fit``), ``DECISION`` on issue 34's coding history and
LongMemEval pools at every size from 5 sessions to ~3,800 (``python -m benchmarks.injection_sizes
--fit``). Features, all relative to the history by construction:

* ``rare`` (``LEXICAL`` only): the idf-weighted share (squared: the rarest terms dominate) of the query's judged
  terms the hit holds, in its text or the exchange around it (the reply a question got, the
  question a reply answered; a memory's tags). A term no past message contains is judged, and
  counts against every hit (the query is about something never said), only when it is
  distinctive (``distinctive``: part of an identifier, a path or a ticket id, or not common
  English by ``recall.search.common_words``); an unknown common word ("repo", "timezone") is
  left out. Framing words ("last time", "remind me", "in this repo", "please") are not terms.
* ``held``: the plain share of all the query's informative terms the hit holds, each term
  weighing alike (the hook's decision reads this, not ``rare``: a word the history never said
  costs a hit what any other missing word does, not the most; unknown common words included:
  in a small history they are most of a new task's words).
* ``proximity``: the share of the query's adjacent judged-term pairs found close together in
  the hit (a phrase, not scattered words).
* ``score``: the engine's score (BM25 fields and bonuses, recency prior) over what a document
  holding every term once would score (``LEXICAL`` only: it moves with the size of the index).
* ``specific``: how many of the terms the hit holds single out few messages (at most 2% of
  them, or 3 in a small history, or part of an identifier), up to 2.
* ``margin``: the hit's lead over the best candidate of another session (query-performance
  prediction: an answer stands out of the rest of the history, a common-word match does not).

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
import re
from dataclasses import dataclass, field

from recall.core.settings import HOOK_DEFAULTS
from recall.search.query import W_CONTENT, analyze
from recall.search.words import CODING_FRAMING, FRAMING, PROMPT_STOPWORDS

_HOOK = dict(HOOK_DEFAULTS)
PSEUDO_DOCS = 100  # smoothing of the idf weights for small indexes
LONG_QUERY_TERMS = 12  # a longer query (a pasted log) is judged by its rarest terms that occur
PROXIMITY_WINDOW = 4  # two query words this close (in terms) in a hit count as together
MAX_TEXT = 20000  # characters of a hit read for its features
ECHO_FACTOR = 0.35  # a hit that restates recall's own output keeps this share of its confidence
SPECIFIC_SHARE = 0.02  # a term in at most this share of the messages singles out a few of them
SPECIFIC_TERMS = 2  # ``specific`` saturates at this many such terms held
SPECIFIC_MIN_DOCS = 3  # ... or in at most this many (a small history)

FEATURES = ("rare", "proximity", "score")  # LEXICAL's
DECISION_FEATURES = ("proximity", "held", "specific", "margin")


@dataclass(frozen=True)
class Model:
    """A logistic model: confidence = 1 / (1 + exp(-(bias + Σ weight × feature)))."""

    bias: float
    weights: dict[str, float]


# The order of every search (``recall --raw``, MCP, ``recall ask``): fitted on the tune half of
# benchmarks.injection (python -m benchmarks.injection --fit): 4,128 candidates of 172 LongMemEval
# prompts, 185 of them of an evidence session.
LEXICAL = Model(bias=-5.193, weights={"rare": 1.948, "proximity": 1.76, "score": 1.292})

# The prompt hook's decision (issue 34): fitted on the tune half of benchmarks.injection_sizes
# (python -m benchmarks.injection_sizes --fit RECORDS): the candidates of the coding history's
# dev prompts (three projects, alone, together, and beside 1,000 and 4,000 sessions of other
# projects) and of LongMemEval's tune half (pools of 5 to ~3,800 sessions), each corpus and size
# weighted alike. Only features whose meaning does not move with the size of the history: the
# engine's score does (its idf grows with every other project's session), and ``rare`` added
# nothing beside ``held`` and ``specific``. DEFAULT_MIN_CONFIDENCE (the raw path) is the lowest
# gate that kept new-task prompts silent on the tune half (>= 0.95 at every size but the full
# LongMemEval pools, >= 0.93 there, as today's gate); DEFAULT_MODEL_MIN_CONFIDENCE (the model
# path: the synthesis decides, and answers NONE) the lowest at which the model is sent at most
# 3.5 past sessions a prompt at every size.
DECISION = Model(bias=-2.466, weights={"proximity": 1.789, "held": 2.171, "specific": 0.457, "margin": 1.497})
# the gates' values live with every other hook default (recall.core.settings); named here too
DEFAULT_MIN_CONFIDENCE = _HOOK["min_confidence"]
DEFAULT_MODEL_MIN_CONFIDENCE = _HOOK[
    "model_min_confidence"
]  # the model path's looser gate: the synthesis answers NONE for the rest

# The raw path's gate at the size of the history searched (issue 47 item 8). The best of more
# chance matches scores higher: in one project of 3,881 chat sessions (43,782 messages) a question
# that shares four words with some session finds one that holds them all close together, and
# the same features mean less than in a project of a few hundred sessions. Up to RAW_GATE_DOCS
# documents (messages and memories) ``hook.min_confidence`` holds as set; past them it rises by
# RAW_GATE_STEP for each doubling, to at most RAW_GATE_MAX. Chosen on the tune half of
# benchmarks.injection_sizes' LongMemEval draws, without the service: the smallest step of 0.025
# to 0.15 (by 0.025, and 0.06) that brings the false share of the three draws of ~3,800 sessions
# (~43,000 messages: the two full pools and the chat pool, together) to at most 0.30 (0.26; 0.39
# at 0.06); RAW_GATE_DOCS leaves the 1,000-session draw (11,208 messages) its gate, and no coding
# project of the benchmark (at most 1,003 documents: clinicbook) comes near it.
RAW_GATE_DOCS = 10_000
RAW_GATE_STEP = 0.075
RAW_GATE_MAX = 0.95


def raw_gate(gate: float, docs: int | None) -> float:
    """The raw path's confidence gate (``hook.min_confidence``, ``gate``) in a history of
    ``docs`` documents: ``gate`` up to ``RAW_GATE_DOCS``, then ``RAW_GATE_STEP`` more per
    doubling, never over ``RAW_GATE_MAX`` (nor below ``gate``)."""
    if not docs or docs <= RAW_GATE_DOCS:
        return gate
    return max(gate, min(RAW_GATE_MAX, gate + RAW_GATE_STEP * math.log2(docs / RAW_GATE_DOCS)))


_stop: frozenset[str] | None = None


def _stops() -> frozenset[str]:
    """Prompt stopwords and framing words, as written and as analysed (stemmed)."""
    global _stop
    if _stop is None:
        words = [*PROMPT_STOPWORDS, *FRAMING, *CODING_FRAMING]
        _stop = frozenset(words) | frozenset(t for w in words for t in analyze(w))
    return _stop


def informative_terms(text: str) -> list[str]:
    """The query's analysed terms that say what it is about: no stopwords, no framing words,
    no 1-letter terms; in order, once each."""
    stop = _stops()
    return list(dict.fromkeys(t for t in analyze(text) if t not in stop and (len(t) > 1 or not t.isascii())))


_RAW_TOKEN = re.compile(r"[\w./\\:#@\-]+")
# the shape of an identifier, a path, a ticket id: word.word, a/b, snake_case, camelCase,
# CamelCase with a capital run (HTTPServer), letters and digits mixed (s3, v2), ZEBU-REFUND-7
_SHAPE = re.compile(
    r"\w[./\\:#@]\w|[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Za-z]\d|\d[A-Za-z]"
    r"|[A-Z]{2,}-\w|\w-\d"
)
_WORD = re.compile(r"[A-Za-z]+")
_common: str | None = None


def is_common(word: str) -> bool:
    """Whether ``word`` (lowercase letters) is common English: saying one the history never
    said is no evidence against a hit (``recall.search.common_words``, ~51K words; looked up
    in the list's text, which loads in about a millisecond, only when a prompt has a word no
    past session holds)."""
    global _common
    if _common is None:
        from recall.search.common_words import WORDS

        _common = " " + WORDS.replace("\n", " ") + " "
    return f" {word} " in _common


def distinctive(text: str, unknown: set[str]) -> set[str]:
    """Which of the ``unknown`` terms (no past session holds them) are distinctive in
    ``text``: part of an identifier, a path or a ticket id (``_SHAPE``), or a word that is
    not common English ("idempotency", "dramatiq") or not English at all. Only those count
    against a hit: a prompt saying "repo" or "timezone" to a history that never did is not,
    by that word, about something never said."""
    if not unknown:
        return set()
    out: set[str] = set()
    for tok in _RAW_TOKEN.findall(text[:4000]):
        parts = set(analyze(tok)) & unknown
        if not parts:
            continue
        if _SHAPE.search(tok.strip(".,:;-/#@\\")):
            out |= parts
            continue
        words = _WORD.findall(tok)
        if not words:  # digits or another script: no list says it is common
            out |= parts
            continue
        for w in words:
            if not is_common(w.lower()):
                out |= parts & set(analyze(w))
        out |= {t for t in parts if not t.isascii()}
    return out


@dataclass
class QueryStats:
    """What the features need to know of a query, computed once per query."""

    terms: list[str]
    weights: dict[str, float]  # idf of each judged term
    present: dict[str, float] = field(default_factory=dict)  # those the index holds
    pairs: list[tuple[str, str]] = field(default_factory=list)
    self_score: float = 1.0  # the engine's score of a document holding each present term once
    specific: set[str] = field(default_factory=set)  # present terms that single out few documents
    ignored: list[str] = field(default_factory=list)  # unknown, common words: judged by nobody

    @property
    def total(self) -> float:
        return sum(self.weights.values())


def query_stats(
    index_searcher, text: str, terms: list[str] | None = None, scoped: tuple[dict[str, int], int] | None = None
) -> QueryStats | None:
    """``QueryStats`` for ``text`` over an open Tantivy searcher; None when the text has no
    informative term (then nothing can be judged relevant to it).

    ``scoped``: the terms' document frequencies in the history searched (the current project's:
    ``Searcher.doc_freqs``) and its size; the terms are judged by those, so that other projects'
    sessions on the same machine change nothing (without it: the whole index's). A term the
    history does not hold is judged (it counts against every hit: the query is about something
    never said) only when it is distinctive (``distinctive``); an unknown common word is left
    out. A present term is ``specific`` when it is in at most ``SPECIFIC_SHARE`` of the
    messages (or part of an identifier): relative to the history by construction."""
    terms = informative_terms(text) if terms is None else terms
    if not terms:
        return None
    total_docs = max(1, index_searcher.num_docs)
    everywhere = {}
    for t in terms:
        try:
            everywhere[t] = index_searcher.doc_freq("content", t)
        except Exception:
            everywhere[t] = 0
    if scoped is not None:
        dfs = {t: int(scoped[0].get(t, 0)) for t in terms}
        docs = max(1, int(scoped[1]))
    else:
        dfs, docs = everywhere, total_docs
    n = docs + PSEUDO_DOCS
    unknown = {t for t, df in dfs.items() if not df}
    counted = distinctive(text, unknown)
    ignored = [t for t in terms if t in unknown and t not in counted]
    shaped = (
        distinctive(text, set(terms) - unknown)
        if any(_SHAPE.search(x) for x in _RAW_TOKEN.findall(text[:4000]))
        else set()
    )
    weights, present, engine = {}, {}, {}
    specific = set()
    for t in terms:
        df = dfs[t]
        if not df and t not in counted:
            continue
        w = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        weights[t] = w
        if df:
            present[t] = w
            gdf = max(df, everywhere.get(t, 0))  # BM25's own idf, as Tantivy scores (the whole index)
            engine[t] = math.log(1.0 + (total_docs - gdf + 0.5) / (gdf + 0.5))
            if df <= max(SPECIFIC_MIN_DOCS, SPECIFIC_SHARE * docs) or t in shaped:
                specific.add(t)
    if len(weights) > LONG_QUERY_TERMS:
        keep = sorted(present, key=present.get)[-LONG_QUERY_TERMS:]
        weights = {t: weights[t] for t in keep}
        present = {t: present[t] for t in keep}
    judged = [t for t in terms if t in weights]
    if not judged:
        return None
    pairs = list(zip(judged, judged[1:]))
    # on the engine's own scale, whatever the size of the index; when the index holds none of
    # the judged terms, whatever a hit matched ("what" of "what's") is no match: score 0
    self_score = W_CONTENT * sum(engine[t] for t in present) if present else math.inf
    return QueryStats(judged, weights, present, pairs, self_score, specific & set(present), ignored)


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
    held_specific = sum(1 for t in q.specific if t in held)
    # a note is judged on the terms the history holds (like ``rare``), and its engine score (a
    # few words, weighted up as distilled) counts as a document holding each term once at most
    every = list(q.present) if note else [*q.weights, *q.ignored]
    relative = max(0.0, score) / q.self_score
    return {
        "held": sum(1 for t in every if t in held) / len(every) if every else 0.0,
        "coverage": coverage,
        "rare": rare,
        "proximity": proximity,
        "score": min(1.0 if note else 3.0, relative),
        "specific": min(SPECIFIC_TERMS, held_specific) / SPECIFIC_TERMS,
    }


def confidence(feats: dict[str, float], model: Model | None = None) -> float:
    """The calibrated probability that the hit bears on the query (``LEXICAL``; ``model``:
    another, as the fit tries)."""
    model = model or LEXICAL
    z = model.bias + sum(w * feats.get(name, 0.0) for name, w in model.weights.items())
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def hit_context(hit) -> str:
    """The exchange around a hit (``Hit.reply`` / ``Hit.question``), or a memory's tags, as one text."""
    return " ".join(
        x
        for x in (
            getattr(hit, "reply", None),
            getattr(hit, "question", None),
            " ".join(map(str, getattr(hit, "tags", None) or ())),
        )
        if x
    )


def margins(hits: list) -> list[float]:
    """Each hit's lead over the best hit of another session, as a share of the larger score
    (in [-1, 1]; 1 when no other session matched): how much the engine's top stands out of
    the rest of this history, whatever its size (query-performance prediction)."""
    best: dict[str, float] = {}
    for h in hits:
        best[h.session_id] = max(best.get(h.session_id, 0.0), max(0.0, float(h.score)))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    out = []
    for h in hits:
        other = next((v for sid, v in ranked if sid != h.session_id), 0.0)
        own = max(0.0, float(h.score))
        out.append((own - other) / max(own, other) if max(own, other) > 0 else 0.0)
    return out


def hit_features(q: QueryStats, hits: list) -> list[dict[str, float]]:
    """The features of each of ``hits`` (the candidates of one query, in the engine's order)."""
    out = []
    for h, m in zip(hits, margins(hits)):
        f = features(
            q, h.text, h.score, hit_context(h), note=h.kind in ("memory", "team") and not str(h.uuid).startswith("sum-")
        )
        f["margin"] = m
        out.append(f)
    return out


def judge(
    index_searcher,
    text: str,
    hits: list,
    stats: QueryStats | None = None,
    reorder: bool = True,
    model: Model | None = None,
) -> list:
    """Set ``hit.confidence`` on every hit and return them ordered by it, best first (ties
    keep the engine's order; ``reorder=False`` keeps the engine's order). The one ordering
    every edge shows."""
    q = stats if stats is not None else query_stats(index_searcher, text)
    feats = hit_features(q, hits) if q is not None else [None] * len(hits)
    for h, f in zip(hits, feats):
        if f is None:
            h.confidence = 0.0
            continue
        c = confidence(f, model)
        if getattr(h, "echo", False):
            c *= ECHO_FACTOR
        h.confidence = c
    if not reorder:
        return hits
    order = sorted(range(len(hits)), key=lambda i: (-hits[i].confidence, i))
    return [hits[i] for i in order]


@dataclass
class Decision:
    """What the prompt hook injects of its candidates (``decide``), and why."""

    hits: list  # kept, best first
    best: float | None  # the best candidate's confidence (None: no candidate)
    gate: float  # the confidence a hit needed
    setting: str  # the setting that gate comes from
    repeated: list = field(default_factory=list)  # sessions passed over: injected earlier in this conversation


PROSE_ROLES = ("user", "assistant", "summary")


def _readable_first(judged: list, gate: float) -> list:
    """``judged`` with, in each session, a passing prompt or reply moved ahead of the session's
    passing tool calls and outputs (one hit per session shows the one a reader can use: the
    decision, not the ``Edit: queue/store.py`` line beside it); sessions keep their order."""
    passing = [h for h in judged if h.confidence >= gate]
    if len(passing) < 2:
        return judged
    best: dict[str, object] = {}
    for h in passing:
        cur = best.get(h.session_id)
        if cur is None or (getattr(h, "role", "") in PROSE_ROLES and getattr(cur, "role", "") not in PROSE_ROLES):
            best[h.session_id] = h
    order = list(dict.fromkeys(h.session_id for h in passing))
    chosen = [best[sid] for sid in order]
    ids = {id(h) for h in chosen}
    return chosen + [h for h in judged if id(h) not in ids]


def decide(
    judged: list, gate: float, setting: str, limit: int, per_session: int = 1, skip_sessions=frozenset(), key=None
) -> Decision:
    """The hits of ``judged`` (``judge``'s order) at or above ``gate``: at most ``limit``, and
    ``per_session`` of one session, none of ``skip_sessions`` (already injected in this
    conversation), none whose ``key`` (e.g. its normalised text) an earlier kept hit had."""
    kept, per, seen, repeated = [], {}, set(), []
    best = round(judged[0].confidence, 3) if judged else None
    if per_session == 1:
        judged = _readable_first(judged, gate)
    for h in judged:
        if h.confidence < gate:
            break
        if h.session_id in skip_sessions:
            if h.session_id not in repeated:
                repeated.append(h.session_id)
            continue
        k = key(h) if key is not None else None
        if key is not None and (not k or k in seen):
            continue
        if per.get(h.session_id, 0) >= per_session:
            continue
        seen.add(k)
        per[h.session_id] = per.get(h.session_id, 0) + 1
        kept.append(h)
        if len(kept) >= limit:
            break
    return Decision(kept, best, gate, setting, repeated)
