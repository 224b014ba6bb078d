"""Per-prompt recall: what the UserPromptSubmit hook injects before Claude sees a prompt.

Pipeline (``build_context``): skip trivial prompts -> search the current project's past
sessions (not the current session: it is already in context) -> keep hits above the
relevance floor -> raw snippets as the fallback -> Haiku synthesis if a key exists and time
allows -> ``{"hookSpecificOutput": {..., "additionalContext": "<recalled-context>…"}}``.

Import-light on purpose: this module is imported on every prompt. The index (tantivy) is
imported only once a prompt is worth searching, the model client (anthropic) only when a
synthesis is actually sent, and neither when the service answers over its socket.

The deadline (``hook.budget_seconds``, counted from process start) is kept three ways: the
service gets the remaining budget and answers with raw snippets when its model call is
slow; the in-process synthesis runs in a worker thread that is abandoned at the deadline;
and ``Watchdog`` emits the best output known so far and ends the process if anything
else overruns.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time

from recall import config

TAG_OPEN = "<recalled-context>"
TAG_CLOSE = "</recalled-context>"
HEADER = ("Recalled by recall from past Claude Code sessions{scope} "
          "(may be outdated: verify before relying on it).")
EVENT = "UserPromptSubmit"

SAFETY_SECONDS = 0.35      # the pipeline's own deadline: this long before the budget runs out
WATCHDOG_SECONDS = 0.1     # the watchdog's: this long before it
MIN_SYNTH_SECONDS = 0.6    # below this much time left, inject raw snippets right away
SERVICE_SLACK = 0.35       # time kept back from the service for an in-process fallback
MAX_PROMPT_CHARS = 4000    # of the prompt used as the search query
PER_SESSION = 3            # at most this many hits from one past session
LONG_PROMPT_TERMS = 12     # a prompt with more informative terms is judged by its rarest ones
MIN_COVERAGE = 0.5         # default hook.min_coverage: idf-weighted share of the prompt's terms a hit holds
PSEUDO_DOCS = 100          # smoothing of those weights for small indexes
MAX_SNIPPET = 600          # characters of one raw snippet

# Words that say nothing about what a prompt is about (compared after stemming).
STOPWORDS = """a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just let like me
more most my no nor not now of off on once only or other our ours out over own please same she
should so some such than that the their them then there these they this those through to too
under until up us very was we were what when where which while who whom why will with would you
your yours yes ok okay thanks thank hi hello hey tell know think want need make get got go use
used using one two way thing things something anything lot really sure right still even well
much many may might must shall yeah yep""".split()

_STOP_WORDS = frozenset(STOPWORDS)

_FILLER = {"please", "pls", "and", "then", "now", "just", "so", "you", "it", "that", "very", "much",
           "a", "lot", "all", "again", "for", "the", "this", "yes", "sir", "mate", "ahead", "on"}

_SLASH = re.compile(r"^/[A-Za-z][\w:.\-]*(?:\s|$)")
_NUMBER = re.compile(r"^[\s\d.,:;+\-#%()/*=x]+$")
_PATH_TOKEN = re.compile(
    r"^(?:file://)?(?:[A-Za-z]:)?[~.]{0,2}[/\\]?[\w.@+~%\-]*(?:[/\\][\w.@+~%\-]*)+(?::\d+)*$")
_PUNCT = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_TAGS = re.compile(r"</?\s*recalled-context\b[^>]*>", re.I)


# ------------------------------------------------------------------------------ settings
def hook_settings(cfg: dict | None = None) -> dict:
    """The ``hook`` section with every value checked; bad values fall back to the defaults."""
    cfg = cfg if cfg is not None else config.load()
    defaults = config.DEFAULTS["hook"]
    raw = cfg.get("hook") if isinstance(cfg.get("hook"), dict) else {}
    out = dict(defaults)
    for key, value in raw.items():
        default = defaults.get(key)
        if default is None:
            out[key] = value
        elif isinstance(default, bool):
            if isinstance(value, bool):
                out[key] = value
        elif isinstance(default, (int, float)):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                    and value >= 0:
                out[key] = value
        elif isinstance(default, list):
            if isinstance(value, list):
                out[key] = [str(v) for v in value]
        elif isinstance(default, str):
            if isinstance(value, str):
                out[key] = value
    out["max_chars"] = int(min(max(out["max_chars"], 300), 9000))  # Claude Code caps at 10,000
    out["limit"] = int(min(max(out["limit"], 1), 50))
    out["budget_seconds"] = float(min(max(out["budget_seconds"], 0.5), 120))
    if out.get("scope") not in ("project", "all"):
        out["scope"] = "project"
    return out


# ------------------------------------------------------------------------------ trivial prompts
def _normalize(text: str) -> str:
    return _SPACES.sub(" ", _PUNCT.sub(" ", text.lower())).strip()


def _is_acknowledgement(prompt: str, skip: list[str]) -> bool:
    words = _normalize(prompt).split()
    if not words:
        return True
    phrases = sorted({tuple(_normalize(s).split()) for s in skip if _normalize(s)}, key=len, reverse=True)
    i = 0
    matched = False
    while i < len(words):
        for ph in phrases:
            if tuple(words[i:i + len(ph)]) == ph:
                i += len(ph)
                matched = True
                break
        else:
            if words[i] in _FILLER:
                i += 1
                continue
            return False
    return matched


def trivial_reason(prompt, hook: dict | None = None) -> str | None:
    """Why ``prompt`` is not worth a search (a short label), or None when it is."""
    hook = hook or hook_settings()
    if not isinstance(prompt, str):
        return "no prompt"
    p = prompt.strip()
    if len(p) < int(hook.get("min_chars", 15)):
        return "short"
    if _SLASH.match(p):
        return "slash command"
    if _NUMBER.match(p):
        return "number"
    tokens = p.strip("'\"`").split()
    if tokens and all(_PATH_TOKEN.match(t.strip("'\"`,")) for t in tokens) and any(
            "/" in t or "\\" in t for t in tokens):
        return "path"
    if _is_acknowledgement(p, hook.get("skip") or []):
        return "acknowledgement"
    return None


def is_trivial(prompt, hook: dict | None = None) -> bool:
    return trivial_reason(prompt, hook) is not None


# ------------------------------------------------------------------------------ searching
_stems: set[str] | None = None


def _stop_stems() -> set[str]:
    global _stems
    if _stems is None:
        from recall.search import analyze

        _stems = {t for w in STOPWORDS for t in analyze(w)} | set(STOPWORDS)
    return _stems


def informative_terms(text: str) -> list[str]:
    """The prompt's analysed terms that say what it is about (no stopwords, no 1-letter terms)."""
    from recall.search import analyze

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
    from recall.search import analyze

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
    from recall import paths
    from recall.search import Searcher

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
    return [searcher._hit(s.doc(c.address), c.score, now, boost=False) for c in ranked if c.score >= cut]


