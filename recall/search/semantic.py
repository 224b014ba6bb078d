"""The semantic channel: past messages found by meaning, for the prompt hook's model path.

A paraphrase ("what's our convention for money amounts?") shares no distinctive word with the
session that answers it ("store all prices as integer cents"), and a task prompt ("add a
refunds endpoint") rarely names the decision that matters to it: the lexical index cannot find
them. all-MiniLM-L6-v2 (``recall.search.minilm``) can, and on the model path a model reads what
it brings and answers NONE when nothing bears on the prompt (``recall.prompt.context``).

* **What is embedded**: the user prompts and assistant replies of each project's newest
  ``MAX_PER_PROJECT`` messages, and its typed memories (a decision in one sentence is what a
  paraphrase asks for; a memory counts for the first session it came from); tool calls and
  results are not: their words are the lexical index's strength. Their first ``EMBED_CHARS``
  characters, as the index holds them (redacted),
  only what the ledger's gate shows. The service embeds them in the background, newest first,
  a slice at a time (``embed_step``), only while a model backend exists and
  ``hook.semantic`` is on; vectors live in ``indexer.vectors``.
* **What is forgotten stays out**: a forget (an exclusion, a `recall: off` session, the
  re-redaction pass) changes the store's epoch in the transaction that drops its vectors, once
  the index no longer holds what it removed; the queue (``Backlog``) is filled under one epoch,
  read before the index, and a batch is written only while it is still the store's
  (``VectorStore.put``): otherwise the queue is dropped unwritten and filled again from the index.
* **A damaged store** (``indexer.vectors.Damaged``) finds nothing (``related`` answers []); the
  service sets it aside and rebuilds it (``recall.service.daemon``).
* **What is found** (``related``): the prompt's nearest messages in the current project, the best
  one of each past session, sessions at or above ``hook.semantic_min_similarity``, at most
  ``hook.semantic_sessions`` of them, never the current session. Each is read back from the
  index by key, through the gate, and only while its text is the text it was embedded from; an
  echo (a question asked before whose reply added nothing, a reply restating recall's own
  block: ``recall.search.exchange``) is passed over, so a question asked again finds the
  decision, not the earlier asking.
"""

from __future__ import annotations

import threading
import time

from recall.core.settings import HOOK_DEFAULTS

MAX_PER_PROJECT = 20_000  # newest messages of one project that get a vector
EMBED_CHARS = 2000  # of a message's text (the encoder reads ~128 tokens of it anyway)
BATCH = 32
RESCAN_SECONDS = 60.0  # a project's new messages looked for at most this often
# all of its newest MAX_PER_PROJECT looked at again: when the index holds more of them than have
# a vector (a backfill indexes older history after newer, a forget re-adds what it kept), at
# most this often, and anyway this often (what the gate hides is never embedded)
MISSING_RESCAN_SECONDS = 300.0
FULL_RESCAN_SECONDS = 3600.0
OVERLAP_SECONDS = 3600  # a quick rescan reaches this far back (messages indexed late)
DEFAULT_MIN_SIMILARITY = dict(HOOK_DEFAULTS)["semantic_min_similarity"]  # recall.core.settings
DEFAULT_SESSIONS = dict(HOOK_DEFAULTS)["semantic_sessions"]
# the raw path (no model reads it): the nearest session joins its picks only when both signals
# agree: this cosine and this lexical confidence (below hook.min_confidence, which alone suffices).
# Chosen on the tune half of benchmarks/injection_sizes.py (coding and LongMemEval, every size)
# among cosines 0.35-0.6 x confidences 0.3-0.55: the most useful pair (mean over the sizes) that
# keeps new tasks at least 0.95 silent at every size and the false share within 0.05 of the
# lexical decision's at every size
RAW_MIN_SIMILARITY = 0.5
RAW_MIN_CONFIDENCE = 0.4
SCAN_TOP = 400  # nearest messages looked at to find the best sessions


def enabled(hook) -> bool:
    """``hook.semantic`` is on (``hook``: a ``HookSettings``) and the encoder is installed."""
    if not hook.semantic:
        return False
    from recall.search.minilm import available

    return available()


_attached = None  # the service's VectorStore (``attach``): only the service finds by meaning


def attach(store) -> None:
    """The service's vectors: ``recall.prompt.context`` asks the semantic channel only where
    they are attached (a hook working in-process would load the encoder for one prompt)."""
    global _attached
    _attached = store


def attached():
    return _attached


