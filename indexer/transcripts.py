"""Reading Claude Code transcripts: JSONL lines in, redacted ``Message`` records out.

A transcript is ``<root>/<encoded-cwd>/<session-id>.jsonl``; subagent transcripts live in
``<session-id>/subagents/agent-*.jsonl`` (or beside the session in older versions) and
belong to their parent session. Every field of every line is treated as optional.

What becomes a message (one per transcript line):
  user prompts (string content or text blocks)      -> role "user"
  assistant text blocks                              -> role "assistant"
  tool calls (name + salient input)                  -> role "tool_use"
  tool results (truncated to ``tool_result_chars``)  -> role "tool_result"
  compact summaries and session summaries            -> role "summary"
  Claude Code's own memory recall (``relevant_memories``
  attachments, 2.1.332)                              -> role "claude-memory"

What is skipped, counted by reason (see ``SKIP_REASONS``): bookkeeping line types, every other
``attachment`` line (above all ``hook_additional_context``: recall's own injected context
coming back), ``isMeta`` lines, slash-command wrappers, interrupted-request markers, lines
left empty once ``<system-reminder>`` blocks and our own ``<recalled-context>`` blocks are
cut out, recall's own output coming back (``recall-tool``: a call of recall's MCP tools or of
the recall CLI in a shell, and its result; ``recall-command``: the prompt a ``/recall``,
``/recall-search`` or ``/remember`` command expands to, in versions that do not mark it
``isMeta``), messages inside a ``<private>`` block an earlier prompt left open, unknown line
types and malformed JSON. Nothing here is ever fatal.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator

try:  # orjson is ~4x faster on the backfill path; plain json works the same
    import orjson as _json

    loads = _json.loads
    JSONError: tuple[type[Exception], ...] = (_json.JSONDecodeError, ValueError, TypeError)
except ImportError:  # pragma: no cover - exercised where orjson is absent
    import json as _json

    loads = _json.loads
    JSONError = (ValueError, TypeError, UnicodeDecodeError)

from indexer.project import canonical_project
from indexer.redact import private_open_after, redact
from recall.core.lazy_re import lazy

TOOL_RESULT_CHARS = 2000  # the default of the config's tool_result_chars
_tool_result_chars: tuple[str, float, int] | None = None  # (the config read, when, its value)


def tool_result_chars() -> int:
    """How many characters of one tool result are indexed: ``$RECALL_TOOL_RESULT_CHARS``, else
    the config's ``tool_result_chars`` (default 2000; 0 keeps only how long a result was, as
    ``recall config set`` allows). The config is read again at most once a second, so a change
    reaches the running service's next read."""
    global _tool_result_chars
    env = os.environ.get("RECALL_TOOL_RESULT_CHARS")
    if env:
        try:
            return max(0, int(env))
        except ValueError:
            pass
    import time

    from recall.core import config, paths

    now, where = time.monotonic(), str(paths.config_path())
    if _tool_result_chars is None or _tool_result_chars[0] != where or now - _tool_result_chars[1] >= 1.0:
        value = config.load().get("tool_result_chars")
        chars = int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else TOOL_RESULT_CHARS
        _tool_result_chars = (where, now, max(0, chars))
    return _tool_result_chars[2]


# What one message stores at most (a 47 MB pasted prompt is indexed by its first 100K
# characters, with a note of how much was cut). Text is cut to this plus a margin before the
# regexes and redaction run, so a secret straddling the cut is still seen whole enough to match.
MESSAGE_CHARS = int(os.environ.get("RECALL_MESSAGE_CHARS", "100000"))
CUT_MARGIN = 4096

# The longest line of a session file read (bytes, its newline included), whatever the source
# (plain or compressed). A message keeps MESSAGE_CHARS at most and a tool result
# tool_result_chars, so a longer line holds nothing a message would keep that a shorter one
# could not: it is skipped (``capped_lines``), streamed through in chunks and never held
# whole, the read position moved past it, and named once in the log with its file and size.
# (Issue 46: a 33 KB .zst holding one 1 GB line took the service to 2,267 MB.)
LINE_CAP = 16 << 20
READ_CHUNK = 1 << 20  # bytes read from a file at a time


class LongLine:
    """A line longer than ``LINE_CAP``, as ``capped_lines`` gives it: its size in bytes, and
    whether it ended (its newline was read) or the data ended inside it."""

    __slots__ = ("size", "ended")

    def __init__(self, size: int, ended: bool) -> None:
        self.size = size
        self.ended = ended

    def why(self) -> str:
        more = "" if self.ended else " so far (the data ends inside it)"
        return f"{self.size:,} bytes long{more}, more than the {LINE_CAP:,}-byte line cap: skipped"


