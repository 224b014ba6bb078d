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

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from indexer.archive_files import iter_lines, project_slug, session_filename
from indexer.transcripts import Message
from recall.core import paths
from recall.core.errors import UsageError

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
            raise UsageError("Say what to forget: --session ID, --project PATH, --before DATE, "
                             "--match TEXT or --secret VALUE (see `recall forget --help`).")
        if self.secret is not None and (self.before is not None or self.match is not None):
            raise UsageError("--secret cuts a value out of every message and keeps the rest: "
                             "run it on its own, not with --before or --match.")
        if self.secret is not None and len(self.secret.strip()) < MIN_SECRET:
            raise UsageError(f"--secret needs the value itself ({MIN_SECRET} characters or more): "
                             "a shorter one would cut ordinary words out of your history.")
        if self.match is not None and len(self.match.strip()) < MIN_MATCH:
            raise UsageError(f"--match needs a text of {MIN_MATCH} characters or more.")
        return self

    def as_args(self) -> dict:
        return {k: v for k, v in (("sessions", self.sessions), ("project", self.project),
                                   ("before", self.before), ("match", self.match),
                                   ("secret", self.secret)) if v}

    @classmethod
    def from_args(cls, args: dict) -> "Selection":
        sessions = args.get("sessions") or ([args["session"]] if args.get("session") else [])
        before = args.get("before")
        try:
            before = float(before) if before is not None else None
        except (TypeError, ValueError):
            raise UsageError("'before' must be seconds since the epoch.") from None
        return cls(sessions=[str(s) for s in sessions], project=args.get("project") or None, before=before,
                   match=args.get("match") or None, secret=args.get("secret") or None).check()

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
        if s is None or not (s in m.text or s in m.cwd or any(s in f for f in m.files)
                             or any(s in x for t in m.touched for x in t)):
            return None
        return Message(uuid=m.uuid, session_id=m.session_id, project=m.project,
                       cwd=m.cwd.replace(s, SECRET_MARK), branch=m.branch.replace(s, SECRET_MARK), role=m.role,
                       timestamp=m.timestamp, text=m.text.replace(s, SECRET_MARK), tools=list(m.tools),
                       files=[f.replace(s, SECRET_MARK) for f in m.files], source=m.source,
                       touched=[[x.replace(s, SECRET_MARK) for x in t] for t in m.touched])


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


def scan(archive_root: Path, sel: Selection) -> list[FileOutcome]:
    """What ``sel`` does to each archive file it touches (nothing is changed)."""
    out: list[FileOutcome] = []
    for path in _files(archive_root, sel):
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
        if dropped or rewritten:
            out.append(FileOutcome(path, sid or path.stem, project, kept, dropped, rewritten))
    return out


def plan(archive_root: Path, sel: Selection) -> dict:
    """What forgetting ``sel`` removes from the archive: sessions and messages."""
    outcomes = scan(archive_root, sel)
    return {
        "sessions": sorted({o.session_id for o in outcomes}),
        "emptied": sorted({o.session_id for o in outcomes if o.emptied}),
        "projects": sorted({o.project for o in outcomes if o.project}),
        "messages": sum(len(o.dropped) for o in outcomes),
        "rewritten": sum(len(o.rewritten) for o in outcomes),
    }


def _write_records(path: Path, messages: list[Message]) -> list[int]:
    """Rewrite an archive file (tmp + rename, 0600) with ``messages``; their new positions."""
    from indexer.archive import _dump_message

    lines = [_dump_message(m) + b"\n" for m in messages]
    positions, pos = [], 0
    for line in lines:
        positions.append(pos)
        pos += len(line)
    paths.atomic_write(path, b"".join(lines))
    return positions


# the steps, one per store (run on the writer: ``ix`` is an ``indexer.ingest.Indexer``) -----------
def remove_from_archive(ix, outcomes: list[FileOutcome]) -> dict[str, list[int]]:
    """Rewrite or delete each touched archive file; the kept messages' new positions by path."""
    new_positions: dict[str, list[int]] = {}
    for o in outcomes:
        ix.archive._drop_cache(o.path)
        if o.emptied:
            try:
                o.path.unlink()
            except FileNotFoundError:
                pass
        else:
            new_positions[str(o.path)] = _write_records(o.path, o.kept)
    return new_positions


