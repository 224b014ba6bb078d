"""``recall forget`` on the ingest side: what a selection covers in the archive, and removing
it from the archive, the index and the offsets state, with the tombstones that keep a
re-read transcript or a rebuild from bringing it back.

A ``Selection`` is a scope (whole sessions, a project, or everything) and, optionally, what
to forget inside it: the messages dated before a moment (``before``), the messages
containing a text (``match``, case-insensitive), or a secret cut out of every message that
holds it (``secret``: the rest of the message is kept). With no ``before``/``match``/
``secret`` the whole scope is forgotten.

Archive files are rewritten only here (elsewhere they are appended to or deleted whole): a
rewritten session file gets its messages' new positions, so its index documents are
replaced in the same step.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from indexer.archive_files import iter_lines, project_slug, session_filename
from indexer.message import Message
from recall.core import paths
from recall.core.errors import UsageError
from recall.core.jsonio import read_json

SECRET_MARK = "[redacted:forgotten]"
MIN_SECRET = 4
MIN_MATCH = 2


@dataclass
class Selection:
    sessions: list[str] = field(default_factory=list)
    project: str | None = None
    before: float | None = None
    match: str | None = None
    secret: str | None = None

    @property
    def whole(self) -> bool:
        """No before/match/secret: the whole scope goes."""
        return self.before is None and self.match is None and self.secret is None

    def check(self) -> "Selection":
        if self.whole and not self.sessions and not self.project:
            raise UsageError(
                "Say what to forget: --session ID, --project PATH, --before DATE, "
                "--match TEXT or --secret VALUE (see `recall forget --help`)."
            )
        if self.secret is not None and (self.before is not None or self.match is not None):
            raise UsageError(
                "--secret cuts a value out of every message and keeps the rest: "
                "run it on its own, not with --before or --match."
            )
        if self.secret is not None and len(self.secret.strip()) < MIN_SECRET:
            raise UsageError(
                f"--secret needs the value itself ({MIN_SECRET} characters or more): "
                "a shorter one would cut ordinary words out of your history."
            )
        if self.match is not None and len(self.match.strip()) < MIN_MATCH:
            raise UsageError(f"--match needs a text of {MIN_MATCH} characters or more.")
        return self

    def as_args(self) -> dict:
        return {
            k: v
            for k, v in (
                ("sessions", self.sessions),
                ("project", self.project),
                ("before", self.before),
                ("match", self.match),
                ("secret", self.secret),
            )
            if v
        }

    @classmethod
    def from_args(cls, args: dict) -> "Selection":
        sessions = args.get("sessions") or ([args["session"]] if args.get("session") else [])
        before = args.get("before")
        try:
            before = float(before) if before is not None else None
        except (TypeError, ValueError):
            raise UsageError("'before' must be seconds since the epoch.") from None
        return cls(
            sessions=[str(s) for s in sessions],
            project=args.get("project") or None,
            before=before,
            match=args.get("match") or None,
            secret=args.get("secret") or None,
        ).check()

    # what a message is to this selection --------------------------------------------------------
    def drops(self, m: Message) -> bool:
        if self.secret is not None:
            return False
        if self.whole:
            return True
        if self.before is not None and not (m.timestamp and m.timestamp < self.before):
            return False
        if self.match is not None and self.match.casefold() not in m.text.casefold():
            return False
        return True

    def rewrite(self, m: Message) -> Message | None:
        """``m`` with the secret cut out, or None when it does not hold it."""
        s = self.secret
        if s is None or not (
            s in m.text or s in m.cwd or any(s in f for f in m.files) or any(s in x for t in m.touched for x in t)
        ):
            return None
        return Message(
            uuid=m.uuid,
            session_id=m.session_id,
            project=m.project,
            cwd=m.cwd.replace(s, SECRET_MARK),
            branch=m.branch.replace(s, SECRET_MARK),
            role=m.role,
            timestamp=m.timestamp,
            text=m.text.replace(s, SECRET_MARK),
            tools=list(m.tools),
            files=[f.replace(s, SECRET_MARK) for f in m.files],
            source=m.source,
            touched=[[x.replace(s, SECRET_MARK) for x in t] for t in m.touched],
        )


@dataclass
class FileOutcome:
    path: Path
    session_id: str
    project: str
    kept: list[Message]
    dropped: list[Message]
    rewritten: list[Message]

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.rewritten)

    @property
    def emptied(self) -> bool:
        return not self.kept


def _files(archive_root: Path, sel: Selection) -> list[Path]:
    sessions_dir = archive_root / "sessions"
    if not sessions_dir.is_dir():
        return []
    if sel.sessions:
        files = [p for sid in sel.sessions for p in sessions_dir.glob(f"*/{session_filename(sid)}")]
        if sel.project:
            files = [p for p in files if p.parent.name == project_slug(sel.project)]
        return sorted(set(files))
    if sel.project:
        return sorted((sessions_dir / project_slug(sel.project)).glob("*.jsonl"))
    return sorted(sessions_dir.glob("*/*.jsonl"))


def scan_file(path: Path, sel: Selection) -> FileOutcome:
    """What ``sel`` does to one archive file (nothing is changed)."""
    kept, dropped, rewritten = [], [], []
    sid = project = ""
    for _, rec in iter_lines(path):
        try:
            m = Message.from_record(rec)
        except (TypeError, ValueError):
            continue
        sid, project = sid or m.session_id, project or m.project
        if sel.drops(m):
            dropped.append(m)
            continue
        r = sel.rewrite(m)
        if r is not None:
            rewritten.append(r)
            kept.append(r)
        else:
            kept.append(m)
    return FileOutcome(path, sid or path.stem, project, kept, dropped, rewritten)


def scan(archive_root: Path, sel: Selection) -> list[FileOutcome]:
    """What ``sel`` does to each archive file it touches (nothing is changed)."""
    out = []
    for path in _files(archive_root, sel):
        o = scan_file(path, sel)
        if o.changed:
            out.append(o)
    return out


def plan(archive_root: Path, sel: Selection) -> dict:
    """What forgetting ``sel`` removes from the archive: sessions and messages."""
    totals = _Totals()
    for path in _files(archive_root, sel):
        totals.add(scan_file(path, sel), archive_root, keep_uuids=False)
    return totals.summary()


class _Totals:
    """What a selection covers, one archive file at a time (no file's messages kept)."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.sessions: set[str] = set()
        self.emptied: set[str] = set()
        self.projects: set[str] = set()
        self.messages = self.rewritten = 0
        self.dropped_uuids: list[str] = []
        self.rewritten_uuids: list[str] = []

    def add(self, o: FileOutcome, root: Path, keep_uuids: bool = True) -> None:
        if not o.changed:
            return
        self.files.append(str(o.path.relative_to(root)))
        self.sessions.add(o.session_id)
        if o.emptied:
            self.emptied.add(o.session_id)
        if o.project:
            self.projects.add(o.project)
        self.messages += len(o.dropped)
        self.rewritten += len(o.rewritten)
        if keep_uuids:
            self.dropped_uuids += [m.uuid for m in o.dropped]
            self.rewritten_uuids += [m.uuid for m in o.rewritten]

    def summary(self) -> dict:
        return {
            "sessions": sorted(self.sessions),
            "emptied": sorted(self.emptied),
            "projects": sorted(self.projects),
            "messages": self.messages,
            "rewritten": self.rewritten,
        }


def _write_records(path: Path, messages: list[Message]) -> list[int]:
    """Rewrite an archive file (tmp + rename, 0600) with ``messages``; their new positions."""
    from indexer.archive import dump_message

    lines = [dump_message(m) + b"\n" for m in messages]
    positions, pos = [], 0
    for line in lines:
        positions.append(pos)
        pos += len(line)
    paths.atomic_write(path, b"".join(lines))
    return positions


# the intent: what a forget under way still has to do ------------------------------------------------
# ``archive/forgetting.json`` holds every forget (and every `recall: off` drop) that started and
# has not finished: written (fsync'd) before anything is removed, each step recorded as it ends,
# removed once the last step is done. A re-run, `recall index` and the service's start finish
# what it lists (``recall.privacy.forget.resume``); `recall doctor` reports it as work in progress.
#
#   [{"id": "...", "kind": "forget" | "off", "selection": Selection.as_args(), "started": ts,
#     "files": [archive files it touches, relative to archive/], "sessions": [...touched],
#     "emptied": [...sessions gone whole], "projects": [...], "memory_projects": [...],
#     "messages": n, "rewritten": n, "done": ["tombstones", "archive", ...], "result": {...}}]

INTENT_NAME = "forgetting.json"
INGEST_STEPS = ("tombstones", "archive", "index", "offsets")


def intent_path(root: Path) -> Path:
    return root / INTENT_NAME


def intents(root: Path) -> list[dict]:
    """The forgets under way (oldest first); [] when none."""
    return [
        d
        for d in read_json(intent_path(root), [], list)
        if isinstance(d, dict) and isinstance(d.get("selection"), dict)
    ]


def _save_intents(root: Path, items: list[dict]) -> None:
    path = intent_path(root)
    if items:
        paths.atomic_write(path, json.dumps(items, indent=1))
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            return
    try:  # the rename (or the unlink) itself survives a power loss
        fd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def save_intent(root: Path, intent: dict) -> None:
    """Record ``intent`` (added, or replacing the one with its id)."""
    items = intents(root)
    for i, d in enumerate(items):
        if d.get("id") == intent["id"]:
            items[i] = intent
            break
    else:
        items.append(intent)
    _save_intents(root, items)


def step_done(root: Path, intent: dict, step: str, **result) -> None:
    """Record that ``step`` of ``intent`` is done (with what it removed), then the fault point
    named after it (``recall.core.faults``: the crash tests kill the process there)."""
    from recall.core import faults

    if step not in intent["done"]:
        intent["done"].append(step)
    intent.setdefault("result", {}).update(result)
    save_intent(root, intent)
    faults.point(f"forget:{step}")


def end_intent(root: Path, intent: dict) -> None:
    _save_intents(root, [d for d in intents(root) if d.get("id") != intent["id"]])


def projects_reached(archive, sel: Selection) -> list[str]:
    """Projects whose memories the selection may reach (the archive's, and those of its
    memory documents)."""
    if sel.project:
        return [sel.project]
    found = set(archive.projects())
    found.update(str(d.get("project") or "") for d in archive.memory_docs().values())
    return sorted(p for p in found if p)


def begin(ix, sel: Selection, kind: str = "forget", memory_projects: list[str] | None = None) -> dict:
    """Plan ``sel``, record the intent (durably, before anything is removed), then the
    tombstones (so from here on nothing selected is indexed or archived again, by a re-read
    transcript or a rebuild): the intent, ready for ``run_ingest_steps``."""
    from recall.core import faults

    sel.check()
    ix.commit()
    root = ix.archive.root
    totals = _Totals()
    for path in _files(root, sel):
        totals.add(scan_file(path, sel), root)
    sessions = set(totals.sessions)
    if sel.whole:
        sessions |= set(sel.sessions)
        if sel.project and not sel.sessions:
            sessions |= set(ix.state.sessions_of_project(sel.project))
    intent = {
        "id": uuid.uuid4().hex,
        "kind": kind,
        "selection": sel.as_args(),
        "started": time.time(),
        "files": totals.files,
        "sessions": sorted(sessions),
        "emptied": sorted(totals.emptied),
        "projects": sorted(totals.projects),
        "memory_projects": sorted(
            memory_projects if memory_projects is not None else projects_reached(ix.archive, sel)
        ),
        "messages": totals.messages,
        "rewritten": totals.rewritten,
        "done": [],
        "result": {},
    }
    if sel.whole:
        intent["emptied"] = sorted(
            set(intent["emptied"]) | set(sel.sessions) | (sessions if sel.project and not sel.sessions else set())
        )
    save_intent(root, intent)
    faults.point("forget:intent")
    record_tombstones(ix, sel, intent, totals)
    step_done(root, intent, "tombstones")
    return intent


def _rescan(root: Path, intent: dict) -> _Totals:
    """The selection over the files the intent lists, again (the archive is as it was until
    its step runs, so this finds what the first scan found)."""
    sel = Selection.from_args(intent["selection"])
    totals = _Totals()
    for rel in intent.get("files") or []:
        totals.add(scan_file(root / rel, sel), root)
    return totals


def record_tombstones(ix, sel: Selection, intent: dict, totals: _Totals | None = None) -> None:
    """So that re-reading a transcript Claude Code still keeps, or a rebuild, brings nothing back."""
    t = ix.archive.tombstones
    if intent.get("kind") == "off":
        t.add(dropped=intent["sessions"])
    if sel.whole:
        if sel.project and not sel.sessions:
            t.add(project=sel.project)  # its sessions, wherever they are, by the project
        else:
            for sid in sorted(set(intent["sessions"]) | set(sel.sessions)):
                t.add(session=sid)
        return
    if sel.before is not None and not sel.sessions and not sel.match:
        t.add(before=sel.before, before_project=sel.project)
    totals = totals if totals is not None else _rescan(ix.archive.root, intent)
    rules = []
    for kind, text in (("match", sel.match), ("secret", sel.secret)):
        if text:  # what is archived later (a backfill, a session still writing) is covered too
            from indexer.forget_rules import Rule

            scope = {"sessions": sel.sessions, "project": sel.project, "before": sel.before}
            same = [r for r in t.rules if r.is_of(kind, text, **scope)]
            old = [r for r in same if r.legacy is not None]  # written before the key: replaced
            if old:
                t.rules = [r for r in t.rules if not any(r is o for o in old)]
            if len(same) == len(old):
                rules.append(Rule.of(kind, text, **scope))
    if totals.dropped_uuids or totals.rewritten_uuids or rules:
        t.add(messages=totals.dropped_uuids, rewritten=totals.rewritten_uuids, rules=rules)


def remove_from_archive(ix, intent: dict) -> None:
    """Rewrite or delete each archive file the intent lists (again: what is already done
    is found done); a whole project's folder and memory documents go with it."""
    sel = Selection.from_args(intent["selection"])
    root = ix.archive.root
    for rel in intent.get("files") or []:
        path = root / rel
        ix.archive._drop_cache(path)
        if not path.exists():
            continue
        o = scan_file(path, sel)
        if o.emptied:
            path.unlink()
        elif o.changed:
            _write_records(path, o.kept)
    if sel.whole and sel.project and not sel.sessions:
        d = root / "sessions" / project_slug(sel.project)
        for path in d.glob("*.jsonl"):
            ix.archive._drop_cache(path)
        if d.is_dir():
            shutil.rmtree(d)
        ix.archive._known_dirs.discard(d)
        ix.archive.compact_memory(keep=lambda doc: str(doc.get("project") or "") != sel.project)


def session_files(root: Path, session_id: str) -> list[Path]:
    return sorted((root / "sessions").glob(f"*/{session_filename(session_id)}"))


def remove_from_index(ix, intent: dict) -> int:
    """Replace each touched session's documents by what its archive files hold now (kept
    messages at their positions, its session document rebuilt from them); a whole project's
    documents go by project. Runs again after a crash: the result is the same. Returns the
    message documents removed."""
    import tantivy

    sel = Selection.from_args(intent["selection"])
    schema = ix.index.schema
    root = ix.archive.root
    if ix.writer is None:
        raise ix._no_writer()
    before = _count_messages(ix)
    if sel.whole and sel.project and not sel.sessions:
        ix.writer.delete_documents_by_query(
            tantivy.Query.term_query(schema, "project", sel.project, index_option="basic")
        )
        for sid in [s for s, info in ix.sessions.items() if info.project == sel.project]:
            ix.sessions.pop(sid, None)
            ix.dirty_sessions.discard(sid)
    for sid in intent.get("sessions") or []:
        q = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(schema, "session_id", sid, index_option="basic")),
                (tantivy.Occur.Must, tantivy.Query.term_set_query(schema, "doctype", ["message", "session"])),
            ]
        )
        ix.writer.delete_documents_by_query(q)
        ix.sessions.pop(sid, None)
        ix.dirty_sessions.discard(sid)
        ix.state.forget_sessions([sid])
        for path in session_files(root, sid):
            batch, positions = [], []
            for pos, rec in iter_lines(path):
                try:
                    batch.append(Message.from_record(rec))
                    positions.append(pos)
                except (TypeError, ValueError):
                    continue
            if batch:
                ix.add_messages(batch, archive=False, positions=positions)
    ix.pending_other = True
    ix.commit()
    # the semantic channel's vectors of what was touched: the job embeds what is left again
    from indexer.vectors import forget_vectors

    whole_project = sel.project if sel.whole and sel.project and not sel.sessions else None
    forget_vectors(sessions=intent.get("sessions") or [], project=whole_project)
    return max(0, before - _count_messages(ix))


