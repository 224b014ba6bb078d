"""Project identity: which project a transcript's ``cwd`` belongs to.

The canonical project is the main repository's root for a cwd inside a git repository,
one of its linked worktrees, or any subdirectory of those, so that worktrees and
subfolders share one memory. Outside git it is the cwd itself. The answer is worked
out from the files under ``.git`` (no ``git`` subprocess: this runs on every line of a
backfill and on every prompt), and cached per process.

Two rules keep that identity honest:

* a ``.git`` *file* (``gitdir: …``) is followed into another repository only when that
  repository points back at it (its ``worktrees/<name>/gitdir`` names this very ``.git``
  file, and the admin folder is inside the repository it claims): a folder cannot attribute
  its sessions to someone else's project by writing a ``.git`` file;
* a linked worktree recall has seen keeps its project after ``git worktree remove``: the
  mapping is remembered in ``$RECALL_HOME/worktrees.json``, so its sessions, read again
  later, are still that project's (exclusions and ``forget --project`` hold).

``within`` and ``same`` compare paths as the filesystem does: through symlinks (either
way), and without regard to case on a case-insensitive filesystem.
"""

from __future__ import annotations

import json
import os
import re
import threading
from functools import lru_cache
from pathlib import Path


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def _abs(base: str, path: str) -> str:
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))


def _main_root_from_gitfile(top: str, gitfile: str) -> str:
    """``top/.git`` is a file (linked worktree or submodule): follow it to the main root,
    but only into a repository that lists ``top`` as its worktree."""
    content = _read(gitfile) or ""
    if not content.startswith("gitdir:"):
        return top
    gitdir = _abs(top, content[len("gitdir:") :].strip())
    common = _read(os.path.join(gitdir, "commondir"))
    if common is None:  # a submodule: its own project
        return top
    common_dir = _abs(gitdir, common)
    if os.path.basename(common_dir) != ".git":
        return top  # a bare repository's worktree: the worktree is the best name we have
    # the admin folder must be <common>/worktrees/<name>, and point back at this .git file
    if os.path.dirname(os.path.realpath(gitdir)) != os.path.join(os.path.realpath(common_dir), "worktrees"):
        return top
    back = _read(os.path.join(gitdir, "gitdir"))
    if not back or os.path.realpath(_abs(gitdir, back)) != os.path.realpath(gitfile):
        return top
    root = os.path.dirname(common_dir)
    _remember(top, root)
    return root


@lru_cache(maxsize=4096)
def canonical_project(cwd: str) -> str:
    """The project root that ``cwd`` belongs to (see module docstring)."""
    if not cwd:
        return ""
    start = os.path.normpath(os.path.expanduser(cwd))
    home = os.path.normpath(str(Path.home()))
    current = start
    while True:
        dotgit = os.path.join(current, ".git")
        if os.path.isdir(dotgit):
            root = current
            break
        if os.path.isfile(dotgit):
            root = _main_root_from_gitfile(current, dotgit)
            break
        known = remembered_worktree(current)
        if known:  # a linked worktree since removed: still its repository's
            return known
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent
    # A dotfiles repository in $HOME would swallow every project below it.
    if root == home and start != home:
        return start
    return root


@lru_cache(maxsize=4096)
def worktree_top(cwd: str) -> str:
    """The top of the working tree ``cwd`` is in: the nearest folder at or above it holding a
    ``.git`` (a directory, or the file of a linked worktree), "" outside git. Unlike
    ``canonical_project`` a linked worktree is its own top: the folder its files are in."""
    if not cwd:
        return ""
    current = os.path.normpath(os.path.expanduser(cwd))
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return ""
        current = parent


# worktrees remembered after their removal ---------------------------------------------------
_memory: dict[str, str] = {}
_memory_stamp: tuple | None = None
_memory_lock = threading.Lock()
MAX_REMEMBERED = 5000


def _memory_path() -> Path | None:
    try:
        from recall.core import paths

        return paths.recall_home() / "worktrees.json"
    except Exception:  # noqa: BLE001 - no home to read: nothing remembered
        return None