def remove_from_index(ix, outcomes: list[FileOutcome], new_positions: dict[str, list[int]]) -> int:
    """Replace each touched session's message documents (kept messages at their new archive
    positions, their session document rebuilt from them); returns message documents removed."""
    import tantivy

    schema = ix.index.schema
    removed = 0
    for o in outcomes:
        q = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, tantivy.Query.term_query(schema, "session_id", o.session_id, index_option="basic")),
            (tantivy.Occur.Must, tantivy.Query.term_set_query(schema, "doctype", ["message", "session"])),
        ])
        ix.writer.delete_documents_by_query(q)
        ix.sessions.pop(o.session_id, None)
        ix.dirty_sessions.discard(o.session_id)
        ix.state.forget_sessions([o.session_id])
        removed += len(o.dropped)
        if o.kept:
            ix.add_messages(o.kept, archive=False, positions=new_positions[str(o.path)])
    ix.pending_other = True
    ix.commit()
    return removed


def remove_from_offsets(ix, outcomes: list[FileOutcome]) -> int:
    """The session facts of emptied sessions (first prompt, summaries, files) leave state.db;
    transcript offsets stay, so the transcripts are not read again."""
    gone = sorted({o.session_id for o in outcomes if o.emptied})
    ix.state.forget_sessions(gone)
    return len(gone)


def record_tombstones(ix, sel: Selection, outcomes: list[FileOutcome]) -> None:
    """So that re-reading a transcript Claude Code still keeps, or a rebuild, brings nothing back."""
    t = ix.archive.tombstones
    if sel.whole:
        for sid in sorted({o.session_id for o in outcomes} | set(sel.sessions)):
            t.add(session=sid)
        return
    if sel.before is not None and not sel.sessions and not sel.match:
        t.add(before=sel.before, before_project=sel.project)
    dropped = [m.uuid for o in outcomes for m in o.dropped]
    rewritten = [m.uuid for o in outcomes for m in o.rewritten]
    if dropped or rewritten:
        t.add(messages=dropped, rewritten=rewritten)


def forget_messages(ix, sel: Selection) -> dict:
    """Forget ``sel`` from the archive, the index and the offsets state; what was removed."""
    sel.check()
    if sel.whole and sel.project and not sel.sessions:
        sessions = ix.state.sessions_of_project(sel.project)
        res = ix.forget_project(sel.project)
        return {"sessions": sessions, "emptied": sessions, "projects": [sel.project],
                "messages": res.get("archive", 0), "index": res.get("index", 0), "rewritten": 0}
    if sel.whole and sel.sessions and not sel.project:
        done = [ix.forget_session(sid) for sid in sel.sessions]
        gone = [d["session"] for d in done if d.get("index") or d.get("archive")]
        return {"sessions": gone, "emptied": gone, "projects": [],
                "messages": sum(d.get("archive", 0) for d in done),
                "index": sum(d.get("index", 0) for d in done), "rewritten": 0}
    ix.commit()
    outcomes = scan(ix.archive.root, sel)
    new_positions = remove_from_archive(ix, outcomes)
    removed = remove_from_index(ix, outcomes, new_positions)
    remove_from_offsets(ix, outcomes)
    record_tombstones(ix, sel, outcomes)
    return {"sessions": sorted({o.session_id for o in outcomes}),
            "emptied": sorted({o.session_id for o in outcomes if o.emptied}),
            "projects": sorted({o.project for o in outcomes if o.project}),
            "messages": sum(len(o.dropped) for o in outcomes), "index": removed,
            "rewritten": sum(len(o.rewritten) for o in outcomes)}


# session ids --------------------------------------------------------------------------------------
def known_sessions() -> set[str]:
    """Every session id recall holds: the archive's files and state.db's session facts."""
    found: set[str] = set()
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
        raise UsageError(f"{prefix!r} matches {len(found)} sessions ({', '.join(f[:13] for f in found[:3])}"
                         f"{', ...' if len(found) > 3 else ''}): give more characters of the id.")
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
