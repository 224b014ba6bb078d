"""What the user keeps out of recall, and the one check ingest makes against it (``admit``).

Four sources, each kept where its owner writes it:

* exclusions: the ``exclude`` list in ``config.json`` (``recall exclude add|remove``):
  a plain path excludes that project and everything below it (worktrees included: their
  messages carry the main repository as their project); a glob (``*``, ``?``, ``[``) is
  matched against the project and the cwd;
* the pause: ``$RECALL_HOME/controls.json`` (``recall pause [--for]`` / ``recall resume``):
  the current pause and the closed pause windows, so a rebuild does not bring back what
  was said while paused;
* sessions switched off: a prompt that is exactly ``recall: off`` drops its whole session
  (before and after the marker) for good; kept in ``controls.json`` too, written by the
  prompt hook (at once) and by ingest (when it reads the marker);
* what ``recall forget`` removed: ``indexer.archive.Tombstones`` (``archive/forgotten.json``).

Projects are compared as the filesystem sees them (``indexer.project.within``): through
symlinks either way, without regard to case on a case-insensitive filesystem, and a removed
worktree is still its repository's. A line with no working directory or no time (Claude
Code's ``summary`` lines) is judged by its session (``by_session``).

Every reader (the prompt hook with or without the service, the CLI, MCP, ``recall ask``)
passes its hits through the same gate: ``shown`` (``Gate.hides``): excluded projects,
sessions switched off, what was forgotten, pause windows. Ingest's check is ``admit``.

``controls.json`` is small (the hook reads it on every prompt), written under a flock by
whoever changes it, atomically, 0600.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import time
from bisect import bisect_left
from pathlib import Path
from typing import Iterator

from indexer import project as identity
from indexer.project import encoded, resolved, same, spellings, within
from recall.core import config, paths
from recall.core.jsonio import read_json

OFF_MARKER = "recall: off"
MAX_WINDOWS = 500  # closed pause windows kept (oldest dropped)
MAX_OFF_SESSIONS = 5000  # sessions switched off kept (oldest dropped)
GLOB_CHARS = "*?["


def is_off_marker(text) -> bool:
    """A prompt that is exactly ``recall: off`` (surrounding blanks and case ignored)."""
    return isinstance(text, str) and len(text) < 40 and " ".join(text.split()).lower() == OFF_MARKER


# exclusions ------------------------------------------------------------------------------------
def is_glob(pattern: str) -> bool:
    return any(c in pattern for c in GLOB_CHARS)


def exclusions(cfg: dict | None = None) -> list[str]:
    """The ``exclude`` patterns of the config (absolute paths or globs)."""
    raw = (cfg if cfg is not None else config.load()).get("exclude") or []
    if isinstance(raw, str):
        raw = [raw]
    return [str(p) for p in raw if isinstance(p, str) and p.strip()] if isinstance(raw, list) else []


def _glob_spellings(pattern: str) -> list[str]:
    """A glob as written and with the folder before its first wildcard resolved (symlinks)."""
    out = [pattern]
    i = min((pattern.find(c) for c in GLOB_CHARS if c in pattern), default=-1)
    cut = pattern.rfind("/", 0, i) if i > 0 else -1
    if cut > 0:
        real = resolved(pattern[:cut])
        if real != pattern[:cut]:
            out.append(real + pattern[cut:])
    return out


def pattern_matches(pattern: str, path: str) -> bool:
    """Whether an exclusion pattern covers ``path``: a plain path covers itself and what is
    inside it, a glob what it matches (and what is inside that), both as the filesystem sees
    them (symlinks either way; case on a case-insensitive filesystem)."""
    if not path:
        return False
    if not is_glob(pattern):
        return within(path, pattern)
    fold = identity.case_insensitive(resolved(path))
    for pat in _glob_spellings(pattern):
        pats = (pat, pat.rstrip("/") + "/*")
        for p in spellings(path):
            for q in pats:
                if fnmatch.fnmatchcase(p, q) or (fold and fnmatch.fnmatchcase(p.casefold(), q.casefold())):
                    return True
    return False


def folder_matches(pattern: str, folder: str) -> bool:
    """Whether a pattern covers a transcript folder (``-home-dev-app``: Claude Code's encoding
    of a cwd), for a line that names no cwd of its own: the encoding of the pattern, or of
    what the pattern resolves to, is the folder or a prefix of it."""
    if not folder:
        return False
    if is_glob(pattern):
        for pat in _glob_spellings(pattern):
            enc = "".join(c if (c.isalnum() or c in GLOB_CHARS or c == "]") else "-" for c in pat)
            if fnmatch.fnmatchcase(folder, enc) or fnmatch.fnmatchcase(folder, enc + "-*"):
                return True
        return False
    for spelling in {pattern.rstrip("/") or "/", resolved(pattern)}:
        enc = encoded(spelling)
        if folder == enc or folder.startswith(enc + "-"):
            return True
    return False


def excluded_by(project: str, cwd: str, patterns: list[str], folder: str = "") -> str | None:
    """The first pattern excluding a message of ``project`` written in ``cwd``, or None. A
    message with no cwd is judged by its transcript ``folder`` too."""
    for pat in patterns:
        if pattern_matches(pat, project) or pattern_matches(pat, cwd) or (not cwd and folder_matches(pat, folder)):
            return pat
    return None


# what `recall forget` removed (archive/forgotten.json) -------------------------------------------
def forgotten(t, session_id: str, project: str, cwd: str, uuid: str, ts: float, replay: bool = False) -> bool:
    """Whether a message (or a hit) is covered by the tombstones ``t`` (``indexer.archive.
    Tombstones``, or ``Forgotten`` on the reading side). ``replay``: it comes from the archive,
    where a rewritten message is already in its rewritten form.

    A forgotten project covers its messages by what they are, not by the name they were
    stored under: the same folder through a symlink or another case, a removed worktree
    (``indexer.project`` remembers it), and a folder a ``git init`` above it has since put
    in a larger repository (the message's folder is inside the forgotten project, and its
    project is not a repository of its own inside it)."""
    at = t.sessions.get(session_id)
    if at is not None and ts <= at:
        return True
    if t.projects:
        for p, at in t.projects.items():
            if ts <= at and _project_covers(t, p, project, cwd):
                return True
    if t.before:
        cut = max(t.before.get("*", 0.0), t.before.get(project, 0.0))
        if ts < cut:
            return True
    if uuid in t.messages:
        return True
    return not replay and uuid in t.rewritten


def _project_covers(t, forgotten_project: str, project: str, cwd: str) -> bool:
    if project == forgotten_project:
        return True
    cache = getattr(t, "_identity", None)
    if cache is None:
        cache = {}
        t._identity = cache
    key = (forgotten_project, project, cwd)
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 20_000:
            cache.clear()
        hit = same(project, forgotten_project) or (
            within(cwd, forgotten_project)
            and not (within(project, forgotten_project) and not same(project, forgotten_project))
        )
        cache[key] = hit
    return hit


_TOMBSTONE_MAPS = ("sessions", "projects", "before")  # key -> time
_TOMBSTONE_SETS = ("messages", "rewritten", "dropped")


def read_tombstones(path: Path, fields: tuple[str, ...] = _TOMBSTONE_MAPS + _TOMBSTONE_SETS) -> dict:
    """The ``fields`` of ``archive/forgotten.json`` (``indexer.archive.Tombstones`` documents
    them): every field of both kinds present, empty when the file is missing or damaged (a
    field after a damaged one too)."""
    out: dict = {k: {} for k in _TOMBSTONE_MAPS}
    out.update((k, set()) for k in _TOMBSTONE_SETS)
    data = read_json(path, {}, dict)
    try:
        for k in fields:
            if k in _TOMBSTONE_MAPS:
                out[k] = {str(a): float(t) for a, t in (data.get(k) or {}).items()}
            else:
                out[k] = {str(u) for u in data.get(k) or []}
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return out


class Forgotten:
    """``archive/forgotten.json`` read for the readers (the fields ``forgotten`` looks at),
    without importing the archive."""

    def __init__(self, path: Path) -> None:
        d = read_tombstones(path, ("sessions", "projects", "before", "messages"))
        self.sessions: dict[str, float] = d["sessions"]
        self.projects: dict[str, float] = d["projects"]
        self.before: dict[str, float] = d["before"]
        self.messages: set[str] = d["messages"]
        self.rewritten: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.sessions or self.projects or self.before or self.messages)


# controls.json: the pause and the sessions switched off ----------------------------------------
def controls_path() -> Path:
    return paths.recall_home() / "controls.json"


def read_controls() -> dict:
    return read_json(controls_path(), {}, dict)


@contextlib.contextmanager
def update_controls() -> Iterator[dict]:
    """Lock, load, yield the dict to change, write it back (atomically, 0600)."""
    import fcntl

    paths.home_dir()
    fd = os.open(paths.recall_home() / "controls.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = read_controls()
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            paths.atomic_write(controls_path(), json.dumps(data, indent=1) + "\n")
    finally:
        os.close(fd)


def current_pause(data: dict | None = None, now: float | None = None) -> dict | None:
    """``{"since": ts, "until": ts | None}`` while capture is paused, else None."""
    data = read_controls() if data is None else data
    p = data.get("pause")
    if not isinstance(p, dict) or not isinstance(p.get("since"), (int, float)):
        return None
    until = p.get("until")
    now = time.time() if now is None else now
    if isinstance(until, (int, float)) and until <= now:
        return None
    return {"since": float(p["since"]), "until": float(until) if isinstance(until, (int, float)) else None}


def _windows(data: dict) -> list[tuple[float, float]]:
    out = []
    for w in data.get("windows") or []:
        if isinstance(w, list) and len(w) == 2 and all(isinstance(x, (int, float)) for x in w):
            out.append((float(w[0]), float(w[1])))
    p = data.get("pause")
    if isinstance(p, dict) and isinstance(p.get("since"), (int, float)):
        until = p.get("until")
        out.append((float(p["since"]), float(until) if isinstance(until, (int, float)) else float("inf")))
    return out


def pause(until: float | None, now: float | None = None) -> dict:
    """Pause capture and injection from now until ``until`` (None: until ``resume``)."""
    now = time.time() if now is None else now
    with update_controls() as data:
        _close_expired(data, now)
        cur = current_pause(data, now)
        data["pause"] = {"since": cur["since"] if cur else now, "until": until}
    return data["pause"]


def _close_expired(data: dict, now: float) -> None:
    p = data.get("pause")
    if isinstance(p, dict) and current_pause(data, now) is None:
        if isinstance(p.get("since"), (int, float)) and isinstance(p.get("until"), (int, float)):
            data.setdefault("windows", []).append([float(p["since"]), float(p["until"])])
            data["windows"] = data["windows"][-MAX_WINDOWS:]
        data.pop("pause", None)


def resume(now: float | None = None) -> dict | None:
    """End the pause; returns the window it closed (None when not paused)."""
    now = time.time() if now is None else now
    with update_controls() as data:
        _close_expired(data, now)
        cur = current_pause(data, now)
        if cur is None:
            return None
        data.setdefault("windows", []).append([cur["since"], now])
        data["windows"] = data["windows"][-MAX_WINDOWS:]
        data.pop("pause", None)
    return {"since": cur["since"], "until": now}


def off_sessions(data: dict | None = None) -> dict[str, float]:
    data = read_controls() if data is None else data
    raw = data.get("off_sessions")
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float))} if isinstance(raw, dict) else {}


def switch_off(session_ids) -> list[str]:
    """Record sessions as switched off (``recall: off``); returns those that were not yet."""
    new: list[str] = []
    with update_controls() as data:
        off = data.get("off_sessions") if isinstance(data.get("off_sessions"), dict) else {}
        for sid in session_ids:
            if sid and sid not in off:
                off[sid] = time.time()
                new.append(sid)
        if len(off) > MAX_OFF_SESSIONS:
            off = dict(sorted(off.items(), key=lambda kv: kv[1])[-MAX_OFF_SESSIONS:])
        data["off_sessions"] = off
    return new


# the gate ---------------------------------------------------------------------------------------
class Gate:
    """Exclusions, the pause and the switched-off sessions, re-read whenever ``config.json``
    or ``controls.json`` changes (one ``stat`` each per check); for the readers (``hides``)
    also what ``recall forget`` removed, re-read when ``forgotten.json`` changes."""

    def __init__(self) -> None:
        self._stamp: tuple | None = None
        self.patterns: list[str] = []
        self.windows: list[tuple[float, float]] = []
        self.off: dict[str, float] = {}
        self._excluded: dict[tuple, bool] = {}  # (project, cwd, folder) -> excluded, per refresh
        self._forgotten: Forgotten | None = None
        self._forgotten_stamp: tuple | None = None

    @staticmethod
    def _mtime(path: Path):
        """What changes when the file does (its path too: a process-wide gate, say the
        readers', must not take another home's files for these)."""
        try:
            st = path.stat()
            return str(path), st.st_mtime_ns, st.st_size, st.st_ino
        except OSError:
            return (str(path),)

    def refresh(self) -> "Gate":
        stamp = (self._mtime(paths.config_path()), self._mtime(controls_path()))
        if stamp != self._stamp:
            self._stamp = stamp
            self.patterns = exclusions()
            data = read_controls()
            self.windows = _windows(data)
            self.off = off_sessions(data)
            self._excluded = {}
        return self

    def excluded(self, project: str, cwd: str, folder: str = "") -> bool:
        key = (project, cwd, folder if not cwd else "")
        hit = self._excluded.get(key)
        if hit is None:
            if len(self._excluded) > 10_000:
                self._excluded.clear()
            hit = self._excluded[key] = excluded_by(project, cwd, self.patterns, key[2]) is not None
        return hit

    def forgotten(self) -> Forgotten | None:
        """What ``recall forget`` removed (None when nothing), re-read when it changed."""
        path = paths.archive_dir() / "forgotten.json"
        stamp = self._mtime(path)
        if stamp != self._forgotten_stamp:
            self._forgotten_stamp = stamp
            self._forgotten = Forgotten(path) if len(stamp) > 1 else None
        return self._forgotten or None

    def invalidate(self) -> None:
        self._stamp = None

    def stamp(self) -> tuple:
        """What the gate has read (the config, the controls, what was forgotten), as of its last
        ``refresh``: a cache of what readers may show keys on it."""
        self.forgotten()
        return self._stamp, self._forgotten_stamp

    def __bool__(self) -> bool:
        return bool(self.patterns or self.windows or self.off)

    def hides(
        self, project: str, cwd: str, session_id: str, uuid: str = "", ts: float | None = None, kind: str = "message"
    ) -> str | None:
        """Why a hit must not be shown to anyone ("off", "excluded", "forgotten", "paused"),
        or None: the readers' side of ``refuses``, with what ``recall forget`` removed (the
        index may still hold it while a forget is under way)."""
        if session_id and session_id in self.off:
            return "off"
        if self.patterns and self.excluded(project, cwd):
            return "excluded"
        if ts is not None:
            f = self.forgotten()
            if f and forgotten(f, session_id, project, cwd, uuid if kind == "message" else "", ts, replay=True):
                return "forgotten"
            if kind == "message" and ts and self.windows and self.paused_at(ts):
                return "paused"
        return None

    def readers_see_all(self) -> bool:
        """Nothing is kept from the readers: no exclusion, no session off, no pause window,
        nothing forgotten (a reader can skip the per-hit checks)."""
        return not (self.patterns or self.off or self.windows or self.forgotten())

    def paused_at(self, ts: float) -> bool:
        return any(a <= ts < b for a, b in self.windows)

    def refuses(self, project: str, cwd: str, session_id: str, ts: float, folder: str = "") -> str | None:
        """Why a message is kept out ("excluded", "paused", "off"), or None."""
        if session_id in self.off:
            return "off"
        if self.patterns and self.excluded(project, cwd, folder):
            return "excluded"
        if self.windows and self.paused_at(ts):
            return "paused"
        return None


def admit(
    messages: list,
    gate: Gate,
    tombstones=None,
    stats=None,
    replay: bool = False,
    session_facts=None,
    upgrade: bool = False,
) -> tuple[list[int], list[str]]:
    """The ingest filter: (indices of the messages to keep, sessions switched off that the
    archive and the index must now be rid of); a message a standing ``--secret`` rule
    rewrites is replaced in ``messages``. A ``recall: off`` prompt among the messages
    switches its session off at once. ``replay``: the messages come from the archive.
    ``session_facts(session_id)``: what is known of a session (``by_session``). ``upgrade``
    (the index writer's): a legacy rule that caught its text is replaced by a keyed one.

    A message a ``--secret`` forget rewrote (``rewritten``), read again from its transcript,
    comes back with the value cut out when a standing rule finds it there (the archive held
    its cut copy, or held nothing any more after a purge that kept the records); when no
    rule does, it stays out whole, as before."""
    gate.refresh()
    judged = by_session(messages, session_facts, assign=not replay)
    marked = {
        m.session_id for m in messages if m.role == "user" and m.session_id not in gate.off and is_off_marker(m.text)
    }
    if marked:
        switch_off(sorted(marked))
        gate.invalidate()
        gate.refresh()
    drop: list[str] = []
    if gate.off:
        done = tombstones.dropped if tombstones is not None else set()
        drop = sorted({m.session_id for m in messages if m.session_id in gate.off} - done)
    if not gate and not tombstones:
        return list(range(len(messages))), drop
    keep = []
    rules = getattr(tombstones, "rules", None) if not replay else None
    ruled: list[int] = []  # the messages the standing rules judge, all at once below
    for i, m in enumerate(messages):
        project, cwd, ts = judged.get(i) or (m.project, m.cwd, m.timestamp)
        why = gate.refuses(project, cwd, m.session_id, ts, _folder(m)) if gate else None
        if why is None and tombstones and tombstones.covers(m, replay=replay):
            why = "forgotten"
            if rules and m.uuid in tombstones.rewritten and not tombstones.covers(m, replay=True):
                # a message a --secret forget rewrote, read from its transcript again: the
                # archive's copy has the value cut out; with no copy there (a purge kept the
                # records), the rules cut it out of this one, the rest comes back
                why = None
                ruled.append(~i)
        if why is None:
            if rules:
                if not ruled or ruled[-1] != ~i:
                    ruled.append(i)
            else:
                keep.append(i)
        elif stats is not None:
            stats[why] += 1
    if ruled:  # a forget's --match/--secret, standing (indexer.forget_rules)
        from indexer.forget_rules import apply_many

        found: list | None = [] if upgrade else None
        idx = [i if i >= 0 else ~i for i in ruled]
        after = apply_many(rules, [messages[i] for i in idx], found)
        for r, i, m in zip(ruled, idx, after):
            if m is None or (r < 0 and m is messages[i]):  # dropped; or nothing to cut out of it
                if stats is not None:
                    stats["forgotten"] += 1
                continue
            messages[i] = m
            keep.append(i)
        keep.sort()
        if found:
            tombstones.upgrade_rules(found)
    return keep, drop


def _folder(m) -> str:
    """The transcript folder a message was read from (Claude Code's encoding of its cwd)."""
    source = getattr(m, "source", "") or ""
    if m.cwd or not source:
        return ""
    parts = source.replace("\\", "/").split("/")
    if len(parts) >= 4 and parts[-2] == "subagents":
        return parts[-4]
    return parts[-2] if len(parts) >= 2 else ""


def by_session(messages: list, session_facts=None, assign: bool = True) -> dict[int, tuple[str, str, float]]:
    """The (project, cwd, time) to judge a message by when it names no working directory or
    no time (Claude Code's ``summary`` lines): those of its session, so that exclusions and
    the pause judge it as they judge the rest of the session. From another message of the
    session in the same read (the next, else the one before), else what is known of the
    session (``session_facts(session_id)`` -> an object with ``project``, ``cwd``,
    ``ended``), else for the time the transcript's modification time. ``assign``: the
    messages are fresh from a transcript and take these values (they are stored with their
    session's project); from the archive they stay as stored. By message index."""
    out: dict[int, tuple[str, str, float]] = {}
    need = [i for i, m in enumerate(messages) if not m.cwd or not m.timestamp]
    if not need:
        return out
    full: dict[str, list[int]] = {}  # session -> its messages that have both, in order
    for j, o in enumerate(messages):
        if o.cwd and o.timestamp:
            full.setdefault(o.session_id, []).append(j)
    for i in need:
        m = messages[i]
        near = None
        known = full.get(m.session_id)
        if known:  # the next one (a summary heads what it summarises), else the one before
            k = bisect_left(known, i)
            near = messages[known[k] if k < len(known) else known[-1]]
        from_facts = False
        if near is None and session_facts is not None:
            try:
                near = session_facts(m.session_id)
                from_facts = near is not None
            except Exception:  # noqa: BLE001 - no facts: judged by what it has
                near = None
        project, cwd, ts = m.project, m.cwd, m.timestamp
        if near is not None:
            if not cwd and getattr(near, "cwd", ""):
                cwd, project = near.cwd, near.project or project
            if not ts:
                ts = float(getattr(near, "timestamp", 0.0) or getattr(near, "ended", 0.0) or 0.0)
                if from_facts and assign and getattr(m, "source", ""):
                    # a line with no time appended to a session read before (a summary written
                    # during a pause): not older than the write that brought it
                    try:
                        ts = max(ts, os.stat(m.source).st_mtime)
                    except OSError:
                        pass
        if not ts and getattr(m, "source", ""):
            try:
                ts = os.stat(m.source).st_mtime
            except OSError:
                ts = time.time()
        out[i] = (project, cwd, ts)
        if assign:
            m.project, m.cwd, m.timestamp = project, cwd, ts
    return out


def shown(hits: list, gate: Gate | None = None) -> list:
    """``hits`` without those no reader may show (``Gate.hides``): the one gate of the prompt
    hook (with or without the service), the CLI, MCP and ``recall ask``. A hit is anything
    with ``project``, ``cwd``, ``session_id``, ``uuid``, ``timestamp`` (ISO 8601 or epoch
    seconds) and ``kind``."""
    gate = (gate or reader_gate()).refresh()
    if not hits or gate.readers_see_all():
        return hits
    return [
        h
        for h in hits
        if gate.hides(
            h.project, h.cwd, h.session_id, h.uuid, _epoch(h.timestamp), getattr(h, "kind", "message") or "message"
        )
        is None
    ]


def _epoch(ts) -> float:
    if isinstance(ts, (int, float)):
        return float(ts)
    if not ts:
        return 0.0
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


_reader_gate: Gate | None = None


def reader_gate() -> Gate:
    """One Gate per process for the readers (refreshed on each use)."""
    global _reader_gate
    if _reader_gate is None:
        _reader_gate = Gate()
    return _reader_gate


def hook_refusal(cwd: str | None, session_id: str | None, prompt, cfg: dict | None = None) -> str | None:
    """Why the prompt hook must inject nothing here ("paused", "off", "excluded"), or None.
    Cheap: one small JSON file and the config the hook has already read."""
    if is_off_marker(prompt):
        if session_id:
            switch_off([session_id])
        return "off"
    data = read_controls()
    if current_pause(data) is not None:
        return "paused"
    if session_id and session_id in off_sessions(data):
        return "off"
    patterns = exclusions(cfg)
    if patterns and cwd:
        from indexer.project import canonical_project

        cwd = os.path.abspath(cwd)
        if excluded_by(canonical_project(cwd), cwd, patterns):
            return "excluded"
    return None