# embedding ------------------------------------------------------------------------------------
class Backlog:
    """What is left to embed, project by project (the service keeps one)."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str, str, int, str, str]] = []  # key, project, session, ts, hash, text
        self.scanned: dict[str, tuple[float, float, int]] = {}  # project -> (last quick, last full, newest ts)
        self.lock = threading.Lock()
        self.epoch: str | None = None  # the store's forget epoch the queue was filled under

    def current(self, searcher, store) -> bool:
        """Whether the queue was filled under the store's epoch. When a forget (an exclusion,
        a `recall: off`, the re-redaction pass) came since, the queue is emptied, unwritten,
        every project is looked at whole again, and the searcher reads the index as it is now
        (the forget committed before it changed the epoch)."""
        epoch = store.epoch()
        if epoch == self.epoch:
            return True
        self.pending = []
        self.scanned.clear()
        self.epoch = epoch
        refresh = getattr(searcher, "refresh", None)
        if refresh is not None:
            refresh()
        return False

    def scan(self, searcher, store, projects: list[str], now: float | None = None) -> int:
        """Queue the messages of ``projects`` that have no vector (or one of other text)."""
        from indexer.vectors import text_hash

        now = time.time() if now is None else now
        self.current(searcher, store)  # the epoch first, then the index
        added = 0
        for project in projects:
            quick, full, newest = self.scanned.get(project, (0.0, 0.0, 0))
            if now - quick < RESCAN_SECONDS:
                continue
            whole = now - full >= FULL_RESCAN_SECONDS
            if not whole and now - full >= MISSING_RESCAN_SECONDS:
                waiting = sum(1 for p in self.pending if p[1] == project)
                whole = min(searcher.count_prose(project), MAX_PER_PROJECT) > store.count(project) + waiting
            since = 0 if whole else max(0, newest - OVERLAP_SECONDS)
            rows = searcher.newest_messages(project, MAX_PER_PROJECT, since)
            known = store.known([r[0] for r in rows])
            queued = {p[0] for p in self.pending}
            for key, session, ts, text in rows:
                text = text[:EMBED_CHARS]
                h = text_hash(text)
                if known.get(key) != h and key not in queued:
                    self.pending.append((key, project, session, ts, h, text))
                    added += 1
            top = max((r[2] for r in rows), default=newest)
            self.scanned[project] = (now, now if since == 0 else full, max(newest, top))
        self.pending.sort(key=lambda p: -p[3])
        return added

    def embed(self, store, budget: float, encoder=None) -> int:
        """Embed the newest pending messages for about ``budget`` seconds; how many."""
        from recall.search import minilm

        encoder = encoder or minilm.shared()
        done = 0
        started = time.monotonic()
        while self.pending and time.monotonic() - started < budget:
            if self.epoch is None or store.epoch() != self.epoch:  # a forget since the scan
                self._obsolete()
                break
            batch, self.pending = self.pending[:BATCH], self.pending[BATCH:]
            vecs = encoder.embed([p[5] for p in batch])
            # written only if no forget came while they were embedded (checked in the write's transaction)
            if not store.put(
                [(k, proj, sid, ts, h, v) for (k, proj, sid, ts, h, _t), v in zip(batch, vecs)], self.epoch
            ):
                self._obsolete()
                break
            done += len(batch)
        return done

    def _obsolete(self) -> None:
        """A forget came since the queue was filled: none of it is written; the next scan
        (``current``) fills it again from the index as the forget left it."""
        self.pending = []
        self.scanned.clear()
        self.epoch = None


def embed_step(searcher, store, backlog: Backlog, projects: list[str], budget: float = 1.0) -> int:
    """One slice of the background job: look for new messages, then embed for ``budget`` s."""
    with backlog.lock:
        backlog.scan(searcher, store, projects)
        return backlog.embed(store, budget)


def embed_all(searcher, store, projects: list[str], encoder=None) -> int:
    """Embed everything of ``projects`` that has no vector yet, now (a rebuild, the benchmarks)."""
    backlog = Backlog()
    backlog.scan(searcher, store, projects)
    return backlog.embed(store, float("inf"), encoder)


def projects_by_activity() -> list[str]:
    """Known projects, the one with the latest session first."""
    from indexer.state import projects_by_activity as ordered
    from recall.core import paths

    return ordered(paths.state_db_path())


# finding --------------------------------------------------------------------------------------
PROMPT_CACHE = 64  # prompts whose vector is kept: a prompt sent again is not embedded again
_prompt_vectors: dict = {}  # (encoder id, text) -> its vector, oldest first
_prompt_lock = threading.Lock()
_pending: dict = {}  # (encoder id, text) -> the Event of an embedding under way (``embed_ahead``)


def prompt_vector(text: str, encoder):
    """The vector of a prompt (its first ``EMBED_CHARS * 2`` characters): from the cache of the
    last ``PROMPT_CACHE`` prompts, or waiting for the embedding ``embed_ahead`` started, or
    embedded now."""
    key = (id(encoder), text[: EMBED_CHARS * 2])
    with _prompt_lock:
        q = _prompt_vectors.get(key)
        started = _pending.get(key)
    if q is not None:
        return q
    if started is not None:
        started.wait(1.0)  # it takes milliseconds; a stalled one is not waited for
        with _prompt_lock:
            q = _prompt_vectors.get(key)
        if q is not None:
            return q
    return _embed_now(key, encoder)


def _embed_now(key: tuple, encoder):
    q = encoder.embed([key[1]])[0]
    with _prompt_lock:
        _prompt_vectors[key] = q
        while len(_prompt_vectors) > PROMPT_CACHE:
            _prompt_vectors.pop(next(iter(_prompt_vectors)))
    return q


def embed_ahead(text: str, encoder=None) -> None:
    """Start embedding a prompt in a thread of its own, while the lexical search runs (numpy's
    work releases the GIL): ``related`` then finds its vector ready (``prompt_vector``)."""
    from recall.search import minilm

    encoder = encoder or minilm.shared()
    key = (id(encoder), text[: EMBED_CHARS * 2])
    with _prompt_lock:
        if key in _prompt_vectors or key in _pending:
            return
        done = _pending[key] = threading.Event()

    def work() -> None:
        try:
            _embed_now(key, encoder)
        except Exception:  # noqa: BLE001 - the search embeds it itself, or goes without meaning
            pass
        finally:
            with _prompt_lock:
                _pending.pop(key, None)
            done.set()

    threading.Thread(target=work, name="recall-embed-prompt", daemon=True).start()


def related(
    searcher,
    store,
    text: str,
    project: str,
    exclude_session: str | None = None,
    sessions: int = DEFAULT_SESSIONS,
    floor: float = DEFAULT_MIN_SIMILARITY,
    skip_sessions=frozenset(),
    encoder=None,
) -> list:
    """The best message of each of the ``sessions`` past sessions of ``project`` nearest to
    ``text`` at or above ``floor`` (cosine), best first, each hit's ``similarity`` set."""
    import sqlite3

    import numpy as np

    from indexer.vectors import Damaged, text_hash
    from recall.search import minilm

    if getattr(store, "damaged", None):  # set aside and rebuilt by the service's job: words only meanwhile
        return []
    try:
        keys, owners, hashes, m = store.matrix(project)
    except Damaged:  # said once, by the job that sets it aside (``store.damaged``)
        return []
    except sqlite3.Error:  # busy: this prompt goes without meaning
        return []
    if not keys or sessions <= 0:
        return []
    q = prompt_vector(text, encoder or minilm.shared())
    sims = m @ q
    if len(sims) > SCAN_TOP:
        part = np.argpartition(-sims, SCAN_TOP)[:SCAN_TOP]
        top = part[np.argsort(-sims[part])]
    else:
        top = np.argsort(-sims)
    best: dict[str, tuple[int, float]] = {}
    for i in top:
        sim = float(sims[i])
        if sim < floor:
            break
        sid = owners[i]
        if not sid or sid == exclude_session or sid in skip_sessions or sid in best:  # "": a memory of no session
            continue
        best[sid] = (int(i), sim)
        if len(best) >= sessions * 2:  # spares: a hit may no longer be shown
            break
    if not best:
        return []
    picks = sorted(best.values(), key=lambda p: -p[1])
    hits = searcher.by_keys([keys[i] for i, _ in picks])
    by_key = {f"{'mem' if h.kind == 'memory' else 'm'}:{h.uuid}": h for h in hits}
    out = []
    stale = []
    for i, sim in picks:
        h = by_key.get(keys[i])
        if h is None:
            continue
        if text_hash(h.text[:EMBED_CHARS]) != hashes[i]:  # rewritten since (a forget): not this vector
            stale.append(keys[i])
            continue
        if h.echo:  # the same question asked before and answered "OK.", or recall's own words back
            continue
        h.similarity = round(sim, 4)
        out.append(h)
        if len(out) >= sessions:
            break
    if stale:
        try:
            store.forget(keys=stale, bump=False)  # nothing queued depends on these (rewritten since)
        except (Damaged, sqlite3.Error):
            pass
    return out
