"""Reading recall's own JSON and JSONL files leniently (standard library only): a file that
is missing, unreadable, cut short or not what it should be reads as a default, never as an
error, because every such file is recall's state or cache and has a sensible empty value.

``read_json(path, default, kind)``: the JSON value in ``path``, or ``default``.
``read_jsonl(path)``: the JSON objects of a JSON Lines file, one per line, skipping the lines
that are not (a torn last line, a damaged one). ``loads_object(line)``: one line's object, or
None.

Files whose damage the user must hear about (the config, a project's state.json, rule files)
are read strictly where they are read, with their own one-line error. Writing is
``recall.core.paths.atomic_write``.
"""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing is not imported at run time: ``recall status`` reads through here)
    from typing import Any, Iterator


def read_json(path: str | Path, default: Any = None, kind: type | tuple[type, ...] | None = None) -> Any:
    """The JSON value held in ``path``; ``default`` when the file is missing or unreadable, is
    not JSON (UTF-8, with or without a byte order mark, or UTF-16/32), is nested too deep,
    or, with ``kind``, is not of that type."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return default
    if kind is not None and not isinstance(data, kind):
        return default
    return data


def loads_object(raw: str | bytes) -> dict | None:
    """The JSON object ``raw`` holds; None when it is not JSON or not an object."""
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """The JSON objects of the JSON Lines file ``path``, in order; lines that are empty, not
    JSON or not an object are skipped (bytes that are not UTF-8 read as U+FFFD). Nothing when
    the file is missing or unreadable; a read error part way ends the records there."""
    try:
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return
    with fh:
        try:
            for line in fh:
                rec = loads_object(line) if line.strip() else None
                if rec is not None:
                    yield rec
        except OSError:
            return
