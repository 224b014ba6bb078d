"""``<project>/.memory/state.json``: the typed memories of one project.

The project is the canonical project root (``indexer.project.canonical_project``), so
worktrees and subfolders share one store. The file is schema-versioned, written
atomically (tmp + rename, 0600) and only under an exclusive ``flock`` on
``.memory/state.lock``; readers never lock (they see the old or the new file).

A memory (JSON keys as written)::

    {"id": "a1b2c3d4e5f6", "type": "gotcha", "content": "...", "tags": ["stripe"],
     "created": ISO, "updated": ISO, "confidence": 1.0, "accessCount": 0,
     "status": "active" | "superseded" | "archived", "supersedes": id | null,
     "supersededBy": id | null, "mergedFrom": [ids], "sessions": [source session ids],
     "origin": "extraction" | "manual" | "consolidation", "retired": ISO | null,
     "files": [{"path", "fp", "sketch", "at"}],   # the files it names (recall.memory.stale)
     "stale": [{"path", "state", "since"}]}       # those changed substantially / gone since

Dedup at write time: Jaccard similarity over the index's own tokens (Unicode words,
camelCase parts, CJK characters, stemmed; stop words removed) within one type; above
``DEDUP_JACCARD`` the new memory supersedes the old one. A model-supplied
``supersedes_content`` matches an active memory of any type above ``SUPERSEDE_JACCARD``.

Decay: ``progress`` fades linearly to 0 over 7 days, ``context`` over 30 (counted from
``updated``); the other types never decay, unless their files changed (``stale``: 14 days
from the change). Below ``BRIEFING_FLOOR`` a memory leaves the
briefing but stays searchable; fully faded ones are archived at the next consolidation and
non-active memories are pruned ``PRUNE_DAYS`` after they left the active set.

Import-light: no pydantic, no anthropic; tantivy only when tokens are needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from recall.core import paths
from recall.core.errors import RecallError
from recall.core.text import cut, storable
from recall.memory import TYPES, access_log_path, memory_home

SCHEMA_VERSION = 1
DECAY_DAYS = {"progress": 7.0, "context": 30.0}
STALE_DECAY_DAYS = 14.0  # a memory whose files changed substantially fades over this long (recall.memory.stale)
BRIEFING_FLOOR = 0.3
DEDUP_JACCARD = 0.6
SUPERSEDE_JACCARD = 0.5
PRUNE_DAYS = 14.0
MAX_CONTENT = 1000
MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_SESSIONS = 20
LOCK_TIMEOUT = 20.0

STATUSES = ("active", "superseded", "archived")

# English function words; stemmed with the index's analyzer before use (see _stop_tokens).
STOP_WORDS = """a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just let me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she should so
some such than that the their theirs them themselves then there these they this those through to too under
until up use used uses using very via was we were what when where which while who whom why will with would
you your yours yourself yourselves""".split()


class StateError(RecallError):
    """state.json cannot be read or written; the message names the file and the fix."""


class StateBusy(StateError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is locked by another recall process: try again in a moment.")


# time ----------------------------------------------------------------------------------
def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value) / (1000.0 if value > 1e11 else 1.0)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


# tokens ----------------------------------------------------------------------------------
_analyzer = None
_stop: frozenset[str] | None = None


def _analyze(text: str) -> list[str]:
    global _analyzer
    if _analyzer is None:
        from indexer.schema import text_analyzer

        _analyzer = text_analyzer()
    from indexer.schema import prepare_content

    try:
        return _analyzer.analyze(prepare_content(text))
    except Exception:  # the analyzer takes any str; be safe anyway
        return []


def _stop_tokens() -> frozenset[str]:
    global _stop
    if _stop is None:
        _stop = frozenset(_analyze(" ".join(STOP_WORDS))) | frozenset(STOP_WORDS)
    return _stop


def tokens(text: str) -> frozenset[str]:
    """The Jaccard tokens of ``text``: the index's terms minus stop words and lone ASCII
    letters (a lone CJK character is a word and stays)."""
    stop = _stop_tokens()
    return frozenset(t for t in _analyze(text) if t not in stop and (len(t) > 1 or not t.isascii()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


# memories ---------------------------------------------------------------------------------
_WS = re.compile(r"\s+")


def clean_content(text: str) -> str:
    return cut(_WS.sub(" ", storable(str(text or ""))).strip(), MAX_CONTENT)


def clean_tags(tags) -> list[str]:
    if isinstance(tags, str):
        tags = re.split(r"[,\s]+", tags)
    out: list[str] = []
    for t in tags or ():
        t = _WS.sub("-", storable(str(t)).strip().lower().lstrip("#"))[:MAX_TAG_CHARS].strip("-")
        if t and t not in out:
            out.append(t)
        if len(out) >= MAX_TAGS:
            break
    return out


def new_id(taken) -> str:
    while True:
        mid = uuid.uuid4().hex[:12]
        if mid not in taken:
            return mid


_KNOWN_KEYS = {
    "id",
    "type",
    "content",
    "tags",
    "created",
    "updated",
    "confidence",
    "accessCount",
    "status",
    "supersedes",
    "supersededBy",
    "mergedFrom",
    "sessions",
    "origin",
    "retired",
    "files",
    "stale",
}


@dataclass
class Memory:
    id: str
    type: str
    content: str
    tags: list[str] = field(default_factory=list)
    created: float = 0.0
    updated: float = 0.0
    confidence: float = 1.0
    access_count: int = 0
    status: str = "active"
    supersedes: str | None = None
    superseded_by: str | None = None
    merged_from: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    origin: str = "extraction"
    retired: float | None = None
    # the project files it names, as they were when it was written: [{"path", "fp", "sketch", "at"}]
    files: list[dict] = field(default_factory=list)
    # those that changed substantially, moved or were deleted since: [{"path", "state", "since"}]
    stale: list[dict] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # keys we do not know, kept as they were
    _tokens: frozenset[str] | None = field(default=None, repr=False, compare=False)

    @property
    def tokens(self) -> frozenset[str]:
        if self._tokens is None:
            self._tokens = tokens(self.content)
        return self._tokens

    def set_content(self, content: str) -> None:
        self.content = content
        self._tokens = None

    @property
    def active(self) -> bool:
        return self.status == "active"

    def to_json(self) -> dict:
        d = dict(self.extra)
        d.update(
            {
                "id": self.id,
                "type": self.type,
                "content": self.content,
                "tags": list(self.tags),
                "created": iso(self.created),
                "updated": iso(self.updated),
                "confidence": round(float(self.confidence), 4),
                "accessCount": int(self.access_count),
                "status": self.status,
                "supersedes": self.supersedes,
                "supersededBy": self.superseded_by,
                "mergedFrom": list(self.merged_from),
                "sessions": list(self.sessions),
                "origin": self.origin,
                "retired": iso(self.retired),
                "files": [dict(f) for f in self.files],
                "stale": [dict(m) for m in self.stale],
            }
        )
        return d

    @classmethod
    def from_json(cls, d) -> "Memory | None":
        if not isinstance(d, dict):
            return None
        mid, mtype, content = d.get("id"), d.get("type"), d.get("content")
        if not (
            isinstance(mid, str)
            and mid
            and isinstance(mtype, str)
            and mtype in TYPES
            and isinstance(content, str)
            and content.strip()
        ):
            return None
        status = d.get("status") if d.get("status") in STATUSES else "active"
        try:
            confidence = min(1.0, max(0.0, float(d.get("confidence", 1.0))))
        except (TypeError, ValueError):
            confidence = 1.0
        try:
            access = max(0, int(d.get("accessCount") or 0))
        except (TypeError, ValueError):
            access = 0
        created = parse_time(d.get("created")) or 0.0
        updated = parse_time(d.get("updated")) or created

        def strs(v):
            return [str(x) for x in v if isinstance(x, (str, int))] if isinstance(v, list) else []

        return cls(
            id=mid,
            type=mtype,
            content=storable(content),
            tags=clean_tags(strs(d.get("tags"))),
            created=created,
            updated=updated,
            confidence=confidence,
            access_count=access,
            status=status,
            supersedes=d.get("supersedes") if isinstance(d.get("supersedes"), str) else None,
            superseded_by=d.get("supersededBy") if isinstance(d.get("supersededBy"), str) else None,
            merged_from=strs(d.get("mergedFrom")),
            sessions=strs(d.get("sessions")),
            origin=str(d.get("origin") or "extraction"),
            retired=parse_time(d.get("retired")),
            files=_dicts(d.get("files"), "path"),
            stale=_dicts(d.get("stale"), "path"),
            extra={k: v for k, v in d.items() if k not in _KNOWN_KEYS},
        )


def _dicts(value, key: str) -> list[dict]:
    """The well-formed entries (dicts with a string ``key``) of a list read from state.json."""
    if not isinstance(value, list):
        return []
    return [dict(v) for v in value if isinstance(v, dict) and isinstance(v.get(key), str) and v[key]]


def pinned(m: Memory) -> bool:
    """Whether the user pinned the memory (``recall ui``): it never fades and leads its section of
    the briefing. Kept as the ``pinned`` key of its state.json entry."""
    return m.extra.get("pinned") is True


def set_pinned(state: State, ref: str, on: bool) -> Memory:
    m = state.find(ref)
    if on:
        m.extra["pinned"] = True
    else:
        m.extra.pop("pinned", None)
    state.touch(m)
    return m


def edit(state: State, ref: str, content: str) -> Memory:
    """Replace a memory's text by the user's (``recall ui``): its origin becomes ``edited``."""
    text = clean_content(content)
    if not text:
        from recall.core.errors import UsageError

        raise UsageError("The memory's text is empty: write it, or forget the memory instead.")
    m = state.find(ref)
    if text != m.content:
        m.set_content(text)
        m.updated = time.time()
        m.origin = "edited" if m.origin != "manual" else m.origin
        state.touch(m)
    return m


def effective_confidence(m: Memory, now: float | None = None) -> float:
    """``confidence`` after decay: progress and context fade linearly from ``updated``; a
    memory whose files changed substantially or were deleted (``stale``) fades linearly to 0
    over ``STALE_DECAY_DAYS`` from that change, whatever its type. A pinned one does not fade."""
    if pinned(m):
        return m.confidence
    days = DECAY_DAYS.get(m.type)
    if not days and not m.stale:
        return m.confidence
    now = time.time() if now is None else now
    conf = m.confidence
    if days:
        age = max(0.0, (now - (m.updated or m.created or now)) / 86400.0)
        conf = m.confidence * (1.0 - age / days)
    if m.stale:
        since = min((t for t in (parse_time(x.get("since")) for x in m.stale) if t), default=None)
        age = max(0.0, (now - (since or m.updated or now)) / 86400.0)
        conf = min(conf, m.confidence * (1.0 - age / STALE_DECAY_DAYS))
    return max(0.0, conf)


def rank(m: Memory, now: float | None = None) -> float:
    """Briefing order: confidence x (1 + accessCount / 10)."""
    return effective_confidence(m, now) * (1.0 + m.access_count / 10.0)


# the state file ----------------------------------------------------------------------------
def memory_dir(project: str | Path) -> Path:
    return Path(project) / ".memory"


def state_path(project: str | Path) -> Path:
    return memory_dir(project) / "state.json"


def lock_path(project: str | Path) -> Path:
    return memory_dir(project) / "state.lock"


@dataclass
class State:
    project: str
    memories: list[Memory] = field(default_factory=list)
    extractions: int = 0  # extractions since the last consolidation
    last_consolidation: float | None = None
    last_extraction: float | None = None
    extra: dict = field(default_factory=dict)
    invalid: list = field(default_factory=list)  # entries we could not read: written back as they were
    dirty: bool = False
    changed: set[str] = field(default_factory=set)  # ids whose index document must be (re)written
    removed: set[str] = field(default_factory=set)  # ids whose index document must go

    # lookups
    def by_id(self, mid: str) -> Memory | None:
        for m in self.memories:
            if m.id == mid:
                return m
        return None

    def find(self, ref: str) -> Memory:
        """A memory by id or unique id prefix; raises StateError naming the next step."""
        ref = (ref or "").strip()
        exact = self.by_id(ref)
        if exact is not None:
            return exact
        found = [m for m in self.memories if ref and m.id.startswith(ref)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise StateError(f"No memory {ref!r} in {self.project}: list them with `recall memories`.")
        raise StateError(f"{ref!r} matches {len(found)} memories: give more characters of the id.")

    def active(self, mtype: str | None = None) -> list[Memory]:
        return [m for m in self.memories if m.active and (mtype is None or m.type == mtype)]

    def touch(self, m: Memory, index: bool = True) -> None:
        self.dirty = True
        if index:
            self.changed.add(m.id)
            self.removed.discard(m.id)

    def unindex(self, m: Memory) -> None:
        self.dirty = True
        self.removed.add(m.id)
        self.changed.discard(m.id)

    # serialising
    def to_json(self) -> dict:
        d = dict(self.extra)
        d.update(
            {
                "schema": SCHEMA_VERSION,
                "project": self.project,
                "extractionsSinceConsolidation": self.extractions,
                "lastConsolidation": iso(self.last_consolidation),
                "lastExtraction": iso(self.last_extraction),
                "memories": [m.to_json() for m in self.memories] + list(self.invalid),
            }
        )
        return d

    @classmethod
    def from_json(cls, project: str, data: dict, path: Path) -> "State":
        version = data.get("schema", SCHEMA_VERSION)
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise StateError(
                f"{path} was written by a newer recall (schema {version}): upgrade recall "
                "(pip install -U recall-memory) before it touches this project's memories."
            )
        mems, invalid, seen = [], [], set()
        for raw in data.get("memories") or []:
            m = Memory.from_json(raw)
            if m is None or m.id in seen:
                invalid.append(raw)
                continue
            seen.add(m.id)
            mems.append(m)
        try:
            extractions = max(0, int(data.get("extractionsSinceConsolidation") or 0))
        except (TypeError, ValueError):
            extractions = 0
        known = {
            "schema",
            "project",
            "extractionsSinceConsolidation",
            "lastConsolidation",
            "lastExtraction",
            "memories",
        }
        return cls(
            project=project,
            memories=mems,
            extractions=extractions,
            last_consolidation=parse_time(data.get("lastConsolidation")),
            last_extraction=parse_time(data.get("lastExtraction")),
            extra={k: v for k, v in data.items() if k not in known},
            invalid=invalid,
        )


def load(project: str | Path) -> State:
    """The project's state as it is on disk (no lock). Missing file: an empty state."""
    project = str(project)
    path = state_path(project)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return State(project=project)
    except OSError as exc:
        raise StateError(f"cannot read {path} ({exc.strerror or exc}): check its permissions.") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("top level is not an object")
    except ValueError as exc:
        raise StateError(
            f"{path} is not valid JSON ({exc}): fix it, or move it aside to start this project's memories afresh."
        ) from None
    return State.from_json(project, data, path)


