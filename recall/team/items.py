"""What a shared project gives the team: its distilled layer, and only that.

``collect`` reads, for one team project (a normalized remote) and the checkouts of it this
machine shares:

* the active typed memories of each checkout's ``.memory/state.json``;
* the session summaries of its sessions (``$RECALL_HOME/summaries``);
* its project rules (``.memory/rules.json``; not the global ones, not expired ones).

Never a transcript line. Each item's text and tags pass ``indexer.redact.redact_stated`` (the
redaction every memory is stored with) again on the way out (secrets and ``<private>`` blocks: rules written since, or text typed by hand),
and an item is left out when the user keeps its source out of recall: an excluded project,
a session switched off by ``recall: off``, or a time when capture was paused (the item's
creation falls in a pause window). What is left out is withdrawn from the server if it was
there (``recall.team.sync``), so excluding a project or forgetting a memory takes it back.

An item's id is derived from this machine's ``origin``, the project, the kind and the local
id: stable across runs (so a push repeated after a crash updates, never duplicates) and
different on every machine.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

from recall.core import log

KINDS = ("memory", "summary", "rule")
MAX_CONTENT = 20000
_REDACTED: dict[str, str] = {}  # text -> redacted text (the same memories are collected again and again)
_SUMMARIES: dict[str, tuple[tuple[int, int], dict | None]] = {}  # file name -> (stamp, record)


@dataclass
class Item:
    id: str
    remote: str
    kind: str
    ref: str  # the local id: memory id, session id, rule id
    mtype: str
    content: str
    tags: list[str] = field(default_factory=list)
    created: float = 0.0
    updated: float = 0.0
    digest: str = ""

    def row(self, origin: str) -> dict:
        return {
            "id": self.id,
            "project": self.remote,
            "origin": origin,
            "kind": self.kind,
            "mtype": self.mtype,
            "content": self.content,
            "tags": self.tags,
            "created": self.created,
            "updated": self.updated,
            "digest": self.digest,
        }


def item_id(origin: str, remote: str, kind: str, ref: str) -> str:
    key = "\0".join((origin, remote, kind, ref)).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(key, digest_size=12).hexdigest()


def _digest(item: Item) -> str:
    body = json.dumps(
        [item.kind, item.mtype, item.content, item.tags, round(item.created, 3), round(item.updated, 3)],
        ensure_ascii=False,
    )
    return hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def scrub(text: str) -> str:
    """``text`` through redaction (cached), made storable (no NUL, no unpaired surrogate:
    the server refuses either) and cut to what the server takes, saying so."""
    out = _REDACTED.get(text)
    if out is None:
        from indexer.redact import redact_stated
        from recall.core.text import storable

        # the same redaction as the memory's local copy (recall.memory.store.add_memory)
        out = storable(redact_stated(storable(text))).strip()
        if len(out) > MAX_CONTENT:
            note = f" … [cut for the team: the first {{n:,}} of {len(out):,} characters]"
            keep = MAX_CONTENT - len(note.format(n=MAX_CONTENT))
            out = out[:keep].rstrip() + note.format(n=keep)
        if len(_REDACTED) > 50_000:
            _REDACTED.clear()
        _REDACTED[text] = out
    return out


def _make(
    origin: str, remote: str, kind: str, ref: str, mtype: str, content: str, tags, created: float, updated: float
) -> Item | None:
    content = scrub(content)
    if not content:
        return None  # all of it was private
    tags = [t[:200] for t in (scrub(str(t)) for t in tags or []) if t and "[redacted:" not in t][:20]
    item = Item(
        id=item_id(origin, remote, kind, ref),
        remote=remote,
        kind=kind,
        ref=ref,
        mtype=scrub(str(mtype or ""))[:64],
        content=content,
        tags=tags,
        created=_date(created or updated),
        updated=_date(updated or created),
    )
    item.digest = _digest(item)
    return item


def _date(value) -> float:
    """A date the server takes (finite, 1970..3000); anything else reads as 0 (unknown)."""
    try:
        value = float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return value if 0.0 <= value <= 32503680000.0 else 0.0


class Keeper:
    """The user's keep-out choices, as the push checks them (``indexer.ledger.Gate``)."""

    def __init__(self) -> None:
        from indexer.ledger import Gate

        self.gate = Gate().refresh()

    def project_out(self, project: str) -> bool:
        return bool(self.gate.patterns) and self.gate.excluded(project, project)

    def refuses(self, sessions, created: float, project: str = "", summary: bool = False) -> bool:
        off = self.gate.off
        if off and any(s in off for s in sessions):
            return True
        if self._forgotten(sessions, created, project, summary):
            return True
        # stores keep whole seconds: a pause that began within the second counts
        return bool(created) and any(int(a) <= created < b for a, b in self.gate.windows)

    def _forgotten(self, sessions, created: float, project: str, summary: bool) -> bool:
        """What ``recall forget`` covers: a session it forgot (a summary of one at all: one
        that waited for the model while the forget ran is never shared), a project or a
        date, as ingest's tombstones say."""
        from indexer.ledger import forgotten

        t = self.gate.forgotten()
        if t is None:
            return False
        for s in sessions:
            at = t.sessions.get(s)
            if at is not None and (summary or created <= at):
                return True
        return summary and bool(project) and forgotten(t, "", project, project, "", created)


