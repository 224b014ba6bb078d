"""Where the archive keeps a message, and reading it back from there.

A message's archive file is ``sessions/<project_slug(project)>/<session_filename(session)>``
under the archive root, and its *position* is the byte offset of its line in that file.
Archive files are appended to, deleted whole, or rewritten by ``recall forget`` together
with their session's index documents (``indexer.forgetting``), so a position stays valid
for as long as the message exists; the index stores it (field ``apos``)
instead of the message's text, which is read back from here for the hits shown.

Light on imports: the searcher, and with it the prompt hook, reads hit text through this
module.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path

try:
    import orjson

    _loads = orjson.loads
    _JSONError: tuple[type[Exception], ...] = (orjson.JSONDecodeError, ValueError, TypeError)
except ImportError:  # pragma: no cover
    import json

    _loads = json.loads
    _JSONError = (ValueError, TypeError, UnicodeDecodeError)

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
READ_CHUNK = 8192


def project_slug(project: str) -> str:
    """A directory name for ``project``: readable tail + hash (unique, filesystem-safe)."""
    digest = hashlib.sha1(project.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    tail = _SAFE.sub("-", os.path.basename(project.rstrip("/")) or "root")[:40].strip("-.") or "p"
    return f"{tail}-{digest}"


def session_filename(session_id: str) -> str:
    safe = _SAFE.sub("-", session_id)[:120] or "unknown"
    if safe != session_id or safe.startswith("."):
        safe = f"{safe.lstrip('.')}-{hashlib.sha1(session_id.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return safe + ".jsonl"


@lru_cache(maxsize=4096)  # two hashes and a regex per hit otherwise (~5 us, a third of a read)
def session_relpath(project: str, session_id: str) -> str:
    return f"sessions/{project_slug(project)}/{session_filename(session_id)}"


def parse_record(raw: bytes) -> dict | None:
    try:
        rec = _loads(raw)
    except _JSONError:
        return None
    return rec if isinstance(rec, dict) else None


def iter_lines(path: Path | str):
    """``(position, record)`` for every complete line of an archive file that parses."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        pos = 0
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a partial last line: an interrupted write
            rec = parse_record(raw)
            if rec is not None:
                yield pos, rec
            pos += len(raw)


def _line_at(fd: int, pos: int) -> bytes:
    out = b""
    size = READ_CHUNK
    while True:
        chunk = os.pread(fd, size, pos + len(out))
        if not chunk:
            return b""  # no newline before the end: not a whole line
        i = chunk.find(b"\n")
        if i >= 0:
            return out + chunk[: i + 1]
        out += chunk
        size = min(size * 2, 1 << 20)


def record_at(
    root: Path, project: str, session_id: str, pos: int, fd: int | None = None, max_bytes: int | None = None
) -> dict | None:
    """The archived record whose line starts at ``pos`` (through ``fd`` when the caller has the
    file open), or None (no file, no whole line there, or, with ``max_bytes``, a line longer
    than that: one read, nothing parsed)."""
    own = fd is None
    if own:
        try:
            fd = os.open(os.path.join(root, session_relpath(project, session_id)), os.O_RDONLY)
        except OSError:
            return None
    try:
        if pos < 0:
            return None
        if max_bytes is not None:
            head = os.pread(fd, max_bytes, pos)
            end = head.find(b"\n")
            return parse_record(head[: end + 1]) if end >= 0 else None
        return parse_record(_line_at(fd, pos))
    except OSError:
        return None
    finally:
        if own:
            os.close(fd)


def read_message(root: Path, project: str, session_id: str, pos: int, uuid: str, fd: int | None = None) -> dict | None:
    """The archived record of message ``uuid`` (a ``Message.to_record()`` dict), read at
    ``pos`` in its session file (through ``fd`` when the caller has it open: see
    ``open_session``); None when the file or the message is gone (forgotten). A position
    that does not hold ``uuid`` (never expected: files are append-only) falls back to
    scanning the file."""
    path = os.path.join(root, session_relpath(project, session_id))
    own = fd is None
    if own:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
    try:
        rec = parse_record(_line_at(fd, pos)) if pos >= 0 else None
    except OSError:
        rec = None
    finally:
        if own:
            os.close(fd)
    if rec is not None and rec.get("uuid") == uuid:
        return rec
    for _, rec in iter_lines(path):
        if rec.get("uuid") == uuid:
            return rec
    return None


def open_session(root: Path, project: str, session_id: str) -> int | None:
    """A read-only descriptor of a session's archive file (None when it is gone): for the
    readers here that take ``fd``, which then leave closing it to the caller."""
    try:
        return os.open(os.path.join(root, session_relpath(project, session_id)), os.O_RDONLY)
    except OSError:
        return None


def lines_after(
    root: Path, project: str, session_id: str, pos: int, *, max_bytes: int = 1 << 18, fd: int | None = None
):
    """The raw lines (JSON, no newline) written after the line at ``pos`` in a session's
    archive file, in order, from at most ``max_bytes``: what followed a message. Read in
    growing chunks (8 KB first: a reply is usually near) as the caller consumes them."""
    own = fd is None
    if own:
        fd = open_session(root, project, session_id)
    if fd is None or pos < 0:
        return
    try:
        offset, size, rest, first = pos, READ_CHUNK, b"", True
        while offset - pos < max_bytes:
            try:
                chunk = os.pread(fd, size, offset)
            except OSError:
                return
            if not chunk:
                return  # the end (a last line without its newline is not whole)
            offset += len(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()  # no newline yet: the start of a line read further on
            if first and lines:
                lines = lines[1:]  # the message itself (once its newline is read)
                first = False
            yield from lines
            size = min(size * 4, 1 << 16)
    finally:
        if own:
            os.close(fd)


def last_line_before(
    root: Path,
    project: str,
    session_id: str,
    pos: int,
    needle: bytes,
    *,
    max_bytes: int = 1 << 16,
    fd: int | None = None,
):
    """The raw lines holding ``needle`` written before the line at ``pos`` in a session's
    archive file, nearest first, from at most ``max_bytes`` before it: found with
    ``bytes.rfind`` over chunks read backwards (the lines between are never split or parsed)."""
    own = fd is None
    if own:
        fd = open_session(root, project, session_id)
    if fd is None:
        return
    try:
        # buf = file[start:pos]; buf[:limit] is still to search (beyond it: searched, or used)
        buf, start, size, limit = b"", max(pos, 0), READ_CHUNK, 0
        while True:
            p = buf.rfind(needle, 0, limit) if limit else -1
            if p >= 0:
                line_start = buf.rfind(b"\n", 0, p) + 1
                if line_start > 0 or start == 0:  # the whole line is in buf
                    end = buf.find(b"\n", p)
                    yield buf[line_start : end if end >= 0 else len(buf)]
                    limit = line_start
                    continue
                limit = p + len(needle)  # that line starts further back: read on, search up to it
            else:
                limit = min(limit, len(needle))  # nothing in buf[:limit] but a needle cut at its start
            if start == 0 or pos - start >= max_bytes:
                return
            new_start = max(0, start - size)
            try:
                chunk = os.pread(fd, start - new_start, new_start)
            except OSError:
                return
            buf = chunk + buf
            limit += len(chunk)
            start = new_start
            size = min(size * 4, 1 << 16)
    finally:
        if own:
            os.close(fd)
