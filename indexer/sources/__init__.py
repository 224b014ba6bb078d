"""Where each coding agent keeps its sessions, and how they are read: the sources.

A source is one module here, and nothing else names it: its folders, which of their files are
its sessions, and its format (the parser):

  ``claude_code``  Claude Code: ``~/.claude/projects/<encoded cwd>/<session>.jsonl`` (and
                   ``--source`` folders)
  ``codex``        Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (and its
                   ``.jsonl.zst`` compressed form, and ``archived_sessions/``)
  ``gemini``       Gemini CLI: ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl``
                   (and the older whole-file ``session-*.json``)
  ``lines``        what the other agents' readers share (``SHARED``: not a source): a file read
                   to its last complete line, never through a symlink, and a ``Message`` made
                   the way Claude Code's are

Each module has ``NAME`` (the ``agent`` field of its messages), ``LABEL`` (what a hit from it
says it came from; its first word, in capitals, heads its replies in ``recall show``:
``speaker``), ``VARIABLES`` (the environment variables that move its folders), ``roots()`` (its
folders, as the environment says), ``wants(name)`` (a file name of a session of its),
``whole(name)`` (such a file is read whole each time it changes, not from the last offset: a
compressed or rewritten one), and ``context(path)`` / ``read(path, offset, ctx, stats, max_bytes)`` (the reader
``indexer.ingest.Indexer.index_file`` drives: batches of ``Message`` with the byte offset
after them). The registry below is built from the modules found here, when first asked for:
``NAMES``, ``LABELS`` and which module reads which agent, ``NAME`` and ``LABEL`` read from each
module's text, so that the hook, the fast path and the page, which need only the names, import
no parser (a parser loads the redaction rules: ~150 ms). Adding the next agent is adding its
module: the steps are in docs/CONTRIBUTING.md ("Add a source"), and only there.

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

DEFAULT = "claude-code"  # Claude Code's: what recall is for (never turned off, cited without a name)
SHARED = ("lines",)  # modules here that are not a source


def _declared(text: bytes, key: str) -> str | None:
    """The value of a module's ``KEY = "…"`` line (None: it has none)."""
    start = text.find(b"\n" + key.encode() + b' = "')
    if start < 0:
        return None
    start += len(key) + 5
    end = text.find(b'"', start)
    value = text[start:end].decode("utf-8") if end > start else ""
    return value if value and "\n" not in value and "\\" not in value else None


def _found() -> dict[str, tuple[str, str]]:
    """agent -> (its module, its label) for each source module in this package's folders, each
    read from the module's text (its ``NAME = "…"`` and ``LABEL = "…"`` lines), not imported."""
    found: dict[str, tuple[str, str]] = {}
    for folder in __path__:
        for entry in sorted(os.listdir(folder)):
            stem, ext = os.path.splitext(entry)
            if ext != ".py" or stem.startswith("_") or stem in SHARED or not stem.isidentifier():
                continue
            with open(os.path.join(folder, entry), "rb") as fh:
                text = fh.read()
            name, label = _declared(text, "NAME"), _declared(text, "LABEL")
            if name and label:
                found.setdefault(name, (f"{__name__}.{stem}", label))
    return found


_registry: dict = {}  # NAMES, LABELS and _MODULES once read (``_read``)


def _read() -> dict:
    """The registry, read from the modules found here the first time it is asked for (the hook
    cites Claude Code's hits without it): ``NAMES`` (the sources' names, Claude Code's first,
    then in the order of their modules' names), ``LABELS`` (each one's ``LABEL``, readable
    without importing its module: what a hit from another agent says it came from, in the CLI,
    the MCP tools and the injected block) and ``_MODULES`` (which module reads which agent)."""
    if not _registry:
        found = _found()
        names = tuple(sorted(found, key=lambda n: (n != DEFAULT, found[n][0])))
        _registry.update(NAMES=names, LABELS={n: found[n][1] for n in names}, _MODULES={n: found[n][0] for n in names})
        globals().update(_registry)  # asked for again: a plain attribute
    return _registry


def __getattr__(name: str):
    if name in ("NAMES", "LABELS", "_MODULES"):
        return _read()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def refresh() -> None:
    """Read the registry again when next asked for (a test that adds a folder to ``__path__``)."""
    _registry.clear()
    for name in ("NAMES", "LABELS", "_MODULES"):
        globals().pop(name, None)
    _variables.clear()
    _cache.clear()


def cited_agent(agent: str | None) -> str:
    """What a citation says of a hit's agent: ``"Codex CLI "`` before ``session …``, nothing
    for Claude Code's (recall's own) or an unknown one's."""
    return f"{_read()['LABELS'].get(agent, agent)} " if agent and agent != DEFAULT else ""


def speaker(agent: str | None) -> str:
    """Who speaks in a source's replies, as ``recall show`` and the page head them: the first
    word of its label in capitals (``CLAUDE``, ``CODEX``, ``GEMINI``); an agent no module reads
    any more, by its own name."""
    agent = agent or DEFAULT
    return (_read()["LABELS"].get(agent) or agent).split()[0].upper()


def module(name: str) -> ModuleType:
    """The source module of agent ``name`` (KeyError for an unknown name)."""
    return importlib.import_module(_read()["_MODULES"][name])


def label(name: str) -> str:
    return _read()["LABELS"][name]


def setting(cfg: dict | None = None) -> dict[str, bool]:
    """Each source's on/off setting (config ``sources``; on unless turned off)."""
    if cfg is None:
        from recall.core import config

        cfg = config.load()
    raw = cfg.get("sources")
    raw = raw if isinstance(raw, dict) else {}
    return {n: n == DEFAULT or raw.get(n) is not False for n in _read()["NAMES"]}


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
_variables: list[str] = []  # HOME and every source's VARIABLES, once the modules are loaded


def _owned() -> list[tuple[str, str]]:
    """(folder + "/", agent) of every other agent's folder, whether on or off (cached per
    environment: a file's reader never depends on the config's timing)."""
    if not _variables:
        _variables.extend(dict.fromkeys(["HOME", *(v for n in _read()["NAMES"] for v in module(n).VARIABLES)]))
    key = tuple(os.environ.get(v) for v in _variables)
    got = _cache.get(key)
    if got is None:
        got = [(str(root).rstrip(os.sep) + os.sep, name) for name, root in agent_roots(_read()["NAMES"])]
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
