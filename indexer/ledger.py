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

``controls.json`` is small (the hook reads it on every prompt), written under a flock by
whoever changes it, atomically, 0600.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import time
from pathlib import Path
from typing import Iterator

from recall.core import config, paths

OFF_MARKER = "recall: off"
MAX_WINDOWS = 500        # closed pause windows kept (oldest dropped)
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


def pattern_matches(pattern: str, path: str) -> bool:
    if not path:
        return False
    if is_glob(pattern):
        return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern.rstrip("/") + "/*")
    p = pattern.rstrip("/") or "/"
    return path == p or path.startswith(p + "/") or p == "/"


def excluded_by(project: str, cwd: str, patterns: list[str]) -> str | None:
    """The first pattern excluding a message of ``project`` written in ``cwd``, or None."""
    for pat in patterns:
        if pattern_matches(pat, project) or pattern_matches(pat, cwd):
            return pat
    return None


# controls.json: the pause and the sessions switched off ----------------------------------------
def controls_path() -> Path:
    return paths.recall_home() / "controls.json"


def read_controls() -> dict:
    try:
        data = json.loads(controls_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
    or ``controls.json`` changes (one ``stat`` each per check)."""

    def __init__(self) -> None:
        self._stamp: tuple | None = None
        self.patterns: list[str] = []
        self.windows: list[tuple[float, float]] = []
        self.off: dict[str, float] = {}
        self._excluded: dict[tuple[str, str], bool] = {}  # (project, cwd) -> excluded, per refresh

    @staticmethod
    def _mtime(path: Path):
        try:
            st = path.stat()
            return st.st_mtime_ns, st.st_size, st.st_ino
        except OSError:
            return None

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

    def excluded(self, project: str, cwd: str) -> bool:
        key = (project, cwd)
        hit = self._excluded.get(key)
        if hit is None:
            if len(self._excluded) > 10_000:
                self._excluded.clear()
            hit = self._excluded[key] = excluded_by(project, cwd, self.patterns) is not None
        return hit

    def invalidate(self) -> None:
        self._stamp = None

    def __bool__(self) -> bool:
        return bool(self.patterns or self.windows or self.off)

    def hides(self, project: str, cwd: str, session_id: str) -> bool:
        """Whether a search hit must not be shown (an excluded project, a session switched off)."""
        return session_id in self.off or bool(self.patterns and self.excluded(project, cwd))

    def paused_at(self, ts: float) -> bool:
        return any(a <= ts < b for a, b in self.windows)

    def refuses(self, project: str, cwd: str, session_id: str, ts: float) -> str | None:
        """Why a message is kept out ("excluded", "paused", "off"), or None."""
        if session_id in self.off:
            return "off"
        if self.patterns and self.excluded(project, cwd):
            return "excluded"
        if self.windows and self.paused_at(ts):
            return "paused"
        return None


def admit(messages: list, gate: Gate, tombstones=None, stats=None, replay: bool = False) -> tuple[list[int], list[str]]:
    """The ingest filter: (indices of the messages to keep, sessions switched off that the
    archive and the index must now be rid of). A ``recall: off`` prompt among the messages
    switches its session off at once. ``replay``: the messages come from the archive."""
    gate.refresh()
    marked = {m.session_id for m in messages
              if m.role == "user" and m.session_id not in gate.off and is_off_marker(m.text)}
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
    for i, m in enumerate(messages):
        why = gate.refuses(m.project, m.cwd, m.session_id, m.timestamp) if gate else None
        if why is None and tombstones and tombstones.covers(m, replay=replay):
            why = "forgotten"
        if why is None:
            keep.append(i)
        elif stats is not None:
            stats[why] += 1
    return keep, drop


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
