"""Searching the index: any text in, ranked hits out.

The query text is never handed to Tantivy's query parser (it raises on raw user text):
it is analysed with the index's own analyzer and turned into term and phrase queries.

Ranking: BM25 over ``content`` (10x), ``files`` (2x) and ``tools`` (1x); identifiers,
paths and dotted.names in the query also match as a phrase of their parts (so
``stripe_webhook.py`` prefers the exact file over scattered words), quoted text as a
phrase; a mild recency prior; then, unless ``messages=True``, one hit per session (its best
message). In a large index a word found in a fifth of it only counts inside those phrases
(``common_terms``), and the phrase and proximity bonuses run as a query of their own
(``Searcher.build_query``): both keep a search at 1M messages to a few milliseconds.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import tantivy

from indexer.archive_files import open_session, read_message
from indexer.ledger import Gate, shown
from indexer.schema import DOCTYPES_BY_CODE, ECHO_TAG, stored_value
from recall.core import paths
from recall.search.confidence import judge
from recall.search.exchange import exchange, turn
from recall.search.hit import Hit, iso
from recall.search.index_open import SearchIndexError, open_for_reading  # noqa: F401 - SearchIndexError: re-exported
from recall.search.query import (
    COMMON_MIN_DOCS,
    COMMON_SHARE,
    IDENT,
    QUOTED,
    VARIANT_WEIGHT,
    W_CONTENT,
    analyze,
    common_terms,
    is_stopword,
    unique,
    variants,
    weighty,
)
from recall.search.snippets import highlighter, snippet

W_FILES = 2.0
W_TOOLS = 1.0
W_PHRASE = 6.0  # an identifier / quoted phrase found whole, on top of its parts
RECENCY_WEIGHT = 0.10  # at most +10% for a message from today
RECENCY_HALF_LIFE_DAYS = 30.0
SESSION_DOC_WEIGHT = 0.5
MEMORY_WEIGHT = 1.2  # a typed memory is distilled: prefer it slightly over a raw message
MAX_TERMS = 32
STOPWORD_WEIGHT = 0.3  # "what did we decide about X": keep the stopwords, but let X decide
W_PROXIMITY = 2.0  # adjacent query words found near each other (a sloppy bigram)
PROXIMITY_SLOP = 1
MAX_BIGRAMS = 16
MAX_PHRASES = 8
MAX_LONG_PHRASES = 3  # in a pasted prompt (more than MAX_TERMS terms): the rarest ones
MAX_COUNTED = 16  # terms of a prompt counted in its project (Searcher.doc_freqs)

# A session's score: its best candidate's, plus these shares of its next best (tuned on the
# "tune" half of the dev sets, benchmarks.retrieval.split_of; figures on the other half in
# docs/benchmarks.md). (1.0,) is one hit per session by its best message alone.
SESSION_WEIGHTS: tuple[float, ...] = (1.0, 0.5, 0.25)
# Neighbour context: a message gains this share of the score of the best of the candidates
# next to it in its session (before and after, within NEIGHBOUR_SECONDS): the answer said
# right after a matching question, the question right before a matching answer. Tuned the
# same way (LoCoMo message recall@10 +0.02 on the tune half; 0.05-0.3 and 60-600 s all
# within 0.01 of it).
NEIGHBOUR_WEIGHT = 0.1
NEIGHBOUR_SECONDS = 120

# Hits read and ordered by their confidence (recall.search.confidence) in every search, so a
# confident hit just below the engine's top few still shows.
JUDGED = 10

ALL_DOCTYPES = frozenset({"message", "session", "memory", "team"})  # every doctype written (team: recall.team)
DISTILLED = ("memory", "team")  # ranked alike: a typed memory, or a teammate's (recall.team)


def echoes_last(hits: list) -> list:
    """``hits`` in their order, echoes (``Hit.echo``: a question asked before and answered
    "OK.", recall's own block restated) after every other hit: the session that holds the
    answer ranks above an earlier asking of the same question, on every search surface."""
    return [h for h in hits if not h.echo] + [h for h in hits if h.echo]


class Searcher:
    """A read-only view of the index. Cheap to keep open (the service keeps one warm)."""

    def __init__(self, index_path: Path | None = None) -> None:
        self.index_path = index_path or paths.index_dir()
        self.index = open_for_reading(self.index_path)
        self.schema = self.index.schema
        self.archive_root = self.index_path.parent / "archive"  # paths.archive_dir() beside index_dir()
        self.gate = Gate()  # exclusions, sessions off, what was forgotten: never shown (``shown``)

    def refresh(self) -> None:
        self.index.reload()

    def shown(self, hits: list) -> list:
        """``hits`` minus what no reader may show (``indexer.ledger.shown``): every path from
        the index to a person or a prompt goes through it (``hits`` below, the prompt hook's
        candidates, the MCP tools, ``recall ask``)."""
        return shown(hits, self.gate)

    # query building -------------------------------------------------------------------
    def _terms(self, searcher: tantivy.Searcher, text: str) -> tuple[list[str], dict[str, int], bool]:
        """The query's terms, the document frequency of each in ``content``, and whether the
        text was long enough to be cut to its MAX_TERMS rarest terms (a pasted log)."""
        terms = unique(analyze(text))
        dfs = {t: searcher.doc_freq("content", t) for t in terms}
        if len(terms) <= MAX_TERMS:
            return terms, dfs, False
        # a pasted log: keep the rarest terms that exist at all
        scored = sorted((df, t) for t, df in dfs.items() if df)
        keep = {t for _, t in scored[:MAX_TERMS]}
        return [t for t in terms if t in keep], dfs, True  # the rarest, in the order written

    def _phrases(self, searcher: tantivy.Searcher, text: str, dfs: dict[str, int], long: bool) -> list[list[str]]:
        """Quoted text, identifiers, paths and dotted.names, each as the list of its parts.

        A phrase query reads positions for every document holding all its parts: 1-7 ms
        each on common parts at 1M messages. A pasted prompt (``long``: see ``_terms``) can
        name many; it keeps the MAX_LONG_PHRASES whose rarest part is rarest (cheapest and most
        telling).
        """
        phrases = []
        for chunk in [*QUOTED.findall(text), *IDENT.findall(text[:4000])]:
            parts = analyze(chunk)
            if 1 < len(parts) <= 12 and parts not in phrases:
                phrases.append(parts)
            if len(phrases) >= MAX_PHRASES:
                break
        if long and len(phrases) > MAX_LONG_PHRASES:

            def df(t: str) -> int:
                return dfs[t] if t in dfs else searcher.doc_freq("content", t)

            rarest = {tuple(p): min(df(t) for t in p) for p in phrases}
            keep = sorted(rarest, key=rarest.get)[:MAX_LONG_PHRASES]
            phrases = [p for p in phrases if tuple(p) in keep]
        return phrases

    def build_query(
        self,
        searcher: tantivy.Searcher,
        text: str,
        *,
        doctypes=("message",),
        project: str | None = None,
        since: float | None = None,
        until: float | None = None,
        exclude_session: str | None = None,
        roles=None,
        mtype: str | None = None,
        split: bool | None = None,
        agent: str | None = None,
    ) -> tuple[list[tantivy.Query], list[str]] | None:
        """The queries whose matches, merged by ``top``, rank a search, and the query's terms
        with the words of their families it also matches (``recall.search.query.variants``:
        decide -> decision, at VARIANT_WEIGHT of the word's own weight; what a hit must hold and
        its snippet bolds); None when the text has no term.

        A document scores the sum of its term clauses (content, files, tools, and tags for
        memories; stopwords weighted down) and of the phrase and proximity bonuses it earns.
        A term too common to tell documents apart (``common_terms``) has no clause of its
        own: in a path (``home``, ``src``, ``py``) each is in a third of a heavy user's
        messages, and scoring it reads all of its postings (~2.5 ms each at 1M messages); it
        still counts inside the phrases it belongs to.

        Bonuses (a phrase or sloppy bigram) cannot be pruned, and checked on every document
        holding a term they cost ~10 ms at 1M messages. So there are two queries:

        * the documents that earn a bonus (found by those clauses: few), with their terms;
        * every document holding a term, scored by the terms alone: a bare union of term
          clauses, which Tantivy prunes (block-max WAND).

        A document earning no bonus scores the same in both, so their merged top ``fetch`` is
        the top of the one query with every clause (``split=False``), which a pasted prompt
        (``long``) keeps by default: its many bigrams match most of what its terms match.
        """
        schema = self.schema
        terms, dfs, long = self._terms(searcher, text)
        if not terms:
            return None
        stops = {t for t in terms if is_stopword(t)}
        content_words = [t for t in terms if t not in stops]
        phrases = self._phrases(searcher, text, dfs, long)
        # an exact phrase already rewards its adjacent parts: no sloppy bigram for them (on a
        # path both read the same common positions: ~10 ms at 1M messages)
        in_phrase = {pair for p in phrases for pair in zip(p, p[1:])}
        common = common_terms(dfs, terms, searcher.num_docs)
        fields = [("content", W_CONTENT), ("files", W_FILES), ("tools", W_TOOLS)]
        if not set(DISTILLED).isdisjoint(doctypes):
            fields.append(("tags", W_FILES))
        scored = []
        for t in terms:
            if t in common:
                continue
            w = STOPWORD_WEIGHT if (content_words and t in stops) else 1.0
            for name, weight in fields:
                scored.append(
                    (
                        tantivy.Occur.Should,
                        tantivy.Query.boost_query(
                            tantivy.Query.term_query(
                                schema, name, t, index_option="position" if name == "content" else "freq"
                            ),
                            weight * w,
                        ),
                    )
                )
        # the other words of a content word's family (decide -> decision), on content alone and
        # below the word itself; none that is absent or too common to tell documents apart
        floor = max(COMMON_MIN_DOCS, COMMON_SHARE * searcher.num_docs)
        family = []
        for v in unique(v for t in content_words if t not in common for v in variants(t)):
            if v in dfs:
                continue
            df = searcher.doc_freq("content", v)
            if 0 < df < floor:
                family.append(v)
                scored.append(
                    (
                        tantivy.Occur.Should,
                        tantivy.Query.boost_query(
                            tantivy.Query.term_query(schema, "content", v, index_option="position"),
                            W_CONTENT * VARIANT_WEIGHT,
                        ),
                    )
                )
        bonuses = []
        # adjacent words near each other; not two common ones (their pair is common too)
        bigrams = [
            (a, b)
            for a, b in zip(content_words, content_words[1:])
            if (a, b) not in in_phrase and not (a in common and b in common)
        ]
        for a, b in bigrams[:MAX_BIGRAMS]:
            bonuses.append(
                (
                    tantivy.Occur.Should,
                    tantivy.Query.boost_query(
                        tantivy.Query.phrase_query(schema, "content", [a, b], slop=PROXIMITY_SLOP), W_PROXIMITY
                    ),
                )
            )
        for parts in phrases:
            bonuses.append(
                (
                    tantivy.Occur.Should,
                    tantivy.Query.boost_query(tantivy.Query.phrase_query(schema, "content", parts), W_PHRASE),
                )
            )

        filters = self._filters(doctypes, project, since, until, exclude_session, roles, mtype, agent)
        if split is None:
            split = not long
        if not split:
            scored, bonuses = scored + bonuses, []
        queries = []
        if bonuses:
            queries.append(
                tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, tantivy.Query.boolean_query(bonuses)), *scored, *filters]
                )
            )
        union = tantivy.Query.boolean_query(scored)
        # no filter: the bare union (a boolean around it costs ~15% and stops the pruning)
        queries.append(tantivy.Query.boolean_query([(tantivy.Occur.Must, union), *filters]) if filters else union)
        return queries, terms + family

    def _filters(self, doctypes, project, since, until, exclude_session, roles, mtype, agent=None) -> list:
        """The clauses that select documents without scoring them."""
        schema = self.schema
        clauses = []

        def must(q):
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)))

        if set(doctypes) <= ALL_DOCTYPES:
            # every document has exactly one of ALL_DOCTYPES: leaving out the (few) others selects
            # the same documents as requiring these, without intersecting with the posting list
            # of "message" (~97% of the index; 3-4 ms a query at 1M messages)
            others = sorted(ALL_DOCTYPES - set(doctypes))
            if others:
                clauses.append((tantivy.Occur.MustNot, tantivy.Query.term_set_query(schema, "doctype", others)))
        elif len(doctypes) == 1:
            must(tantivy.Query.term_query(schema, "doctype", doctypes[0], index_option="basic"))
        else:
            must(tantivy.Query.term_set_query(schema, "doctype", list(doctypes)))
        if project:
            must(tantivy.Query.term_query(schema, "project", project, index_option="basic"))
        if agent:  # only that agent's messages and sessions (memories and team items have none)
            must(tantivy.Query.term_query(schema, "agent", agent, index_option="basic"))
        if roles:
            must(tantivy.Query.term_set_query(schema, "role", list(roles)))
        if mtype:
            must(tantivy.Query.term_query(schema, "mtype", mtype, index_option="basic"))
        if since is not None or until is not None:
            must(
                tantivy.Query.range_query(
                    schema,
                    "ts",
                    tantivy.FieldType.Integer,
                    int(since) if since is not None else None,
                    int(until) if until is not None else None,
                )
            )
        if exclude_session:
            clauses.append(
                (
                    tantivy.Occur.MustNot,
                    tantivy.Query.term_query(schema, "session_id", exclude_session, index_option="basic"),
                )
            )
        return clauses

    @staticmethod
    def top(searcher: tantivy.Searcher, queries: list[tantivy.Query], fetch: int) -> list:
        """The best ``fetch`` (score, address) pairs over ``queries`` (``build_query``), best
        first; a document matched by more than one keeps its best score.

        The queries run at once, the others on a helper thread kept for the process
        (``_helper``: starting a thread per search cost ~0.1-0.3 ms): Tantivy searches
        without the GIL, so the wall time is the slower query's, not their sum (1M messages,
        split queries: 20-50% less)."""
        if len(queries) == 1:
            return searcher.search(queries[0], fetch, count=False).hits
        results: list = [None] * len(queries)

        def run(i: int) -> None:
            try:
                results[i] = searcher.search(queries[i], fetch, count=False).hits
            except BaseException as exc:  # re-raised below, in the caller's thread
                results[i] = exc

        done = [_helper().submit(run, i) for i in range(1, len(queries))]
        run(0)
        for d in done:
            d.get()
        best: dict[tuple[int, int], tuple[float, object]] = {}
        for hits in results:
            if isinstance(hits, BaseException):
                raise hits
            for score, address in hits:
                key = (address.segment_ord, address.doc)
                if key not in best or score > best[key][0]:
                    best[key] = (score, address)
        return sorted(best.values(), key=lambda h: h[0], reverse=True)[:fetch]

    # searching ------------------------------------------------------------------------
    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        messages: bool = False,
        project: str | None = None,
        since: float | None = None,
        until: float | None = None,
        exclude_session: str | None = None,
        doctypes: tuple[str, ...] | None = None,
        roles=None,
        mtype: str | None = None,
        now: float | None = None,
        agent: str | None = None,
    ) -> list[Hit]:
        limit = max(1, min(int(limit), 1000))
        if doctypes is None:
            doctypes = ("message",) if messages else ("message", "session", "memory", "team")
        searcher = self.index.searcher()
        built = self.build_query(
            searcher,
            text,
            doctypes=doctypes,
            project=project,
            since=since,
            until=until,
            exclude_session=exclude_session,
            roles=roles,
            mtype=mtype,
            agent=agent,
        )
        if built is None:
            return []
        queries, terms = built
        now = time.time() if now is None else now
        ranked = self.rank(searcher, self.top(searcher, queries, fetch_size(limit, messages)), now)
        ranked = _with_neighbours(ranked)
        if not messages:
            ranked = _group_by_session(ranked)
        if messages:  # one message each: the engine's order (the model judges whole exchanges) ...
            hits = judge(searcher, text, self.hits(searcher, ranked, terms, now, limit=limit), reorder=False)
            return echoes_last(hits)  # ... but an echo never ranks above what it points to
        hits = self.hits(searcher, ranked, terms, now, limit=max(limit, JUDGED))
        return judge(searcher, text, hits)[:limit]

    def hits(
        self,
        searcher: tantivy.Searcher,
        ranked: list[Candidate],
        terms: list[str],
        now: float,
        limit: int | None = None,
    ) -> list[Hit]:
        """The first ``limit`` hits of ranked candidates that are shown: not of an excluded
        project, a session switched off or anything forgotten (``Gate.hides``: what was
        indexed before the exclusion stays out of every search until `--purge` removes it),
        and matching a word of weight
        (``weighty``: a hit that matched only "the" or "ok" is passed over). Stored document
        and archived text read, snippet cut with those words in bold, and the exchange a
        message belongs to attached (``recall.search.exchange``)."""
        words = weighty(terms)
        if not words:
            return []  # the query is all stopwords: nothing it matches means anything
        wanted = set(words)
        pattern = highlighter(words)
        gate = self.gate.refresh()
        gated = not gate.readers_see_all()
        limit = len(ranked) if limit is None else limit
        hits: list[Hit] = []
        for c in ranked:
            if len(hits) >= limit:
                break
            doc = searcher.doc(c.address)
            hit, rec, fd = self._read(doc, c.score, now, boost=False, keep_open=True)
            try:
                if gated and gate.hides(hit.project, hit.cwd, hit.session_id, hit.uuid, c.ts, hit.kind):
                    continue
                if hit.text and not _matches(wanted, pattern, hit.text, doc):
                    continue  # (no text: its archive line is gone; shown, recall doctor tells)
                hit.snippet = snippet(hit.text, pattern)
                self._attach_exchange(hit, rec, fd, doc)
            finally:
                if fd is not None:
                    os.close(fd)
            hits.append(hit)
        return hits

    def candidates(
        self, text: str, where: "CandidateFilter | None" = None, limit: int = 24, now: float | None = None
    ) -> list[Hit]:
        """The prompt hook's candidates: the engine's best ``limit`` documents for ``text``
        that ``where`` allows (a project, not the current session, these doctypes), as hits
        with their text and the exchange around them (what ``recall.search.confidence``
        reads), every one that no reader may show left out (``shown``). No snippets: the
        kept ones get snippets fitted to the block when it is formatted. Ranked from fast
        fields; only these candidates' stored documents are decoded."""
        where = where or CandidateFilter()
        s = self.index.searcher()
        built = self.build_query(
            s, text, doctypes=where.doctypes, project=where.project, exclude_session=where.exclude_session
        )
        if built is None:
            return []
        queries, _terms = built
        now = time.time() if now is None else now
        ranked = self.rank(s, self.top(s, queries, limit), now)
        hits = []
        for c in ranked[:limit]:
            doc = s.doc(c.address)
            hit = self._with_exchange(doc, c.score, now)
            hits.append(hit)
        return self.shown(hits)

    def _attach_exchange(self, hit: Hit, rec, fd, doc: tantivy.Document) -> None:
        """A message hit's reply or question (``recall.search.exchange``, read through ``fd``,
        ``_read``'s open archive file), and whether that exchange is an echo (a prompt answered
        by recall's output, a reply that added nothing)."""
        if rec is None or hit.kind != "message":
            return
        flags: dict = {}
        hit.reply, hit.question = exchange(
            self.archive_root,
            hit.project,
            hit.session_id,
            int(doc.get_first("apos")),
            hit.role,
            str(rec.get("source") or ""),
            fd=fd,
            flags=flags,
        )
        hit.echo = hit.echo or bool(flags.get("echo"))

    def _with_exchange(self, doc: tantivy.Document, score: float, now: float) -> Hit:
        """The hit of a stored document (``score`` as given) with the exchange around it."""
        hit, rec, fd = self._read(doc, score, now, boost=False, keep_open=True)
        try:
            self._attach_exchange(hit, rec, fd, doc)
        finally:
            if fd is not None:
                os.close(fd)
        return hit

    def by_keys(self, keys: list[str], now: float | None = None) -> list[Hit]:
        """The hits of these index keys ("m:<uuid>", "mem:<id>"), in the order given, with their text and
        the exchange around them; a key no longer in the index, or that no reader may show,
        is left out (the semantic channel's vectors name documents by key)."""
        if not keys:
            return []
        s = self.index.searcher()
        tq = tantivy.Query
        query = tq.term_set_query(self.schema, "key", list(keys))
        found = {}
        now = time.time() if now is None else now
        for _score, address in s.search(query, len(keys), count=False).hits:
            doc = s.doc(address)
            hit = self._with_exchange(doc, 0.0, now)
            found[stored_value(doc, "key")] = hit
        return self.shown([found[k] for k in keys if k in found])

    def with_turns(self, hits: list[Hit]) -> list[Hit]:
        """``hits`` (in place, and returned) with each message's turn: ``question`` the prompt it
        served (a user prompt's own: unchanged) and ``reply`` what the assistant said after it in
        that turn, its conclusion first (``recall.search.exchange.turn``). What the model path's
        excerpts carry; a hit not in the index any more keeps what it had."""
        keys = [f"m:{h.uuid}" for h in hits if h.kind == "message" and h.role != "user" and not h.reply]
        if not keys:
            return hits
        s = self.index.searcher()
        query = tantivy.Query.term_set_query(self.schema, "key", keys)
        found = {}
        for _score, address in s.search(query, len(keys), count=False).hits:
            doc = s.doc(address)
            pos = doc.get_first("apos")
            if pos is not None:
                found[stored_value(doc, "key")] = int(pos)
        for h in hits:
            pos = found.get(f"m:{h.uuid}")
            if pos is None or h.role == "user":
                continue
            fd = open_session(self.archive_root, h.project, h.session_id)
            if fd is None:
                continue
            try:
                rec = read_message(self.archive_root, h.project, h.session_id, pos, h.uuid, fd=fd)
                source = str((rec or {}).get("source") or "")
                asked, concluded = turn(self.archive_root, h.project, h.session_id, pos, h.role, source, fd=fd)
            finally:
                os.close(fd)
            h.question = h.question or asked
            h.reply = concluded
        return hits

    def newest_messages(self, project: str, limit: int, since: int = 0) -> list[tuple[str, str, int, str]]:
        """``(key, session, ts, text)`` of ``project``'s newest ``limit`` user prompts,
        assistant replies and typed memories (a memory's session: the first it came from) at or
        after ``since`` (what the semantic channel embeds), newest first; what no reader may
        show left out."""
        s = self.index.searcher()
        result = s.search(
            self._prose_query(project, since), limit, count=False, order_by_field="ts", order=tantivy.Order.Desc
        )
        now = time.time()
        hits, keys, stamps = [], [], []
        for _score, address in result.hits:
            doc = s.doc(address)
            hits.append(self._hit(doc, 0.0, now, boost=False))
            keys.append(stored_value(doc, "key"))
            stamps.append(int(stored_value(doc, "ts", 0) or 0))
        shown_ids = {id(h) for h in self.shown(hits)}
        return [(k, h.session_id, ts, h.text) for k, h, ts in zip(keys, hits, stamps) if id(h) in shown_ids and h.text]

    def _prose_query(self, project: str, since: int = 0):
        """``project``'s user prompts, assistant replies and typed memories (at or after ``since``)."""
        tq = tantivy.Query
        schema = self.schema

        def must(field, value):
            return (tantivy.Occur.Must, tq.term_query(schema, field, value, index_option="basic"))

        prose = tq.boolean_query(
            [must("doctype", "message"), (tantivy.Occur.Must, tq.term_set_query(schema, "role", ["user", "assistant"]))]
        )
        from recall.memory import TYPES  # a typed memory's (not a rule's, nor a session summary's)

        memory = tq.boolean_query(
            [must("doctype", "memory"), (tantivy.Occur.Must, tq.term_set_query(schema, "mtype", list(TYPES)))]
        )
        clauses = [
            must("project", project),
            (tantivy.Occur.Must, tq.boolean_query([(tantivy.Occur.Should, prose), (tantivy.Occur.Should, memory)])),
        ]
        if since:
            clauses.append(
                (tantivy.Occur.Must, tq.range_query(schema, "ts", tantivy.FieldType.Integer, int(since), 2**62))
            )
        return tq.boolean_query(clauses)

    def count_prose(self, project: str) -> int:
        """How many user prompts, assistant replies and typed memories ``project`` has in the index."""
        return self.index.searcher().search(self._prose_query(project), 1, count=True).count

    def doc_freqs(self, terms: list[str], project: str | None = None) -> tuple[dict[str, int], int]:
        """How many messages (and memories) of ``project`` hold each of ``terms`` in their
        content, and how many documents ``project`` has: the history the prompt hook judges
        a prompt's words by (the whole index when ``project`` is None)."""
        s = self.index.searcher()
        everywhere = {t: s.doc_freq("content", t) for t in terms}
        if not project:
            return everywhere, s.num_docs
        schema = self.schema
        scope = tantivy.Query.term_query(schema, "project", project, index_option="basic")
        docs = s.search(scope, 1, count=True).count
        share = docs / max(1, s.num_docs)
        # counted for the rarest MAX_COUNTED (a pasted log has hundreds of terms: each count reads
        # the term's postings); the others, common anyway, estimated by the project's share
        counted = set(sorted((t for t in terms if everywhere[t]), key=everywhere.get)[:MAX_COUNTED])
        out = {}
        for t in terms:
            if t not in counted:  # in no project (0), or too common to be worth a count
                out[t] = round(everywhere[t] * share) if everywhere[t] else 0
                continue
            q = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, tantivy.Query.term_query(schema, "content", t, index_option="basic")),
                    (tantivy.Occur.Must, scope),
                ]
            )
            out[t] = s.search(q, 1, count=True).count
        return out, docs

    def reply_after(self, hit: Hit, window: int = 3600) -> Hit | None:
        """The assistant's message that followed ``hit`` (a user prompt) in its session within
        ``window`` seconds, if any and if it may be shown (a question rarely repeats the words
        of its answer, so the hook brings the answer along)."""
        from datetime import datetime  # fromisoformat: no _strptime/locale import on the hot path

        try:
            ts = (
                int(datetime.fromisoformat(hit.timestamp.replace("Z", "+00:00")).timestamp()) if hit.timestamp else None
            )
        except (ValueError, OverflowError):
            ts = None
        if ts is None:
            return None
        schema = self.schema
        tq = tantivy.Query

        def term(field, value):
            return (tantivy.Occur.Must, tq.term_query(schema, field, value, index_option="basic"))

        query = tq.boolean_query(
            [
                term("session_id", hit.session_id),
                term("doctype", "message"),
                term("role", "assistant"),
                (tantivy.Occur.Must, tq.range_query(schema, "ts", tantivy.FieldType.Integer, ts, ts + window)),
            ]
        )
        try:
            s = self.index.searcher()
            result = s.search(query, 1, count=False, order_by_field="ts", order=tantivy.Order.Asc)
            if not result.hits:
                return None
            doc = s.doc(result.hits[0][1])
        except Exception:  # an older index without the fast field: no answer, no failure
            return None
        answer = self._hit(doc, hit.score, time.time())
        answer.timestamp = answer.timestamp or iso(ts)
        answer.snippet = " ".join(answer.text.split())[:240]
        return answer if self.shown([answer]) else None

    @staticmethod
    def rank(searcher: tantivy.Searcher, scored: list, now: float) -> list[Candidate]:
        """Tantivy's (score, address) pairs ranked by ``rank_score``, best first, read from
        fast-field columns: stored documents are decoded only for the hits kept (decoding
        ~110 candidates cost ~1.3 ms a query at 1M messages)."""
        if not scored:
            return []
        addresses = [address for _, address in scored]
        stamps = searcher.fast_field_values("ts", addresses)
        groups = searcher.fast_field_values("group", addresses)
        codes = searcher.fast_field_values("dtcode", addresses)
        ranked = []
        for i, (score, address) in enumerate(scored):
            doctype = DOCTYPES_BY_CODE.get(codes[i], "message")
            group = groups[i] if groups[i] is not None else ("doc", i)
            ranked.append(
                Candidate(rank_score(score, stamps[i] or 0, doctype, now), doctype, group, address, stamps[i] or 0)
            )
        ranked.sort(key=lambda c: c.score, reverse=True)
        return ranked

    def _hit(self, doc: tantivy.Document, score: float, now: float, boost: bool = True) -> Hit:
        """The hit for a stored document; ``score`` is Tantivy's, boosted by ``rank_score``
        unless ``boost`` is false (already done)."""
        return self._read(doc, score, now, boost)[0]

    def _read(
        self, doc: tantivy.Document, score: float, now: float, boost: bool = True, keep_open: bool = False
    ) -> tuple[Hit, dict | None, int | None]:
        """``_hit``, the message's archived record (None when it has none) and, when
        ``keep_open``, its archive file still open for reading around it (the caller closes
        it; None when there is none)."""
        first = stored_value
        ts = int(first(doc, "ts", 0) or 0)
        doctype = first(doc, "doctype", "message")
        key = first(doc, "key")
        hit = Hit(
            session_id=first(doc, "session_id"),
            uuid=key.split(":", 1)[1] if ":" in key else key,
            project="",
            cwd="",
            timestamp="",
            role="",
            text="",
            snippet="",
            score=rank_score(score, ts, doctype, now) if boost else score,
            kind=doctype,
        )
        rec, fd = self._fill(hit, doc, keep_open)
        return hit, rec, fd

    def _fill(self, hit: Hit, doc: tantivy.Document, keep_open: bool = False) -> tuple[dict | None, int | None]:
        """The fields of a hit that ranking does not read: from its stored document, and
        a message's text and cwd from its line in the archive. Returns the archived record
        (None when there is none) and, when ``keep_open``, the archive file's descriptor
        (the caller closes it)."""
        hit.project = stored_value(doc, "project")
        hit.timestamp = iso(int(stored_value(doc, "ts", 0) or 0))
        hit.role = stored_value(doc, "role")
        if hit.kind in ("message", "session"):
            hit.agent = stored_value(doc, "agent") or "claude-code"
        pos = doc.get_first("apos")
        if hit.kind in DISTILLED:
            tags = [str(v) for v in doc.get_all("tags")]
            if hit.kind == "memory" and any(ECHO_TAG in v.split() for v in tags):
                hit.echo = True  # a summary of a session that restated recall's own output
            hit.tags = [t for t in tags if ECHO_TAG not in t.split()]
        if pos is None:
            hit.cwd = stored_value(doc, "cwd")
            hit.text = stored_value(doc, "text")
            if hit.kind == "team":
                hit.author = stored_value(doc, "author") or None
            return None, None
        fd = open_session(self.archive_root, hit.project, hit.session_id)
        try:
            rec = (
                read_message(self.archive_root, hit.project, hit.session_id, int(pos), hit.uuid, fd=fd)
                if fd is not None
                else None
            )
        finally:
            if fd is not None and not keep_open:
                os.close(fd)
                fd = None
        hit.cwd = str((rec or {}).get("cwd") or "")
        hit.text = str((rec or {}).get("text") or "")
        hit.echo = bool((rec or {}).get("echo"))
        return rec, fd

    def count(self) -> int:
        return self.index.searcher().num_docs

    def missing_text(self, sample: int = 20) -> tuple[int, int, str]:
        """Of the ``sample`` newest messages, how many were checked and how many have lost
        the archive line their text is read from (``recall doctor``), with one such session."""
        searcher = self.index.searcher()
        q = tantivy.Query.term_query(self.schema, "doctype", "message", index_option="basic")
        hits = searcher.search(q, sample, order_by_field="ts", order=tantivy.Order.Desc).hits
        checked = lost = 0
        session = ""
        for _, address in hits:
            doc = searcher.doc(address)
            pos = doc.get_first("apos")
            if pos is None:
                continue
            checked += 1
            key = stored_value(doc, "key")
            if (
                read_message(
                    self.archive_root,
                    stored_value(doc, "project"),
                    stored_value(doc, "session_id"),
                    int(pos),
                    key.split(":", 1)[-1],
                )
                is None
            ):
                lost += 1
                session = session or stored_value(doc, "session_id")
        return checked, lost, session


