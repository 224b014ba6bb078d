"""Project identity: which project a transcript's ``cwd`` belongs to.

The canonical project is the main repository's root for a cwd inside a git repository,
one of its linked worktrees, or any subdirectory of those, so that worktrees and
subfolders share one memory. Outside git it is the cwd itself. The answer is worked
out from the files under ``.git`` (no ``git`` subprocess: this runs on every line of a
backfill and on every prompt), and cached per process.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _main_root_from_gitfile(top: str, gitfile: str) -> str:
    """``top/.git`` is a file (linked worktree or submodule): follow it to the main root."""
    content = _read(gitfile) or ""
    if not content.startswith("gitdir:"):
        return top
    gitdir = content[len("gitdir:"):].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.normpath(os.path.join(top, gitdir))
    common = _read(os.path.join(gitdir, "commondir"))
    if common is None:  # a submodule: its own project
        return top
    common_dir = os.path.normpath(common if os.path.isabs(common) else os.path.join(gitdir, common))
    if os.path.basename(common_dir) == ".git":
        return os.path.dirname(common_dir)
    return top  # a bare repository's worktree: the worktree is the best name we have


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


def project_matches(project: str, query_path: str) -> bool:
    """Whether an indexed ``project`` is the one ``query_path`` names (used for --project)."""
    return project == canonical_project(query_path)