def capped_lines(chunks) -> Iterator[bytes | LongLine]:
    """The lines of a stream of byte ``chunks``, each with its newline, and a last one without
    a newline if the data ends inside it. A line longer than ``LINE_CAP`` comes as a
    ``LongLine`` (its size): its bytes are counted as they pass, never kept, so what is held
    at any moment is one chunk and at most ``LINE_CAP`` bytes of the line being read."""
    cap = LINE_CAP
    held: list[bytes] = []  # the pieces of the line being read (at most cap bytes in all)
    size = 0  # its length so far
    long = False  # it passed the cap: counted, not kept
    for chunk in chunks:
        start, n = 0, len(chunk)
        while start < n:
            nl = chunk.find(b"\n", start)
            end = n if nl < 0 else nl + 1
            piece_len = end - start
            if long or size + piece_len > cap:
                long = True
                held = []
            else:
                held.append(chunk[start:end] if start or end < n else chunk)
            size += piece_len
            start = end
            if nl < 0:
                break
            if long:
                yield LongLine(size, True)
            else:
                yield held[0] if len(held) == 1 else b"".join(held)
            held, size, long = [], 0, False
    if long:
        yield LongLine(size, False)
    elif held:
        yield b"".join(held)


def file_chunks(fh) -> Iterator[bytes]:
    """``fh`` from where it stands, ``READ_CHUNK`` bytes at a time (at most ``LINE_CAP``)."""
    step = max(1, min(READ_CHUNK, LINE_CAP))
    while True:
        chunk = fh.read(step)
        if not chunk:
            return
        yield chunk


# line types that are bookkeeping, never a message (each counted under its own name)
_BOOKKEEPING = (
    "queue-operation",
    "file-history-snapshot",
    "progress",
    "last-prompt",
    "permission-mode",
    "attachment",
)

SKIPPED_TYPES = {
    *_BOOKKEEPING,
    "system",
    "custom-title",
    "ai-title",
    "agent-name",
    "tag",
    "pr-link",
    "worktree-state",
    "mode",
}

SKIP_REASONS = (
    *_BOOKKEEPING,
    "hook-context",
    "system",
    "meta",
    "command-wrapper",
    "interrupted",
    "recalled-context",
    "recall-tool",
    "recall-command",
    "system-reminder",
    "duplicate-block",
    "thinking",
    "private",
    "empty",
    "unknown-type",
    "malformed-json",
    "too-long",
)

# Our own injected block: a closed block anywhere, or an unclosed one (cut short) whose
# opener starts the text or a line, or ends its line (every block recall injects does
# both). A message that merely mentions the opener in a sentence ("we wrap output in
# <recalled-context> tags? we decided ...") is not cut at it.
_RECALLED_OPEN = lazy(r"<recalled-context\b[^>\n]*>", re.I)
_RECALLED_CLOSE = lazy(r"</recalled-context>", re.I)


def _cut_recalled(text: str) -> str:
    """``text`` without our own blocks (see above); linear in the length of ``text``."""
    out: list[str] = []
    last = 0
    closers = True
    pos = 0
    while True:
        m = _RECALLED_OPEN.search(text, pos)
        if m is None:
            break
        close = _RECALLED_CLOSE.search(text, m.end()) if closers else None
        if close is not None:
            out.append(text[last : m.start()])
            last = pos = close.end()
            continue
        closers = False  # no closer after this opener, so none after any later one (linear)
        i = m.start()
        while i > 0 and text[i - 1] in " \t":
            i -= 1
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if i == 0 or text[i - 1] == "\n" or text.startswith(("\n", "\r\n"), j):
            out.append(text[last : m.start()])
            last = len(text)
            break
        pos = m.end()
    if not out and last == 0:
        return text
    out.append(text[last:])
    return "".join(out)


_REMINDER = lazy(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_COMMAND_WRAPPER = lazy(
    r"^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
    r"local-command-caveat|bash-input|bash-stdout|bash-stderr)>"
)
_INTERRUPTED = lazy(r"^\s*\[Request interrupted by user[^\]]*\]\s*$")

SALIENT_INPUT_KEYS = (
    "command",
    "file_path",
    "path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
    "subagent_type",
)
FILE_INPUT_KEYS = ("file_path", "notebook_path", "path")
_TOUCH_NAMES = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})  # indexer.touches