class _Helper:
    """One daemon thread that runs what it is given (``submit``), kept for the process.
    While it is busy (another thread's search), a job gets a thread of its own, as before."""

    def __init__(self) -> None:
        import queue

        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.busy = threading.Lock()
        threading.Thread(target=self._loop, name="recall-search", daemon=True).start()

    def _loop(self) -> None:
        while True:
            fn, arg, done = self.jobs.get()
            try:
                fn(arg)
            finally:
                self.busy.release()
                done.put(None)

    def submit(self, fn, arg):
        import queue

        done: queue.SimpleQueue = queue.SimpleQueue()
        if self.busy.acquire(blocking=False):
            self.jobs.put((fn, arg, done))
        else:

            def own() -> None:
                try:
                    fn(arg)
                finally:
                    done.put(None)

            threading.Thread(target=own, daemon=True).start()
        return done


_helpers: dict[int, _Helper] = {}
_helpers_lock = threading.Lock()


def _helper() -> _Helper:
    """This process's helper (a forked child starts its own: threads do not survive a fork).
    Searches from several threads at once share it: each waits only for its own job."""
    import os

    pid = os.getpid()
    h = _helpers.get(pid)
    if h is None:
        with _helpers_lock:
            h = _helpers.get(pid) or _helpers.setdefault(pid, _Helper())
    return h


