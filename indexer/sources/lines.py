"""What the other agents' parsers share: their per-file state, reading a JSONL session file
(plain or zstd-compressed) to its last complete line without following a symlink, and making
a ``Message`` the way Claude Code's parser does (redacted, capped, ``<private>`` carried
across messages, canonical project).

A parser is ``parse(obj, ctx, stats) -> list[Message]``: one decoded line in, its messages out
(none: the reason counted in ``stats``). A line type it does not know, a field missing or of
another type, is skipped and counted (``unknown-type``, ``empty``): a new client version never
crashes the reader.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Callable, Iterator

from indexer.message import Message
from indexer.project import canonical_project
from indexer.redact import redact
from indexer.transcripts import (
    READ_CHUNK,
    JSONError,
    LongLine,
    NotRegularFile,
    cap_text,
    capped_lines,
    clean_text,
    file_chunks,
    lenient_loads,
    loads,
    parse_timestamp,
    path_text,
    precut,
    private_carry,
    skip_long,
    tool_result_chars,
)

ZST = ".zst"


class AgentContext:
    """Per-file parsing state of another agent's session file (what ``FileContext`` is to
    Claude Code's): its session, where it ran, the tool calls seen, and the fields
    ``indexer.ingest`` saves with the offset (``line``, ``private_open``, ``bad``)."""

    MAX_BAD = 20

    def __init__(self, path: Path, agent: str, session_id: str = "", project: str = "") -> None:
        self.path = path
        self.agent = agent
        self.source = path_text(path)
        self.session_id = session_id
        self.project = project  # where the session ran, when the file's location says it
        self.cwd = ""
        self.branch = ""
        self.line = 0
        self.bad: list[tuple[int, str]] = []
        self.private_open = False
        self.tool_names: OrderedDict[str, str] = OrderedDict()
        self.tool_result_chars = 2000
        self.whole = False  # read whole each time (a compressed or rewritten file)
        self.recall_calls: set[str] = set()  # ids of calls to recall's own MCP tools (their results echo it)

    def remember_tool(self, call_id: str, name: str) -> None:
        self.tool_names[call_id] = name
        if len(self.tool_names) > 4096:
            self.tool_names.popitem(last=False)


def open_nofollow(path: Path):
    """``path`` opened for reading if it is a regular file and not a symlink (O_NOFOLLOW;
    O_NONBLOCK so a FIFO never blocks the open)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(0, "not a regular file: skipped", path_text(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# A zstd block gives at most 128 KiB and takes at least 4 bytes in (an RLE block), so a
# byte of a .zst can stand for ~32 KiB: it is fed to the decompressor this many bytes at a
# time, so that one call gives at most ~LINE_CAP / 2 (1 GB in 33 KB is what zstd can do).
def _zstd_slice() -> int:
    from indexer import transcripts

    return max(16, transcripts.LINE_CAP >> 16)


def _zstd_chunks(fh, state: dict):
    """The decompressed bytes of a zstd file (Codex's ``.jsonl.zst``: one frame or more), in
    chunks of at most about ``LINE_CAP / 2``: however much one compressed byte stands for,
    never more at once. ``state["whole"]``: the last frame ended where the file does (False:
    the file was cut short)."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a dependency of recall
        raise OSError(0, "a .zst file needs the zstandard package: pip install zstandard") from None
    new = zstandard.ZstdDecompressor().decompressobj
    dobj = new()
    step = _zstd_slice()
    state["whole"] = True
    while True:
        data = fh.read(READ_CHUNK)
        if not data:
            break
        view = memoryview(data)
        for i in range(0, len(data), step):
            if dobj.eof:  # the frame ended with the last slice: another one follows
                dobj = new()
            out = dobj.decompress(view[i : i + step])
            if out:
                yield out
            while dobj.eof and dobj.unused_data:  # another frame follows inside this slice
                more = dobj.unused_data
                dobj = new()
                out = dobj.decompress(more)
                if out:
                    yield out
    state["whole"] = dobj.eof


def whole_cap() -> int:
    """The largest whole-file session read (Gemini CLI's older ``session-*.json``, its
    ``logs.json``): one JSON document, parsed whole, so four line caps."""
    from indexer import transcripts

    return 4 * transcripts.LINE_CAP


def read_whole(fh, ctx: AgentContext, stats: Counter) -> bytes | None:
    """All of a whole-file session, or None (counted ``too-long``, named in the log with its
    size) when it is larger than ``whole_cap()``: never read past the cap."""
    cap = whole_cap()
    size = os.fstat(fh.fileno()).st_size
    data = fh.read(cap + 1) if size <= cap else b""
    if size > cap or len(data) > cap:
        stats["too-long"] += 1
        ctx.bad.append((1, f"{max(size, len(data)):,} bytes, more than the {cap:,}-byte cap of a whole file: skipped"))
        return None
    return data


def read_jsonl(
    path: Path,
    offset: int,
    ctx: AgentContext,
    stats: Counter,
    max_bytes: int,
    parse: Callable[[object, AgentContext, Counter], list[Message]],
) -> Iterator[tuple[list[Message], int]]:
    """Stream ``path``'s complete lines from ``offset`` through ``parse``; yields (messages,
    offset after them) every ~``max_bytes``. A last line without its newline is left for the
    next read. A ``.zst`` file (immutable: its writer compressed a finished one) is read whole
    and its offset is its size."""
    ctx.tool_result_chars = tool_result_chars()
    with open_nofollow(path) as fh:
        if path.name.endswith(ZST):
            ctx.whole = True
            size = os.fstat(fh.fileno()).st_size
            if offset >= size and offset:
                yield [], offset
                return
            plain = path.with_name(path.name[: -len(ZST)])
            if plain.exists():  # the plain file wins (the client's own rule): read that one
                yield [], size
                return
            ctx.line = 0
            batch: list[Message] = []
            consumed = 0
            state: dict = {}
            try:
                for raw in capped_lines(_zstd_chunks(fh, state)):
                    if isinstance(raw, LongLine):  # skipped, never held; named in the log
                        ctx.line += 1
                        skip_long(raw, ctx, stats)
                        consumed += raw.size
                        if not raw.ended:
                            break
                        continue
                    if not raw.endswith(b"\n"):  # the data ends inside this line: it is lost
                        stats["malformed-json"] += 1
                        ctx.bad.append((ctx.line + 1, "cut short: the compressed file ends inside this line"))
                        break
                    _one(raw, ctx, stats, parse, batch)
                    consumed += len(raw)
                    if consumed >= max_bytes:  # memory stays bounded; offset 0 until the end: an
                        yield batch, 0  # interrupted read starts again (uuids: no duplicates)
                        batch, consumed = [], 0
            except OSError:
                raise
            except Exception as exc:  # zstandard.ZstdError: not zstd, or damaged inside
                raise OSError(0, f"not a readable zstd file ({exc})", path_text(path)) from None
            if not state.get("whole"):
                ctx.bad.append(
                    (
                        ctx.line + 1,
                        "cut short: the compressed file ends inside a frame "
                        "(what it held past the last whole block is lost)",
                    )
                )
            yield batch, size
            return
        fh.seek(offset)
        pos = offset
        batch = []
        consumed = 0
        for raw in capped_lines(file_chunks(fh)):
            if isinstance(raw, LongLine):
                if not raw.ended:
                    break  # being written: wait for its newline
                pos += raw.size
                consumed += raw.size
                ctx.line += 1
                skip_long(raw, ctx, stats)  # skipped, never held; named in the log
            elif not raw.endswith(b"\n"):
                break  # being written: wait for its newline
            else:
                pos += len(raw)
                consumed += len(raw)
                _one(raw, ctx, stats, parse, batch)
            if consumed >= max_bytes:
                yield batch, pos
                batch, consumed = [], 0
        yield batch, pos


def _one(raw: bytes, ctx: AgentContext, stats: Counter, parse, batch: list[Message]) -> None:
    ctx.line += 1
    line = raw.strip()
    if not line:
        return
    try:
        obj = loads(line)
    except JSONError as exc:
        try:
            obj = lenient_loads(line)
        except (ValueError, RecursionError):
            stats["malformed-json"] += 1
            if len(ctx.bad) < ctx.MAX_BAD:
                ctx.bad.append((ctx.line, f"not JSON ({str(exc).splitlines()[0][:80]})"))
            return
    try:
        batch.extend(parse(obj, ctx, stats))
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:  # a shape no version wrote
        stats["unknown-type"] += 1
        if len(ctx.bad) < ctx.MAX_BAD:
            ctx.bad.append((ctx.line, f"unexpected shape ({type(exc).__name__})"))


def uid(ctx: AgentContext, key: str) -> str:
    """A message's uuid: stable for the same line of the same session, wherever its file is
    (a rollout compressed or archived keeps its messages' uuids)."""
    return f"{ctx.agent}-" + hashlib.sha1(f"{ctx.session_id}\0{key}".encode("utf-8", "replace")).hexdigest()[:24]


def make(
    ctx: AgentContext,
    stats: Counter,
    key: str,
    role: str,
    texts: list[str],
    when,
    *,
    tools: list[str] | None = None,
    files: list[str] | None = None,
    typed: bool = False,
    calls: list[tuple[str, dict]] | None = None,
) -> Message | None:
    """A redacted ``Message`` of ``texts`` (None, counted, when nothing is left). ``typed``: the
    texts are what the user typed (only they open or close a ``<private>`` block). ``calls``: its
    tool calls as Claude Code's equivalents (``("Write", {"file_path", "content"})``, ``("Edit",
    ...)``, ``("Bash", {"command"})``): the project files they wrote, edited, moved or deleted
    (``indexer.touches``, for the stale marks)."""
    cleaned: list[str] = []
    dropped = 0
    for t in texts:
        if not isinstance(t, str):
            continue
        t, cut = precut(t)
        dropped += cut
        t = clean_text(t)
        if t:
            cleaned.append(t)
    if not cleaned:
        stats["private" if ctx.private_open else "empty"] += 1
        return None
    if ctx.private_open or typed:
        cleaned = private_carry(cleaned, "user" if typed else "assistant", len(cleaned) if typed else 0, ctx)
        if not cleaned:
            stats["private"] += 1
            return None
    text = cap_text(redact("\n".join(cleaned)), dropped)
    if not text.strip():
        stats["private"] += 1
        return None
    cwd = ctx.cwd
    project = canonical_project(cwd) if cwd else ctx.project
    touched: list[list[str]] = []
    if calls and cwd:
        from indexer.touches import MAX_TOUCHES, tool_touches

        for name, inp in calls:
            touched.extend(
                t
                for t in (
                    [op, redact(path), fp, redact(dest) if dest else ""]
                    for op, path, fp, dest in tool_touches(name, inp, cwd, project)
                )
                if t not in touched
            )
        touched = touched[:MAX_TOUCHES]
    return Message(
        uuid=uid(ctx, key),
        session_id=ctx.session_id,
        project=project,
        cwd=cwd or ctx.project,
        branch=ctx.branch,
        role=role,
        timestamp=parse_timestamp(when),
        text=text,
        tools=list(dict.fromkeys(tools or ())),
        files=list(dict.fromkeys(redact(f) for f in files)) if files else [],
        source=ctx.source,
        agent=ctx.agent,
        touched=touched,
    )


# recall's own MCP tools (recall/mcp/server.py), however an agent prefixes them ("mcp__recall__",
# "recall__", or bare): a result of one is recall's output quoted back, marked an echo
RECALL_TOOLS = re.compile(r"(?:^|__|\.)(?:memory_search|memory_related|memory_ask|recall_search)$")


def is_recall_tool(name: str) -> bool:
    return bool(RECALL_TOOLS.search(name))


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} more characters]"
