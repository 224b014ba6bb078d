"""Which project files a session wrote: the *touches* of its tool calls, and what they say now.

At index time every call of Write, Edit, MultiEdit and NotebookEdit, and every Bash command
that moves or deletes files (``mv``, ``git mv``, ``rm``, ``git rm``, ``unlink``), becomes a
touch on its message (``Message.touched``)::

    [op, path, fingerprint, destination]   # op: write | edit | move | delete

A call whose result is an error (it failed, or the user refused it) wrote nothing: its result
message carries ``["undo", path, op, <the call's message uuid>]``, which takes the touch back.

``path`` (and a move's ``destination``) is relative to the top of the working tree the
session ran in (``indexer.project.worktree_top``), so a path means the same file in every
worktree of a repository; a path outside the project (``/tmp/x``, ``~/.bashrc``) is not a
touch. A Write's ``fingerprint`` is ``<sha256 prefix>:<bytes>`` of the content it wrote, so
the file's size alone (one ``stat``) tells when it no longer holds that content. Touches are
kept in the archive with their message (a rebuild recreates them; a record archived before
touches existed gets them from its text, by ``derive``, without the fingerprint) and in
state.db's ``touches`` table (``indexer.state``), which ``recall forget`` and exclusions
clear with the session's other facts.

Also here, shared by the marks on recalled text (``recall.search.stale``) and on typed
memories (``recall.memory.stale``): the paths a text names (``paths_in_text``), a file's
content fingerprint and line sketch (how much of it changed), and the mark's wording
(``describe``).
"""

from __future__ import annotations

import os
import re
import threading

from indexer.project import worktree_top

