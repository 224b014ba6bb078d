"""The prompt hook's search: the prompt's informative terms, the current project's past
sessions searched for them (never the current session: it is already in context), hits
below the relevance floor dropped (``coverage``), and the answers that followed a matched
question attached (``with_answers``)."""

from __future__ import annotations

import math
import os
import re
import threading
import time

from recall.prompt.settings import hook_settings
from recall.prompt.trivial import _STOP_WORDS, STOPWORDS, _normalize

MAX_PROMPT_CHARS = 4000    # of the prompt used as the search query
PER_SESSION = 3            # at most this many hits from one past session
LONG_PROMPT_TERMS = 12     # a prompt with more informative terms is judged by its rarest ones
MIN_COVERAGE = 0.5         # default hook.min_coverage: idf-weighted share of the prompt's terms a hit holds
PSEUDO_DOCS = 100          # smoothing of those weights for small indexes


_stems: set[str] | None = None


def _stop_stems() -> set[str]:
    global _stems
    if _stems is None:
        from recall.search.query import analyze

        _stems = {t for w in STOPWORDS for t in analyze(w)} | set(STOPWORDS)
    return _stems


def informative_terms(text: str) -> list[str]:
    """The prompt's analysed terms that say what it is about (no stopwords, no 1-letter terms)."""
    from recall.search.query import analyze

    stop = _stop_stems()
    return list(dict.fromkeys(t for t in analyze(text) if t not in stop and (len(t) > 1 or not t.isascii())))


def term_weights(searcher, terms: list[str]) -> dict[str, float]:
    """BM25's idf of each term over the whole index. A term no document contains weighs the
    most: the prompt is about something past sessions never mention. A long prompt (a pasted
    log, a long brief) is judged by its ``LONG_PROMPT_TERMS`` rarest terms that do occur."""
    s = searcher.index.searcher()
    # PSEUDO_DOCS documents that hold none of the terms: a small index (every word rare, any
    # paraphrase missing) does not make a single absent word outweigh all the others
    n = max(1, s.num_docs) + PSEUDO_DOCS
    out, absent = {}, set()
    for t in terms:
        try:
            df = s.doc_freq("content", t)
        except Exception:
            df = 0
        if df == 0:
            absent.add(t)
        out[t] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    if len(out) > LONG_PROMPT_TERMS:
        present = sorted((w, t) for t, w in out.items() if t not in absent)[-LONG_PROMPT_TERMS:]
        out = {t: w for w, t in present}
    return out


def coverage(weights: dict[str, float], text: str) -> float:
    """The idf-weighted share of the prompt's informative terms that ``text`` contains."""
    from recall.search.query import analyze

    total = sum(weights.values())
    if total <= 0:
        return 0.0
    present = set(analyze(text[:20000]))
    return sum(w for t, w in weights.items() if t in present) / total


_searcher = None
_searcher_lock = threading.Lock()


def shared_searcher():
    """One Searcher per process (the service keeps it warm); refreshed on every use."""
    global _searcher
    from recall.core import paths
    from recall.search.searcher import Searcher

    with _searcher_lock:
        if _searcher is None or _searcher.index_path != paths.index_dir():
            _searcher = Searcher()
        else:
            try:
                _searcher.refresh()
            except Exception:
                _searcher = Searcher()
        return _searcher


_QUERY_TOKEN = re.compile(r'"[^"]{2,200}"|\S+')
_EDGE_PUNCT = ".,;:!?()[]{}<>'\"`*"


_NOISE = re.compile(r"^[A-Za-z0-9_\-+=]{16,}$")
_HEX = re.compile(r"^[0-9a-fA-F\-]{16,}$")
_SWITCH = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def _noise(token: str) -> bool:
    """A key, hash, UUID or other random-looking token: it can only match itself (and secrets
    were redacted from the index anyway), so it says nothing about what the prompt is about.
    Identifiers such as ``parseBm25Score`` or ``s3_upload_v2`` are not noise."""
    if len(token) > 60 and "/" not in token:
        return True
    if not _NOISE.match(token):
        return False
    digits = sum(c.isdigit() for c in token)
    if not digits:
        return False
    if _HEX.match(token):
        return True
    alnum = sum(c.isalnum() for c in token)
    return digits / alnum >= 0.25 or len(_SWITCH.findall(token)) >= 6


def query_text(prompt: str) -> str:
    """The prompt without its stopwords and random-looking tokens: the same hits, without
    scoring every document that says "the" or "what" (quoted phrases are kept whole)."""
    stop = _STOP_WORDS
    keep = []
    for tok in _QUERY_TOKEN.findall(prompt[:MAX_PROMPT_CHARS]):
        if tok.startswith('"'):
            keep.append(tok)
            continue
        core = tok.strip(_EDGE_PUNCT)
        if core and core.lower() not in stop and not _noise(core):
            keep.append(tok)
    return " ".join(keep)


