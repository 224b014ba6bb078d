"""The durable archive: every message recall indexed, already redacted, kept under
``$RECALL_HOME/archive`` so history survives Claude Code deleting old transcripts
(it removes files older than 30 days by default).

Layout (directories 0700, files 0600)::

    archive/
      FORMAT                          archive format version
      sessions/<project-slug>/
        project                       the project path, as indexed
        <session-id>.jsonl            append-only, one ``Message.to_record()`` per line
      memory.jsonl                    append-only log of memory documents:
                                      {"op": "upsert", "doc": {...}} | {"op": "delete", "key": "mem:<id>"}
      forgotten.json                  tombstones written by ``recall forget``
      REDACTION                       the version of the redaction rules the archive was
                                      written under, and a re-redaction pass under way
                                      (``indexer.reredact_archive``)

* Appends go through ``Archive.store``: records are grouped per (project, session)
  file and written with one ``write`` each (O_APPEND). A uuid already in a file is not
  written again, so re-reading a transcript (truncation, replacement, a restart after
  ``kill -9``) never duplicates it; the uuids of recently touched files are cached
  (bounded by ``UUID_CACHE`` entries in total), older files are re-read on demand.
* ``store`` returns each message's *position*, the byte offset of its line: the index
  keeps it instead of the text, and the searcher reads the text back at that offset
  (``indexer.archive_files``). Files are only appended to or deleted whole, except by
  ``indexer.forgetting`` (``recall forget --match/--before/--secret``), which rewrites a
  session's file and re-indexes that session at the new positions in the same step, and
  ``indexer.reredact_archive`` (the pass that re-redacts history stored under older rules), which
  does the same for the messages of a file the current rules change.
* A write cut short by ``kill -9`` leaves at most a partial last line: the reader skips
  lines that do not parse, the next append first truncates the file to its last newline.
* ``replay_positions()`` streams everything back as batches of ``Message`` with their
  positions (the rebuild path), redacted again when the archive is of older rules;
  ``memory_docs()`` folds the memory log into the current memory documents.
* ``forget_session`` / ``forget_project`` record a tombstone (``forgotten.json``), then
  delete from the archive: messages of that session/project dated up to the moment of
  forgetting are never indexed or archived again, even by a rebuild that re-reads a
  transcript Claude Code still keeps. Later messages (a resumed session, new work in the
  project) are indexed as usual. ``recall forget`` itself goes through
  ``indexer.forgetting`` (an intent, then every store).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import OrderedDict
from pathlib import Path
from typing import Iterable, Iterator

try:
    import orjson

    def _dumps(obj) -> bytes:
        return orjson.dumps(obj)

    _NO_TOUCHES = b',"touched":[]}'
    _CLAUDE_CODE = b',"agent":"claude-code"}'  # the default agent, left out as ``to_record`` does

    def dump_message(m) -> bytes:
        """A Message (dataclass) as its ``to_record()`` dict; one without touches (most) is
        written as before touches existed, one of Claude Code's as before other agents were
        (``Message.from_record`` reads both)."""
        raw = orjson.dumps(m)
        if raw.endswith(_CLAUDE_CODE):
            raw = raw[: -len(_CLAUDE_CODE)] + b"}"
        return raw[: -len(_NO_TOUCHES)] + b"}" if raw.endswith(_NO_TOUCHES) else raw
except ImportError:  # pragma: no cover

    def _dumps(obj) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def dump_message(m) -> bytes:
        return _dumps(m.to_record())


from indexer.archive_files import iter_lines, project_slug, session_filename
from indexer.message import Message
from indexer.reredact_archive import mark_version, redact_file
from indexer.reredact_archive import pending as redaction_pending
from recall.core.paths import atomic_write, ensure_dir

__all__ = ["Archive", "Tombstones", "project_slug", "session_filename"]

FORMAT = 1
UUID_CACHE = 100_000  # uuids kept in memory for de-duplication, over all cached files
REPLAY_BATCH = 2_000  # messages per replayed batch


SYNC_FILES = 32


def _write_small(path: Path, data: bytes) -> None:
    """tmp + rename (never a half-written file), without the fsync of atomic_write: a
    lost file is rewritten by the next append."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _open_append(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def _heal_tail(path: Path) -> None:
    """Cut a partial last line (a write interrupted by kill -9) so appends start clean."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        # find the last newline, reading backwards in blocks
        pos = size
        keep = 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            fh.seek(pos)
            block = fh.read(step)
            i = block.rfind(b"\n")
            if i >= 0:
                keep = pos + i + 1
                break
        fh.truncate(keep)


def _iter_records(path: Path) -> Iterator[dict]:
    for _, rec in iter_lines(path):
        yield rec


class Tombstones:
    """What ``recall forget`` removed, so that re-reading a transcript (or a rebuild) never
    brings it back::

        {"sessions": {id: at}, "projects": {path: at},   # whole sessions / projects, up to ``at``
         "before": {"*" | project: ts},                   # every message dated before ``ts``
         "messages": [uuid, ...],                         # single messages (--match)
         "rewritten": [uuid, ...],                        # messages kept with a secret cut out
                                                          # (--secret): the archive holds them
         "dropped": [session id, ...],                    # sessions switched off (recall: off),
                                                          # already removed from every store
         "rules": [{...}, ...]}                           # --match/--secret as standing rules:
                                                          # lines archived later (indexer.forget_rules)
    """

    def __init__(self, path: Path) -> None:
        from indexer.ledger import read_tombstones

        self.path = path
        d = read_tombstones(path)
        self.sessions: dict[str, float] = d["sessions"]
        self.projects: dict[str, float] = d["projects"]
        self.before: dict[str, float] = d["before"]
        self.messages: set[str] = d["messages"]
        self.rewritten: set[str] = d["rewritten"]
        self.dropped: set[str] = d["dropped"]
        from indexer.forget_rules import load
        from recall.core.jsonio import read_json

        self.rules = load(read_json(path, {}, dict))

    def __bool__(self) -> bool:
        return bool(self.sessions or self.projects or self.before or self.messages or self.rewritten or self.rules)

    def covers(self, m: Message, replay: bool = False) -> bool:
        """Whether ``m`` was forgotten. ``replay``: ``m`` comes from the archive, where a
        rewritten message is already in its rewritten form (a transcript still has the original).
        A forgotten project covers its messages by identity, not by name (``indexer.ledger.
        forgotten``, which the readers' gate shares): a removed worktree, a ``git init`` above it."""
        from indexer.ledger import forgotten

        return forgotten(self, m.session_id, m.project, m.cwd, m.uuid, m.timestamp, replay)

    def covers_doc(self, project: str) -> bool:
        return project in self.projects

    def add(
        self,
        session: str | None = None,
        project: str | None = None,
        *,
        before: float | None = None,
        before_project: str | None = None,
        messages=(),
        rewritten=(),
        dropped=(),
        rules=(),
    ) -> None:
        now = time.time()
        if session:
            self.sessions[session] = now
        if project:
            self.projects[project] = now
        if before is not None:
            key = before_project or "*"
            self.before[key] = max(self.before.get(key, 0.0), float(before))
        self.messages.update(str(u) for u in messages if u)
        self.rewritten.update(str(u) for u in rewritten if u)
        self.dropped.update(str(s) for s in dropped if s)
        self.rules.extend(rules)
        self._write()

    def upgrade_rules(self, found: list) -> int:
        """Replace each legacy rule of ``found`` ((rule, the text it caught), from
        ``indexer.forget_rules.apply_many``) by a keyed rule of the same text and scope; how
        many changed."""
        from indexer.forget_rules import Rule

        texts = {id(r): text for r, text in found if r.legacy is not None and r.legacy.same(text)}
        changed = 0
        for i, r in enumerate(self.rules):
            text = texts.get(id(r))
            if text is None:
                continue
            new = Rule.of(r.kind, text, sessions=r.sessions, project=r.project, before=r.before)
            new.at = r.at
            self.rules[i] = new
            changed += 1
        if changed:
            self._write()
        return changed

    def strip_linear(self) -> bool:
        """Rewrite the file without the rolling hashes legacy rules no longer need (the linear
        part a text can be solved back from); whether it changed."""
        from recall.core.jsonio import read_json

        raw = read_json(self.path, {}, dict).get("rules") or []
        if not any(isinstance(d, dict) and "rolling" in d and d.get("ends") for d in raw):
            return False
        self._write()
        return True

    def _write(self) -> None:
        atomic_write(
            self.path,
            json.dumps(
                {
                    "sessions": self.sessions,
                    "projects": self.projects,
                    "before": self.before,
                    "messages": sorted(self.messages),
                    "rewritten": sorted(self.rewritten),
                    "dropped": sorted(self.dropped),
                    "rules": [r.as_json() for r in self.rules],
                },
                indent=1,
            ),
        )


def _last_timestamp(path: Path) -> float:
    """The timestamp of the last complete record of an archive file (0 when none is read)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - 65536))
            tail = fh.read()
    except OSError:
        return 0.0
    for line in reversed(tail.split(b"\n")):
        if not line.strip():
            continue
        try:
            return float(json.loads(line).get("timestamp") or 0.0)
        except (ValueError, TypeError, AttributeError):
            continue  # the cut first line of the tail, or a damaged one
    return 0.0


def newest_first(files: list[Path]) -> list[Path]:
    """Archive session files ordered by their last message's time, newest first (a file's
    modification time says when it was written, which a backfill does newest first)."""
    return sorted(files, key=lambda p: (-_last_timestamp(p), str(p)))


class Archive:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.sessions_dir = root / "sessions"
        self.memory_log = root / "memory.jsonl"
        ensure_dir(self.sessions_dir)
        fmt = root / "FORMAT"
        if not fmt.exists():
            atomic_write(fmt, f"{FORMAT}\n")
            mark_version(root)  # a new archive: written under the current redaction rules
        self.tombstones = Tombstones(root / "forgotten.json")
        self._uuids: OrderedDict[Path, dict[str, int]] = OrderedDict()  # uuid -> position
        self._cached = 0
        self._healed: set[Path] = set()
        self._known_dirs: set[Path] = set()
        self.touched: set[Path] = set()
        self.written = 0

    # paths ---------------------------------------------------------------------------
    def _project_dir(self, project: str) -> Path:
        d = self.sessions_dir / project_slug(project)
        if d not in self._known_dirs:
            if not (d / "project").exists():
                ensure_dir(d)
                _write_small(d / "project", project.encode("utf-8", "surrogateescape"))
            self._known_dirs.add(d)
        return d

    def session_files(self) -> list[Path]:
        if not self.sessions_dir.is_dir():
            return []
        return sorted(self.sessions_dir.glob("*/*.jsonl"))

    # de-duplication ------------------------------------------------------------------
    def _positions(self, path: Path) -> dict[str, int]:
        """uuid -> position (offset of its line) of every message archived in ``path``."""
        known = self._uuids.get(path)
        if known is not None:
            self._uuids.move_to_end(path)
            return known
        if path not in self._healed:
            _heal_tail(path)
            self._healed.add(path)
        known = {str(rec.get("uuid")): pos for pos, rec in iter_lines(path)}
        self._uuids[path] = known
        self._cached += len(known)
        self._evict()
        return known

    def _evict(self) -> None:
        while self._cached > UUID_CACHE and len(self._uuids) > 1:
            _, old = self._uuids.popitem(last=False)
            self._cached -= len(old)

    # writing -------------------------------------------------------------------------
    def store(self, messages: list[Message]) -> list[int]:
        """Archive the messages not archived yet; returns every message's position in its
        session file (where it was written, or where it already was), in order."""
        groups: dict[tuple[str, str], list[int]] = {}
        for i, m in enumerate(messages):
            groups.setdefault((m.project, m.session_id), []).append(i)
        positions = [0] * len(messages)
        written = 0
        for (project, session_id), idxs in groups.items():
            path = self._project_dir(project) / session_filename(session_id)
            known = self._positions(path)
            out: list[bytes] = []
            new: list[tuple[int, int]] = []  # (message index, offset within this write)
            size = 0
            for i in idxs:
                uuid = messages[i].uuid
                pos = known.get(uuid)
                if pos is not None:
                    positions[i] = pos
                    continue
                known[uuid] = -1  # a repeat within this batch: resolved below
                line = dump_message(messages[i]) + b"\n"
                new.append((i, size))
                out.append(line)
                size += len(line)
            if not out:
                continue
            self._cached += len(new)
            try:
                fd = _open_append(path)
                try:
                    base = os.fstat(fd).st_size  # the only writer (writer.lock): appends land here
                    view = memoryview(b"".join(out))
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                finally:
                    os.close(fd)
            except BaseException:
                # re-read from disk next time: a partial line is cut first, and what was not
                # written is written then
                self._drop_cache(path)
                raise
            for i, off in new:
                known[messages[i].uuid] = positions[i] = base + off
            for i in idxs:
                positions[i] = known[messages[i].uuid]
            self.touched.add(path)
            written += len(new)
        self.written += written
        self._evict()
        return positions

    def append(self, messages: Iterable[Message]) -> int:
        """Archive messages not archived yet; returns how many were written."""
        before = self.written
        self.store(list(messages))
        return self.written - before

    def sync(self) -> None:
        """Flush what was appended since the last sync to disk (clean shutdown, end of a
        run). Appends survive ``kill -9`` without it (they are in the page cache); this is
        for power loss. Many files (a backfill): one ``sync()`` instead of an fsync each."""
        if len(self.touched) > SYNC_FILES:
            os.sync()
            self.touched.clear()
            return
        for path in list(self.touched):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            except OSError:
                pass
            finally:
                os.close(fd)
        self.touched.clear()

    # reading -------------------------------------------------------------------------
    def replay(self, batch: int = REPLAY_BATCH) -> Iterator[list[Message]]:
        """Every archived message, streamed in batches (bounded memory)."""
        for messages, _ in self.replay_positions(batch):
            yield messages

    def replay_positions(self, batch: int = REPLAY_BATCH) -> Iterator[tuple[list[Message], list[int]]]:
        """``replay`` with each message's position in its session file (the rebuild path), the
        sessions whose last message is newest first: a rebuild makes them searchable first."""
        out: list[Message] = []
        where: list[int] = []
        redact_again = redaction_pending(self.root)
        for path in newest_first(self.session_files()):
            for pos, m in self._replay_file(path, redact_again):
                if not m.uuid or self.tombstones.covers(m, replay=True):
                    continue
                out.append(m)
                where.append(pos)
                if len(out) >= batch:
                    yield out, where
                    out, where = [], []
        if out:
            yield out, where

    def _replay_file(self, path: Path, redact_again: bool) -> Iterator[tuple[int, Message]]:
        """``(position, message)`` of one session file. ``redact_again``: the archive was written
        under older redaction rules, so each message goes through the current ``redact()``
        and a file where that changes something is rewritten first (``indexer.reredact_archive``): a
        rebuild never brings back what the current rules redact."""
        if redact_again:
            self._drop_cache(path)
            res = redact_file(path)
            yield from zip(res.positions, res.messages)
            return
        for pos, rec in iter_lines(path):
            try:
                yield pos, Message.from_record(rec)
            except (TypeError, ValueError):
                continue

    def count(self) -> int:
        """Messages archived: complete lines over every session file (newlines counted a
        megabyte at a time; ~1 s for a million messages)."""
        n = 0
        for path in self.session_files():
            try:
                with open(path, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        n += chunk.count(b"\n")
            except FileNotFoundError:  # forgotten meanwhile
                continue
        return n

    def distinct_messages(self) -> int:
        """Messages archived, each uuid once: a message whose project changed between two
        reads (a ``git init`` in its folder, then a rebuild) is in two session files but one
        document. Parses every line (seconds for a million): ``recall doctor`` asks only when
        ``count`` shows a gap."""
        seen: set[int] = set()
        for path in self.session_files():
            for _, rec in iter_lines(path):
                uuid = rec.get("uuid")
                if uuid and not self.tombstones.covers(Message.from_record(rec)):
                    seen.add(hash(uuid))
        return len(seen)

    def stats(self) -> dict:
        files = self.session_files()
        size = 0
        for p in files:
            try:
                size += p.stat().st_size
            except OSError:
                pass
        return {"sessions": len(files), "bytes": size}

    # memory documents ----------------------------------------------------------------
    def log_memory(self, upserts: list[dict] = (), deletes: list[str] = ()) -> None:
        lines = [_dumps({"op": "upsert", "doc": d}) + b"\n" for d in upserts]
        lines += [_dumps({"op": "delete", "key": k}) + b"\n" for k in deletes]
        if not lines:
            return
        if self.memory_log not in self._healed:
            _heal_tail(self.memory_log)
            self._healed.add(self.memory_log)
        fd = _open_append(self.memory_log)
        try:
            os.write(fd, b"".join(lines))
        finally:
            os.close(fd)
        self.touched.add(self.memory_log)

    def memory_docs(self) -> dict[str, dict]:
        """The current memory documents by key ("mem:<id>"), folded from the log."""
        docs: dict[str, dict] = {}
        for rec in _iter_records(self.memory_log):
            if rec.get("op") == "upsert" and isinstance(rec.get("doc"), dict):
                doc = rec["doc"]
                docs["mem:" + str(doc.get("id"))] = doc
            elif rec.get("op") == "delete":
                docs.pop(str(rec.get("key")), None)
        return docs

    def compact_memory(self, keep=lambda doc: True) -> int:
        """Rewrite the memory log as its current documents (dropping those ``keep`` rejects).

        Returns how many documents were dropped."""
        if not self.memory_log.exists():
            return 0
        docs = self.memory_docs()
        kept = [d for d in docs.values() if keep(d)]
        atomic_write(self.memory_log, b"".join(_dumps({"op": "upsert", "doc": d}) + b"\n" for d in kept))
        self._healed.discard(self.memory_log)
        return len(docs) - len(kept)

    # forgetting ----------------------------------------------------------------------
    def _drop_cache(self, path: Path) -> None:
        s = self._uuids.pop(path, None)
        if s is not None:
            self._cached -= len(s)
        self._healed.discard(path)
        self.touched.discard(path)

    def forget_session(self, session_id: str) -> int:
        """Delete a session's archived messages (every project). Returns messages removed."""
        removed = 0
        name = session_filename(session_id)
        self.tombstones.add(session=session_id)  # first: a crash after it brings nothing back
        for path in sorted(self.sessions_dir.glob(f"*/{name}")):
            with open(path, "rb") as fh:
                removed += sum(1 for raw in fh if raw.endswith(b"\n"))
            path.unlink()
            self._drop_cache(path)
        return removed

    def forget_project(self, project: str) -> int:
        """Delete a project's archived messages and memory documents. Returns messages removed."""
        removed = 0
        d = self.sessions_dir / project_slug(project)
        self.tombstones.add(project=project)  # first: a crash after it brings nothing back
        if d.is_dir():
            for path in d.glob("*.jsonl"):
                with open(path, "rb") as fh:
                    removed += sum(1 for raw in fh if raw.endswith(b"\n"))
                self._drop_cache(path)
            shutil.rmtree(d)
        self._known_dirs.discard(d)
        self.compact_memory(keep=lambda doc: str(doc.get("project") or "") != project)
        return removed

    def projects(self) -> list[str]:
        out = []
        for d in sorted(self.sessions_dir.glob("*/project")):
            try:
                out.append(d.read_text(encoding="utf-8"))
            except OSError:
                pass
        return out
