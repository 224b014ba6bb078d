"""Library functions behind the MCP tools: merged memory + transcript search, memories by
tag, questions answered from the top matches, and project scoping.

Every function takes plain arguments and returns JSON-able dicts, so the same code runs in
the MCP server's process or inside the background service (see ``recall.service.ops.mcp``).
Errors are ``RecallError``s whose message tells the caller (a model, here) what to do next.

A *match* (one result) is a dict::

    {"kind": "memory" | "team" | "message" | "session", "id": memory id | message uuid | session id,
     "type": memory type or None, "tags": [...], "date": ISO 8601 UTC, "project": root,
     "session_id": ..., "role": ..., "snippet": ..., "text": ..., "score": float,
     "reply": the reply a user prompt got (only then), "question": the prompt an assistant
     message answered (only then), "stale": [{"path", "state", "since"}] the files it names or
     its session wrote that changed, moved or were deleted since (``recall.search.stale``),
     "author": the teammate who shared it (team items only), "agent": the agent a message or
     session came from (claude-code, codex, gemini; messages and sessions only)}

A *team* match is a teammate's memory, session summary or rule, pulled by the team sync
(``recall.team``); it ranks as a memory does.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field

import tantivy

from indexer.project import canonical_project
from indexer.schema import ECHO_TAG, stored_value
from recall.core import paths
from recall.core.errors import RecallError, UsageError
from recall.core.text import clip
from recall.memory import note_access
from recall.search.hit import Hit, iso
from recall.search.merged import ASK_MATCHES, TRANSCRIPTS, merged_search
from recall.search.query import analyze
from recall.search.searcher import Searcher
from recall.search.stale import mark_hits
from recall.search.timespec import parse_since

#: The memory types of the typed-memory store (``mtype`` in the index).
MEMORY_TYPES = ("architecture", "decision", "pattern", "gotcha", "progress", "context")

#: Characters of a match's full text carried in results (the MCP layer trims further).
TEXT_CHARS = 2000
MAX_TAGS = 20
ALL_PROJECTS = ("all", "*", "any")


# project scoping -----------------------------------------------------------------------
@dataclass
class Scope:
    """Which project a call searches: ``project`` None means every project."""

    project: str | None
    note: str = ""

    def as_json(self) -> dict:
        return {"project": self.project, "note": self.note or None}


def project_doc_count(searcher: Searcher, project: str) -> int:
    q = tantivy.Query.term_query(searcher.schema, "project", project, index_option="basic")
    return searcher.index.searcher().search(q, 1, count=True).count


def known_projects(limit: int = 8) -> list[str]:
    """Indexed projects, most recently active first (for error messages and name lookup)."""
    db = paths.state_db_path()
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
        try:
            rows = conn.execute(
                "SELECT project FROM sessions WHERE project != '' GROUP BY project ORDER BY MAX(ended) DESC LIMIT ?",
                (limit,),
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [r[0] for r in rows]


def _projects_hint() -> str:
    known = known_projects()
    if not known:
        return 'Use project="all" to search every project.'
    return "Indexed projects: " + ", ".join(known) + '. Pass one of them, or project="all" for every project.'


def resolve_scope(searcher: Searcher, project: str | None, cwd: str | None) -> Scope:
    """The project a call is about.

    ``project`` given: "all" (every project), a path (absolute, ``~``, or relative to ``cwd``;
    any folder inside a repository names its root) or the bare name of an indexed project;
    it must have something indexed. ``project`` None: the project of ``cwd`` (the MCP
    client's working directory); when nothing of it is indexed yet, every project, with a
    note saying so.
    """
    if project is not None:
        raw = project.strip()
        if not raw:
            raise UsageError('project is empty: pass a project path, or "all" for every project.')
        if raw.lower() in ALL_PROJECTS:
            return Scope(None)
        expanded = os.path.expanduser(raw)
        if not os.path.isabs(expanded):
            expanded = os.path.join(cwd or os.getcwd(), expanded)
        path = os.path.normpath(expanded)
        candidates = []
        if os.path.isdir(path):
            candidates.append(canonical_project(path))
        candidates.append(path)
        if os.sep not in raw and not raw.startswith((".", "~")):
            candidates += [p for p in known_projects(200) if os.path.basename(p) == raw]
        for cand in dict.fromkeys(candidates):
            if project_doc_count(searcher, cand):
                return Scope(cand)
        if not os.path.exists(path) and len(candidates) == 1:
            raise UsageError(f"Project {raw!r} does not exist ({path}). {_projects_hint()}")
        raise UsageError(f"Nothing of project {candidates[0]} is indexed (no sessions or memories). {_projects_hint()}")
    if cwd:
        root = canonical_project(os.path.abspath(cwd))
        if project_doc_count(searcher, root):
            return Scope(root)
        return Scope(None, f"Nothing of {root} is indexed yet, so every project was searched.")
    return Scope(None)


# matches -------------------------------------------------------------------------------
@dataclass
class Match:
    hit: Hit
    mtype: str = ""
    tags: list[str] = field(default_factory=list)
    matched_tags: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        h = self.hit
        d = {
            "kind": h.kind,
            "id": h.uuid,
            "type": self.mtype or None,
            "tags": list(self.tags),
            "date": h.timestamp,
            "project": h.project,
            "session_id": h.session_id,
            "role": h.role,
            "snippet": h.snippet,
            "text": clip(h.text, TEXT_CHARS),
            "score": round(h.score, 4),
            "stale": list(h.stale or []),
        }
        if self.matched_tags:
            d["matched_tags"] = list(self.matched_tags)
        if h.reply:
            d["reply"] = h.reply  # a question's match: the reply it got (recall.search.exchange)
        if h.question:
            d["question"] = h.question  # a reply's match: the question it answered
        if h.channel:
            d["channel"] = h.channel  # with the service: which channel found it (lexical, semantic, both)
            if h.similarity is not None:
                d["similarity"] = round(h.similarity, 4)
        if h.author:
            d["author"] = h.author  # a team item's match: who shared it
        if h.agent:
            d["agent"] = h.agent  # a message's or session's match: the agent it came from (claude-code, codex, gemini)
        return d


def _stored(doc: tantivy.Document, name: str) -> str:
    return str(stored_value(doc, name))


def _memory_details(searcher: Searcher, ids: list[str]) -> dict[str, tantivy.Document]:
    """The stored memory documents for ``ids`` (type, tags, session), by id."""
    if not ids:
        return {}
    s = searcher.index.searcher()
    q = tantivy.Query.term_set_query(searcher.schema, "key", [f"{p}:{i}" for i in ids for p in ("mem", "team")])
    out = {}
    for _score, address in s.search(q, 2 * len(ids) + 5).hits:
        doc = s.doc(address)
        key = _stored(doc, "key")
        out[key.split(":", 1)[1]] = doc
    return out


def _split_tags(value: str) -> list[str]:
    return [t for t in value.split() if t]


def _check_text(text: str, what: str = "query") -> str:
    text = (text or "").strip()
    if not text:
        raise UsageError(f"{what} is empty: pass a few words or an identifier to look for.")
    if not analyze(text):
        raise UsageError(f"{what} {text[:80]!r} has no searchable words: use words, names or identifiers.")
    return text


def _check_limit(limit: int, high: int) -> int:
    try:
        n = int(limit)
    except (TypeError, ValueError):
        raise UsageError(f"limit must be a whole number from 1 to {high}; got {limit!r}.") from None
    if not 1 <= n <= high:
        raise UsageError(f"limit must be from 1 to {high}; got {n}.")
    return n


def _check_type(mtype: str | None) -> str | None:
    if mtype is None or mtype == "":
        return None
    t = mtype.strip().lower()
    if t not in MEMORY_TYPES:
        raise UsageError(
            f"type {mtype!r} is not a memory type: use one of {', '.join(MEMORY_TYPES)} "
            "(or leave it out for every type and transcript hits)."
        )
    return t


def merged_matches(
    searcher: Searcher,
    text: str,
    *,
    limit: int,
    mtype: str | None = None,
    project: str | None = None,
    cwd: str | None = None,
    team: bool = False,
) -> list[Match]:
    """Typed memories (this machine's and the team's) and transcript hits for ``text``, ranked
    together (``recall.search.merged``), with their stale marks (files judged in the working
    tree ``cwd`` is in) and the memories' types and tags. With ``mtype`` only memories of that
    type; with ``team`` only the team's items.
    """
    ranked = merged_search(searcher, text, limit=limit, mtype=mtype, project=project, team=team)
    if not mtype and not team:
        ranked = _with_meaning(searcher, ranked, text, limit, project, cwd)
    ranked = mark_hits(ranked, cwd)
    details = _memory_details(searcher, [h.uuid for h in ranked if h.kind in ("memory", "team")])
    out = []
    for h in ranked:
        if h.kind in ("memory", "team"):
            doc = details.get(h.uuid)
            m = Match(h)
            if doc is not None:
                m.mtype = _stored(doc, "mtype")
                m.tags = _split_tags(_stored(doc, "tags"))
            out.append(m)
        else:
            out.append(Match(h))
    return out


def _with_meaning(
    searcher: Searcher, ranked: list, text: str, limit: int, project: str | None, cwd: str | None
) -> list:
    """``ranked`` fused with the semantic channel's nearest sessions where it applies: in the
    service, which holds the vectors and runs these tools when it is up (``recall.search.fused``);
    ``ranked`` as it is elsewhere."""
    from recall.search.fused import fuse, semantic_side

    try:
        semantic = semantic_side(searcher, text, {"project": project, "limit": limit}, cwd)
    except Exception:  # noqa: BLE001 - the words alone, never a failed search
        return ranked
    return ranked if semantic is None else fuse(ranked, semantic, limit)


# the operations ------------------------------------------------------------------------
def memory_search(
    text: str,
    *,
    limit: int = 10,
    mtype: str | None = None,
    project: str | None = None,
    cwd: str | None = None,
    searcher: Searcher | None = None,
    team: bool = False,
) -> dict:
    """Typed memories and transcript hits for ``text`` (see ``merged_matches``); ``team``:
    only the team's items."""
    text = _check_text(text)
    limit = _check_limit(limit, 50)
    mtype = _check_type(mtype)
    s = searcher or Searcher()
    scope = resolve_scope(s, project, cwd)
    matches = merged_matches(s, text, limit=limit, mtype=mtype, project=scope.project, cwd=cwd, team=bool(team))
    note_access([m.hit for m in matches])
    return {"query": text, **scope.as_json(), "matches": [m.as_json() for m in matches]}


def _tag_clause(schema, terms: list[str]):
    parts = [(tantivy.Occur.Must, tantivy.Query.term_query(schema, "tags", t, index_option="freq")) for t in terms]
    q = parts[0][1] if len(parts) == 1 else tantivy.Query.boolean_query(parts)
    return tantivy.Query.const_score_query(q, 1.0)


def memory_related(
    tags: list[str], *, limit: int = 20, cwd: str | None = None, searcher: Searcher | None = None
) -> dict:
    """Memories carrying any of ``tags``, in every project.

    Ranked by how many of the tags a memory carries, then the caller's project first, then
    the most recently updated. A tag matches by its words (stemmed, case-insensitive), so
    ``webhooks`` finds ``webhook`` and ``auth-flow`` finds ``auth flow``.
    """
    if isinstance(tags, str):
        tags = [tags]
    wanted = [t.strip() for t in (tags or []) if isinstance(t, str) and t.strip()]
    if not wanted:
        raise UsageError('tags is empty: pass one or more tags, e.g. ["stripe", "webhooks"].')
    if len(wanted) > MAX_TAGS:
        raise UsageError(f"at most {MAX_TAGS} tags at once; got {len(wanted)}.")
    limit = _check_limit(limit, 100)
    s = searcher or Searcher()
    schema = s.schema
    tag_terms = {t: _unique(analyze(t)) for t in wanted}
    clauses = [_tag_clause(schema, terms) for terms in tag_terms.values() if terms]
    if not clauses:
        raise UsageError(f"tags {wanted!r} have no searchable words: use words like \"auth\" or \"stripe\".")
    query = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, tantivy.Query.boolean_query([(tantivy.Occur.Should, c) for c in clauses])),
            (
                tantivy.Occur.Must,
                tantivy.Query.const_score_query(
                    tantivy.Query.term_query(schema, "doctype", "memory", index_option="basic"), 0.0
                ),
            ),
        ]
    )
    here = canonical_project(os.path.abspath(cwd)) if cwd else ""
    ts = s.index.searcher()
    rows = []
    for score, address in ts.search(query, 1000).hits:
        doc = ts.doc(address)
        have = set(analyze(_stored(doc, "tags")))
        matched = [t for t, terms in tag_terms.items() if terms and set(terms) <= have]
        project = _stored(doc, "project")
        ts_val = int(doc.get_first("ts") or 0)
        key = _stored(doc, "key")
        text = _stored(doc, "text")
        hit = Hit(
            session_id=_stored(doc, "session_id"),
            uuid=key.split(":", 1)[1] if ":" in key else key,
            project=project,
            cwd=_stored(doc, "cwd"),
            timestamp=iso(ts_val),
            role=_stored(doc, "role"),
            text=text,
            snippet=clip(text, 240),
            score=float(len(matched) or score),
            kind="memory",
        )
        hit.echo = any(ECHO_TAG in str(v).split() for v in doc.get_all("tags"))  # a summary of an echo
        rows.append((len(matched) or score, project == here, ts_val, hit, doc, matched))
    visible = {id(h) for h in s.shown([r[3] for r in rows])}  # excluded, switched off, forgotten: never
    rows = [r for r in rows if id(r[3]) in visible]
    total = len(rows)
    rows.sort(key=lambda r: (not r[3].echo, r[0], r[1], r[2]), reverse=True)  # echoes last
    matches = []
    for _n, _here, _ts, hit, doc, matched in rows[:limit]:
        matches.append(
            Match(hit, mtype=_stored(doc, "mtype"), tags=_split_tags(_stored(doc, "tags")), matched_tags=matched)
        )
    mark_hits([m.hit for m in matches], cwd)
    matches = [m.as_json() for m in matches]
    note_access([(m["project"], m["id"]) for m in matches])
    return {"tags": wanted, "project": here or None, "total": total, "matches": matches}


