"""The prompt hook's search: the prompt's informative terms, the current project's past
sessions searched for them (never the current session: it is already in context), each
candidate given its confidence (``recall.search.confidence``), those below
``hook.min_confidence`` dropped, and the answers that followed a matched question attached
(``with_answers``)."""

from __future__ import annotations

import os
import re
import threading
import time

from recall.prompt.settings import hook_settings
from recall.prompt.trivial import STOP_WORDS, normalize
from recall.search.words import FRAMING

MAX_PROMPT_CHARS = 4000    # of the prompt used as the search query
PER_SESSION = 3            # at most this many hits from one past session
CANDIDATES = 24            # candidates judged per prompt (the engine's best, messages and memories)
_FRAMING = frozenset(FRAMING)


def informative_terms(text: str) -> list[str]:
    """The prompt's analysed terms that say what it is about: ``recall.search.confidence``'s,
    imported only when called (it loads the analyzer: importing this module, as
    ``recall.prompt.block`` does, must not)."""
    from recall.search.confidence import informative_terms as terms

    return terms(text)


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
    stop = STOP_WORDS
    keep, framing = [], []
    for tok in _QUERY_TOKEN.findall(prompt[:MAX_PROMPT_CHARS]):
        if tok.startswith('"'):
            keep.append(tok)
            continue
        core = tok.strip(_EDGE_PUNCT)
        if core and core.lower() not in stop and not _noise(core):
            (framing if core.lower() in _FRAMING else keep).append(tok)
    # the words a question about the past is framed with ("last time", "remind me") point at
    # the history, not at a subject in it: searched only when nothing else is left
    return " ".join(keep or framing)


def candidates(searcher, text: str, limit: int, project: str | None, exclude_session: str | None) -> list:
    """The engine's best ``limit`` messages, memories and team items for ``text`` in ``project`` (not
    ``exclude_session``), as hits with their text and the exchange around them (what the
    confidence reads); no snippets: the kept ones get snippets fitted to the block when it is
    formatted. Ranked from fast fields; only these candidates' stored documents are decoded."""
    from recall.search.exchange import exchange

    s = searcher.index.searcher()
    built = searcher.build_query(s, text, doctypes=("message", "memory", "team"), project=project,
                                 exclude_session=exclude_session)
    if built is None:
        return []
    queries, _terms = built
    now = time.time()
    ranked = searcher.rank(s, searcher.top(s, queries, limit), now)
    hits = []
    for c in ranked[:limit]:
        doc = s.doc(c.address)
        hit, rec, fd = searcher._read(doc, c.score, now, boost=False, keep_open=True)
        try:
            if rec is not None and hit.kind == "message":
                flags: dict = {}
                hit.reply, hit.question = exchange(searcher.archive_root, hit.project, hit.session_id,
                                                   int(doc.get_first("apos")), hit.role,
                                                   str(rec.get("source") or ""), fd=fd, flags=flags)
                hit.echo = hit.echo or bool(flags.get("echo"))
        finally:
            if fd is not None:
                os.close(fd)
        hits.append(hit)
    return searcher.shown(hits)  # the readers' one gate: exclusions, `recall: off`, forgotten


def find_hits(prompt: str, cwd: str | None = None, session_id: str | None = None, hook: dict | None = None,
              searcher=None, trace: dict | None = None) -> list:
    """Hits worth injecting for ``prompt``: the current project (or all, by ``hook.scope``),
    not the current session, each with a confidence of at least ``hook.min_confidence``, at
    most ``hook.limit`` (and ``PER_SESSION`` of one session), best first. ``trace`` gets
    ``best``: the best candidate's confidence, which says why a prompt got nothing."""
    from indexer.project import canonical_project
    from recall.core.errors import IndexMissing
    from recall.search.confidence import DEFAULT_MIN_CONFIDENCE, judge, query_stats

    trace = trace if trace is not None else {}
    hook = hook or hook_settings()
    text = query_text(prompt)
    terms = informative_terms(text)
    if not terms:
        trace["best"] = None
        return []
    project = None
    if hook.get("scope") != "all":
        project = canonical_project(os.path.abspath(cwd or os.getcwd()))
    limit = int(hook.get("limit", 8))
    try:
        s = searcher if searcher is not None else shared_searcher()
    except IndexMissing:
        return []
    hits = candidates(s, text, CANDIDATES, project, session_id or None)
    idx = s.index.searcher()
    judged = judge(idx, text, hits, query_stats(idx, text, terms)) if hits else []
    trace["best"] = round(judged[0].confidence, 3) if judged else None
    need = float(hook.get("min_confidence", DEFAULT_MIN_CONFIDENCE))
    kept, per_session, seen_text = [], {}, set()
    for h in judged:
        if h.confidence < need:
            break
        key = normalize(h.text)[:300]
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
