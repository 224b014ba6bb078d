"""Marks on recalled text: the project files a hit names, or its session wrote, that changed,
moved or were deleted since.

``mark_hits(hits, cwd)`` fills each hit's ``stale`` with::

    [{"path": "src/lib/refunds.ts", "state": "changed" | "deleted" | "renamed",
      "since": ISO 8601 UTC or None, "to": the new path (renamed only)}]

empty when nothing changed. Every edge that shows hits calls it: the prompt hook, ``recall
--raw``/``--json`` (in the service, or in-process), the MCP tools and ``recall ask``.

Which files: the paths the hit's text (and the reply or question it carries) names, then
the files its session wrote, edited, moved or deleted (``indexer.touches``, state.db), at
most ``MAX_CHECK`` per hit. Against what: the working tree the caller is in (``cwd``), when
it belongs to the hit's project, else the project's root; a project folder that is gone
marks nothing. A file is

* **changed** when a later session wrote or edited it (state.db), or its modification time
  is later than the session (``SLACK`` seconds of skew allowed). A file the session wrote
  whole (Write) that still has the size it wrote and no later session touched is taken as
  unchanged: a checkout or a branch switch refreshes a file's time, not its content;
* **renamed** when it is gone and a later session moved it (``mv``, ``git mv``);
* **deleted** when it is gone and it existed (a session touched it).

"Since" is measured from the end of the hit's session: what the session itself did after
the recalled message is part of what it concluded. A path a text names that no session
touched and that does not exist is not a project file (a URL's tail, ``node.js``): no mark.

Cost: per hit a few ``stat`` calls and two SQLite lookups on state.db (read-only, no lock),
no subprocess, no file read: the hook's budget. For ``recall sessions`` and ``recall show``
(``session_marks``, ``session_files``) a same-size file is read to be sure, and ``recall
show`` asks git for the commits since and who made them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from indexer.touches import Touches, files_root, paths_in_text, relative, state_connection

MAX_CHECK = 10  # files looked at (stat) per hit
MAX_MARKS = 20  # marks kept per hit
SLACK = 5.0  # seconds between a transcript line's time and the file's mtime
TEXT_CHARS = 20_000  # of a hit's text (with its reply or question) scanned for paths


def epoch(iso: str | None) -> float:
    """Seconds since the epoch of an ISO 8601 time (0 when there is none)."""
    if not iso:
        return 0.0
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def iso(ts: float | None) -> str | None:
    if not ts:
        return None
    from recall.search.hit import iso as _iso

    return _iso(ts)


# ------------------------------------------------------------------------------- one hit
def _named(hit, project: str, root: str) -> list[str]:
    """The project-relative paths the hit's text names (absolute ones under the project, or
    under the tree its session ran in; relative ones as written)."""
    text = hit.text or ""
    for extra in (getattr(hit, "reply", None), getattr(hit, "question", None)):
        if extra:
            text += "\n" + extra
    out = []
    for tok in paths_in_text(text[:TEXT_CHARS]):
        if os.path.isabs(tok):
            rel = relative(tok, root, project) or (relative(tok, hit.cwd, project) if hit.cwd else None)
        else:
            rel = os.path.normpath(tok).replace(os.sep, "/")
            if rel.startswith(".."):
                rel = None
        if rel and rel not in out:
            out.append(rel)
    return out


def _stat_of(root: str, rel: str, cache: dict):
    """The file's ``stat``, or None when it is gone or is not the project's: a symlink (or a
    folder link on the way) that leads out of the project is not followed."""
    if rel not in cache:
        path = os.path.join(root, rel)
        try:
            st = os.lstat(path)
            if os.path.islink(path) or _linked_dir(root, rel):
                real = os.path.realpath(path)
                top = cache.get("\0root")
                if top is None:
                    top = cache["\0root"] = os.path.realpath(root)
                if os.path.commonpath([real, top]) != top:
                    cache[rel] = "outside"
                    return cache[rel]
                st = os.stat(path)
            cache[rel] = st
        except (OSError, ValueError):
            cache[rel] = None
    return cache[rel]


def _linked_dir(root: str, rel: str) -> bool:
    """Whether a folder on the way from ``root`` to ``rel`` is a symlink."""
    parts = rel.replace("\\", "/").split("/")[:-1]
    here = root
    for part in parts:
        here = os.path.join(here, part)
        if os.path.islink(here):
            return True
    return False


@dataclass
class Ground:
    """What the files of one project are judged against: its folder (``root``), the paths any
    of its sessions touched (``known``), the touches of every session by path (``later``,
    ``Touches.history``), and the stat calls already made (``stats``, shared by its hits)."""

    root: str
    known: set[str]
    later: dict[str, list[tuple]]
    stats: dict = field(default_factory=dict)


def judge(
    session_id: str,
    own: dict[str, tuple],
    base: float,
    ground: Ground,
    candidates: list[tuple[str, bool]],
    limit: int = MAX_CHECK,
    verify: bool = False,
) -> list[dict]:
    """The marks of one hit of ``session_id`` (or of the session itself; ``own``: its touches,
    ``base``: when it ended): ``candidates`` (path, named in its text) looked at in order, at
    most ``limit``. ``verify``: a file its session wrote whole that still has that size is read
    to tell (never on the hook's path)."""
    import stat as _stat

    root, known, later, stats = ground.root, ground.known, ground.later, ground.stats

    marks: list[dict] = []
    checked = 0
    for rel, named in candidates:
        if checked >= limit:
            break
        mine = own.get(rel)
        if mine is not None and mine[0] in ("delete", "move"):
            continue  # its own session removed it: that is what it says, not a change since
        after = [r for r in later.get(rel, ()) if r[0] > base + SLACK and r[1] != session_id]
        checked += 1
        st = _stat_of(root, rel, stats)
        if st == "outside":
            continue  # a link out of the project: not a file of it
        if st is not None:
            if not _stat.S_ISREG(st.st_mode):
                continue
            from indexer.touches import fingerprint_size

            wrote = fingerprint_size(mine[2]) if mine is not None and mine[0] == "write" else None
            if after:
                marks.append({"path": rel, "state": "changed", "since": iso(after[0][0])})
            elif st.st_mtime > base + SLACK:
                if wrote == st.st_size and (not verify or _same_content(os.path.join(root, rel), mine[2])):
                    continue  # the content it wrote (by its size, or read): a checkout refreshed its time
                marks.append({"path": rel, "state": "changed", "since": iso(st.st_mtime)})
            elif wrote is not None and wrote != st.st_size and st.st_mtime > base:
                # edited within the slack after the session ended: not the size it wrote
                marks.append({"path": rel, "state": "changed", "since": iso(st.st_mtime)})
            continue
        if not (mine is not None or rel in known):
            continue  # never a file of this project as far as anyone knows
        moves = [r for r in after if r[2] == "move" and r[3]]
        gone = [r for r in after if r[2] in ("delete", "move")]
        if moves and moves[-1] is gone[-1]:
            marks.append({"path": rel, "state": "renamed", "since": iso(moves[-1][0]), "to": moves[-1][3]})
        else:
            marks.append({"path": rel, "state": "deleted", "since": iso(gone[-1][0]) if gone else None})
    return marks[: max(MAX_MARKS, limit)]


def _same_content(path: str, fp: str) -> bool:
    from indexer.touches import content_fingerprint

    try:
        with open(path, "rb") as fh:
            return content_fingerprint(fh.read(64 << 20)) == fp
    except OSError:
        return False


def _candidates(named: list[str], own: dict[str, tuple], limit: int = 3 * MAX_CHECK) -> list[tuple[str, bool]]:
    """The named paths first, then what the session wrote (newest first; a move's new path)."""
    out: dict[str, bool] = {rel: True for rel in named}
    for rel, (op, _ts, _fp, dest) in sorted(own.items(), key=lambda kv: -kv[1][1]):
        if op == "move" and dest:
            out.setdefault(dest, False)
        elif op in ("write", "edit"):
            out.setdefault(rel, False)
    return list(out.items())[:limit]


# ------------------------------------------------------------------------------- every hit
def mark_hits(hits: list, cwd: str | None = None) -> list:
    """Fill ``hit.stale`` of each hit (see the module docstring); returns ``hits``. Never
    raises: a hit it cannot judge keeps an empty list."""
    try:
        _mark(hits, cwd)
    except Exception as exc:  # noqa: BLE001 - a mark is a hint: never the search
        try:
            from recall.core import log

            log.get("search").warning("stale marks skipped: %s: %s", type(exc).__name__, exc)
        except Exception:
            pass
    return hits


def _mark(hits: list, cwd: str | None) -> None:
    by_project: dict[str, list] = {}
    for h in hits:
        if getattr(h, "stale", None) is None:
            h.stale = []
        if h.project:
            by_project.setdefault(h.project, []).append(h)
    if not by_project:
        return
    conn = state_connection()
    for project, group in by_project.items():
        root = files_root(project, cwd)
        if not root or root == "/" or not os.path.isdir(root):
            continue  # the project's folder is gone (or elsewhere): nothing to compare with
        db = Touches(conn, project)
        sessions = sorted({h.session_id for h in group if h.session_id and h.kind != "memory"})
        own_all, ends = db.own(sessions)
        plans = []
        for h in group:
            ts = epoch(h.timestamp)
            own = own_all.get(h.session_id, {}) if h.kind != "memory" else {}
            base = max(ts, ends.get(h.session_id, 0.0)) if h.kind != "memory" else ts
            base = max([base, *(t[1] for t in own.values())])
            plans.append((h, own, base, _candidates(_named(h, project, root), own)))
        paths = sorted({rel for _h, _o, _b, cands in plans for rel, _n in cands})
        if not paths:
            continue
        ground = Ground(root, *db.history(paths, min(p[2] for p in plans)))
        for h, own, base, cands in plans:
            h.stale = judge(h.session_id, own, base, ground, cands)


# ------------------------------------------------------------------------------- sessions
MAX_SESSION_FILES = 200


def session_marks(sessions: list, cwd: str | None = None) -> dict[str, list[dict]]:
    """For ``recall sessions``: ``{session: marks}`` of the files each session wrote, edited or
    moved that changed, moved or were deleted after it ended (``indexer.state.SessionInfo``s)."""
    out: dict[str, list[dict]] = {}
    try:
        conn = state_connection()
        by_project: dict[str, list] = {}
        for s in sessions:
            by_project.setdefault(s.project, []).append(s)
        for project, group in by_project.items():
            root = files_root(project, cwd)
            if not project or not root or root == "/" or not os.path.isdir(root):
                continue
            db = Touches(conn, project)
            own_all, ends = db.own([s.session_id for s in group])
            plans = []
            for s in group:
                own = own_all.get(s.session_id, {})
                base = max([ends.get(s.session_id, s.ended or 0.0), *(t[1] for t in own.values())])
                plans.append((s.session_id, own, base, _candidates([], own, MAX_SESSION_FILES)))
            paths = sorted({rel for *_x, cands in plans for rel, _n in cands})
            if not paths:
                continue
            ground = Ground(root, *db.history(paths, min(p[2] for p in plans)))
            for sid, own, base, cands in plans:
                out[sid] = judge(sid, own, base, ground, cands, limit=MAX_SESSION_FILES, verify=True)
    except Exception as exc:  # noqa: BLE001 - a hint, never the listing
        from recall.core import log

        log.get("search").warning("stale marks of sessions skipped: %s: %s", type(exc).__name__, exc)
    return out


def session_files(session, cwd: str | None = None, git: bool = True) -> list[dict]:
    """For ``recall show``: every file ``session`` wrote, edited, moved or deleted, as
    ``{"path", "op", "state": "unchanged" | "changed" | "deleted" | "renamed", "since", "to"?,
    "commits": [{"commit", "author", "date"}]}`` (the commits since the session that touched
    it, from git when the project is a repository: ``git`` may be asked here, never by the hook)."""
    project = session.project
    root = files_root(project, cwd)
    if not project or not root or not os.path.isdir(root):
        return []
    db = Touches(state_connection(), project)
    own_all, ends = db.own([session.session_id])
    own = own_all.get(session.session_id, {})
    if not own:
        return []
    base = max([ends.get(session.session_id, session.ended or 0.0), *(t[1] for t in own.values())])
    cands = _candidates([], own, MAX_SESSION_FILES)
    ground = Ground(root, *db.history([rel for rel, _n in cands], base))
    marks = {
        m["path"]: m for m in judge(session.session_id, own, base, ground, cands, limit=MAX_SESSION_FILES, verify=True)
    }
    rows = []
    for rel, (op, ts, _fp, dest) in sorted(own.items()):
        path = dest if op == "move" and dest else rel
        row = {"path": rel, "op": op, "state": "unchanged", "since": None}
        if op == "move" and dest:
            row["to"] = dest
        if op == "delete":
            row["state"] = "deleted"
            row["since"] = iso(ts)
        m = marks.get(path)
        if m is not None:
            row.update({k: v for k, v in m.items() if k != "path"})
        rows.append(row)
    if git:
        _git_details(root, base, rows)
    return rows


GIT_TIMEOUT = 10.0


def _git(root: str, args: list[str]) -> str | None:
    import shutil
    import subprocess

    exe = shutil.which("git")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "-C", root, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            errors="replace",
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_details(root: str, since: float, rows: list[dict]) -> None:
    """The commits since ``since`` that touched each changed file (who, when), and for a file
    that is gone, the commit that deleted or renamed it."""
    from indexer.project import worktree_top

    if not worktree_top(root):
        return
    after = f"--since=@{int(since)}"
    fmt = "--format=%x00%h%x09%an%x09%aI"
    changed = [r for r in rows if r["state"] == "changed"]
    if changed:
        out = _git(
            root, ["log", after, fmt, "--name-only", "-n", "500", "--", *[r.get("to") or r["path"] for r in changed]]
        )
        by_path: dict[str, list[dict]] = {}
        for commit, files in _commits(out or ""):
            for f in files:
                by_path.setdefault(f, []).append(commit)
        for r in changed:
            r["commits"] = by_path.get(r.get("to") or r["path"], [])
    gone = [r for r in rows if r["state"] == "deleted" and r["op"] != "delete"]
    if gone:
        out = _git(root, ["log", after, fmt, "-M", "--diff-filter=DR", "--name-status", "-n", "500"])
        events: dict[str, tuple[dict, str, str]] = {}
        for commit, lines in _commits(out or "", status=True):
            for line in lines:
                parts = line.split("\t")
                if parts[0].startswith("R") and len(parts) == 3:
                    events.setdefault(parts[1], (commit, "renamed", parts[2]))
                elif parts[0] == "D" and len(parts) == 2:
                    events.setdefault(parts[1], (commit, "deleted", ""))
        for r in gone:
            ev = events.get(r["path"])
            if ev is None:
                continue
            commit, state, to = ev
            r["commits"] = [commit]
            r["since"] = r.get("since") or iso(epoch(commit["date"]))
            if state == "renamed":
                r.update(state="renamed", to=to)


def _commits(out: str, status: bool = False):
    """(commit dict, its file lines) of ``git log --format=%x00%h%x09%an%x09%aI --name-*``."""
    for block in out.split("\0")[1:]:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = lines[0].split("\t")
        if len(head) < 3:
            continue
        commit = {"commit": head[0], "author": head[1], "date": head[2]}
        yield commit, lines[1:]