@dataclass(slots=True)
class Message:
    uuid: str
    session_id: str
    project: str
    cwd: str
    branch: str
    role: str
    timestamp: float  # seconds since the epoch, UTC
    text: str
    tools: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    source: str = ""
    echo: bool = False  # it restates what recall itself recalled (see mark_echo)
    # the project files its tool calls wrote, edited, moved or deleted (indexer.touches)
    touched: list[list[str]] = field(default_factory=list)
    agent: str = "claude-code"  # which agent's session it is from (indexer.sources)

    def to_record(self) -> dict:
        return {
            "uuid": self.uuid,
            "session_id": self.session_id,
            "project": self.project,
            "cwd": self.cwd,
            "branch": self.branch,
            "role": self.role,
            "timestamp": self.timestamp,
            "text": self.text,
            "tools": self.tools,
            "files": self.files,
            "source": self.source,
            **({"echo": True} if self.echo else {}),  # left out when false: most records stay as they were
            **({"touched": self.touched} if self.touched else {}),
            **({"agent": self.agent} if self.agent != "claude-code" else {}),  # Claude Code's: as before
        }

    @classmethod
    def from_record(cls, rec: dict) -> "Message":
        return cls(
            uuid=str(rec.get("uuid") or ""),
            session_id=str(rec.get("session_id") or ""),
            project=str(rec.get("project") or ""),
            cwd=str(rec.get("cwd") or ""),
            branch=str(rec.get("branch") or ""),
            role=str(rec.get("role") or "user"),
            timestamp=float(rec.get("timestamp") or 0.0),
            text=str(rec.get("text") or ""),
            tools=list(rec.get("tools") or []),
            files=list(rec.get("files") or []),
            source=str(rec.get("source") or ""),
            echo=bool(rec.get("echo")),
            touched=_touched_of(rec),
            agent=str(rec.get("agent") or "claude-code"),
        )


def _touched_of(rec: dict) -> list:
    """A record's touches; one archived before touches were gets them from its text."""
    touched = rec.get("touched")
    if touched is None:
        if rec.get("role") != "tool_use":
            return []
        from indexer.touches import derive

        return derive(rec)
    return [list(t) for t in touched if isinstance(t, (list, tuple))] if isinstance(touched, list) else []


def parse_timestamp(value) -> float:
    if isinstance(value, (int, float)):
        return float(value) / (1000.0 if value > 1e11 else 1.0)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def cap_text(text: str, dropped: int = 0) -> str:
    """``text`` (already redacted) cut to MESSAGE_CHARS, saying how many characters were
    left out (``dropped``: those cut off before, by ``precut``)."""
    if len(text) <= MESSAGE_CHARS and not dropped:
        return text
    more = max(len(text) - MESSAGE_CHARS, 0) + dropped
    return text[:MESSAGE_CHARS] + f" …[{more} more characters]"


def precut(text: str) -> tuple[str, int]:
    """(``text`` cut to MESSAGE_CHARS + a margin before it is cleaned and redacted, characters cut)."""
    keep = MESSAGE_CHARS + CUT_MARGIN
    if len(text) <= keep:
        return text, 0
    return text[:keep], len(text) - keep


def clean_text(text: str) -> str:
    """Cut our own recalled context and system reminders out of a piece of text."""
    if "recalled-context" in text or "RECALLED-CONTEXT" in text:
        text = _cut_recalled(text)
    if "<system-reminder>" in text:
        text = _REMINDER.sub("", text)
    return text.strip()