def _memories(origin: str, remote: str, project: str, keeper: Keeper) -> list[Item]:
    from recall.memory import store

    try:
        state = store.load(project)
    except store.StateError as exc:
        log.get("team").warning("memories of %s not shared this time: %s", project, exc)
        raise
    out = []
    for m in state.memories:
        if not m.active or keeper.refuses(m.sessions, m.created, project):
            continue
        item = _make(origin, remote, "memory", f"{project}\0{m.id}", m.type, m.content, m.tags, m.created, m.updated)
        if item is not None:
            out.append(item)
    return out


def _summary_records() -> list[dict]:
    """Every stored session summary (parsed files cached by mtime and size)."""
    from recall.memory import summaries

    folder = summaries.home()
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
    except FileNotFoundError:
        return []
    seen, out = set(names), []
    for name in names:
        try:
            st = os.stat(folder / name)
        except OSError:
            continue
        stamp = (st.st_mtime_ns, st.st_size)
        cached = _SUMMARIES.get(name)
        if cached is None or cached[0] != stamp:
            rec = summaries.get(name[:-5])
            cached = (stamp, rec)
            _SUMMARIES[name] = cached
        if cached[1] is not None:
            out.append(cached[1])
    for name in [n for n in _SUMMARIES if n not in seen]:
        del _SUMMARIES[name]
    return out


def _summaries(origin: str, remote: str, projects: list[str], keeper: Keeper) -> list[Item]:
    wanted = set(projects)
    out = []
    for rec in _summary_records():
        sid = str(rec.get("session_id") or "")
        if rec.get("project") not in wanted or not sid:
            continue
        created = float(rec.get("created") or 0.0)
        if keeper.refuses([sid], created, str(rec.get("project") or ""), summary=True):
            continue
        item = _make(
            origin,
            remote,
            "summary",
            sid,
            "session-summary",
            f"Session summary: {rec['summary']}",
            ["session-summary"],
            created,
            created,
        )
        if item is not None:
            out.append(item)
    return out


def _rules(origin: str, remote: str, project: str, keeper: Keeper) -> list[Item]:
    from recall.rules import store as rules

    try:
        found = rules.load("project", project)
    except rules.RuleError as exc:
        log.get("team").warning("rules of %s not shared this time: %s", project, exc)
        raise
    out = []
    for r in found:
        created = rules.parse_iso(r.created) or 0.0
        if r.expired() or keeper.refuses([], created):
            continue
        text = f"Rule: {r.text} (when {r.condition()})"
        item = _make(
            origin,
            remote,
            "rule",
            f"{project}\0{r.id}",
            "rule",
            text,
            ["rule"],
            created,
            rules.parse_iso(r.updated) or created,
        )
        if item is not None:
            out.append(item)
    return out


def collect(origin: str, remote: str, projects: list[str], keeper: Keeper | None = None) -> dict[str, Item]:
    """id -> Item: everything ``projects`` (the checkouts of ``remote`` shared here) give the
    team now. An excluded checkout gives nothing. Raises when a source cannot be read (the
    push then leaves the project's items as they are rather than withdrawing them)."""
    keeper = keeper or Keeper()
    kept = [p for p in projects if not keeper.project_out(p)]
    out: dict[str, Item] = {}
    for project in kept:
        for item in [*_memories(origin, remote, project, keeper), *_rules(origin, remote, project, keeper)]:
            out[item.id] = item
    for item in _summaries(origin, remote, kept, keeper):
        out[item.id] = item
    return out


def sources_stamp(projects: list[str]) -> tuple:
    """A cheap fingerprint of everything ``collect`` reads (one ``stat`` per file): when it
    has not changed, neither has what the push would send."""
    from recall.core import paths
    from recall.memory import store, summaries
    from recall.rules.files import project_file

    def st(p) -> tuple | None:
        try:
            s = os.stat(p)
            return s.st_mtime_ns, s.st_size, s.st_ino
        except OSError:
            return None

    from indexer.ledger import controls_path

    files = [paths.config_path(), controls_path(), summaries.home()]
    for project in projects:
        files += [store.state_path(project), project_file(project)]
    return tuple(st(f) for f in files)