def _unique(seq):
    return list(dict.fromkeys(seq))


SYNTHESIS_OFF = (
    "Synthesis is off: recall has no model backend ({why}), so these are the raw matches. "
    "To get synthesized answers, run `recall config set api_key KEY` (takes effect at once), "
    "set ANTHROPIC_API_KEY where Claude Code is started, or log in to Claude Code."
)


def memory_ask(
    question: str,
    *,
    project: str | None = None,
    cwd: str | None = None,
    searcher: Searcher | None = None,
    timeout: float = 30.0,
) -> dict:
    """The top ``ASK_MATCHES`` matches for ``question``, synthesized by the model into an
    answer with citations; without a key (or when the call fails) the raw matches and a note."""
    from recall.llm.errors import NoKey

    question = _check_text(question, "question")
    s = searcher or Searcher()
    scope = resolve_scope(s, project, cwd)
    found = merged_matches(s, question, limit=ASK_MATCHES, project=scope.project, cwd=cwd)
    out = {
        "question": question,
        **scope.as_json(),
        "answer": None,
        "synthesized": False,
        "matches": [m.as_json() for m in found],
    }
    if not found:
        out["note"] = _join(
            scope.note,
            "Nothing indexed matches the question; try other words, "
            "or memory_search / recall_search with a narrower query.",
        )
        return out
    from recall.llm.synthesis import answer_question

    try:
        out["answer"] = answer_question(question, [m.hit for m in found], timeout=timeout)
        out["synthesized"] = True
    except NoKey as exc:
        why = str(exc).removeprefix("Model calls are off: ").split(":")[0].rstrip(". ")
        out["note"] = _join(scope.note, SYNTHESIS_OFF.format(why=why))
    except RecallError as exc:  # ModelError, CapReached: fall back to the raw matches
        out["note"] = _join(scope.note, f"Synthesis failed ({exc}); these are the raw matches.")
    return out


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def recall_search(
    text: str,
    *,
    since: str | None = None,
    limit: int = 5,
    messages: bool = False,
    project: str | None = None,
    cwd: str | None = None,
    searcher: Searcher | None = None,
) -> dict:
    """``recall QUERY`` over raw transcripts: the CLI's engine and options (``--since``,
    ``--limit``, ``--messages``, ``--project``), scoped like the other tools."""
    from recall.search.run import run_search

    text = _check_text(text)
    limit = _check_limit(limit, 50)
    if since is not None and since.strip() == "":
        since = None
    if since is not None:
        try:
            parse_since(since)
        except UsageError:
            raise UsageError(
                f"since takes a span back from now like 2h, 3d or 1w, or a date like 2026-11-01; got {since!r}."
            ) from None
    s = searcher or Searcher()
    scope = resolve_scope(s, project, cwd)
    hits = run_search(
        text,
        limit=limit,
        since=since,
        project=scope.project,
        messages=messages,
        doctypes=None if messages else TRANSCRIPTS,
        searcher=s,
        cwd=cwd,
    )
    return {
        "query": text,
        **scope.as_json(),
        "since": since,
        "messages": messages,
        "matches": [Match(h).as_json() for h in hits],
    }