def _count_messages(ix) -> int:
    import tantivy

    q = tantivy.Query.term_query(ix.index.schema, "doctype", "message", index_option="basic")
    return ix._count(q)


def remove_from_offsets(ix, intent: dict) -> int:
    """The session facts of emptied sessions (first prompt, summaries, files) leave state.db;
    transcript offsets stay, so the transcripts are not read again."""
    gone = list(intent.get("emptied") or [])
    ix.state.forget_sessions(gone)
    return len(gone)


def run_ingest_steps(ix, intent: dict) -> dict:
    """The ingest side's steps of an intent not done yet (tombstones, archive, index,
    offsets), each recorded as done; what they removed."""
    root = ix.archive.root
    done = intent.setdefault("done", [])
    if "tombstones" not in done:
        record_tombstones(ix, Selection.from_args(intent["selection"]), intent)
        step_done(root, intent, "tombstones")
    if "archive" not in done:
        remove_from_archive(ix, intent)
        step_done(root, intent, "archive")
    if "index" not in done:
        removed = remove_from_index(ix, intent)
        step_done(root, intent, "index", index=removed)
    if "offsets" not in done:
        remove_from_offsets(ix, intent)
        step_done(root, intent, "offsets")
    return outcome(intent)


def outcome(intent: dict) -> dict:
    """What an intent removed, in the shape ``recall forget`` reports."""
    res = dict(intent.get("result") or {})
    sessions = intent.get("sessions") or []
    return {
        "sessions": sessions,
        "emptied": intent.get("emptied") or [],
        "projects": intent.get("projects") or [],
        "messages": intent.get("messages", 0),
        "index": res.get("index", intent.get("messages", 0)),
        "rewritten": intent.get("rewritten", 0),
        **{k: v for k, v in res.items() if k != "index"},
    }