def _load_memory() -> dict[str, str]:
    """The remembered worktrees (re-read when the file changed)."""
    global _memory, _memory_stamp
    path = _memory_path()
    try:
        st = os.stat(path) if path is not None else None
        stamp = (str(path), st.st_mtime_ns, st.st_size) if st else (str(path),)
    except OSError:
        stamp = (str(path),)
    if stamp != _memory_stamp:
        data: dict = {}
        if len(stamp) > 1:
            from recall.core.jsonio import read_json

            data = {str(k): str(v) for k, v in read_json(path, {}, dict).items()}
        _memory, _memory_stamp = data, stamp
    return _memory


def remembered_worktree(path: str) -> str | None:
    """The repository root of ``path`` when it is (was) a linked worktree recall has seen."""
    with _memory_lock:
        return _load_memory().get(path)


def _remember(top: str, root: str) -> None:
    """Note that ``top`` is a linked worktree of ``root`` (written once per new worktree)."""
    with _memory_lock:
        data = _load_memory()
        if data.get(top) == root:
            return
        path = _memory_path()
        if path is None:
            return
        new = dict(data)
        new[top] = root
        if len(new) > MAX_REMEMBERED:
            new = dict(list(new.items())[-MAX_REMEMBERED:])
        try:
            from recall.core.paths import atomic_write, home_dir

            home_dir()
            atomic_write(path, json.dumps(new, indent=1, sort_keys=True) + "\n")
        except OSError:
            return  # read-only home: identity is worked out again next time
        global _memory, _memory_stamp
        _memory, _memory_stamp = new, None


def worktrees_of(root: str) -> list[str]:
    """The linked worktrees of the repository at ``root``: those git lists now (each checked
    to point back) and those recall remembers. Listing them remembers them."""
    out = []
    admin = os.path.join(root, ".git", "worktrees")
    try:
        names = sorted(os.listdir(admin))
    except OSError:
        names = []
    for name in names:
        back = _read(os.path.join(admin, name, "gitdir"))
        if not back:
            continue
        gitfile = _abs(os.path.join(admin, name), back)
        top = os.path.dirname(gitfile)
        if os.path.isfile(gitfile) and _main_root_from_gitfile(top, gitfile) == root:
            out.append(top)
    with _memory_lock:
        out += [top for top, r in _load_memory().items() if r == root]
    return list(dict.fromkeys(out))


# comparing paths as the filesystem does ----------------------------------------------------
def resolved(path: str) -> str:
    """``path`` with its symlinks resolved (as far as it exists)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


@lru_cache(maxsize=1024)
def case_insensitive(path: str) -> bool:
    """Whether the filesystem holding ``path`` ignores case (macOS, Windows): probed on the
    nearest existing folder whose name has a letter."""
    p = path
    while p and p != os.path.dirname(p):
        name = os.path.basename(p)
        if name.lower() != name.upper() and os.path.exists(p):
            other = os.path.join(os.path.dirname(p), name.swapcase())
            try:
                return os.path.exists(other) and os.path.samefile(p, other)
            except OSError:
                return False
        p = os.path.dirname(p)
    return False


def _variants(path: str) -> tuple[str, ...]:
    """The spellings of ``path`` to compare: as written, resolved, and both case-folded
    when the filesystem ignores case."""
    p = os.path.normpath(path) if path else ""
    r = resolved(p) if p else ""
    out = (p, r) if r != p else (p,)
    if p and case_insensitive(r or p):
        out = out + tuple(x.casefold() for x in out)
    return out


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or root == "/" or path.startswith(root + "/")


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it, as the filesystem sees them."""
    if not path or not root:
        return False
    if _under(path, root):
        return True
    roots = _variants(root)
    return any(_under(p, r) for p in _variants(path) for r in roots)


def same(a: str, b: str) -> bool:
    """Whether two paths name the same folder, as the filesystem sees them."""
    if a == b:
        return True
    if not a or not b:
        return False
    va, vb = set(_variants(a)), set(_variants(b))
    return bool(va & vb)


def spellings(path: str) -> tuple[str, ...]:
    """Every spelling of ``path`` a pattern may be matched against (see ``_variants``)."""
    return _variants(path) if path else ()


_ENCODE = re.compile(r"[^A-Za-z0-9]")


def encoded(path: str) -> str:
    """``path`` as Claude Code names its transcript folder (every other character a ``-``)."""
    return _ENCODE.sub("-", path)