def path_text(path) -> str:
    """``path`` as text that can be stored anywhere (SQLite, JSON, Tantivy, the log): a file
    name that is not valid UTF-8 keeps its undecodable bytes as ``\\xNN`` escapes."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")


_BAD_CHARS = lazy("[\ud800-\udfff\x00\ufeff]")


def _clean_value(value):
    if isinstance(value, str):
        if _BAD_CHARS.search(value):
            return _BAD_CHARS.sub(lambda m: "" if m.group(0) in "\x00\ufeff" else "\ufffd", value)
        return value
    if isinstance(value, dict):
        return {_clean_value(k): _clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    return value


def lenient_loads(line: bytes):
    """A line the strict parser refused, repaired character by character: an invalid byte
    and a lone surrogate become U+FFFD, a byte-order mark and NULs are dropped, raw control
    characters inside strings are accepted. Raises ValueError when it still is not JSON."""
    import json

    text = line.decode("utf-8", "replace").replace("\ufeff", "").replace("\x00", "")
    return _clean_value(json.loads(text, strict=False))


def session_of(path: Path) -> str:
    """The session a transcript file belongs to, from its location."""
    if path.parent.name == "subagents":
        return path.parent.parent.name
    return path.stem


def decode_project_dir(name: str) -> str:
    """Best-effort cwd from an encoded project directory name (lossy: '-' was '/' or '.')."""
    return "/" + name.lstrip("-").replace("-", "/") if name.startswith("-") else name


class FileContext:
    """Per-file parsing state: remembers tool ids and assistant blocks already seen."""

    __slots__ = (
        "path",
        "session_id",
        "cwd",
        "tool_names",
        "seen_blocks",
        "subagent",
        "source",
        "dir_project",
        "line",
        "bad",
        "private_open",
        "recalled",
        "echo_turn",
        "recall_tools",
        "touch_calls",
        "tool_result_chars",
    )

    MAX_BAD = 20  # skipped lines named per read (the rest are counted)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.session_id = path_text(session_of(path))
        # per file, not per line: pathlib properties cost ~1 us each on the backfill path
        self.subagent = path.parent.name == "subagents"
        self.source = path_text(path)
        self.dir_project = path_text(
            decode_project_dir(path.parent.parent.parent.name if self.subagent else path.parent.name)
        )
        self.line = 0  # complete lines before the read position
        self.bad: list[tuple[int, str]] = []  # (line number, why) of lines that could not be read
        # a <private> block a prompt left open: every message up to the prompt that closes it
        # is private (saved with the file's offset, so a restart carries it on)
        self.private_open = False
        self.cwd = ""
        self.tool_names: OrderedDict[str, str] = OrderedDict()
        self.seen_blocks: OrderedDict[str, None] = OrderedDict()
        # recall's own output in this turn: the terms of the block injected into the prompt
        # (None: none), whether the turn is a /recall or /remember command's, and the ids of
        # the turn's calls to recall's own tools (their results are recall's output)
        self.recalled: frozenset | None = None
        self.echo_turn: int | str = 0  # 1: a command's turn runs; 2 or its arguments: its wrapper was seen
        self.recall_tools: set[str] = set()
        # tool id -> (its message's uuid, its touches): a call that fails takes its touches back
        self.touch_calls: OrderedDict[str, tuple[str, list]] = OrderedDict()
        self.tool_result_chars = TOOL_RESULT_CHARS  # the reader sets tool_result_chars() per read

    def remember_tool(self, tool_id: str, name: str) -> None:
        self.tool_names[tool_id] = name
        if len(self.tool_names) > 4096:
            self.tool_names.popitem(last=False)

    def remember_touches(self, tool_id: str, uuid: str, touches: list) -> None:
        self.touch_calls[tool_id] = (uuid, touches)
        if len(self.touch_calls) > 1024:
            self.touch_calls.popitem(last=False)

    def seen(self, key: str) -> bool:
        if key in self.seen_blocks:
            return True
        self.seen_blocks[key] = None
        if len(self.seen_blocks) > 4096:
            self.seen_blocks.popitem(last=False)
        return False


def _tool_use_text(block: dict) -> tuple[str, str, list[str]]:
    name = str(block.get("name") or "tool")
    inp = block.get("input")
    parts: list[str] = []
    files: list[str] = []
    if isinstance(inp, dict):
        for key in SALIENT_INPUT_KEYS:
            val = inp.get(key)
            if isinstance(val, str) and val:
                parts.append(val if len(val) <= 2000 else val[:2000])
                if key in FILE_INPUT_KEYS:
                    files.append(val)
        edits = inp.get("edits")
        if not parts and isinstance(edits, list):
            parts.append(f"{len(edits)} edits")
    return name, f"{name}: " + " | ".join(parts) if parts else name, files


def _tool_result_text(block: dict, limit: int) -> str:
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = ""
    if len(text) > limit:
        text = text[:limit] + f" …[{len(text) - limit} more characters]"
    return text


def parse_transcript_entry(obj, ctx: FileContext, stats: Counter) -> Message | None:
    """One decoded transcript entry (a JSONL line's object) -> a Message, or None (with the reason
    counted in ``stats``). An archive's line is ``indexer.archive_files.parse_record``."""
    if not isinstance(obj, dict):
        stats["unknown-type"] += 1
        return None
    kind = obj.get("type")
    if kind in SKIPPED_TYPES and not _is_memory_recall(obj):
        _count_skipped(obj, kind, ctx, stats)
        return None
    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else ""
    if cwd:
        ctx.cwd = cwd
    cwd = cwd or ctx.cwd
    session_id = obj.get("sessionId")
    if ctx.subagent or not isinstance(session_id, str) or not session_id:
        session_id = ctx.session_id
    if kind == "summary":
        return _summary_entry(obj, session_id, cwd, ctx, stats)
    if kind == "attachment":
        return _memory_recall_entry(obj, session_id, cwd, ctx, stats)
    if kind not in ("user", "assistant"):
        stats["unknown-type"] += 1
        return None
    if obj.get("isMeta"):
        if kind == "user" and ctx.echo_turn and ctx.echo_turn != 1:
            ctx.echo_turn = 1  # a recall command's expanded prompt (Claude Code marks it meta): its turn runs
        stats["meta"] += 1
        return None
    message = obj.get("message")
    if not isinstance(message, dict):
        stats["empty"] += 1
        return None
    content = message.get("content")
    uid = obj.get("uuid")
    if not isinstance(uid, str) or not uid:
        uid = "line-" + hashlib.sha1(repr((ctx.path.name, obj.get("timestamp"), content)).encode()).hexdigest()[:24]
    if isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        stats["empty"] += 1
        return None
    body = _read_blocks(blocks, kind, message.get("id") if kind == "assistant" else None, ctx)
    texts = body.texts
    if not texts:
        if ctx.private_open and kind == "assistant":
            stats["private"] += 1
        else:
            stats[body.reason] += 1
        return None
    if ctx.private_open or (kind == "user" and body.n_text):
        texts = private_carry(texts, kind, body.n_text, ctx)
        if not texts:
            stats["private"] += 1
            return None
    result = obj.get("toolUseResult")
    if isinstance(result, dict):
        fp = result.get("filePath")
        if isinstance(fp, str) and fp:
            body.files.append(fp)
    text = cap_text(redact("\n".join(texts)), body.dropped)
    if not text.strip():  # all of it was inside <private> blocks
        stats["private"] += 1
        return None
    role = _role(kind, message, obj, body)
    if kind == "user" and role == "user" and _recall_expansion(text, ctx):
        ctx.echo_turn = 1  # the command's expanded text (it holds the command's arguments): its turn runs
        stats["recall-command"] += 1
        return None
    m = _message(_Origin(uid, session_id, cwd, obj, ctx), role, text, body)
    m.echo = mark_echo(m, ctx)
    return m


