"""Loopback stand-in for the Anthropic Messages API (for the SDK and the real Claude Code).

Usage::

    from tests.support.standin import StandIn, text, tool_use, error, hang

    with StandIn() as api:                      # 127.0.0.1, random free port
        api.script(tool_use("Bash", {"command": "echo hi"}), text("done"))
        ...  # point ANTHROPIC_BASE_URL=api.url at it (or anthropic.Anthropic(base_url=api.url))
        api.main_requests()[0]["messages"]      # what the client sent

API
---
``StandIn(handler=None, *, default=text("ok"), verbose=False, script_when=is_agent_request)``
    context manager (or ``start()`` / ``close()``).  ``url`` = ``"http://127.0.0.1:PORT"``.
``requests``
    every request received, in order (append-only, lock-protected; ``snapshot()``
    copies it): the JSON body plus ``_path`` (no query), ``_query`` (Claude Code
    sends ``beta=true``), ``_method``, ``_headers`` (lower-cased names) and
    ``_time`` (epoch seconds).  ``HEAD /`` and count_tokens calls are in it too.
``script(*replies)``
    queue replies for the next agent-loop ``POST /v1/messages`` requests, used in
    arrival order; side calls (no agent tools) do not consume them.  When the
    queue is empty: ``handler(request) -> Reply | None``, then the default.
    ``pending`` = replies not used yet.
``messages_requests()`` / ``agent_requests()`` / ``main_requests()`` / ``subagent_requests()`` / ``side_requests()``
    filtered views, using the predicates ``is_messages_request``,
    ``is_agent_request``, ``is_main_request``, ``is_subagent_request``,
    ``is_side_request``, ``is_claude_code_request``.
``wait_for(predicate=is_messages_request, count=1, timeout=10)``
    block until enough matching requests arrived.
``unknown``
    requests to routes the stand-in does not know (answered 404 ``not_found_error``;
    none seen from Claude Code 2.1.197).
Reply helpers
    ``text(s, model=None)``, ``tool_use(name, input, text=None, id=None)`` (id fixed
    at build time: ``reply.content[-1]["id"]``), ``message(*blocks)``,
    ``error(status, message, error_type=None, should_retry=None)`` (529 ->
    ``overloaded_error``, 500 -> ``api_error``...; ``should_retry=False`` sets
    ``x-should-retry: false`` which both the SDK and Claude Code honour),
    ``hang(seconds, then=None)`` (sleeps before answering; interrupted by
    ``close()``; other connections keep being served).  ``Reply`` fields
    ``delay`` / ``chunk_delay`` / ``usage`` / ``headers`` can be set directly.
Routes
    ``POST /v1/messages`` (JSON, or SSE when ``"stream": true``: message_start,
    ping, content_block_start, content_block_delta (text_delta /
    input_json_delta / thinking_delta+signature_delta), content_block_stop,
    message_delta (stop_reason, usage), message_stop — chunked transfer
    encoding); ``POST /v1/messages/count_tokens`` (``{"input_tokens": N}``,
    N ~ len(json)/4); ``HEAD|GET /`` (200, empty); ``GET /v1/models``.
    The reply's ``model`` echoes the request's unless given.  A default reply to a
    request asking for structured output (``output_config.format`` json_schema)
    is a JSON text that fits the schema (``{"title": "stand-in"}`` for the title call).

What Claude Code 2.1.197 sends (observed with this stand-in)
-------------------------------------------------------------
One ``claude -p PROMPT`` run, offline env of ``tests.support.claude``:

1. ``HEAD /`` — connectivity pre-check (~0.4–0.6 s after start; ``User-Agent: Bun/1.4.0``).
2. ``POST /v1/messages?beta=true`` — main turn, ``stream: true``, ~0.2–0.5 s later.
3. one more ``POST /v1/messages?beta=true`` per tool round trip (history replayed,
   the last user message holding the ``tool_result`` blocks), until a reply
   without tool_use ends the turn.

No count_tokens, no /v1/models, no side call in ``-p`` mode, and with
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` no connection anywhere else (checked with
strace; without it the client also tries api.anthropic.com for bootstrap, metrics
opt-out, MCP registry and event logging, which just fail offline).  A whole run
takes ~0.7–1.5 s wall.

Main-turn request body: ``model`` ``claude-opus-4-8`` by default (``--model sonnet`` ->
``claude-sonnet-5``, ``haiku`` -> ``claude-haiku-4-5-20251001``, ``fable`` ->
``claude-fable-5``), ``max_tokens`` 64000, ``thinking {"type": "adaptive"}``,
``output_config {"effort": "high"}``, ``context_management``, ``metadata.user_id`` (a
JSON string with ``session_id``), ``tools`` (24 in -p: Agent, Bash, Edit, Read,
Write, Skill, Task*, WebFetch, ...; 27 interactive), ``system`` = list of text
blocks: ``"x-anthropic-billing-header: cc_version=...; cc_entrypoint=sdk-cli;"``
(``cli`` interactive; subagents add ``cc_is_subagent=true;``), then ``"You are a
Claude agent, built on Anthropic's Claude Agent SDK."`` (-p) or ``"You are Claude
Code, Anthropic's official CLI for Claude."`` (interactive), then the big prompt.
``messages``: ``[0]`` user = [text ``<system-reminder>`` with currentDate, text PROMPT];
``[1]`` ``role: "system"`` (string; beta ``mid-conversation-system-2026-04-07``)
holding, in order: ``"SessionStart hook additional context: ..."`` (if any), the
agent-type listing, the skills listing, and
``"\n\nUserPromptSubmit hook additional context: <the hook's additionalContext>"``
(JSON hook output) or ``"UserPromptSubmit hook success: <stdout>"`` (plain stdout).
So hook-injected context is NOT inside the user message in this version: search
the whole request (``request_text(req)``) rather than ``last_user_text(req)``.

Headers: ``user-agent: claude-cli/2.1.197 (external, sdk-cli)`` (``cli``
interactive), ``x-api-key`` = ANTHROPIC_API_KEY, ``anthropic-version: 2023-06-01``,
``anthropic-beta: claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-...``,
``x-app: cli``, ``x-claude-code-session-id: <session id>`` (= transcript file stem),
``x-stainless-retry-count``, ``x-stainless-timeout: 600``.  (The anthropic Python SDK
2.x instead sends ``authorization: Bearer <key>`` and ``anthropic-version: 2026-10-21``.)

Side calls: only seen interactively — a session-title call at the first prompt, sent
concurrently with the main turn, with the MAIN model id (not haiku), ``tools: []``,
``thinking disabled``, ``output_config.format`` = json_schema ``{"title": string}``,
system "Generate a concise, sentence-case title ...", user ``<session>PROMPT</session>``.
Its answer lands in the transcript as ``{"type": "ai-title", "aiTitle": ...}``.
``is_side_request`` (a messages request without agent tools) tells these apart;
the scripted queue skips them.

Retries: Claude Code retries 5xx/529 after ~0.6 s (``CLAUDE_CODE_MAX_RETRIES``,
default 10); ``error(..., should_retry=False)`` makes it fail at once (exit 1,
stdout ``API Error: 500 <message>...``).
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

__all__ = [
    "Reply",
    "StandIn",
    "text",
    "tool_use",
    "message",
    "error",
    "hang",
    "is_messages_request",
    "is_agent_request",
    "is_claude_code_request",
    "is_main_request",
    "is_subagent_request",
    "is_side_request",
    "last_user_text",
    "request_text",
]

DEFAULT_TEXT = "ok"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_standin{next(_ids):04d}{uuid.uuid4().hex[:16]}"


# --------------------------------------------------------------------------- replies


@dataclass
class Reply:
    """One answer of the stand-in to a ``POST /v1/messages``.

    ``content`` holds Messages-API content blocks (``text``, ``tool_use``,
    ``thinking``).  ``status`` != 200 makes it an error reply (``error_type`` /
    ``error_message``).  ``delay`` seconds are slept before anything is sent;
    ``chunk_delay`` seconds between SSE events when streaming.
    """

    content: list[dict] = field(default_factory=list)
    stop_reason: str = "end_turn"
    model: str | None = None
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = None

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


def message(*blocks: dict, stop_reason: str | None = None, model: str | None = None) -> Reply:
    """A reply made of arbitrary content blocks (stop_reason inferred: tool_use if any)."""
    blocks_l = [copy.deepcopy(b) for b in blocks]
    if stop_reason is None:
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in blocks_l) else "end_turn"
    return Reply(content=blocks_l, stop_reason=stop_reason, model=model)


def text(s: str, model: str | None = None) -> Reply:
    """A plain assistant text answer that ends the turn."""
    return Reply(content=[{"type": "text", "text": s}], stop_reason="end_turn", model=model)


def tool_use(name: str, input: dict, text: str | None = None, id: str | None = None) -> Reply:
    """An assistant turn that calls tool ``name`` with ``input`` (optionally preceded by text).

    The tool_use id is fixed when the Reply is built (``reply.content[-1]["id"]``)
    so a test can look it up in the transcript.
    """
    blocks: list[dict] = []
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.append({"type": "tool_use", "id": id or _new_id("toolu"), "name": name, "input": dict(input)})
    return Reply(content=blocks, stop_reason="tool_use")


def error(
    status: int, message: str = "stand-in error", error_type: str | None = None, should_retry: bool | None = None
) -> Reply:
    """An API error: ``{"type":"error","error":{"type":..., "message":...}}`` with HTTP ``status``.

    ``should_retry`` sets the ``x-should-retry`` header the Stainless SDKs honour
    (``False`` stops the anthropic SDK and Claude Code from retrying).
    """
    headers = {}
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    return Reply(
        status=status,
        error_type=error_type or _ERROR_TYPES.get(status, "api_error"),
        error_message=message,
        headers=headers,
        stop_reason="",
    )


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Sleep ``seconds`` before answering (then answer ``then``, default text "ok").

    The sleep is interrupted when the stand-in is closed; other requests keep being
    served meanwhile (one thread per connection).
    """
    base = then if then is not None else text(DEFAULT_TEXT)
    return replace(base, delay=seconds)


