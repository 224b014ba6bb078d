"""The prompt hook's search: the prompt's informative terms, the current project's past
sessions searched for them through ``Searcher.candidates`` (never the current session: it is
already in context), each candidate given its confidence (``recall.search.confidence``),
and the two paths' picks: the raw path keeps the strict gate (``hook.min_confidence``, one
hit per session, ``hook.raw_limit``); the model path sends the synthesis what passes the
looser ``hook.model_min_confidence`` and lets the model answer NONE."""

from __future__ import annotations

import os
import re
import threading

from recall.prompt.settings import HookSettings, hook_settings
from recall.prompt.trivial import STOP_WORDS, normalize
from recall.search.words import CODING_FRAMING, FRAMING

MAX_PROMPT_CHARS = 4000  # of the prompt used as the search query
PER_SESSION = 3  # at most this many hits from one past session
CANDIDATES = 24  # candidates judged per prompt (the engine's best, messages and memories)
_FRAMING = frozenset(FRAMING) | frozenset(CODING_FRAMING)


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
    """The engine's best ``limit`` candidates for ``text`` in ``project``, not of
    ``exclude_session`` (``Searcher.candidates``)."""
    from recall.search.searcher import CandidateFilter

    return searcher.candidates(text, CandidateFilter(project=project, exclude_session=exclude_session), limit)


def judged_candidates(
    prompt: str, cwd: str | None = None, session_id: str | None = None, hook: HookSettings | None = None, searcher=None
) -> tuple[list, object]:
    """The current project's (or every project's, by ``hook.scope``) candidates for ``prompt``,
    not of the current session, each with its confidence, best first; and the searcher."""
    from indexer.project import canonical_project
    from recall.core.errors import IndexMissing
    from recall.search.confidence import DECISION, judge, query_stats

    hook = hook or hook_settings()
    text = query_text(prompt)
    terms = informative_terms(text)
    if not terms:
        return [], None
    project = None
    if hook.scope != "all":
        project = canonical_project(os.path.abspath(cwd or os.getcwd()))
    try:
        s = searcher if searcher is not None else shared_searcher()
    except IndexMissing:
        return [], None
    hits = candidates(s, text, CANDIDATES, project, session_id or None)
    if not hits:
        return [], s
    idx = s.index.searcher()
    # the prompt's words judged by this project's history (other projects change nothing)
    scoped = s.doc_freqs(terms, project) if project else None
    judged = judge(idx, text, hits, query_stats(idx, text, terms, scoped), model=DECISION)
    docs = int(scoped[1]) if scoped is not None else int(idx.num_docs)
    for h in judged:
        h.history = docs  # the raw path's gate reads it (``raw_gate``)
    return judged, s


def raw_gate(judged: list, hook: HookSettings) -> float:
    """The confidence the raw path needs of ``judged``: ``hook.min_confidence`` at the size of
    the history they were judged in (``recall.search.confidence.raw_gate``: higher in a history
    of tens of thousands of messages, where chance matches are many)."""
    from recall.search.confidence import raw_gate as at_size

    docs = max((getattr(h, "history", None) or 0 for h in judged), default=0)
    return at_size(hook.min_confidence, docs)


def _text_key(hit) -> str:
    return normalize(hit.text)[:300]


def raw_decision(judged: list, hook: HookSettings, skip_sessions=frozenset()):
    """The raw path's pick (no model reads it): hits at or above ``hook.min_confidence`` (at
    the history's size: ``raw_gate``), one per past session, at most ``hook.raw_limit``."""
    from recall.search.confidence import decide

    return decide(
        judged,
        raw_gate(judged, hook),
        "hook.min_confidence",
        hook.raw_limit,
        1,
        skip_sessions,
        _text_key,
    )


def model_decision(judged: list, hook: HookSettings, skip_sessions=frozenset()):
    """The model path's pick (the synthesis decides, and answers NONE when nothing bears on
    the prompt): hits at or above the looser ``hook.model_min_confidence``, at most
    ``hook.limit``, ``PER_SESSION`` of one session."""
    from recall.search.confidence import decide

    gate = hook.model_min_confidence
    return decide(judged, gate, "hook.model_min_confidence", hook.limit, PER_SESSION, skip_sessions, _text_key)


def nearest_sessions(
    prompt: str, cwd: str | None, session_id: str | None, hook: HookSettings, searcher, skip=()
) -> list:
    """The semantic channel's nearest past sessions of the current project (one hit each, best
    first, ``recall.search.semantic.related``), enough of them for both paths' picks
    (``semantic_picks``); [] where no vectors are attached (only the service has them),
    ``hook.semantic`` is off or ``hook.scope`` is ``all``. Not of the current session, nor of
    ``skip`` (sessions injected earlier in this conversation)."""
    from recall.search import semantic

    store = semantic.attached()
    if store is None or searcher is None or not semantic.enabled(hook) or hook.scope == "all":
        return []
    from indexer.project import canonical_project

    project = canonical_project(os.path.abspath(cwd or os.getcwd()))
    floor = min(hook.semantic_min_similarity, semantic.RAW_MIN_SIMILARITY)
    return semantic.related(
        searcher,
        store,
        prompt[:MAX_PROMPT_CHARS],
        project,
        exclude_session=session_id or None,
        sessions=hook.semantic_sessions + hook.limit,
        floor=floor,
        skip_sessions=frozenset(skip),
    )