def find_hits(prompt: str, cwd: str | None = None, session_id: str | None = None, hook: dict | None = None,
              searcher=None) -> list:
    """Hits worth injecting for ``prompt``: the current project (or all, by ``hook.scope``),
    not the current session, above the relevance floor, at most ``hook.limit``."""
    from indexer.project import canonical_project
    from recall.errors import IndexMissing

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

    from recall.search import iso

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
            if a is not None and a.uuid not in have:
                have.add(a.uuid)
                out.append(a)
    return out[:cap]


# ------------------------------------------------------------------------------ formatting
def citation(hit) -> str:
    """``[2026-11-20 session 3c4e0949]`` (``memory`` for a stored memory)."""
    date = (hit.timestamp or "")[:10] or "undated"
    if getattr(hit, "kind", "message") == "memory":
        return f"[{date} memory]"
    return f"[{date} session {hit.session_id[:8]}]"


def clean(text: str) -> str:
    """Text safe to put inside the block: no nested recalled-context tags."""
    return _TAGS.sub("", text)


def _header(scope_all: bool) -> str:
    return HEADER.format(scope="" if scope_all else " of this project")


def _wrap(lines: list[str], max_chars: int, header: str) -> str:
    """The block, cut at a line boundary (or mid-line with …) to fit ``max_chars``."""
    head = f"{TAG_OPEN}\n{header}\n"
    tail = f"\n{TAG_CLOSE}"
    room = max_chars - len(head) - len(tail)
    body: list[str] = []
    used = 0
    for line in lines:
        extra = len(line) + (1 if body else 0)
        if used + extra <= room:
            body.append(line)
            used += extra
            continue
        left = room - used - (1 if body else 0)
        if left > 80:
            body.append(line[:left - 1].rstrip() + "…")
        break
    return head + "\n".join(body) + tail