# --------------------------------------------------------------------------- request predicates


def is_messages_request(req: dict) -> bool:
    """``POST /v1/messages`` (not count_tokens)."""
    return req.get("_path") == "/v1/messages" and req.get("_method", "POST") == "POST"


def _system_text(req: dict) -> str:
    system = req.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return ""


_AGENT_TOOLS = {"Bash", "Agent", "Task", "Read", "Write", "Edit"}


def is_agent_request(req: dict) -> bool:
    """A turn of an agent loop: the main agent's or a subagent's.

    Agent-loop requests carry Claude Code's tool list (``Bash``, ``Read``,
    ``Agent``...).  Side calls (session title, summaries, classifiers) carry
    ``tools: []`` and a short task-specific system prompt.  A request that does
    not come from Claude Code (no ``claude-cli`` user agent, e.g. the anthropic
    SDK in a test) always counts, so scripting works the same from Python code.
    """
    if not is_messages_request(req):
        return False
    names = {t.get("name") for t in (req.get("tools") or []) if isinstance(t, dict)}
    if names & _AGENT_TOOLS:
        return True
    return not is_claude_code_request(req)


def is_claude_code_request(req: dict) -> bool:
    """Sent by the Claude Code client (``user-agent: claude-cli/<version> (external, <entrypoint>)``)."""
    return "claude-cli/" in (req.get("_headers") or {}).get("user-agent", "")