def may_corroborate(judged: list, raw_hits: list, hook: HookSettings) -> bool:
    """Whether the raw path could take a session by meaning (``semantic_picks``): a place is
    left and some candidate's confidence is in between ``RAW_MIN_CONFIDENCE`` and
    ``hook.min_confidence``. When not, the raw path does not embed the prompt at all."""
    if len(raw_hits) >= hook.raw_limit:
        return False
    gate = raw_gate(judged, hook)
    floor = corroboration_floor(judged, hook)
    return any(floor <= (h.confidence or 0.0) < gate for h in judged)


def corroboration_floor(judged: list, hook: HookSettings) -> float:
    """The lexical confidence a session found by meaning needs to join the raw path's picks:
    ``RAW_MIN_CONFIDENCE``, raised by as much as the history's size raises the gate
    (``raw_gate``): the same words mean as little in corroboration as alone."""
    from recall.search.semantic import RAW_MIN_CONFIDENCE

    shift = raw_gate(judged, hook) - hook.min_confidence
    return RAW_MIN_CONFIDENCE + shift if shift > 0 else RAW_MIN_CONFIDENCE


def semantic_picks(near: list, judged: list, model_hits: list, raw_hits: list, hook: HookSettings) -> tuple[list, list]:
    """What the semantic channel adds to each path, from ``near`` (``nearest_sessions``).

    * the model path: the nearest sessions at or above ``hook.semantic_min_similarity`` that its
      lexical picks do not already bring, at most ``hook.semantic_sessions``: the model decides;
    * the raw path, where nobody reads before it is injected: the nearest session only, and only
      when two signals agree: its cosine reaches ``RAW_MIN_SIMILARITY`` and its best lexical
      candidate reaches ``RAW_MIN_CONFIDENCE`` (below ``hook.min_confidence``, which alone
      suffices; both raised alike in a big history: ``corroboration_floor``), within
      ``hook.raw_limit``."""
    from recall.search import semantic

    floor = hook.semantic_min_similarity
    have = {h.session_id for h in model_hits}
    model_extra = [h for h in near if h.similarity >= floor and h.session_id not in have]
    model_extra = model_extra[: hook.semantic_sessions]
    raw_extra = []
    if near and len(raw_hits) < hook.raw_limit:
        top = near[0]
        lexical = max((h.confidence or 0.0 for h in judged if h.session_id == top.session_id), default=0.0)
        if (
            top.similarity >= semantic.RAW_MIN_SIMILARITY
            and lexical >= corroboration_floor(judged, hook)
            and top.session_id not in {h.session_id for h in raw_hits}
        ):
            top.confidence = round(lexical, 4)
            raw_extra = [top]
    return model_extra, raw_extra


def model_candidates(model_hits: list, extra: list, hook: HookSettings) -> list:
    """The model path's reading: the lexical picks (at most ``hook.limit``), then the semantic
    channel's (at most ``hook.semantic_sessions`` more): neither crowds the other out."""
    return list(model_hits)[: max(1, hook.limit)] + list(extra)


def find_hits(
    prompt: str,
    cwd: str | None = None,
    session_id: str | None = None,
    hook: HookSettings | None = None,
    searcher=None,
    trace: dict | None = None,
    path: str = "raw",
) -> list:
    """Hits worth injecting for ``prompt`` on ``path`` (``raw``: ``raw_decision``; ``model``:
    ``model_decision``, with the replies to recalled prompts attached). ``trace`` gets
    ``best``: the best candidate's confidence, which says why a prompt got nothing."""
    trace = trace if trace is not None else {}
    hook = hook or hook_settings()
    judged, s = judged_candidates(prompt, cwd, session_id, hook, searcher)
    trace["best"] = round(judged[0].confidence, 3) if judged else None
    if not judged:
        return []
    if path == "model":
        d = model_decision(judged, hook)
        return with_answers(s, d.hits, hook.limit + hook.limit // 2)
    return raw_decision(judged, hook).hits


def with_answers(searcher, hits: list, cap: int) -> list:
    """``hits`` with the reply to each recalled user prompt that does not carry it already
    (``Hit.reply``) right after it (no duplicates), at most ``cap``."""
    if not any(h.role == "user" and not h.reply for h in hits):
        return hits[:cap]
    have = {h.uuid for h in hits}
    out = []
    for h in hits:
        out.append(h)
        if h.role == "user" and h.kind == "message" and not h.reply:  # its excerpt carries the reply it got
            a = searcher.reply_after(h)
            if a is not None and a.uuid not in have:
                have.add(a.uuid)
                out.append(a)
    return out[:cap]


#: a question about the past is read against at least this many of the sessions its words
#: rank first, whatever their confidence (issue 47: a paraphrase of the answer ranks it high
#: on few shared words; the model tells it from a new question, and answers NONE for that)
QUESTION_SESSIONS = 3


def question_picks(judged: list, picked: list, skip_sessions=frozenset(), sessions: int = QUESTION_SESSIONS) -> list:
    """For a question about the past on the model path: the best-ranked hit (by the engine's
    score) of each of the ``sessions`` past sessions its words rank first, those ``picked``
    holds already and ``skip_sessions`` (injected earlier in this conversation) left out."""
    have = {h.session_id for h in picked}
    seen: list = []
    out = []
    for h in sorted(judged, key=lambda h: -(getattr(h, "score", 0.0) or 0.0)):
        if h.session_id in seen or h.session_id in skip_sessions:
            continue
        seen.append(h.session_id)
        if h.session_id not in have:
            out.append(h)
        if len(seen) >= sessions:
            break
    return out
