"""Where each coding agent keeps its sessions, and which parser reads them: the sources.

A source is one module here holding a small parser and where its files live:

  ``claude_code``  Claude Code: ``~/.claude/projects/<encoded cwd>/<session>.jsonl`` (and
                   ``--source`` folders), read by ``indexer.transcripts``
  ``codex``        Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and its
                   ``.jsonl.zst`` compressed form, and ``archived_sessions/``)
  ``gemini``       Gemini CLI: ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl``
                   (and the older whole-file ``session-*.json``)
  ``lines``        what the sources share: a file read to its last complete line, never through
                   a symlink, and a ``Message`` made the way Claude Code's are

Each module has ``NAME`` (the ``agent`` field of its messages), ``LABEL``, ``roots()`` (its
folders, as the environment says), ``wants(name)`` (a file name of a session of its),
``whole(name)`` (such a file is read whole each time it changes, not from the last offset: a
compressed or rewritten one), and ``context(path)`` / ``read(path, offset, ctx, stats, max_bytes)`` (the reader
``indexer.ingest.Indexer.index_file`` drives: batches of ``Message`` with the byte offset
after them). Adding the next agent is one module and its name in the tables below: the steps
are in docs/CONTRIBUTING.md ("Add a source"), and only there.

The user turns a source off or on with ``recall sources NAME off|on`` (config ``sources``);
Claude Code's cannot be turned off (it is what recall is for: ``recall pause`` stops all).
Only a regular file inside a source's own folders is read: a symlink (to a file or a
folder) is never followed, in the walk or when the watcher names one.
"""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from types import ModuleType
from typing import Iterable

NAMES = ("claude-code", "codex", "gemini")
#: Each source's ``LABEL``, readable without importing its module (a test keeps them equal): what a
#: hit from another agent says it came from, in the CLI, the MCP tools and the injected block.
LABELS = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}


def cited_agent(agent: str | None) -> str:
    """What a citation says of a hit's agent: ``"Codex CLI "`` before ``session …``, nothing
    for Claude Code's (recall's own) or an unknown one's."""
    return f"{LABELS.get(agent, agent)} " if agent and agent != DEFAULT else ""


DEFAULT = "claude-code"
_MODULES = {
    "claude-code": "indexer.sources.claude_code",
    "codex": "indexer.sources.codex",
    "gemini": "indexer.sources.gemini",
}


def module(name: str) -> ModuleType:
    """The source module of agent ``name`` (KeyError for an unknown name)."""
    return importlib.import_module(_MODULES[name])


def label(name: str) -> str:
    return module(name).LABEL


def setting(cfg: dict | None = None) -> dict[str, bool]:
    """Each source's on/off setting (config ``sources``; on unless turned off)."""
    if cfg is None:
        from recall.core import config

        cfg = config.load()
    raw = cfg.get("sources")
    raw = raw if isinstance(raw, dict) else {}
    return {n: n == DEFAULT or raw.get(n) is not False for n in NAMES}


def enabled(cfg: dict | None = None) -> list[str]:
    return [n for n, on in setting(cfg).items() if on]


def agent_roots(names: Iterable[str] | None = None) -> list[tuple[str, Path]]:
    """(agent, folder) of the other agents' sources that are on (``names``: these instead)."""
    out: list[tuple[str, Path]] = []
    for name in enabled() if names is None else names:
        if name == DEFAULT:
            continue
        out.extend((name, Path(os.path.abspath(r))) for r in module(name).roots())
    return out


def all_roots(extra: Iterable[Path] = ()) -> list[Path]:
    """Every folder recall reads sessions from: Claude Code's, the ``--source`` folders, and the
    other agents' whose source is on and whose folder exists (the service adds one that appears
    later: ``Service.refresh_sources``); de-duplicated."""
    from recall.core import paths

    roots = paths.transcript_roots(list(extra))
    seen = {str(r) for r in roots}
    for _name, root in agent_roots():
        if str(root) not in seen and root.is_dir():
            seen.add(str(root))
            roots.append(root)
    return roots


_cache: dict[tuple, list[tuple[str, str]]] = {}


def _owned() -> list[tuple[str, str]]:
    """(folder + "/", agent) of every other agent's folder, whether on or off (cached per
    environment: a file's reader never depends on the config's timing)."""
    key = (os.environ.get("HOME"), os.environ.get("CODEX_HOME"), os.environ.get("GEMINI_CLI_HOME"))
    got = _cache.get(key)
    if got is None:
        got = [(str(root).rstrip(os.sep) + os.sep, name) for name, root in agent_roots(NAMES)]
        _cache.clear()
        _cache[key] = got
    return got


def agent_of(path: Path | str) -> str:
    """The agent whose folders hold ``path`` (Claude Code's for anything else)."""
    text = os.path.abspath(os.fspath(path))
    for prefix, name in _owned():
        if text.startswith(prefix):
            return name
    return DEFAULT


def source_of(path: Path | str) -> ModuleType:
    return module(agent_of(path))


def is_session_file(path: Path | str) -> bool:
    """Whether the watcher should read ``path``: a session file name of the source whose
    folder holds it (a symlink of another agent's is refused when read: ``safe_file``)."""
    path = os.fspath(path)
    return source_of(path).wants(os.path.basename(path))


def safe_file(path: Path) -> bool:
    """A regular file, not a symlink, and inside its source's folder once every link on the way
    is resolved (another agent's folders are read only through their own files: a link to a
    file or a folder elsewhere is never followed; a source folder that is itself a link, to
    another disk say, is the user's choice and is read)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:
        return False
    text = os.path.abspath(os.fspath(path))
    for prefix, _name in _owned():
        if text.startswith(prefix):
            return os.path.realpath(text).startswith(os.path.realpath(prefix) + os.sep)
    return True


def discover(roots: Iterable[Path]) -> list[Path]:
    """Every session file below ``roots``, each by its source's names, sorted. Claude Code's
    folders as before (``*.jsonl``); another agent's without following a symlink."""
    found: list[Path] = []
    for root in roots:
        root = Path(root)
        if not root.is_dir():
            continue
        src = source_of(root / "x")
        claude = src.NAME == DEFAULT
        wants = src.wants
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if wants(name):
                    p = Path(dirpath) / name
                    if claude or not os.path.islink(p):
                        found.append(p)
    found.sort()
    return found