def _count_skipped(obj: dict, kind: str, ctx: FileContext, stats: Counter) -> None:
    """A line type that is never a message, counted; recall's own injected context seen in it is
    kept (``ctx.recalled``) to tell the replies that restate it."""
    if kind == "attachment":
        att = obj.get("attachment")
        if isinstance(att, dict) and att.get("type") == "hook_additional_context":
            stats["hook-context"] += 1
            body = att.get("content") or ""
            body = "\n".join(map(str, body)) if isinstance(body, list) else str(body)
            if "recalled-context" in body:
                ctx.recalled = frozenset(echo_terms(body))
            return
    stats[kind if kind in SKIP_REASONS else "system"] += 1


# Claude Code's own memory recall (2.1.332): a ``relevant_memories`` attachment holds the memory
# files it chose for the prompt (``memories``: ``path``, ``content``, ``header``...), sent to the
# model as a system message. Indexed as Claude Code's memory, never as what the user said.
CLAUDE_MEMORY_ROLE = "claude-memory"
MEMORY_RECALL_TYPES = ("relevant_memories",)


def _is_memory_recall(obj: dict) -> bool:
    att = obj.get("attachment") if obj.get("type") == "attachment" else None
    return isinstance(att, dict) and att.get("type") in MEMORY_RECALL_TYPES


def _memory_recall_entry(obj: dict, session_id: str, cwd: str, ctx: FileContext, stats: Counter) -> Message | None:
    """A ``relevant_memories`` attachment: one message of role ``claude-memory``, "Claude Code
    recalled from its memory <file>: <text>" for each memory it holds."""
    memories = obj["attachment"].get("memories")
    parts = []
    for mem in memories if isinstance(memories, list) else []:
        if not isinstance(mem, dict) or not isinstance(mem.get("content"), str) or not mem["content"].strip():
            continue
        path = mem.get("path") if isinstance(mem.get("path"), str) else ""
        parts.append(f"{os.path.basename(path) or 'memory'}: {mem['content'].strip()}")
    if not parts:
        stats["empty"] += 1
        return None
    if ctx.private_open:  # recalled for a prompt inside a private block
        stats["private"] += 1
        return None
    uid = obj.get("uuid")
    if not isinstance(uid, str) or not uid:
        uid = "memrecall-" + hashlib.sha1(f"{session_id}\0{parts}".encode()).hexdigest()[:24]
    text, dropped = precut("Claude Code recalled from its memory " + "\n\n".join(parts))
    return _message(_Origin(uid, session_id, cwd, obj, ctx), CLAUDE_MEMORY_ROLE, cap_text(redact(text), dropped))