OPS = ("write", "edit", "move", "delete")
TOUCH_TOOLS = {"Write": "write", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit"}
MAX_TOUCHES = 64  # per message (a `rm` of a long file list)
_BASH_HINT = r"(?:^|[\s;&|(`])(?:mv|rm|unlink)\s"
_GLOB = r"[*?\[\]{}$`]"
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_PREFIX_WORDS = {"sudo", "command", "nohup", "time", "exec", "builtin"}


# ------------------------------------------------------------------------------- paths
def relative(path: str, cwd: str, project: str) -> str | None:
    """``path`` (absolute, or relative to ``cwd``) relative to the working tree ``cwd`` is in,
    else to ``project``; None when it is outside both, or climbs out with ``..``."""
    if not path or "\0" in path:
        return None
    if path.startswith("~"):
        return None
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(cwd, path)
    path = os.path.normpath(path)
    bases = [b for b in (worktree_top(cwd) if cwd else "", project, cwd) if b and b != "/"]
    for base in bases:
        base = os.path.normpath(base)
        if path.startswith(base + os.sep):
            rel = path[len(base) + 1 :]
            if rel and not rel.startswith(".."):
                return rel.replace(os.sep, "/")
    return None


def files_root(project: str, cwd: str | None) -> str:
    """Where ``project``'s files are looked at: the working tree ``cwd`` is in when it is one
    of ``project``'s (a linked worktree sees its own files), else the project root."""
    if cwd:
        from indexer.project import canonical_project, worktree_top

        top = worktree_top(os.path.abspath(cwd))
        if top and canonical_project(top) == project:
            return top
    return project


# ------------------------------------------------------------------------------- state.db
_local = threading.local()


def state_connection():
    """A read-only connection to state.db, one per thread (None when there is no state.db)."""
    import sqlite3

    from recall.core import paths

    path = paths.state_db_path()
    try:
        ino = os.stat(path).st_ino
    except OSError:
        return None
    cached = getattr(_local, "conn", None)
    if cached is not None and cached[0] == (str(path), ino):
        return cached[1]
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        conn.execute("SELECT 1 FROM touches LIMIT 1")
    except sqlite3.Error:
        return None
    if cached is not None:
        try:
            cached[1].close()
        except Exception:
            pass
    _local.conn = ((str(path), ino), conn)
    return conn


def _in(n: int) -> str:
    return ",".join("?" * n)


class Touches:
    """What state.db says about the files of one project (queries batched per call)."""

    def __init__(self, conn, project: str) -> None:
        self.conn = conn
        self.project = project

    def own(self, sessions: list[str]) -> tuple[dict[str, dict[str, tuple]], dict[str, float]]:
        """({session: {path: (op, ts, fp, dest) of its last touch}}, {session: its end})."""
        if self.conn is None or not sessions:
            return {}, {}
        import sqlite3

        own: dict[str, dict[str, tuple]] = {}
        ends: dict[str, float] = {}
        try:
            for sid, path, op, ts, fp, dest in self.conn.execute(
                f"SELECT session_id, path, op, MAX(ts), fp, dest FROM touches WHERE session_id IN "
                f"({_in(len(sessions))}) GROUP BY session_id, path",
                sessions,
            ):
                own.setdefault(sid, {})[path] = (op, ts or 0.0, fp or "", dest or "")
            for sid, ended in self.conn.execute(
                f"SELECT session_id, ended FROM sessions WHERE session_id IN ({_in(len(sessions))})", sessions
            ):
                ends[sid] = float(ended or 0.0)
        except sqlite3.Error:
            return {}, {}
        return own, ends

    def history(self, paths: list[str], after: float) -> tuple[set[str], dict[str, list[tuple]]]:
        """(the paths any session ever touched, {path: [(ts, session, op, dest)] after ``after``})."""
        if self.conn is None or not paths:
            return set(), {}
        import sqlite3

        known: set[str] = set()
        later: dict[str, list[tuple]] = {}
        try:
            args = [self.project, *paths]
            for (path,) in self.conn.execute(
                f"SELECT DISTINCT path FROM touches WHERE project=? AND path IN ({_in(len(paths))})", args
            ):
                known.add(path)
            if known:
                for path, ts, sid, op, dest in self.conn.execute(
                    f"SELECT path, ts, session_id, op, dest FROM touches WHERE project=? AND path IN "
                    f"({_in(len(paths))}) AND ts > ? ORDER BY ts LIMIT 5000",
                    [*args, after],
                ):
                    later.setdefault(path, []).append((ts, sid, op, dest))
        except sqlite3.Error:
            return set(), {}
        return known, later


# ------------------------------------------------------------------------------- fingerprints
def content_fingerprint(data: bytes) -> str:
    """``<12 hex of sha256>:<length>``: which content a file held (its size tells most changes)."""
    import hashlib

    return f"{hashlib.sha256(data).hexdigest()[:12]}:{len(data)}"


def fingerprint_size(fp: str) -> int | None:
    """The byte length a fingerprint records (None when it records none)."""
    _, sep, size = (fp or "").rpartition(":")
    return int(size) if sep and size.isdigit() else None


SKETCH_SIZE = 16
_MASK = (1 << 32) - 1


def line_sketch(data: bytes) -> str:
    """A MinHash of the file's distinct non-blank lines (16 × 32 bits, as hex): two sketches
    estimate how much of the lines two versions share (``sketch_similarity``)."""
    import hashlib

    lines = {ln.strip() for ln in data.splitlines() if ln.strip()}
    if not lines:
        return ""
    hashes = [int.from_bytes(hashlib.blake2b(ln, digest_size=8).digest(), "big") for ln in lines]
    out = []
    for i in range(SKETCH_SIZE):
        a, b = (0x9E3779B1 * (2 * i + 1)) & _MASK, (0x85EBCA77 * (i + 7)) & _MASK
        out.append(min(((h * a + b) >> 11) & _MASK for h in hashes))
    return "".join(f"{v:08x}" for v in out)


def sketch_similarity(a: str, b: str) -> float | None:
    """The estimated share of distinct lines two versions have in common (Jaccard), 0..1;
    None when either sketch is missing."""
    if not a or not b or len(a) != len(b):
        return None
    n = len(a) // 8
    same = sum(a[i * 8 : (i + 1) * 8] == b[i * 8 : (i + 1) * 8] for i in range(n))
    return same / n


# ------------------------------------------------------------------------------- tool calls
def tool_touches(name: str, inp, cwd: str, project: str) -> list[list[str]]:
    """The touches of one tool call (``name``, its ``input``)."""
    if not isinstance(inp, dict):
        return []
    op = TOUCH_TOOLS.get(name)
    if op is not None:
        path = inp.get("notebook_path") if name == "NotebookEdit" else inp.get("file_path")
        if not isinstance(path, str):
            path = inp.get("file_path") or inp.get("path")
        rel = relative(path, cwd, project) if isinstance(path, str) else None
        if rel is None:
            return []
        fp = ""
        content = inp.get("content")
        if name == "Write" and isinstance(content, str):
            fp = content_fingerprint(content.encode("utf-8", "surrogatepass"))
        return [[op, rel, fp, ""]]
    if name == "Bash":
        command = inp.get("command")
        return bash_touches(command, cwd, project) if isinstance(command, str) else []
    return []


def _segments(command: str):
    """The simple commands of a shell command line, each as its words (best effort: a line
    that does not split cleanly is skipped)."""
    import shlex

    for line in command.splitlines():
        if not re.search(_BASH_HINT, " " + line + " "):
            continue
        try:
            lex = shlex.shlex(line, posix=True, punctuation_chars=True)
            lex.whitespace_split = True
            words = list(lex)
        except ValueError:
            continue
        current: list[str] = []
        for w in words:
            if w in _SEPARATORS:
                if current:
                    yield current
                current = []
            else:
                current.append(w)
        if current:
            yield current


def _strip_prefix(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) and (
        "=" in words[i]
        and not words[i].startswith("-")
        and words[i].split("=")[0].isidentifier()
        or words[i] in _PREFIX_WORDS
    ):
        i += 1
    return words[i:]


def _operands(words: list[str], value_options: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """(operands, options with a value) of a command's arguments; ``--`` ends the options."""
    out, opts, i, only = [], {}, 0, False
    while i < len(words):
        w = words[i]
        i += 1
        if only or not w.startswith("-") or w == "-":
            out.append(w)
        elif w == "--":
            only = True
        elif w in value_options and i < len(words):
            opts[w] = words[i]
            i += 1
        elif any(w.startswith(o + "=") for o in value_options if o.startswith("--")):
            k, _, v = w.partition("=")
            opts[k] = v
    return out, opts


def bash_touches(command: str, cwd: str, project: str) -> list[list[str]]:
    """Moves and deletions in a Bash command line (``cd DIR`` earlier on the line is followed)."""
    if not re.search(_BASH_HINT, " " + command + " "):
        return []
    out: list[list[str]] = []
    here = cwd
    for words in _segments(command):
        words = _strip_prefix(words)
        if not words:
            continue
        if words[0] == "cd":
            if len(words) == 2 and not re.search(_GLOB, words[1]) and not words[1].startswith("~") and here:
                here = os.path.normpath(os.path.join(here, words[1]))
            continue
        if words[:2] == ["git", "mv"]:
            kind, args = "move", words[2:]
        elif words[0] == "mv":
            kind, args = "move", words[1:]
        elif words[:2] == ["git", "rm"]:
            if "--cached" in words:
                continue  # the file stays where it is
            kind, args = "delete", words[2:]
        elif words[0] in ("rm", "unlink"):
            kind, args = "delete", words[1:]
        else:
            continue
        operands, opts = _operands(args, ("-t", "--target-directory") if kind == "move" else ())
        operands = [w for w in operands if w and not re.search(_GLOB, w)]
        if kind == "delete":
            for w in operands:
                rel = relative(w, here, project)
                if rel is not None:
                    out.append(["delete", rel, "", ""])
            continue
        target = opts.get("-t") or opts.get("--target-directory")
        if target is None:
            if len(operands) < 2:
                continue
            target, sources = operands[-1], operands[:-1]
            into = (
                len(sources) > 1
                or target.endswith("/")
                or ("." not in os.path.basename(target.rstrip("/")) and "." in os.path.basename(sources[0]))
            )
        else:
            sources, into = operands, True
        for src in sources:
            dest = os.path.join(target, os.path.basename(src.rstrip("/"))) if into else target
            a, b = relative(src, here, project), relative(dest, here, project)
            if a is not None:
                out.append(["move", a, "", b or ""])
    return out[:MAX_TOUCHES]


def touches_of_calls(calls: list[tuple[str, dict]], cwd: str, project: str) -> list[list[str]]:
    """The touches of a message's tool calls, in order, without repeats."""
    out: list[list[str]] = []
    for name, inp in calls:
        for t in tool_touches(name, inp, cwd, project):
            if t not in out:
                out.append(t)
    return out[:MAX_TOUCHES]


def derive(rec: dict) -> list[list[str]]:
    """The touches of an archived tool call recorded before touches were (from its text:
    ``Write: /abs/path``, ``Bash: mv a b | description``; no fingerprint)."""
    if rec.get("role") != "tool_use":
        return []
    tools = rec.get("tools") or []
    if not any(t in TOUCH_TOOLS or t == "Bash" for t in tools):
        return []
    cwd, project = str(rec.get("cwd") or ""), str(rec.get("project") or "")
    calls = []
    for line in str(rec.get("text") or "").split("\n"):
        name, sep, rest = line.partition(": ")
        if not sep or name not in tools:
            continue
        if name in TOUCH_TOOLS:
            calls.append((name, {"file_path": rest.split(" | ")[0], "notebook_path": rest.split(" | ")[0]}))
        elif name == "Bash":
            calls.append(("Bash", {"command": rest.rsplit(" | ", 1)[0] if " | " in rest else rest}))
    return touches_of_calls(calls, cwd, project)


def undone(touched) -> list[tuple[str, str, str]]:
    """``(uuid, op, path)`` of the touches a message takes back: its tool results say the
    calls failed or were refused (``["undo", path, op, uuid of the call's message]``)."""
    return [
        (t[3], t[2], t[1])
        for t in touched or ()
        if isinstance(t, (list, tuple)) and len(t) >= 4 and t[0] == "undo" and all(isinstance(x, str) for x in t)
    ]


def rows(touched) -> list[tuple[str, str, str, str]]:
    """``(op, path, fingerprint, destination)`` of each well-formed touch of a message."""
    out = []
    for t in touched or ():
        if isinstance(t, (list, tuple)) and len(t) >= 2 and t[0] in OPS and isinstance(t[1], str) and t[1]:
            fp = t[2] if len(t) > 2 and isinstance(t[2], str) else ""
            dest = t[3] if len(t) > 3 and isinstance(t[3], str) else ""
            out.append((t[0], t[1], fp, dest))
    return out


# ------------------------------------------------------------------------------- paths in text
# a whole word of path characters holding a "/" or a ".x" (found by the regex engine alone:
# ordinary words cost no Python step)
_CANDIDATE = re.compile(r"(?<![\w@+~./-])[\w@+~.-]*(?:/|\.[A-Za-z])[\w@+~./-]*")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9_]{0,9}$")
MAX_NAMED = 12


def paths_in_text(text: str, limit: int = MAX_NAMED) -> list[str]:
    """What ``text`` names that looks like a file path (``src/lib/refunds.ts``,
    ``/home/me/app/x.py``, ``README.md``), in order, at most ``limit``: a word with a
    ``/`` or ending in an extension. URLs, ``~`` paths and ``..`` are left out. Whether one
    is a project file is the caller's to check."""
    out: list[str] = []
    seen: set[str] = set()
    for m in _CANDIDATE.finditer(text[:40_000]):
        tok = m.group().rstrip(".-/")
        if m.start() >= 3 and text[m.start() - 3 : m.start()] == "://" or "//" in tok:
            continue
        if tok.startswith("./"):
            tok = tok[2:]
        if len(tok) < 3 or tok.startswith(("~", "-", "..")) or "/../" in tok or tok in seen:
            continue
        base = tok.rsplit("/", 1)[-1]
        if not base or not (("/" in tok and not tok.endswith("/")) or _EXT.search(base)):
            continue
        if not any(c.isalpha() for c in base):
            continue
        seen.add(tok)
        out.append(tok)
        if len(out) >= limit:
            break
    return out


# ------------------------------------------------------------------------------- the wording
def later(seconds: float) -> str:
    """``3 days later``, ``2 hours later``, ``minutes later``."""
    s = max(0.0, seconds)
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("week", 7 * 86400),
        ("day", 86400),
        ("hour", 3600),
    ):
        if s >= size * (2 if unit in ("month", "week") else 1):
            n = max(1, round(s / size))
            return f"{n} {unit}{'s' if n != 1 else ''} later"
    return "minutes later"


def describe(marks: list[dict], ref_ts: float | None, max_items: int = 3) -> str:
    """``(src/lib/refunds.ts changed 3 days later; src/old.ts deleted)`` for a hit or memory
    dated ``ref_ts``; "" when nothing changed."""
    if not marks:
        return ""
    from datetime import datetime

    parts = []
    for mk in marks[:max_items]:
        when = ""
        since = mk.get("since")
        if since and ref_ts:
            try:
                t = datetime.fromisoformat(str(since).replace("Z", "+00:00")).timestamp()
                when = " " + later(t - ref_ts)
            except ValueError:
                when = ""
        path = mk.get("path", "?")
        state = mk.get("state")
        if state == "renamed" and mk.get("to"):
            parts.append(f"{path} renamed to {mk['to']}{when}")
        elif state == "deleted":
            parts.append(f"{path} deleted{when}")
        else:
            parts.append(f"{path} changed{when or ' since'}")
    more = len(marks) - max_items
    if more > 0:
        parts.append(f"{more} more file{'s' if more != 1 else ''} changed")
    return "(" + "; ".join(parts) + ")"
