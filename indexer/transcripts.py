"""What every source's reader shares: a session file read by complete lines (each capped at
``LINE_CAP``, never held whole past it), only a regular file opened, JSON decoded (leniently when
a character is bad), text cleaned of recall's own injected blocks and of system reminders, cut
to ``MESSAGE_CHARS``, ``<private>`` blocks carried across messages, and the reasons a line is
skipped (``SKIP_REASONS``). Each source's own format is its module in ``indexer/sources/``
(Claude Code's: ``indexer/sources/claude_code.py``); the message they all give is
``indexer.message.Message``. Nothing here is ever fatal.
"""

from __future__ import annotations

import os
import re
from collections import Counter
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

from indexer.redact import private_open_after
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


# Why a line was not a message, in the order `recall status` lists them: every source counts its
# skips under these names.
SKIP_REASONS = (
    # Claude Code's bookkeeping line types (indexer.sources.claude_code), each counted under its name
    "queue-operation",
    "file-history-snapshot",
    "progress",
    "last-prompt",
    "permission-mode",
    "attachment",
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


def private_carry(texts: list[str], kind: str, n_text: int, ctx) -> list[str]:
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