@dataclass(frozen=True)
class CandidateFilter:
    """Which documents the prompt hook's candidates (``Searcher.candidates``) may come from."""

    project: str | None = None  # this project's only (None: every project)
    exclude_session: str | None = None  # never this session (the current one: already in context)
    doctypes: tuple[str, ...] = ("message", "memory", "team")


@dataclass
class Candidate:
    """A ranked match before its stored document is decoded (``Searcher.rank``)."""

    score: float
    kind: str
    group: object  # the ``group`` fast field: a session, or a memory's own key
    address: object
    ts: int = 0


def fetch_size(limit: int, messages: bool) -> int:
    """How many candidates a search of ``limit`` hits asks Tantivy for (before ranking):
    unless ``messages``, only a session's best message is kept, so several per hit."""
    fetch = limit if messages else min(limit * 8 + 20, 600)
    return min(fetch + 10, 1000)


def rank_score(score: float, ts: int | float, doctype: str, now: float) -> float:
    """Tantivy's score with the recency prior and the doctype's weight."""
    age_days = max(0.0, (now - ts) / 86400.0) if ts else 365.0
    boosted = score * (1.0 + RECENCY_WEIGHT * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS))
    if doctype == "session":
        boosted *= SESSION_DOC_WEIGHT
    elif doctype in DISTILLED:
        boosted *= MEMORY_WEIGHT
    return boosted


