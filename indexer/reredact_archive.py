"""Re-redacting stored history when the redaction rules improve (the ingest side).

Messages are redacted once, before anything is stored (``indexer.redact``). When the rules
learn a format, what was stored under the old rules keeps whatever they let through. The
archive records the version of the rules its messages were redacted with
(``indexer.redact.REDACTION_VERSION``) in ``archive/REDACTION``::

    {"version": 2}                                 # every stored message redacted by version 2
    {"version": 1, "pass": {"to": 2, "stage": "messages", "after": "<file>", "working": [...],
                            "files_done": n, "files_total": n, "messages": n, "rewritten": n,
                            "started": ts}}          # a pass under way (resumable)

An archive from before versions were recorded is version 1. When the version is older than
the rules, a *pass* re-redacts everything once, on the index writer (the service runs it a
slice at a time between its other work; ``recall index`` runs it whole):

1. ``messages``: every archive file, in order, each message through the current ``redact()``
   again; a file where something changed is rewritten (tmp + rename, 0600, every other byte
   kept) and its messages' index documents are replaced at their new positions; the session
   facts in state.db a changed message fed (first prompt, summaries, files) are rewritten.
   ``after`` (the last file done) advances only after the commit that holds the new
   documents; a file whose rewrite is not committed yet is listed in ``working`` first, so
   after a ``kill -9`` it is re-indexed even though its rewrite already happened.
2. ``facts``: every session's facts in state.db, and the archive's memory log (the memory
   documents a rebuild replays), redacted again; state.db is then vacuumed, so the old
   facts' bytes do not linger in its free pages or its WAL.
3. the memories of each project (``.memory/state.json``, their documents, the CLAUDE.md block)
   are the caller's step (``recall.privacy.redaction_pass``): this floor does not know them.

This module holds the recorded version and the pass's work on one archive file (the archive
uses it while replaying); ``indexer.reredact_stages`` holds the steps on the index writer.

Every step is idempotent (``redact(redact(x)) == redact(x)``), upserts by key and rewrites
atomically: an interrupted pass loses and duplicates nothing and simply goes on. A rebuild
that replays an archive of an older version redacts while replaying
(``Archive.replay_positions``), so it never brings back what the current rules redact.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

from indexer.redact import REDACTION_VERSION, redact
from recall.core import paths
from recall.core.jsonio import read_json

# The archive's reader, the transcript records and orjson are imported by the pass itself:
# ``recall status`` reads the recorded version (``progress``) without them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from indexer.message import Message


def _dumps(obj) -> bytes:
    try:
        import orjson
    except ImportError:  # pragma: no cover
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return orjson.dumps(obj)


STATE_NAME = "REDACTION"
STEP_SECONDS = 0.2  # the service's slice of the pass between its other work


# the recorded version ------------------------------------------------------------------------------
def state_path(root: Path) -> Path:
    return root / STATE_NAME


def read_state(root: Path) -> dict:
    """``{"version": n, "pass": {...} | None}``; an archive that predates the record is version 1,
    a home with no archive holds nothing to re-redact (the current version)."""
    data = read_json(state_path(root), {}, dict)
    if isinstance(data.get("version"), int):
        return data
    return {"version": 1 if (root / "FORMAT").exists() else REDACTION_VERSION}


def _write_state(root: Path, data: dict, durable: bool = False) -> None:
    raw = json.dumps(data, indent=1).encode("utf-8")
    if durable:
        paths.atomic_write(state_path(root), raw)
        return
    # tmp + rename without fsync: the pass records its progress after every slice, and a lost
    # record only repeats idempotent work
    tmp = root / f".{STATE_NAME}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, raw)
    finally:
        os.close(fd)
    os.replace(tmp, state_path(root))


def mark_version(root: Path, version: int = REDACTION_VERSION) -> None:
    """Record that every message stored under ``root`` was redacted by rules ``version``."""
    _write_state(root, {"version": int(version)}, durable=True)


def stored_version(root: Path) -> int:
    return int(read_state(root)["version"])


def pending(root: Path) -> bool:
    """Whether stored history was redacted by older rules than the current ones."""
    return stored_version(root) < REDACTION_VERSION


def progress(root: Path) -> dict | None:
    """The pass under way (for ``recall status``), or None."""
    st = read_state(root)
    if st["version"] >= REDACTION_VERSION:
        return None
    p = dict(st.get("pass") or {})
    p.setdefault("stage", "waiting")
    p["from"] = st["version"]
    p["to"] = REDACTION_VERSION
    return p


def begin(root: Path) -> dict | None:
    """The state of the pass to run (started now when none is under way), or None when the
    stored history is current."""
    st = read_state(root)
    if st["version"] >= REDACTION_VERSION:
        return None
    p = st.get("pass")
    if not isinstance(p, dict) or p.get("to") != REDACTION_VERSION:
        st["pass"] = {
            "to": REDACTION_VERSION,
            "stage": "messages",
            "after": "",
            "working": [],
            "files_done": 0,
            "files_total": 0,
            "messages": 0,
            "rewritten": 0,
            "started": time.time(),
        }
        _write_state(root, st, durable=True)
    return st


def save(root: Path, st: dict) -> None:
    _write_state(root, st)


def finish(root: Path, st: dict) -> dict:
    """The pass is done: the stored history is current. Returns its figures."""
    p = dict(st.get("pass") or {})
    done = {k: p.get(k, 0) for k in ("files_done", "messages", "rewritten", "sessions", "memories")}
    done.update(
        {
            "from": st.get("version"),
            "to": REDACTION_VERSION,
            "finished": time.time(),
            "seconds": round(time.time() - float(p.get("started") or time.time()), 1),
        }
    )
    _write_state(root, {"version": REDACTION_VERSION, "last_pass": done}, durable=True)
    return done


# one message, one archive file ------------------------------------------------------------------
def redact_message(m: Message) -> Message | None:
    """``m`` under the current rules, or None when they change nothing (text and files)."""
    text = redact(m.text)
    files = [redact(f) for f in m.files]
    touched = [
        [t[0], redact(t[1]), *t[2:3], *[redact(x) if x and t[0] != "undo" else x for x in t[3:4]]] for t in m.touched
    ]
    if text is m.text and all(a is b for a, b in zip(files, m.files)) and touched == m.touched:
        return None
    return dataclasses.replace(m, text=text, files=list(dict.fromkeys(files)), touched=touched)


@dataclasses.dataclass
class FileResult:
    messages: list[Message]  # every message of the file (current form)
    positions: list[int]  # their positions after the rewrite
    changed: list[tuple[Message, Message]]  # (as it was stored, as it is now)


def redact_file(path: Path, before_rewrite=None) -> FileResult:
    """Pass every message of an archive file through ``redact()`` again; when anything
    changes, rewrite the file (tmp + rename, 0600) with only those lines replaced (a line that
    does not parse, a partial last line, unknown fields: kept byte for byte).
    ``before_rewrite()`` runs just before the rewrite (the pass records the file as working)."""
    from indexer.archive_files import parse_record
    from indexer.message import Message

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return FileResult([], [], [])
    out: list[bytes] = []
    messages: list[Message] = []
    positions: list[int] = []
    changed: list[tuple[Message, Message]] = []
    pos = 0
    for raw in data.splitlines(keepends=True):
        rec = parse_record(raw) if raw.endswith(b"\n") else None
        m = None
        if rec is not None:
            try:
                m = Message.from_record(rec)
            except (TypeError, ValueError):
                m = None
        if m is not None and m.uuid:
            new = redact_message(m)
            if new is not None:
                raw = (
                    _dumps(
                        dict(
                            rec,
                            text=new.text,
                            files=new.files,
                            **({"touched": new.touched} if "touched" in rec else {}),
                        )
                    )
                    + b"\n"
                )
                changed.append((m, new))
                m = new
            messages.append(m)
            positions.append(pos)
        out.append(raw)
        pos += len(raw)
    if changed:
        if before_rewrite is not None:
            before_rewrite()
        paths.atomic_write(path, b"".join(out))
    return FileResult(messages, positions, changed)
