"""A project's identity across machines: its normalized git remote.

Two clones of one repository at different paths, its worktrees, or the same repository on
two laptops are one team project when they share a remote: ``git@github.com:Acme/shop.git``,
``https://alice:TOKEN@github.com/acme/shop`` and ``ssh://git@github.com:22/acme/shop.git/``
all name ``github.com/acme/shop``. Credentials, ports, the scheme and a ``.git`` suffix are
dropped; the text is lower-cased (hosts are case-blind, and so are the paths of the big
forges). The remote is read from the repository's own ``config`` file (no ``git``
subprocess): ``origin`` when there is one, else the first remote.
"""

from __future__ import annotations

import configparser
import os
import re
from urllib.parse import urlsplit

from recall.core.errors import UsageError

_SCP = re.compile(r"^(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)$")  # git@host:path (scp-like)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.I)
_REMOTE_SECTION = re.compile(r'^remote\s+"(.+)"$')
MAX_IDENTITY = 300


def normalize_remote(url: str) -> str:
    """``github.com/acme/shop`` for any spelling of that remote; "" when ``url`` names none."""
    url = (url or "").strip()
    if not url:
        return ""
    if _SCHEME.match(url):
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        path = parts.path
        if parts.scheme.lower() == "file":
            host = ""
    else:
        m = _SCP.match(url)
        if url.startswith(("/", "~", ".")):  # a local path used as a remote (/srv/git/shop.git)
            host, path = "", os.path.normpath(os.path.expanduser(url)) if not url.startswith(".") else url
        elif m:
            host, path = m.group(1).lower(), m.group(2)
        else:  # written without a scheme: github.com/acme/shop (or git@github.com/acme/shop)
            host, _, path = url.partition("/")
            host = host.rpartition("@")[2].lower()
    path = re.sub(r"/{2,}", "/", path.replace("\\", "/")).strip("/")
    if path.lower().endswith(".git"):
        path = path[:-4].rstrip("/")
    identity = f"{host}/{path}" if host else ("/" + path if path else "")
    identity = identity.lower()
    if not path or len(identity) > MAX_IDENTITY or any(c.isspace() for c in identity):
        return ""
    return identity


def _git_dir(root: str) -> str | None:
    """The directory holding ``root``'s git ``config`` (its ``.git``, or the common dir of a
    worktree or submodule ``.git`` file)."""
    dotgit = os.path.join(root, ".git")
    if os.path.isdir(dotgit):
        return dotgit
    try:
        with open(dotgit, encoding="utf-8", errors="replace") as fh:
            content = fh.read().strip()
    except OSError:
        return None
    if not content.startswith("gitdir:"):
        return None
    gitdir = content[len("gitdir:") :].strip()
    if not os.path.isabs(gitdir):
        gitdir = os.path.normpath(os.path.join(root, gitdir))
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            common = fh.read().strip()
        return os.path.normpath(common if os.path.isabs(common) else os.path.join(gitdir, common))
    except OSError:
        return gitdir


def remote_url(project: str) -> str | None:
    """The fetch URL of ``project``'s ``origin`` remote (else of its first remote), or None."""
    gitdir = _git_dir(project)
    if gitdir is None:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        with open(os.path.join(gitdir, "config"), encoding="utf-8", errors="replace") as fh:
            parser.read_string(fh.read())
    except (OSError, configparser.Error):
        return None
    remotes = {}
    for section in parser.sections():
        m = _REMOTE_SECTION.match(section.strip())
        if m and parser.has_option(section, "url"):
            remotes[m.group(1)] = parser.get(section, "url")
    if not remotes:
        return None
    return remotes.get("origin") or next(iter(remotes.values()))


def local_project(path: str | os.PathLike) -> str:
    """The canonical project (main git root) of a checkout path."""
    from indexer.project import canonical_project

    return canonical_project(os.path.abspath(os.path.expanduser(os.fspath(path))))


def project_identity(path: str | os.PathLike) -> tuple[str, str]:
    """(local canonical project, normalized remote) of a checkout; UsageError when the path
    is not a folder or has no usable remote."""
    raw = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if not os.path.isdir(raw):
        raise UsageError(
            f"--project {path}: no such folder. Pass a checkout of the project to share "
            "(its git remote names it for the team)."
        )
    project = local_project(raw)
    url = remote_url(project)
    identity = normalize_remote(url or "")
    if not identity:
        raise UsageError(
            f"{project} has no git remote: a team project is named by its remote, the same on "
            "every machine. Add one (`git remote add origin URL`) and try again."
        )
    return project, identity


def parse_project(value: str) -> str:
    """``recall team grant/revoke``'s PROJECT: a checkout's path (its remote) or a remote."""
    text = (value or "").strip()
    if not text:
        raise UsageError(
            "PROJECT is empty: pass a checkout's path or its git remote "
            "(github.com/acme/shop, git@github.com:acme/shop.git)."
        )
    if os.path.isdir(os.path.expanduser(text)):
        return project_identity(text)[1]
    identity = normalize_remote(text)
    if not identity or ("/" not in identity.strip("/")):
        raise UsageError(
            f"PROJECT {value!r} is neither a folder nor a git remote: pass a checkout's path or "
            "a remote such as github.com/acme/shop."
        )
    return identity
