"""Where the archive keeps a message, and reading it back from there.

A message's archive file is ``sessions/<project_slug(project)>/<session_filename(session)>``
under the archive root, and its *position* is the byte offset of its line in that file.
Archive files are only ever appended to or deleted whole (``recall forget``), so a position
stays valid for as long as the message exists; the index stores it (field ``apos``)
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
def _relative(project: str, session_id: str) -> str:
    return f"sessions/{project_slug(project)}/{session_filename(session_id)}"


def parse_line(raw: bytes) -> dict | None:
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
            rec = parse_line(raw)
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
            return out + chunk[:i + 1]
        out += chunk
        size = min(size * 2, 1 << 20)


def read_message(root: Path, project: str, session_id: str, pos: int, uuid: str) -> dict | None:
    """The archived record of message ``uuid`` (a ``Message.to_record()`` dict), read at
    ``pos`` in its session file; None when the file or the message is gone (forgotten).
    A position that does not hold ``uuid`` (never expected: files are append-only) falls
    back to scanning the file."""
    path = os.path.join(root, _relative(project, session_id))
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        rec = parse_line(_line_at(fd, pos)) if pos >= 0 else None
    except OSError:
        rec = None
    finally:
        os.close(fd)
    if rec is not None and rec.get("uuid") == uuid:
        return rec
    for _, rec in iter_lines(path):
        if rec.get("uuid") == uuid:
            return rec
    return None


def _open_session(root: Path, project: str, session_id: str) -> int | None:
    try:
        return os.open(os.path.join(root, _relative(project, session_id)), os.O_RDONLY)
    except OSError:
        return None


def read_after(root: Path, project: str, session_id: str, pos: int, *, max_records: int = 40,
               max_bytes: int = 1 << 16):
    """The records written after the line at ``pos`` in a session's archive file, in order
    (at most ``max_records``, read from at most ``max_bytes``): what followed a message."""
    fd = _open_session(root, project, session_id)
    if fd is None or pos < 0:
        return
    try:
        data = os.pread(fd, max_bytes, pos)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    # lines[0] is the message itself; the last piece has no newline (cut or partial)
    for raw in lines[1:-1][:max_records]:
        rec = parse_line(raw)
        if rec is not None:
            yield rec


def read_before(root: Path, project: str, session_id: str, pos: int, *, max_records: int = 40,
                max_bytes: int = 1 << 16):
    """The records written before the line at ``pos`` in a session's archive file, nearest
    first (at most ``max_records``, read from at most ``max_bytes``): what led to a message."""
    fd = _open_session(root, project, session_id)
    if fd is None or pos <= 0:
        if fd is not None:
            os.close(fd)
        return
    start = max(0, pos - max_bytes)
    try:
        data = os.pread(fd, pos - start, start)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first piece may start mid-line
    # data ends with the newline before ``pos``: the last piece is empty
    for raw in reversed(lines[:-1][-max_records:]):
        rec = parse_line(raw)
        if rec is not None:
            yield rec