# session ids --------------------------------------------------------------------------------------
def known_sessions() -> set[str]:
    """Every session id recall holds or held: the archive's files, state.db's session facts,
    the session summaries, and the sessions already forgotten (forgetting one again runs
    every step again: what an older, interrupted forget left in another store goes too)."""
    from indexer.archive import Tombstones

    found: set[str] = set(Tombstones(paths.archive_dir() / "forgotten.json").sessions)
    summaries = paths.recall_home() / "summaries"
    if summaries.is_dir():
        found.update(p.stem for p in summaries.glob("*.json"))
    sessions_dir = paths.archive_dir() / "sessions"
    if sessions_dir.is_dir():
        for p in sessions_dir.glob("*/*.jsonl"):
            found.add(p.stem)
    db = paths.state_db_path()
    if db.exists():
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                found.update(r[0] for r in conn.execute("SELECT session_id FROM sessions"))
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    return found


def resolve_session(prefix: str) -> str:
    """The one session id starting with ``prefix``; UsageError for none or several."""
    prefix = (prefix or "").strip()
    if not prefix or len(prefix) > 200 or any(c in prefix for c in "/\\\0\n"):
        raise UsageError(f"{prefix!r} is not a session id: copy one from `recall --json QUERY` output.")
    known = known_sessions()
    if prefix in known:
        return prefix
    found = sorted(s for s in known if s.startswith(prefix))
    if not found:
        raise UsageError(f"No session starts with {prefix!r}: copy an id from `recall --json QUERY` output.")
    if len(found) > 1:
        raise UsageError(
            f"{prefix!r} matches {len(found)} sessions ({', '.join(f[:13] for f in found[:3])}"
            f"{', ...' if len(found) > 3 else ''}): give more characters of the id."
        )
    return found[0]


def archived_projects() -> dict[str, dict]:
    """Every project the archive holds: ``{project: {"sessions": n, "messages": n}}``."""
    out: dict[str, dict] = {}
    sessions_dir = paths.archive_dir() / "sessions"
    if not sessions_dir.is_dir():
        return out
    for d in sorted(sessions_dir.iterdir()):
        try:
            project = (d / "project").read_text(encoding="utf-8")
        except OSError:
            continue
        files = list(d.glob("*.jsonl"))
        n = 0
        for f in files:
            try:
                with open(f, "rb") as fh:
                    n += sum(1 for raw in fh if raw.endswith(b"\n"))
            except OSError:
                pass
        entry = out.setdefault(project, {"sessions": 0, "messages": 0})
        entry["sessions"] += len(files)
        entry["messages"] += n
    return out