def is_subagent_request(req: dict) -> bool:
    """A turn of a subagent (Agent tool): its billing-header system block says ``cc_is_subagent=true``."""
    return is_agent_request(req) and "cc_is_subagent=true" in _system_text(req)


def is_main_request(req: dict) -> bool:
    """A turn of the main agent loop: an agent request that is not a subagent's."""
    return is_agent_request(req) and not is_subagent_request(req)


def is_side_request(req: dict) -> bool:
    """A messages request that is no agent-loop turn (e.g. the session-title call)."""
    return is_messages_request(req) and not is_agent_request(req)


def _block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.extend(_block_texts(b.get("content")))
    return out


def last_user_text(req: dict) -> str:
    """Text of the last ``role: user`` message of a messages request (all its text blocks)."""
    for m in reversed(req.get("messages") or []):
        if m.get("role") == "user":
            return "\n".join(_block_texts(m.get("content")))
    return ""


def request_text(req: dict) -> str:
    """Everything textual a messages request sends: system prompt + all message texts/tool results."""
    parts = [_system_text(req)]
    for m in req.get("messages") or []:
        parts.extend(_block_texts(m.get("content")))
    return "\n".join(parts)


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    standin: "StandIn"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients dropping keep-alive connections (or giving up on a hang) is normal.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def _json_schema_of(req: dict) -> dict | None:
    fmt = (req.get("output_config") or {}).get("format") or req.get("output_format") or {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        return fmt["schema"]
    return None


def _schema_example(schema: dict) -> Any:
    """A small value that validates against a (simple) JSON schema."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _schema_example(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: _schema_example(props.get(k) or {}) for k in required}
    if kind == "array":
        return [_schema_example(schema.get("items") or {})] if schema.get("minItems") else []
    if kind == "string":
        return "stand-in"
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "stand-in"


def _estimate_tokens(obj: Any) -> int:
    try:
        return max(1, len(json.dumps(obj)) // 4)
    except (TypeError, ValueError):
        return 1


def _split(s: str, n: int) -> list[str]:
    if not s:
        return [""]
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    # ---- plumbing
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.standin.verbose:
            sys.stderr.write("standin: " + (format % args) + "\n")

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            data = b""
            while True:
                line = self.rfile.readline()
                size = int(line.strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _new_id("req"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_empty(self, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def _record(self) -> dict:
        raw = self._read_body()
        parts = urlsplit(self.path)
        body: Any
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        if not isinstance(body, dict):
            body = {"_body": body}
        body["_path"] = parts.path
        body["_query"] = parts.query
        body["_method"] = self.command
        body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
        body["_time"] = time.time()
        self.server.standin._append(body)
        return body

    # ---- routing
    def _dispatch(self) -> None:
        try:
            req = self._record()
            path, method = req["_path"], self.command
            if method == "POST" and path == "/v1/messages":
                self._messages(req)
            elif method == "POST" and path == "/v1/messages/count_tokens":
                self._send_json(
                    200, {"input_tokens": _estimate_tokens({k: req.get(k) for k in ("system", "messages", "tools")})}
                )
            elif method in ("HEAD", "GET") and path in ("", "/"):
                # Claude Code sends `HEAD /` as a connectivity pre-check before the first turn.
                self._send_empty(200)
            elif method == "GET" and path == "/v1/models":
                self._send_json(200, self.server.standin._models_page())
            else:
                self.server.standin._unknown(req)
                self._send_json(
                    404,
                    {
                        "type": "error",
                        "error": {"type": "not_found_error", "message": f"stand-in: no route {method} {path}"},
                    },
                )
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _dispatch

    def _messages(self, req: dict) -> None:
        standin = self.server.standin
        reply = standin._choose(req)
        if reply.delay > 0:
            standin._closing.wait(reply.delay)
        if reply.is_error:
            self._send_json(
                reply.status,
                {
                    "type": "error",
                    "error": {"type": reply.error_type or "api_error", "message": reply.error_message or "error"},
                    "request_id": _new_id("req"),
                },
                headers=reply.headers,
            )
            return
        msg = self._message_obj(req, reply)
        if req.get("stream"):
            self._stream(msg, reply)
        else:
            self._send_json(200, msg, headers=reply.headers)

    def _message_obj(self, req: dict, reply: Reply) -> dict:
        usage = {
            "input_tokens": _estimate_tokens(req.get("messages")),
            "output_tokens": max(1, _estimate_tokens(reply.content)),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        usage.update(reply.usage or {})
        content = copy.deepcopy(reply.content)
        return {
            "id": _new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": reply.model or req.get("model") or "claude-standin",
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _stream(self, msg: dict, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", _new_id("req"))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        for event in _sse_events(msg):
            data = ("event: %s\ndata: %s\n\n" % (event["type"], json.dumps(event))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if reply.chunk_delay:
                self.server.standin._closing.wait(reply.chunk_delay)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _sse_events(msg: dict) -> Iterable[dict]:
    """The event sequence of the real streaming Messages API for a complete message."""
    usage = msg["usage"]
    start = dict(msg, content=[], stop_reason=None, stop_sequence=None, usage=dict(usage, output_tokens=1))
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for i, block in enumerate(msg["content"]):
        kind = block.get("type")
        if kind == "text":
            yield {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            for piece in _split(block.get("text", ""), 3):
                yield {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}}
        elif kind == "tool_use":
            yield {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
            }
            yield {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": ""}}
            for piece in _split(json.dumps(block.get("input", {})), 3):
                yield {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
        elif kind == "thinking":
            yield {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
            yield {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "thinking_delta", "thinking": block.get("thinking", "")},
            }
            yield {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "signature_delta", "signature": block.get("signature", "c3RhbmRpbg==")},
            }
        else:  # unknown block kind: send it whole
            yield {"type": "content_block_start", "index": i, "content_block": block}
        yield {"type": "content_block_stop", "index": i}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}


class StandIn:
    """A threaded loopback HTTP server speaking the Anthropic Messages API.

    ``handler(request) -> Reply | None`` is consulted for every ``POST /v1/messages``
    whose scripted queue is empty (``None`` = default reply, text ``"ok"``).
    """

    MODELS = ("claude-opus-4-8", "claude-sonnet-4-5", "claude-haiku-4-5")

    def __init__(
        self,
        handler: Callable[[dict], Reply | None] | None = None,
        *,
        default: Reply | None = None,
        verbose: bool = False,
        script_when: Callable[[dict], bool] | None = None,
    ) -> None:
        self.handler = handler
        self.default = default or text(DEFAULT_TEXT)
        self.verbose = verbose
        self.script_when = script_when or is_agent_request
        self.requests: list[dict] = []
        self.unknown: list[dict] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._script: list[Reply] = []
        self._closing = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # ---- lifecycle
    def start(self) -> "StandIn":
        if self._server is not None:
            return self
        self._closing.clear()
        srv = _Server(("127.0.0.1", 0), _Handler)
        srv.standin = self
        self._server = srv
        self.url = f"http://127.0.0.1:{srv.server_address[1]}"
        self._thread = threading.Thread(
            target=srv.serve_forever, kwargs={"poll_interval": 0.05}, name="standin", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        srv, self._server = self._server, None
        if srv is None:
            return
        self._closing.set()
        srv.shutdown()
        srv.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "StandIn":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    # ---- scripting
    def script(self, *replies: Reply) -> "StandIn":
        """Queue replies for the next main-loop ``/v1/messages`` requests, used in order.

        Only requests for which ``script_when`` holds (default: ``is_agent_request``,
        i.e. main-agent and subagent turns, in the order they arrive) consume the
        queue, so Claude Code's side calls (session title...) never eat a scripted
        reply; they get the handler's or the default reply.  When the queue is
        empty the handler/default answers.
        """
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not consumed yet."""
        with self._lock:
            return len(self._script)

    def _choose(self, req: dict) -> Reply:
        with self._lock:
            if self._script and self.script_when(req):
                return self._script.pop(0)
        if self.handler is not None:
            reply = self.handler(req)
            if reply is not None:
                return reply
        schema = _json_schema_of(req)
        if schema is not None and self.default.text == DEFAULT_TEXT:
            # Structured-output side calls (e.g. the session title) get JSON that fits.
            return text(json.dumps(_schema_example(schema)))
        return self.default

    # ---- recording
    def _append(self, req: dict) -> None:
        with self._cond:
            self.requests.append(req)
            self._cond.notify_all()

    def _unknown(self, req: dict) -> None:
        with self._lock:
            self.unknown.append(req)
        if self.verbose:
            sys.stderr.write(f"standin: unknown request {req['_method']} {req['_path']}\n")

    def _models_page(self) -> dict:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in self.MODELS
        ]
        return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}

    def snapshot(self) -> list[dict]:
        """A copy of ``requests`` taken under the lock."""
        with self._lock:
            return list(self.requests)

    def messages_requests(self) -> list[dict]:
        """Every ``POST /v1/messages`` body, in order."""
        return [r for r in self.snapshot() if is_messages_request(r)]

    def agent_requests(self) -> list[dict]:
        """Agent-loop turns, main agent and subagents (see ``is_agent_request``)."""
        return [r for r in self.snapshot() if is_agent_request(r)]

    def main_requests(self) -> list[dict]:
        """The main agent-loop turns (see ``is_main_request``): subagents and side calls excluded."""
        return [r for r in self.snapshot() if is_main_request(r)]

    def subagent_requests(self) -> list[dict]:
        """Turns of subagents started with the Agent tool."""
        return [r for r in self.snapshot() if is_subagent_request(r)]

    def side_requests(self) -> list[dict]:
        """Claude Code's messages requests that are not main-loop turns."""
        return [r for r in self.snapshot() if is_side_request(r)]

    def wait_for(
        self, predicate: Callable[[dict], bool] = is_messages_request, count: int = 1, timeout: float = 10.0
    ) -> list[dict]:
        """Block until ``count`` recorded requests satisfy ``predicate``; return them (TimeoutError if not)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                hits = [r for r in self.requests if predicate(r)]
                if len(hits) >= count:
                    return hits
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"stand-in saw {len(hits)} of {count} matching requests")
                self._cond.wait(left)