def _summary_entry(obj: dict, session_id: str, cwd: str, ctx: FileContext, stats: Counter) -> Message | None:
    """A ``summary`` line: Claude Code's summary of the conversation."""
    text = obj.get("summary")
    if not isinstance(text, str) or not text.strip():
        stats["empty"] += 1
        return None
    leaf = str(obj.get("leafUuid") or "")
    uid = "summary-" + hashlib.sha1(f"{session_id}\0{leaf}\0{text}".encode()).hexdigest()[:24]
    if ctx.private_open:  # Claude Code's summary of a conversation inside a private block
        stats["private"] += 1
        return None
    text, dropped = precut(text.strip())
    return _message(_Origin(uid, session_id, cwd, obj, ctx), "summary", cap_text(redact(text), dropped))


@dataclass(slots=True)
class _Origin:
    """Where a message comes from: its id, session, folder, transcript line and file."""

    uid: str
    session_id: str
    cwd: str
    obj: dict
    ctx: FileContext


@dataclass(slots=True)
class _Body:
    """What the content blocks of one user or assistant line hold (``_read_blocks``)."""

    texts: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    calls: list[tuple[str, str, dict]] = field(
        default_factory=list
    )  # (id, name, input) of calls that may write files (indexer.touches)
    undone: list[list[str]] = field(
        default_factory=list
    )  # the touches of calls that failed (their error result is this message)
    dropped: int = 0  # characters cut off huge text blocks before they were cleaned and redacted
    reason: str = "empty"  # why nothing is left, when nothing is
    n_text: int = 0
    n_tool_use: int = 0
    n_tool_result: int = 0


def _read_blocks(blocks: list, kind: str, msg_id, ctx: FileContext) -> _Body:
    body = _Body()
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            _text_block(body, block, kind, msg_id, ctx)
        elif btype == "tool_use":
            _tool_use_block(body, block, msg_id, ctx)
        elif btype == "tool_result":
            _tool_result_block(body, block, ctx)
        elif btype in ("thinking", "redacted_thinking"):
            body.reason = "thinking"
    return body


def _text_block(body: _Body, block: dict, kind: str, msg_id, ctx: FileContext) -> None:
    raw = block.get("text")
    if not isinstance(raw, str):
        return
    if kind == "user":
        if _COMMAND_WRAPPER.match(raw):
            body.reason = "command-wrapper"
            if _RECALL_COMMAND.search(raw):
                args = _COMMAND_ARGS.search(raw)
                ctx.echo_turn = (args.group(1).strip() if args else "") or 2
            return
        if _INTERRUPTED.match(raw):
            body.reason = "interrupted"
            return
    raw, cut = precut(raw)
    body.dropped += cut
    cleaned = clean_text(raw)
    if not cleaned:
        body.reason = (
            "recalled-context"
            if "recalled-context" in raw
            else "system-reminder"
            if "<system-reminder>" in raw
            else "empty"
        )
        return
    if msg_id and ctx.seen(f"{msg_id}\0t\0{cleaned[:200]}"):
        body.reason = "duplicate-block"
        return
    body.texts.append(cleaned)
    body.n_text += 1


def _tool_use_block(body: _Body, block: dict, msg_id, ctx: FileContext) -> None:
    name, described, tfiles = _tool_use_text(block)
    tid = block.get("id")
    if isinstance(tid, str):
        ctx.remember_tool(tid, name)
        if msg_id and ctx.seen(f"{msg_id}\0u\0{tid}"):
            body.reason = "duplicate-block"
            return
    if _recall_tool(name, block.get("input")):
        if isinstance(tid, str):
            ctx.recall_tools.add(tid)
        body.reason = "recall-tool"  # recall's own search: its query and result are not history
        return
    body.texts.append(clean_text(described))
    body.tools.append(name)
    body.files.extend(tfiles)
    body.n_tool_use += 1
    if name in _TOUCH_NAMES and isinstance(block.get("input"), dict):
        body.calls.append((tid if isinstance(tid, str) else "", name, block["input"]))


