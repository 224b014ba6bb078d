"""Claude Code's sessions, and their format: JSONL lines in, redacted ``Message`` records out.

A transcript is ``<root>/<encoded-cwd>/<session-id>.jsonl``, the root ``~/.claude/projects``
(``$CLAUDE_CONFIG_DIR/projects`` when set) or a ``--source`` folder; subagent transcripts live in
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

What every source's reader shares (lines capped, text cleaned and cut, ``<private>`` carried) is
``indexer.transcripts``; the message is ``indexer.message.Message``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from indexer.message import Message
from indexer.project import canonical_project
from indexer.redact import redact
from indexer.transcripts import (
    SKIP_REASONS,
    TOOL_RESULT_CHARS,
    JSONError,
    LongLine,
    cap_text,
    capped_lines,
    clean_text,
    file_chunks,
    lenient_loads,
    loads,
    open_regular,
    parse_timestamp,
    path_text,
    precut,
    private_carry,
    skip_long,
    tool_result_chars,
)
from recall.core.lazy_re import lazy

NAME = "claude-code"
LABEL = "Claude Code"
VARIABLES = ("CLAUDE_CONFIG_DIR",)  # what moves its folders (and HOME)


def roots() -> list[Path]:
    from recall.core import paths

    return [paths.claude_config_dir() / "projects"]


def wants(name: str) -> bool:
    return name.endswith(".jsonl")


def whole(name: str) -> bool:
    return False  # appended to: read from where the last read stopped


def context(path: Path) -> FileContext:
    return FileContext(path)


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


read = read_lines