def format_raw(hits: list, prompt: str = "", max_chars: int = 3000, scope_all: bool = False) -> str:
    """Compact, cited raw snippets (the fallback when there is no synthesis)."""
    from recall import search

    if not hits:
        return ""
    terms = informative_terms(query_text(prompt))[:32] if prompt else []
    pattern = search._highlighter(terms) if terms else None
    per = max(120, min(MAX_SNIPPET, (max_chars - 250) // max(1, len(hits)) - 40))
    lines = []
    for h in hits:
        snip = search.snippet(h.text, pattern, width=per)
        snip = clean(_BOLD.sub(r"\1", snip or " ".join(h.text.split())[:per]))
        where = ""
        if scope_all and h.project:
            where = f" {os.path.basename(h.project.rstrip('/')) or h.project}"
        lines.append(f"- {citation(h)}{where} {h.role}: {snip}")
    return _wrap(lines, max_chars, _header(scope_all))


def format_synthesis(body: str, max_chars: int = 3000, scope_all: bool = False) -> str:
    lines = [ln.rstrip() for ln in clean(body).strip().splitlines()]
    return _wrap([ln for ln in lines if ln.strip() or ln == ""], max_chars, _header(scope_all))


def hook_output(context: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}}


# ------------------------------------------------------------------------------ the pipeline
_log_lock = threading.Lock()


def _log():
    from recall import log

    with _log_lock:  # the watchdog and the main thread may both be first to set logging up
        return log.get("hook")


def _synthesize_within(prompt: str, hits: list, seconds: float, max_chars: int):
    """Run the synthesis in a worker thread; (finished, text or exception)."""
    box: dict = {}

    def work() -> None:
        try:
            from recall.synthesis import synthesize_recall

            box["text"] = synthesize_recall(prompt, hits, timeout=max(0.2, seconds - 0.1), max_chars=max_chars)
        except BaseException as exc:  # reported to the caller, never raised in the thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="recall-synthesis", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if worker.is_alive():
        return False, None
    return True, box.get("error") or box.get("text", "")


def build_context(payload: dict, deadline: float, *, cfg: dict | None = None, searcher=None,
                  on_fallback=None) -> dict | None:
    """The hook's output for ``payload`` (or None: nothing to inject), ready by ``deadline``
    (``time.time()`` seconds). ``on_fallback(output)`` is told the raw-snippet output as soon as
    it exists, so a watchdog can emit it if the synthesis overruns."""
    cfg = cfg if cfg is not None else config.load()
    hook = hook_settings(cfg)
    prompt = payload.get("prompt")
    if trivial_reason(prompt, hook):
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    hits = find_hits(prompt, cwd, session_id, hook, searcher)
    if not hits:
        return None
    if any(getattr(h, "kind", "") == "memory" for h in hits):
        from recall.memory import note_access  # import-light: one append, never raises

        note_access(hits)
    scope_all = hook.get("scope") == "all"
    max_chars = hook["max_chars"]
    raw = hook_output(format_raw(hits, prompt, max_chars, scope_all))
    if on_fallback is not None:
        on_fallback(raw)
    if not hook.get("synthesize", True):
        return raw
    from recall import llm

    if not llm.find_api_key(cfg)[0]:
        return raw
    left = deadline - time.time()
    if left < MIN_SYNTH_SECONDS:
        return raw
    finished, result = _synthesize_within(prompt, hits, left, max_chars)
    if not finished:
        _log().warning("synthesis did not finish within the hook budget; injected raw snippets")
        return raw
    if isinstance(result, BaseException):
        _log().warning("synthesis failed (%s); injected raw snippets", str(result)[:300])
        return raw
    if not result.strip():
        return None  # the model found nothing in the hits that bears on the prompt
    return hook_output(format_synthesis(result, max_chars, scope_all))


def _service_may_run() -> bool:
    """False when there is certainly no service to ask (saves importing the socket client)."""
    if os.environ.get("RECALL_NO_SERVICE", "") not in ("", "0"):
        return False
    from recall import paths

    sock = os.fsencode(str(paths.socket_path()))
    if len(sock) > 100:  # too long for a unix socket: recall.client knows the short path
        return True
    return os.path.exists(sock)


def service_context(payload: dict, deadline: float):
    """Ask the running service. Returns (answered, output); answered is False when the service
    is not running or failed, so the caller works it out in-process."""
    if not _service_may_run():
        return False, None
    try:
        from recall import client
    except ImportError:
        return False, None
    left = deadline - time.time()
    if left <= SERVICE_SLACK + 0.1:
        return False, None
    args = dict(payload)
    args["_budget"] = left - SERVICE_SLACK
    try:
        result = client.call("hook_context", args, timeout=left - SERVICE_SLACK + 0.15)
    except client.Unavailable:
        return False, None
    except Exception as exc:
        _log().warning("service hook_context failed (%s: %s); working it out in-process",
                       type(exc).__name__, str(exc)[:200])
        return False, None
    if result is None or (isinstance(result, dict) and "hookSpecificOutput" in result):
        return True, result
    _log().warning("service hook_context returned %r; working it out in-process", type(result).__name__)
    return False, None


def service_op(args: dict, searcher=None) -> dict | None:
    """The service side of ``hook_context``: ``args`` is the hook payload plus ``_budget``."""
    args = dict(args) if isinstance(args, dict) else {}
    budget = args.pop("_budget", None)
    if not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        budget = hook_settings()["budget_seconds"] - 1.0
    deadline = time.time() + min(float(budget), 120.0)
    return build_context(args, deadline, searcher=searcher)


class Watchdog:
    """At ``deadline``: emit the best output known (``fallback``) and end the process."""

    def __init__(self, deadline: float, emit) -> None:
        self.fallback: dict | None = None
        self._emit = emit
        self._timer = threading.Timer(max(0.0, deadline - time.time()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def offer(self, output: dict | None) -> None:
        self.fallback = output

    def _fire(self) -> None:
        if not self._emit(self.fallback):
            return  # the main thread got there first
        try:
            _log().warning("hook budget reached; emitted %s", "raw snippets" if self.fallback else "nothing")
        except Exception:
            pass
        os._exit(0)

    def cancel(self) -> None:
        self._timer.cancel()


def run_hook(payload: dict, started: float, emit) -> dict | None:
    """The whole UserPromptSubmit hook. ``started``: process start (epoch seconds);
    ``emit(output) -> bool`` writes the output once (False if it was already written)."""
    cfg = config.load()
    hook = hook_settings(cfg)
    if trivial_reason(payload.get("prompt"), hook):
        return None
    deadline = started + hook["budget_seconds"] - SAFETY_SECONDS
    dog = Watchdog(started + hook["budget_seconds"] - WATCHDOG_SECONDS, emit)
    try:
        answered, out = service_context(payload, deadline)
        if answered:
            return out
        return build_context(payload, deadline, cfg=cfg, on_fallback=dog.offer)
    finally:
        dog.cancel()
