"""The recall MCP server: Claude asks its past sessions and memories for more, mid-session.

Four read-only tools, thin over ``recall.mcp.tools``:

``memory_search``  typed memories and transcript hits for a query, ranked together
``memory_related`` memories carrying any of some tags
``memory_ask``     a question answered from the top 30 matches (Haiku), with citations
``recall_search``  ``recall QUERY`` over raw transcripts, with the CLI's options

and two that write, over ``recall.mcp.rule_tools``: ``rule_add`` and ``rule_update`` (a
triggered rule when the user says "always remember to …"; see docs/rules.md).

Each call goes to the background service over its socket when it runs (warm index, warm
model client) and runs in this process otherwise. Results are structured (an output
schema, ``structuredContent``) plus readable text, each capped at ``RESULT_CHARS``
characters. A bad argument or a recall problem is a tool error (``isError``) whose text
says what to do; nothing a client sends stops the server. Logs go to stderr and
``recall.core.log``; stdout carries only the protocol.

Import this module only to serve (``recall mcp``) or test: it imports the mcp SDK.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Annotated, Any, Callable, Literal, get_args

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from recall import __version__
from recall.core import log
from recall.core.errors import RecallError, UsageError
from recall.core.text import clip, clip_block, counted
from recall.mcp import rule_tools, tools

#: Size cap of one tool result, for its text and its structured JSON each (Claude Code
#: truncates large tool output; a few thousand characters is what a model reads well).
RESULT_CHARS = 8000
ALL = "all"  # the project value meaning every project
ANSWER_CHARS = 4000
SERVICE_TIMEOUT = 10.0
ASK_TIMEOUT = 60.0

MemoryType = Literal["architecture", "decision", "pattern", "gotcha", "progress", "context"]
assert set(get_args(MemoryType)) == set(tools.MEMORY_TYPES)

_log = logging.getLogger("recall.mcp")  # handlers: log.setup() in serve(), not at import

INSTRUCTIONS = """\
recall is persistent memory for Claude Code: every past session of this user is indexed, and
durable lessons are kept as typed memories (architecture, decision, pattern, gotcha,
progress, context). Relevant context is already injected into prompts; use these tools when
that is not enough, e.g. the user refers to earlier work ("like we did last week", "that
bug again"), you need a past decision or its reason, or you are about to redo something
that may have been solved before.
- memory_search: first choice. Memories and transcript hits for keywords, ranked (with a
  team database joined, teammates' memories too, each with its author; team=true: only those).
- memory_ask: a question answered in prose from the top matches, with citations.
- memory_related: memories by tag, to widen around a memory you already found.
- recall_search: raw transcript search with time and per-message options.
- rule_add / rule_update: when the user says "always remember to …", "whenever you touch X,
  do Y" or "never …", store it as a triggered rule; recall then injects it whenever the
  situation comes up (words, a regex, file paths, tools), in every later session.
Results default to the current project; pass project="all" for every project."""

PROJECT_DESC = (
    'Project to search: a path (absolute, ~, or relative to the working directory; '
    'any folder of a repository means its root), the name of an indexed project, or "all" '
    'for every project. Default: the current working directory\'s project (every project '
    'when nothing of it is indexed yet).'
)


# structured output --------------------------------------------------------------------------
class StaleOut(BaseModel):
    """A file the match names, or its session wrote, that changed since (recall.search.stale)."""

    path: str = Field(description="Project-relative path.")
    state: Literal["changed", "deleted", "renamed"]
    since: str | None = Field(None, description="When, ISO 8601 UTC (left out when not known).")
    to: str | None = Field(None, description="The new path (renamed only).")


class MatchOut(BaseModel):
    """One result: a memory, a transcript message, or a session."""

    n: int = Field(description="Position in this result (citations [n] refer to it).")
    kind: Literal["memory", "team", "message", "session"] = Field(
        description="memory: a curated typed memory; team: a teammate's memory, session summary or rule "
        "(shared through the team database); message: one transcript message; "
        "session: a session matched as a whole (first prompt and summaries)."
    )
    id: str = Field(description="Memory id, message uuid, or session id.")
    type: str | None = Field(None, description="Memory type (memories only).")
    tags: list[str] = Field(default_factory=list, description="Memory tags (memories only).")
    matched_tags: list[str] | None = Field(None, description="Which of the asked tags it carries (memory_related).")
    date: str = Field(description="When it was said or last updated, ISO 8601 UTC.")
    project: str = Field(description="Project root it belongs to.")
    session_id: str = Field(description="Session it comes from ('' for a memory with no session).")
    role: str = Field(description="user, assistant, tool, summary or session for transcript hits.")
    snippet: str = Field(description="Passage around the query words, matches in **bold**.")
    text: str | None = Field(None, description="Fuller text, cut to fit the size cap (… marks a cut).")
    reply: str | None = Field(
        None,
        description=(
            "A user prompt's match: the reply it got in that session (the assistant's text, the tool "
            "calls between as one line each), cut to fit the size cap."
        ),
    )
    question: str | None = Field(None, description="An assistant message's match: the prompt it answered.")
    score: float = Field(description="Relevance (higher is better; memory_related: tags matched).")
    stale: list[StaleOut] = Field(
        default_factory=list,
        description=(
            "Files it names or its session wrote that changed, moved or were deleted since: check them "
            "before relying on it. Empty when nothing changed."
        ),
    )
    author: str | None = Field(None, description="Who shared it (team items only).")


class _Page(BaseModel):
    project: str = Field(description='Project searched (its root); "all" when every project was.')
    note: str | None = Field(None, description="Anything worth knowing about this result.")
    shown: int = Field(description="Results included here.")
    more: int = Field(0, description="Further results left out to fit the size cap: lower limit or narrow the query.")
    matches: list[MatchOut]


class SearchOut(_Page):
    query: str


class RelatedOut(_Page):
    tags: list[str]
    total: int = Field(description="Memories carrying any of the tags.")


class AskOut(_Page):
    question: str
    synthesized: bool = Field(description="Whether answer was written by the model from the matches.")
    answer: str | None = Field(None, description="The answer, citing matches as [n]; null when synthesis is off.")


class RecallSearchOut(_Page):
    query: str
    since: str | None = None
    messages: bool = False


class RuleOut(BaseModel):
    id: str = Field(description="The rule's id (rule_update takes it).")
    text: str = Field(description="What is injected when the rule fires.")
    any: list[str] = Field(description="Fires when the prompt has any of these words.")
    all: list[str] = Field(description="Fires when the prompt has all of these words.")
    regex: str | None = Field(None, description="Fires when this RE2 pattern is in the prompt.")
    paths: list[str] = Field(description="Fires when a mentioned or recently used file matches a glob.")
    tools: list[str] = Field(description="Fires when a recent turn used one of these tools.")
    expires: str | None = Field(None, description="When it stops firing (ISO 8601 UTC), or null.")
    created: str
    updated: str
    origin: str
    scope: Literal["project", "global"]
    project: str | None = Field(None, description="The project root (null for a global rule).")
    expired: bool


class RuleResult(BaseModel):
    rule: RuleOut
    when: str = Field(description="The rule's condition in words.")
    removed: bool = False


def _rule_result(out: dict) -> CallToolResult:
    verb = "Removed" if out.get("removed") else "Saved"
    text = f"{verb} rule {out['rule']['id']} ({out['rule']['scope']}): when {out['when']}: {out['rule']['text']}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=RuleResult(**out).model_dump(mode="json")
    )


def _rule_call(tool: str, fn: Callable[..., dict], **kwargs) -> dict:
    try:
        return fn(**kwargs)
    except RecallError as exc:
        _log.info("%s refused: %s", tool, exc)
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        _log.exception("%s failed", tool)
        raise ToolError(
            f"recall failed unexpectedly ({type(exc).__name__}: {str(exc)[:200]}); details in "
            f"{log.log_file()}. Try again, or use `recall rules add` in a shell."
        ) from exc


# fitting results into the cap ---------------------------------------------------------------
_LEVELS = [  # (text chars, snippet chars, reply chars) tried in order until the result fits
    (1200, 240, 1200),
    (700, 240, 900),
    (400, 240, 700),
    (200, 200, 500),
    (0, 200, 400),
    (0, 140, 240),
    (0, 100, 120),
]


def _shape(m: dict, n: int, text_chars: int, snippet_chars: int, reply_chars: int, text_kinds: tuple[str, ...]) -> dict:
    d = dict(m)
    d["n"] = n
    text = d.get("text") or ""
    d["text"] = clip(text, text_chars) if text_chars and d["kind"] in text_kinds and text else None
    d["snippet"] = clip(d.get("snippet") or "", snippet_chars)
    if d.get("reply"):
        d["reply"] = clip_block(d["reply"], reply_chars)
    return d


def fit(
    payload: dict,
    model: type[_Page],
    render: Callable[[Any], str],
    *,
    text_kinds: tuple[str, ...] = ("memory", "team", "message", "session"),
    cap: int = RESULT_CHARS,
) -> _Page:
    """The richest rendering of ``payload`` whose JSON and text both stay within ``cap``.

    As many matches as fit at the most compact level are kept (the rest are counted in
    ``more``), then shown with the longest texts and snippets that still fit.
    """
    matches = payload.get("matches") or []
    base = {k: v for k, v in payload.items() if k in model.model_fields and k != "matches"}
    more = int(base.pop("more", 0) or 0)
    note = base.pop("note", None) or ""
    base["project"] = base.get("project") or ALL

    def page(keep: int, level: tuple[int, int]) -> _Page:
        shaped = [_shape(m, i + 1, *level, text_kinds) for i, m in enumerate(matches[:keep])]
        left = more + len(matches) - keep
        extra = f"{left} more not shown (size cap): lower limit or narrow the query." if left else ""
        return model(**base, matches=shaped, shown=keep, more=left, note=_join(note, extra) or None)

    def fits(p: _Page) -> bool:
        return len(wire_json(p)) <= cap and len(render(p)) <= cap

    lo, hi = 0, len(matches)  # the most matches that fit at the most compact level
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(page(mid, _LEVELS[-1])):
            lo = mid
        else:
            hi = mid - 1
    for level in _LEVELS:
        p = page(lo, level)
        if fits(p):
            return p
    return page(lo, _LEVELS[-1])


def wire(page: _Page) -> dict:
    """The structured content sent: JSON, without null fields (Claude Code hands it to the model)."""
    return page.model_dump(mode="json", exclude_none=True)


def wire_json(page: _Page) -> str:
    import json

    return json.dumps(wire(page), ensure_ascii=False, separators=(",", ":"))


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def with_hint(out: dict, hint: str) -> dict:
    """``out`` with ``hint`` added to its note (what to try when nothing matched)."""
    return {**out, "note": _join(out.get("note") or "", hint)}


# readable text --------------------------------------------------------------------------------
def _head(m: MatchOut, show_project: bool) -> str:
    when = m.date.replace("T", " ")[:16] if m.date else "undated"
    project = m.project if show_project else ""
    if m.kind == "team":
        bits = [f"team {m.type or ''}".strip(), f"by {m.author or 'a teammate'}", when, project, f"id {m.id}"]
    elif m.kind == "memory":
        bits = [f"memory {m.type or ''}".strip(), when, project, f"id {m.id}"]
        if m.tags:
            bits.append("tags: " + " ".join(m.tags))
        if m.session_id:
            bits.append(f"session {m.session_id}")
    else:
        bits = [m.kind if m.kind == "session" else (m.role or "message"), when, project, f"session {m.session_id}"]
    return f"[{m.n}] " + " · ".join(b for b in bits if b)


def _body(m: MatchOut) -> str:
    if m.kind in ("memory", "team"):
        return m.text or m.snippet
    plain = m.snippet.replace("**", "").strip("…")
    if m.text and len(m.text) > len(plain) + 80:  # the passage, then more of the message
        return f"{m.snippet}\n    more: {m.text}"
    return m.snippet


def _stale_text(m: MatchOut) -> str:
    """``(src/lib/refunds.ts changed 3 days later)``: what changed since the match was said."""
    from indexer.touches import describe
    from recall.search.stale import epoch

    return describe([x.model_dump(exclude_none=True) for x in m.stale], epoch(m.date))


def _render_matches(page: _Page) -> list[str]:
    out = []
    for m in page.matches:
        out.append(_head(m, show_project=m.project != page.project))
        if m.stale:
            out.append("    ! " + _stale_text(m))
        if m.question:
            out.append(f"    asked: {m.question}")
        body = _body(m)
        if body:
            out.append("    " + body)
        if m.reply:
            out.extend("    ↳ " + line for line in m.reply.splitlines())
    return out


def _scope(page: _Page) -> str:
    return "all projects" if page.project == ALL else f"project {page.project}"


def render_search(page: SearchOut) -> str:
    lines = [f'memory_search "{page.query}" in {_scope(page)}: {counted(page.shown, "result")}.']
    if page.note:
        lines.append(page.note)
    return "\n".join(lines + _render_matches(page))


def render_related(page: RelatedOut) -> str:
    lines = [
        f"memory_related {', '.join(page.tags)}: {page.total} memories carry any of the tags; "
        f"{page.shown} shown (current project first)."
    ]
    if page.note:
        lines.append(page.note)
    return "\n".join(lines + _render_matches(page))


def render_ask(page: AskOut) -> str:
    lines = [f'memory_ask "{page.question}" in {_scope(page)}.']
    if page.answer:
        lines += [page.answer, "", "Sources:"]
    if page.note:
        lines.append(page.note)
    return "\n".join(lines + _render_matches(page))


def render_recall(page: RecallSearchOut) -> str:
    opts = [_scope(page)]
    if page.since:
        opts.append(f"since {page.since}")
    if page.messages:
        opts.append("single messages")
    lines = [f'recall_search "{page.query}" ({", ".join(opts)}): {counted(page.shown, "hit")}.']
    if page.note:
        lines.append(page.note)
    return "\n".join(lines + _render_matches(page))


def _result(page: _Page, render: Callable[[Any], str]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=render(page))], structured_content=wire(page))


# running an operation: the service when it runs, else here -------------------------------------
class Backend:
    """Runs the tools' operations: over the service's socket when it answers, else locally
    with a Searcher kept open (reloaded per call, reopened when the index is rebuilt)."""

    def __init__(self, cwd: str | None = None, use_service: bool = True) -> None:
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.use_service = use_service
        self.local_ops = dict(LOCAL_OPS)
        self._searcher = None
        self._stamp: tuple | None = None
        self._lock = threading.Lock()

    def searcher(self):
        from indexer.schema import version_file
        from recall.core import paths
        from recall.search.searcher import Searcher

        with self._lock:
            try:
                st = os.stat(version_file(paths.index_dir()))
                stamp = (st.st_ino, st.st_mtime_ns)
            except OSError:
                stamp = None
            if self._searcher is None or stamp != self._stamp:
                self._searcher = Searcher()  # raises IndexMissing with the next step
                self._stamp = stamp
            else:
                self._searcher.refresh()
            return self._searcher

    def _service(self, op: str, args: dict, timeout: float):
        """The service's answer, or None when it does not run (or is too old to know ``op``)."""
        if not self.use_service:
            return None
        try:
            from recall.core import service_client as client
        except ImportError:
            return None
        try:
            # memory_ask may call the model: with this process's (Claude Code's) credentials
            return client.call(op, args, timeout=timeout, credentials=op == "mcp.memory_ask")
        except client.RemoteError as exc:  # the service refused the arguments: say why
            raise UsageError(str(exc)) from None
        except client.Unavailable as exc:  # not running, too old to know op, ...: work here
            _log.debug("service unavailable for %s: %s", op, exc)
            return None

    def run(self, op: str, args: dict, timeout: float = SERVICE_TIMEOUT) -> dict:
        args = {**args, "cwd": self.cwd}
        answer = self._service(op, args, timeout)
        if answer is not None:
            return answer
        return self.local_ops[op](**args, searcher=self.searcher())


LOCAL_OPS: dict[str, Callable[..., dict]] = {
    "mcp.memory_search": tools.memory_search,
    "mcp.memory_related": tools.memory_related,
    "mcp.memory_ask": tools.memory_ask,
    "mcp.recall_search": tools.recall_search,
}


def _call(tool: str, backend: Backend, op: str, args: dict, timeout: float = SERVICE_TIMEOUT) -> dict:
    """Run ``op``; every failure becomes a ToolError with a sentence the model can act on."""
    t0 = time.perf_counter()
    try:
        out = backend.run(op, args, timeout=timeout)
    except ToolError:
        raise
    except RecallError as exc:
        _log.info("%s refused: %s", tool, exc)
        raise ToolError(str(exc)) from exc
    except Exception as exc:  # never let one call take the server down
        _log.exception("%s failed", tool)
        raise ToolError(
            f"recall failed unexpectedly ({type(exc).__name__}: {str(exc)[:200]}); details in "
            f"{log.log_file()}. Try again, or use another recall tool."
        ) from exc
    _log.info("%s: %d match(es) in %.0f ms", tool, len(out.get("matches") or []), (time.perf_counter() - t0) * 1000)
    return out


# the server -------------------------------------------------------------------------------------
def explain(tool: str, exc: ValidationError) -> str:
    """A schema violation as one sentence per bad argument (no pydantic boilerplate)."""
    parts = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(p) for p in e.get("loc") or ()) or "arguments"
        msg = e.get("msg", "is invalid")
        if e.get("type") != "missing" and "input" in e:
            shown = repr(e["input"])
            msg += f" (got {shown[:60] + '…' if len(shown) > 60 else shown})"
        parts.append(f"{where}: {msg}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + ". Fix them and call again."


class RecallServer(MCPServer):
    """MCPServer whose argument errors read as plain sentences the model can act on."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(explain(name, exc.__cause__)) from exc.__cause__
            raise


READ_ONLY = dict(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _tool(server: MCPServer, name: str, title: str, hints: dict):
    """``server.tool`` for a tool named ``name``, with ``title`` and the ``hints``
    (``READ_ONLY``, ``WRITES``) as its annotations."""
    return server.tool(name=name, title=title, annotations=ToolAnnotations(title=title, **hints))


def build_server(cwd: str | None = None, use_service: bool = True) -> RecallServer:
    """The MCPServer with recall's four tools; ``cwd`` is the default project's directory."""
    backend = Backend(cwd, use_service=use_service)
    server = RecallServer("recall", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    for add in (_memory_search_tool, _memory_related_tool, _memory_ask_tool, _recall_search_tool):
        add(server, backend)  # in this order: the order of tools/list
    _rule_tools(server, backend)
    server.backend = backend  # type: ignore[attr-defined]  (tests and the command use it)
    return server


def _memory_search_tool(server: MCPServer, backend: Backend) -> None:
    """The ``memory_search`` tool: memories and transcript hits ranked together."""

    @_tool(server, "memory_search", "Search memories and past sessions", READ_ONLY)
    def memory_search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description=(
                    "Keywords, identifiers, file names or an error message to look for, e.g. "
                    "'stripe webhook signature' or 'AuthMiddleware.refresh'."
                ),
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=50, description="Most results to return (1-50).")] = 10,
        type: Annotated[
            MemoryType | None,
            Field(
                description=(
                    "Only memories of this type (then no transcript hits): architecture = how the system "
                    "is built, decision = a choice and its reason, pattern = how things are done here, "
                    "gotcha = a trap and its fix, progress = where work stands, context = background."
                )
            ),
        ] = None,
        project: Annotated[str | None, Field(description=PROJECT_DESC)] = None,
        team: Annotated[
            bool,
            Field(
                description=(
                    "Only the team's items: memories, session summaries and rules teammates shared "
                    "(each with its author). Default: yours and the team's, with transcript hits."
                )
            ),
        ] = False,
    ) -> Annotated[CallToolResult, SearchOut]:
        """Search recall's memory of past Claude Code sessions: curated typed memories
        (decisions, gotchas, patterns, architecture, progress, context) and raw transcript
        hits, ranked together, each with its date, project and session id.

        Use it first whenever the injected context is not enough: the user mentions earlier
        work, a past decision or bug, or you are about to solve something that may have been
        solved before. Use memory_ask instead for a prose answer to a question, recall_search
        for raw transcripts with time filters, memory_related to widen by tags."""
        out = _call(
            "memory_search",
            backend,
            "mcp.memory_search",
            {"text": query, "limit": limit, "mtype": type, "project": project, **({"team": True} if team else {})},
        )
        if not out.get("matches"):
            out = with_hint(
                out,
                "Nothing matched: try other words"
                + (", another type" if type else "")
                + (', or project="all"' if out.get("project") else "")
                + ".",
            )
        return _result(fit(out, SearchOut, render_search), render_search)


def _memory_related_tool(server: MCPServer, backend: Backend) -> None:
    """The ``memory_related`` tool: memories by tag."""

    @_tool(server, "memory_related", "Memories by tag", READ_ONLY)
    def memory_related(
        tags: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]],
            Field(
                min_length=1,
                max_length=tools.MAX_TAGS,
                description='Tags to look for, e.g. ["stripe", "webhooks"]; a memory carrying any of them '
                "matches (words are matched case-insensitively, plurals too).",
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=100, description="Most memories to return (1-100).")] = 20,
    ) -> Annotated[CallToolResult, RelatedOut]:
        """List the memories carrying any of the given tags, across all projects, those with
        the most matching tags first, then the current project's, then the newest.

        Use it to widen around something you found: take the tags of a memory from
        memory_search and ask for its neighbours. For free-text search use memory_search."""
        out = _call("memory_related", backend, "mcp.memory_related", {"tags": list(tags), "limit": limit})
        if not out.get("matches"):
            out = with_hint(out, "No memory carries these tags: try memory_search with the same words.")
        return _result(fit(out, RelatedOut, render_related), render_related)


def _memory_ask_tool(server: MCPServer, backend: Backend) -> None:
    """The ``memory_ask`` tool: a question answered from memories and transcripts."""

    @_tool(server, "memory_ask", "Ask recall a question", READ_ONLY)
    def memory_ask(
        question: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description=(
                    "A question about past work, e.g. 'Why did we switch the queue to SQS?' or "
                    "'How is the staging database reset?'"
                ),
            ),
        ],
        project: Annotated[str | None, Field(description=PROJECT_DESC)] = None,
    ) -> Annotated[CallToolResult, AskOut]:
        """Answer a question about past sessions: the top 30 memories and transcript hits are
        synthesized by a small model into a short answer citing them as [n] (the sources are
        listed with the answer). Without an API key for recall it returns the raw matches and a
        note saying synthesis is off and how to turn it on.

        Use it for "why"/"how did we" questions whose answer is spread over several sessions;
        it takes a few seconds. For quick lookups use memory_search."""
        out = _call(
            "memory_ask", backend, "mcp.memory_ask", {"question": question, "project": project}, timeout=ASK_TIMEOUT
        )
        if out.get("answer"):
            out["answer"] = clip_block(out["answer"], ANSWER_CHARS)
        text_kinds = () if out.get("synthesized") else ("memory", "team", "message", "session")
        return _result(fit(out, AskOut, render_ask, text_kinds=text_kinds), render_ask)


def _recall_search_tool(server: MCPServer, backend: Backend) -> None:
    """The ``recall_search`` tool: raw transcripts, like `recall QUERY`."""

    @_tool(server, "recall_search", "Search raw transcripts", READ_ONLY)
    def recall_search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description=("Any text: words, identifiers, paths, a quoted \"exact phrase\", or a pasted error."),
            ),
        ],
        since: Annotated[
            str | None,
            Field(
                max_length=40,
                description=(
                    "Only hits after this: a span back from now like 30m, 2h, 3d, 1w, or a date like "
                    "2026-11-01. Default: any time."
                ),
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most hits to return (1-50).")] = 5,
        messages: Annotated[
            bool,
            Field(
                description=(
                    "true: rank single messages (several per session possible); false: one hit per "
                    "session, its best message."
                )
            ),
        ] = False,
        project: Annotated[str | None, Field(description=PROJECT_DESC)] = None,
    ) -> Annotated[CallToolResult, RecallSearchOut]:
        """Search the raw transcripts of past Claude Code sessions, exactly like the
        `recall QUERY` command line (same engine and options): ranked hits with date,
        project, session id and the passage that matched.

        Use it for what memories do not hold: exact commands, error messages, file names, or
        what happened in a time window (since). For curated knowledge use memory_search."""
        out = _call(
            "recall_search",
            backend,
            "mcp.recall_search",
            {"text": query, "since": since, "limit": limit, "messages": messages, "project": project},
        )
        if not out.get("matches"):
            out = with_hint(
                out,
                "Nothing matched: try other words"
                + (", a longer since" if since else "")
                + (', or project="all"' if out.get("project") else "")
                + ".",
            )
        return _result(fit(out, RecallSearchOut, render_recall), render_recall)


_WORDS = Annotated[
    str | None,
    Field(max_length=500, description=("Space-separated words; matched on their stems, so plurals and case match.")),
]
_GLOBS = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=300)]] | None,
    Field(
        max_length=20,
        description="File-path globs relative to the project, e.g. [\"migrations/**\", \"*.sql\"]: "
        "fires when the prompt mentions, or a recent turn used, a matching file.",
    ),
]
_TOOLS = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
    Field(
        max_length=20,
        description="Tool names, e.g. [\"Bash\"] or [\"mcp__github__*\"]: fires when a recent turn used one.",
    ),
]
_REGEX = Annotated[
    str | None,
    Field(
        max_length=500,
        description=("An RE2 regular expression tested on the prompt (no backreferences or lookaround)."),
    ),
]
_EXPIRES = Annotated[
    str | None,
    Field(max_length=40, description=("When the rule stops firing: a date like 2026-12-31, or a span like 30d or 2w.")),
]
_RULE_PROJECT = Annotated[
    str | None,
    Field(max_length=1000, description=("The project's folder (default: the current working directory's project).")),
]
WRITES = dict(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def _rule_tools(server: RecallServer, backend: Backend) -> None:
    @_tool(server, "rule_add", "Add a triggered rule", WRITES)
    def rule_add(
        text: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description=(
                    "What Claude must be told when the rule fires, as an instruction, e.g. "
                    "'Run `sqitch verify` before changing anything under migrations/.'"
                ),
            ),
        ],
        any_words: _WORDS = None,
        all_words: _WORDS = None,
        regex: _REGEX = None,
        paths: _GLOBS = None,
        tools: _TOOLS = None,
        scope: Annotated[
            Literal["project", "global"],
            Field(description=("project: this project only (kept in its .memory/rules.json); global: every project.")),
        ] = "project",
        expires: _EXPIRES = None,
        project: _RULE_PROJECT = None,
    ) -> Annotated[CallToolResult, RuleResult]:
        """Store a triggered rule: recall injects its text into the prompt whenever its
        condition holds, in this and every later session (once per session, again for a new
        file). Conditions (all given must hold): any_words, all_words, regex (on the prompt),
        paths (files mentioned in the prompt or used in the last turns), tools (used in the
        last turns). With no condition it fires on every prompt of the project.

        Use it when the user says "always remember to …", "whenever you touch X, do Y",
        "never …": rules reach Claude from the prompt, before any file is read."""
        fields = rule_tools.RuleFields(
            text=text, paths=paths, any_words=any_words, all_words=all_words, regex=regex, tools=tools, expires=expires
        )
        return _rule_result(
            _rule_call("rule_add", rule_tools.rule_add, fields=fields, scope=scope, project=project, cwd=backend.cwd)
        )

    @_tool(server, "rule_update", "Change or remove a triggered rule", WRITES)
    def rule_update(
        id: Annotated[
            str,
            Field(
                min_length=1,
                max_length=40,
                description=(
                    "The rule's id (a unique prefix is enough), as rule_add returned it or `recall rules list` shows."
                ),
            ),
        ],
        text: Annotated[str | None, Field(max_length=1000, description="New text.")] = None,
        any_words: _WORDS = None,
        all_words: _WORDS = None,
        regex: _REGEX = None,
        paths: _GLOBS = None,
        tools: _TOOLS = None,
        expires: _EXPIRES = None,
        remove: Annotated[bool, Field(description="true: delete the rule.")] = False,
        project: _RULE_PROJECT = None,
    ) -> Annotated[CallToolResult, RuleResult]:
        """Change a triggered rule: each field given replaces the stored one (an empty
        string or list clears that condition); remove=true deletes the rule.

        Use it when the user corrects or retracts something they asked you to always remember."""
        fields = rule_tools.RuleFields(
            text=text, paths=paths, any_words=any_words, all_words=all_words, regex=regex, tools=tools, expires=expires
        )
        return _rule_result(
            _rule_call(
                "rule_update",
                rule_tools.rule_update,
                rule_id=id,
                fields=fields,
                remove=remove,
                project=project,
                cwd=backend.cwd,
            )
        )


def default_cwd() -> str:
    """The client's working directory: Claude Code starts MCP servers in the project."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env and os.path.isdir(env):
        return env
    return os.getcwd()


def standing_down_server(why: str) -> RecallServer:
    """A server with no tools, whose instructions say why: recall's plugin runs it when the MCP
    server ``recall setup`` registered already serves these tools (never two sets of them)."""
    return RecallServer("recall", version=__version__, instructions=why, log_level="WARNING")


def serve(cwd: str | None = None, stand_down: str | None = None) -> None:
    """Serve over stdio until the client closes stdin (``recall mcp``); with ``stand_down``, no
    tools (``standing_down_server``)."""
    logger = log.setup()  # the file handler (the module's logger may have set it up already)
    if not any(type(h) is logging.StreamHandler for h in logger.handlers):
        stderr = logging.StreamHandler()  # stderr: Claude Code keeps it in its MCP logs
        stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(stderr)
    sdk = logging.getLogger("mcp")
    sdk.handlers = list(logger.handlers)  # the SDK's own logs: stderr and recall.log, not rich
    sdk.propagate = False
    sdk.setLevel(logging.WARNING)
    root = cwd or default_cwd()
    _log.info("mcp server %s starting (pid %d, project dir %s)", __version__, os.getpid(), root)
    server = build_server(root) if stand_down is None else standing_down_server(stand_down)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        _log.info("mcp server stopped")