def _with_neighbours(
    ranked: list[Candidate], weight: float | None = None, seconds: float | None = None
) -> list[Candidate]:
    """``ranked`` with each message's score raised by NEIGHBOUR_WEIGHT × the best score of
    the candidates beside it in its session (the one before and the one after, by time,
    within NEIGHBOUR_SECONDS), re-sorted. Only candidates count: no extra reads."""
    weight = NEIGHBOUR_WEIGHT if weight is None else weight
    seconds = NEIGHBOUR_SECONDS if seconds is None else seconds
    if not weight or len(ranked) < 2:
        return ranked
    sessions: dict[object, list[Candidate]] = {}
    for c in ranked:
        if c.kind == "message":
            sessions.setdefault(c.group, []).append(c)
    base = {id(c): c.score for c in ranked}
    changed = False
    for group in sessions.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda c: c.ts)
        for i, c in enumerate(group):
            near = [
                base[id(o)]
                for o in (group[i - 1] if i else None, group[i + 1] if i + 1 < len(group) else None)
                if o is not None and abs(o.ts - c.ts) <= seconds
            ]
            if near:
                c.score = base[id(c)] + weight * max(near)
                changed = True
    if changed:
        ranked.sort(key=lambda c: c.score, reverse=True)
    return ranked


def _group_by_session(ranked: list[Candidate], weights: tuple[float, ...] | None = None) -> list[Candidate]:
    """One hit per session, shown by its best message; each memory stands on its own.

    A session scores by more than its single best match: the ``weights`` (SESSION_WEIGHTS)
    of its best, second, third … candidate scores summed, so a session that discusses the
    question in several messages outranks one that mentions its words once."""
    weights = SESSION_WEIGHTS if weights is None else weights
    best: dict[object, Candidate] = {}
    total: dict[object, float] = {}
    seen: dict[object, int] = {}
    order: list[object] = []
    for c in ranked:  # sorted by score: the first hit of a session is its best
        cur = best.get(c.group)
        if cur is None:
            best[c.group] = c
            total[c.group] = c.score * weights[0]
            seen[c.group] = 1
            order.append(c.group)
            continue
        n = seen[c.group]
        if c.kind not in DISTILLED and n < len(weights):
            total[c.group] += c.score * weights[n]
        seen[c.group] = n + 1
        if cur.kind == "session" and c.kind == "message":
            best[c.group] = c  # show the session by its best message
    for g in order:
        best[g].score = total[g]
    return sorted((best[g] for g in order), key=lambda c: c.score, reverse=True)


def _matches(words: set[str], pattern, text: str, doc: tantivy.Document) -> bool:
    """Whether a document holds one of ``words`` (analysed terms) in its text or in the
    files, tools and tags it was indexed with. The snippet's ``pattern`` answers most
    (a regex search stops at the first match); analysing the text settles the rest."""
    if pattern is not None and pattern.search(text):
        return True
    if not words.isdisjoint(analyze(text)):
        return True
    extra = [str(v) for name in ("files", "tools", "tags") for v in doc.get_all(name)]
    return bool(extra) and not words.isdisjoint(analyze(" ".join(extra)))


def search(query: str, **kwargs) -> list[Hit]:
    """One-shot search (opens the index, searches, returns hits)."""
    return Searcher().search(query, **kwargs)