def _tool_result_block(body: _Body, block: dict, ctx: FileContext) -> None:
    text = clean_text(_tool_result_text(block, ctx.tool_result_chars))
    tid = block.get("tool_use_id")
    if isinstance(tid, str) and tid in ctx.recall_tools:
        if text:  # what recall answered: a reply that restates it is an echo (mark_echo)
            ctx.recalled = (ctx.recalled or frozenset()) | frozenset(echo_terms(text))
        body.reason = "recall-tool"
        return
    name = ctx.tool_names.get(tid, "") if isinstance(tid, str) else ""
    if name:
        body.tools.append(name)
    if block.get("is_error") is True and isinstance(tid, str) and tid in ctx.touch_calls:
        ref, done = ctx.touch_calls.pop(tid)  # failed or refused: it wrote nothing
        body.undone.extend(["undo", path, op, ref] for op, path, _fp, _dest in done)
    if text:
        body.texts.append(text)
        body.n_tool_result += 1
    elif "recalled-context" in str(block.get("content")):
        body.reason = "recalled-context"


def _role(kind: str, message: dict, obj: dict, body: _Body) -> str:
    if kind == "user":
        if message.get("isCompactSummary") or obj.get("isCompactSummary"):
            return "summary"
        return "tool_result" if body.n_text == 0 and body.n_tool_result else "user"
    return "tool_use" if body.n_text == 0 and body.n_tool_use else "assistant"


ECHO_SHARE = 0.5  # a reply with this share of its words in the block recall injected restates it
_RECALL_COMMAND = lazy(r"<command-name>\s*/?(?:[\w-]+:)?(?:recall|recall-search|remember)\s*</command-name>", re.I)
_COMMAND_ARGS = lazy(r"<command-args>(.*?)</command-args>", re.S)
_RECALL_CLI = lazy(r"(?:^|[;&|(]\s*|\s)(?:\S*/)?recall(?:\s+(?:--raw|--json|ask|search|show|log|memories)\b|\s+[\"'])")


def _recall_tool(name: str, inp) -> bool:
    """A call of recall's own tools: its MCP server's, or the recall CLI in a shell."""
    # `recall setup`'s server is "recall": mcp__recall__<tool>; the plugin's is "recall" of the
    # plugin "recall": mcp__plugin_recall_recall__<tool> (Claude Code's mcp__plugin_<plugin>_<server>__)
    if name.startswith(("mcp__recall__", "mcp__plugin_recall_")):
        return True
    if name == "Bash" and isinstance(inp, dict):
        return bool(_RECALL_CLI.search(str(inp.get("command") or "")))
    return False


def echo_terms(text: str) -> set[str]:
    """The words of a text as the index analyses them, longer than two characters (what an echo shares)."""
    from indexer.schema import prepare_content, text_analyzer

    return {t for t in text_analyzer().analyze(prepare_content(text[:20000])) if len(t) > 2}


def _recall_expansion(text: str, ctx: FileContext) -> bool:
    """Whether a prompt is the expansion of the ``/recall``, ``/recall-search`` or ``/remember``
    command whose wrapper came just before (it holds the command's arguments)."""
    pending = ctx.echo_turn
    return pending == 2 or (isinstance(pending, str) and pending[:200] in text)


def mark_echo(m: Message, ctx: FileContext) -> bool:
    """Whether ``m`` restates recall's own output, and the turn's state moved on: a message
    of a ``/recall`` or ``/remember`` command's turn, or a reply with ECHO_SHARE of its words
    in what recall gave this turn (the block injected into the prompt it answers, the results
    of calls to recall's own tools). A new prompt starts a new turn. (The command's expanded
    prompt and recall's tool calls and results are not messages at all: see
    ``parse_transcript_entry``.)"""
    if m.role == "user":
        ctx.echo_turn, ctx.recalled = 0, None
        ctx.recall_tools.clear()
        return False
    if ctx.echo_turn:
        return True
    if m.role == "assistant" and ctx.recalled:
        words = echo_terms(m.text)
        return bool(words) and len(words & ctx.recalled) >= ECHO_SHARE * len(words)
    return False


def private_carry(texts: list[str], kind: str, n_text: int, ctx: FileContext) -> list[str]:
    """A message's texts with what lies inside a ``<private>`` block opened by an earlier
    prompt taken out, and ``ctx.private_open`` moved on. Only what the user typed opens or
    closes a block across messages (a tool's output that shows the tag does not); while one is
    open, the replies, tool calls and tool results in it are private whole."""
    if kind != "user" or not n_text:
        return [] if ctx.private_open else texts
    joined = "\n".join(texts)
    open_before = ctx.private_open
    ctx.private_open = private_open_after(joined, open_before)
    if not open_before:
        return texts  # what it opens, redact removes to its end
    if ctx.private_open:
        return []  # still inside the block: all of it
    return ["<private>" + joined]  # closed here: redact drops up to the closer