def candidates(searcher, text: str, limit: int, project: str | None, exclude_session: str | None,
               floor: float = 0.0, min_score: float = 0.0) -> list:
    """``Searcher.search(text, messages=True, doctypes=("message", "memory"), ...)`` without
    the snippets: most candidates fall below the floor, and the kept ones get snippets fitted
    to the block when it is formatted (snippets were half of the hook's search time). Ranked
    from fast fields; only candidates scoring at least ``floor`` × the best (and
    ``min_score``) have their stored documents decoded."""
    s = searcher.index.searcher()
    built = searcher.build_query(s, text, doctypes=("message", "memory"), project=project,
                                 exclude_session=exclude_session)
    if built is None:
        return []
    queries, _terms = built
    now = time.time()
    ranked = searcher.rank(s, searcher.top(s, queries, limit), now)
    if not ranked:
        return []
    cut = max(floor * ranked[0].score, min_score)
    return searcher.shown([searcher._hit(s.doc(c.address), c.score, now, boost=False)
                           for c in ranked if c.score >= cut])


def find_hits(prompt: str, cwd: str | None = None, session_id: str | None = None, hook: dict | None = None,
              searcher=None) -> list:
    """Hits worth injecting for ``prompt``: the current project (or all, by ``hook.scope``),
    not the current session, above the relevance floor, at most ``hook.limit``."""
    from indexer.project import canonical_project
    from recall.core.errors import IndexMissing

    hook = hook or hook_settings()
    text = query_text(prompt)
    terms = informative_terms(text)
    if not terms:
        return []
    project = None
    if hook.get("scope") != "all":
        project = canonical_project(os.path.abspath(cwd or os.getcwd()))
    limit = int(hook.get("limit", 8))
    try:
        s = searcher if searcher is not None else shared_searcher()
    except IndexMissing:
        return []
    ratio, min_score = float(hook.get("relevance_floor", 0.35)), float(hook.get("min_score", 0.0))
    hits = candidates(s, text, max(limit * 4, 24), project, session_id or None, ratio, min_score)
    if not hits:
        return []
    floor = max(ratio * hits[0].score, min_score)
    weights = term_weights(s, terms)
    need = float(hook.get("min_coverage", MIN_COVERAGE))
    kept, per_session, seen_text = [], {}, set()
    for h in hits:
        if h.score < floor:
            break
        if coverage(weights, h.text) < need:
            continue
        key = _normalize(h.text)[:300]
        if not key or key in seen_text:
            continue
        if per_session.get(h.session_id, 0) >= PER_SESSION:
            continue
        seen_text.add(key)
        per_session[h.session_id] = per_session.get(h.session_id, 0) + 1
        kept.append(h)
        if len(kept) >= limit:
            break
    return with_answers(s, kept, limit + limit // 2)


def answer_to(searcher, hit, window: int = 3600):
    """The assistant's reply that followed a recalled user prompt in the same session, if any
    (a question rarely repeats the words of its answer, so the answer is brought along)."""
    import tantivy

    from recall.search.hit import iso

    from datetime import datetime  # fromisoformat: no _strptime/locale import on the hot path

    try:
        ts = int(datetime.fromisoformat(hit.timestamp.replace("Z", "+00:00")).timestamp()) \
            if hit.timestamp else None
    except (ValueError, OverflowError):
        ts = None
    if ts is None:
        return None
    schema = searcher.schema
    tq = tantivy.Query

    def term(field, value):
        return (tantivy.Occur.Must, tq.term_query(schema, field, value, index_option="basic"))

    query = tq.boolean_query([
        term("session_id", hit.session_id), term("doctype", "message"), term("role", "assistant"),
        (tantivy.Occur.Must, tq.range_query(schema, "ts", tantivy.FieldType.Integer, ts, ts + window)),
    ])
    try:
        s = searcher.index.searcher()
        result = s.search(query, 1, count=False, order_by_field="ts", order=tantivy.Order.Asc)
        if not result.hits:
            return None
        doc = s.doc(result.hits[0][1])
    except Exception:  # an older index without the fast field: no answer, no failure
        return None
    answer = searcher._hit(doc, hit.score, time.time())
    answer.timestamp = answer.timestamp or iso(ts)
    answer.snippet = " ".join(answer.text.split())[:240]
    return answer


def with_answers(searcher, hits: list, cap: int) -> list:
    """``hits`` with the reply to each recalled user prompt right after it (no duplicates)."""
    if not any(h.role == "user" for h in hits):
        return hits
    have = {h.uuid for h in hits}
    out = []
    for h in hits:
        out.append(h)
        if h.role == "user" and h.kind == "message":
            a = answer_to(searcher, h)
            if a is not None and a.uuid not in have and searcher.shown([a]):
                have.add(a.uuid)
                out.append(a)
    return out[:cap]