def save(state: State) -> None:
    path = state_path(state.project)
    new = not path.exists()
    paths.ensure_dir(path.parent)
    text = json.dumps(state.to_json(), indent=1, ensure_ascii=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate read from a "\ud800" escape: kept as one
        data = (json.dumps(state.to_json(), indent=1) + "\n").encode("ascii")
    paths.atomic_write(path, data)
    state.dirty = False
    if new:  # machine-local state (session ids, 0600): keep it out of git unless the user opts in
        git_exclude(state.project, ".memory/")


def _flock(path: Path, timeout: float):
    return paths.file_lock(path, timeout, lambda: StateBusy(path.parent / "state.json"))


@contextlib.contextmanager
def transaction(project: str | Path, timeout: float = LOCK_TIMEOUT) -> Iterator[State]:
    """Lock the project's state, load it fresh, yield it; write it back if it changed.

    After the block, ``state.changed`` / ``state.removed`` tell which index documents to
    update (see ``recall.memory.index_docs.sync``).
    """
    project = str(project)
    try:
        with _flock(lock_path(project), timeout):
            state = load(project)
            yield state
            if state.dirty:
                save(state)
    except OSError as exc:
        raise StateError(
            f"cannot write {state_path(project)} ({exc.strerror or exc}): check that the project directory is writable."
        ) from None


# changing memories ------------------------------------------------------------------------
@dataclass
class Outcome:
    action: str  # added | superseded | refreshed | skipped
    memory: Memory | None
    replaced: Memory | None = None


def _best_match(candidates: list[Memory], toks: frozenset[str], floor: float) -> Memory | None:
    best, best_score = None, floor
    for m in candidates:
        score = jaccard(toks, m.tokens)
        if score > best_score:
            best, best_score = m, score
    return best


def merge_list(*lists, limit: int) -> list[str]:
    out: list[str] = []
    for lst in lists:
        for x in lst or ():
            if x and x not in out:
                out.append(x)
    return out[-limit:] if len(out) > limit else out


def add_memory(
    state: State,
    mtype: str,
    content: str,
    tags=(),
    *,
    session_id: str | None = None,
    supersedes_content: str | None = None,
    now: float | None = None,
    origin: str = "extraction",
) -> Outcome:
    """Write one memory with dedup: supersede a near-duplicate, refresh an identical one. Its
    text is redacted as what is stated is (``indexer.redact.redact_stated``): the same cut as
    the team's copy, so no copy keeps what another one cuts."""
    from indexer.redact import redact_stated

    now = time.time() if now is None else now
    if mtype not in TYPES:
        raise StateError(f"{mtype!r} is not a memory type: use one of {', '.join(TYPES)}.")
    content = clean_content(redact_stated(content))
    if not content:
        return Outcome("skipped", None)
    tags = [redact_stated(t) for t in clean_tags(tags)]
    toks = tokens(content)
    target = None
    if supersedes_content and supersedes_content.strip():
        target = _best_match(state.active(), tokens(supersedes_content), SUPERSEDE_JACCARD)
    if target is None:
        target = _best_match(state.active(mtype), toks, DEDUP_JACCARD)
    sessions = [session_id] if session_id else []
    if target is not None and target.type == mtype and clean_content(target.content).lower() == content.lower():
        target.updated = now
        target.confidence = 1.0
        target.tags = merge_list(target.tags, tags, limit=MAX_TAGS)
        target.sessions = merge_list(target.sessions, sessions, limit=MAX_SESSIONS)
        _snapshot(state, target, now)  # said again: true of the files as they are now
        state.touch(target)
        return Outcome("refreshed", target)
    mem = Memory(
        id=new_id({m.id for m in state.memories}),
        type=mtype,
        content=content,
        tags=tags,
        created=now,
        updated=now,
        confidence=1.0,
        sessions=sessions,
        origin=origin,
    )
    _snapshot(state, mem, now)
    mem._tokens = toks
    if target is not None:
        mem.supersedes = target.id
        mem.access_count = target.access_count
        mem.tags = merge_list(tags, target.tags, limit=MAX_TAGS)
        mem.sessions = merge_list(target.sessions, sessions, limit=MAX_SESSIONS)
        retire(state, target, "superseded", now, by=mem.id)
    state.memories.append(mem)
    state.touch(mem)
    return Outcome("superseded" if target is not None else "added", mem, target)


def _snapshot(state: State, m: Memory, now: float) -> None:
    """The files ``m`` names, fingerprinted as they are now (``recall.memory.stale``)."""
    from recall.memory.stale import snapshot

    m.files = snapshot(m.content, state.project, now)
    m.stale = []


def refresh_stale(project: str, state: State) -> None:
    """Recompute the stale marks of ``state``'s memories (``recall.memory.stale.refresh``) and
    write those that changed back to state.json; skipped when another process holds it (the
    next refresh will). Never raises: marks are a hint."""
    from recall.memory.stale import refresh

    try:
        ids = refresh(state)
        if not ids:
            return
        marks = {m.id: m.stale for m in state.memories if m.id in ids}
        with transaction(project, timeout=2.0) as fresh:
            for m in fresh.memories:
                if m.id in marks and m.stale != marks[m.id]:
                    m.stale = [dict(x) for x in marks[m.id]]
                    fresh.dirty = True
    except StateError:
        pass
    except Exception as exc:  # noqa: BLE001
        from recall.core import log

        log.get("memory").warning("stale marks of %s's memories not refreshed: %s", project, exc)


def retire(state: State, m: Memory, status: str, now: float, by: str | None = None) -> None:
    """Take ``m`` out of the active set: superseded ones leave the index, archived ones stay
    searchable until pruned."""
    m.status = status
    m.retired = now
    if by:
        m.superseded_by = by
    if status == "superseded":
        state.unindex(m)
    else:
        state.touch(m)


def forget(state: State, ref: str) -> Memory:
    """Delete a memory for good (``recall memories forget``)."""
    m = state.find(ref)
    state.memories.remove(m)
    for other in state.memories:
        if other.supersedes == m.id:
            other.supersedes = None
        if other.superseded_by == m.id:
            other.superseded_by = None
    state.unindex(m)
    return m


def archive_faded(state: State, now: float | None = None) -> list[Memory]:
    """Archive active memories that decayed to nothing (still searchable until pruned)."""
    now = time.time() if now is None else now
    faded = [m for m in state.active() if (m.type in DECAY_DAYS or m.stale) and effective_confidence(m, now) <= 0.0]
    for m in faded:
        retire(state, m, "archived", now)
    return faded


def prune(state: State, now: float | None = None, days: float = PRUNE_DAYS) -> list[Memory]:
    """Drop superseded and archived memories ``days`` after they left the active set."""
    now = time.time() if now is None else now
    cutoff = now - days * 86400
    gone = [m for m in state.memories if not m.active and (m.retired or m.updated) <= cutoff]
    for m in gone:
        state.memories.remove(m)
        state.unindex(m)
    return gone


# access counts --------------------------------------------------------------------------
def fold_access() -> dict[str, int]:
    """Fold ``access.log`` into ``accessCount`` of each project's state. Returns hits folded
    per project.

    The log is renamed away first (appenders then start a new one), so no hit is counted
    twice or lost while folding; one folder at a time (``access.lock``).
    """
    home = memory_home()
    log = access_log_path()
    if not log.exists() and not any(home.glob("access.log.*.folding")):
        return {}
    try:
        with _flock(home / "access.lock", 0.0):
            if log.exists():
                try:
                    os.replace(log, home / f"access.log.{os.getpid()}.{time.time_ns()}.folding")
                except FileNotFoundError:
                    pass
            files = sorted(home.glob("access.log.*.folding"))
            counts: dict[str, Counter] = defaultdict(Counter)
            for f in files:
                try:
                    text = f.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                for line in text.splitlines():
                    project, _, mid = line.partition("\t")
                    if project and mid:
                        counts[project][mid] += 1
            folded: dict[str, int] = {}
            for project, counter in counts.items():
                if not state_path(project).exists():
                    continue
                try:
                    with transaction(project) as state:
                        for mid, n in counter.items():
                            m = state.by_id(mid)
                            if m is not None:
                                m.access_count += n
                                state.dirty = True
                                folded[project] = folded.get(project, 0) + n
                except StateError as exc:
                    from recall.core import log as rlog

                    rlog.get("memory").warning("access counts for %s not folded: %s", project, exc)
            for f in files:
                try:
                    f.unlink()
                except OSError:
                    pass
            return folded
    except StateBusy:
        return {}  # another process is folding right now


# git hygiene -------------------------------------------------------------------------------
#: the comment above the exclude line of a CLAUDE.md recall created: what marks that line as
#: recall's (a purge removes it, never a ``/CLAUDE.md`` line the user wrote) and says how to share it
CLAUDE_MD_EXCLUDE_NOTE = "# recall created CLAUDE.md for its memories; to share it: git add -f CLAUDE.md"


def git_exclude(project: str | Path, entry: str, note: str = "") -> bool:
    """Add ``entry`` to the project's ``.git/info/exclude`` (local, never committed) unless a
    .gitignore or the exclude file already names it (``note``: a comment line written above
    it). Returns whether it wrote."""
    root = Path(project)
    gitdir = root / ".git"
    if not gitdir.is_dir():
        return False
    wanted = {entry, "/" + entry, entry.rstrip("/"), "/" + entry.rstrip("/")}
    for f in (root / ".gitignore", gitdir / "info" / "exclude"):
        try:
            lines = {ln.strip() for ln in f.read_text(encoding="utf-8", errors="replace").splitlines()}
        except OSError:
            continue
        if lines & wanted:
            return False
    exclude = gitdir / "info" / "exclude"
    try:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        prefix = ""
        if exclude.exists():
            data = exclude.read_bytes()
            if data and not data.endswith(b"\n"):
                prefix = "\n"
        with open(exclude, "a", encoding="utf-8") as fh:
            fh.write(f"{prefix}{note + chr(10) if note else ''}/{entry}\n")
    except OSError:
        return False
    return True