def _message(origin: _Origin, role: str, text: str, body: _Body | None = None) -> Message:
    uid, session_id, cwd, obj, ctx = origin.uid, origin.session_id, origin.cwd, origin.obj, origin.ctx
    files, calls = (body.files, body.calls) if body is not None else ((), ())
    branch = obj.get("gitBranch")
    dedup_files = list(dict.fromkeys(redact(f) for f in files)) if files else []
    project = canonical_project(cwd) if cwd else ctx.dir_project
    touched: list[list[str]] = list(body.undone) if body is not None else []
    if calls:
        from indexer.touches import MAX_TOUCHES, tool_touches

        for tid, name, inp in calls:
            mine = [
                [op, redact(path), fp, redact(dest) if dest else ""]
                for op, path, fp, dest in tool_touches(name, inp, cwd, project)
            ]
            mine = [t for t in mine if t not in touched]
            if mine and tid:
                ctx.remember_touches(tid, uid, mine)
            touched.extend(mine)
        touched = touched[:MAX_TOUCHES]
    return Message(
        uuid=uid,
        session_id=session_id,
        project=project,
        cwd=cwd,
        branch=branch if isinstance(branch, str) else "",
        role=role,
        timestamp=parse_timestamp(obj.get("timestamp")),
        text=text,
        tools=list(dict.fromkeys(body.tools)) if body is not None else [],
        files=dedup_files,
        source=ctx.source,
        touched=touched,
    )


class NotRegularFile(OSError):
    """A ``*.jsonl`` that is a FIFO, a socket or a device: never opened for reading."""


def open_regular(path: Path):
    """Open ``path`` for reading only if it is a regular file. O_NONBLOCK: opening a FIFO
    never waits for a writer (it is then refused by its type)."""
    import stat as _stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not _stat.S_ISREG(mode):
            raise NotRegularFile(0, f"not a regular file ({_kind(mode)}): skipped", path_text(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    import stat as _stat

    for test, name in (
        (_stat.S_ISFIFO, "a FIFO"),
        (_stat.S_ISSOCK, "a socket"),
        (_stat.S_ISCHR, "a character device"),
        (_stat.S_ISBLK, "a block device"),
        (_stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a file"


def skip_long(raw: LongLine, ctx, stats: Counter) -> None:
    """Count a line past ``LINE_CAP`` (``too-long``) and name it, with its size, in the log."""
    stats["too-long"] += 1
    if len(ctx.bad) < ctx.MAX_BAD:
        ctx.bad.append((ctx.line, raw.why()))


def read_lines(
    path: Path, offset: int, ctx: FileContext, stats: Counter, max_bytes: int = 8 << 20
) -> Iterator[tuple[list[Message], int]]:
    """Stream complete lines from ``offset``; yields (messages, new_offset) every ~``max_bytes``.

    A partial last line (no newline yet) is left for the next read: the offset stops
    before it. Memory stays bounded whatever the file size. ``ctx.line`` counts the lines
    read; a line that is not JSON even once repaired is noted in ``ctx.bad`` by number, and
    so is one longer than ``LINE_CAP`` (skipped whole, never held: ``capped_lines``).
    Only a regular file is read (see ``open_regular``): a FIFO named ``*.jsonl`` never blocks.
    """
    ctx.tool_result_chars = tool_result_chars()
    with open_regular(path) as fh:
        fh.seek(offset)
        pos = offset
        batch: list[Message] = []
        consumed = 0
        for raw in capped_lines(file_chunks(fh)):
            if isinstance(raw, LongLine):
                if not raw.ended:
                    break  # wait for its newline (ingest scans only what is appended for it)
                pos += raw.size
                consumed += raw.size
                ctx.line += 1
                skip_long(raw, ctx, stats)
                if consumed >= max_bytes:
                    yield batch, pos
                    batch, consumed = [], 0
                continue
            if not raw.endswith(b"\n"):
                break  # partial line: wait for its newline
            pos += len(raw)
            consumed += len(raw)
            ctx.line += 1
            line = raw.strip()
            if not line:
                continue
            try:
                obj = loads(line)
            except JSONError as exc:
                try:
                    obj = lenient_loads(line)  # a bad character costs that character, not the line
                except (ValueError, RecursionError):
                    stats["malformed-json"] += 1
                    if len(ctx.bad) < ctx.MAX_BAD:
                        ctx.bad.append((ctx.line, f"not JSON ({str(exc).splitlines()[0][:80]})"))
                    continue
            msg = parse_transcript_entry(obj, ctx, stats)
            if msg is not None:
                batch.append(msg)
            if consumed >= max_bytes:
                yield batch, pos
                batch, consumed = [], 0
        yield batch, pos
