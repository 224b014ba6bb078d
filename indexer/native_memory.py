"""Claude Code's own memory, indexed as documents of its project.

Claude Code keeps notes of its own ("auto memory": ``<projects root>/<encoded cwd>/memory/
MEMORY.md`` and topic files beside it) and reads the ``CLAUDE.md`` files the user writes
(``<project>/CLAUDE.md``, ``<project>/.claude/CLAUDE.md``, ``<project>/CLAUDE.local.md``,
and ``~/.claude/CLAUDE.md`` for every project). Each file is split into notes (a heading's
bullets and paragraphs, up to CHUNK_CHARS) and indexed as memory documents
(``mem:cc-<file hash>-<n>``; type ``claude-memory`` or ``claude-md``), so search, the hook
and the MCP tools find "we deploy with make ship" whether Claude noted it or a transcript
said it. recall's own briefing block inside a CLAUDE.md is left out (it repeats memories
that are indexed already).

``sync(ix, roots)`` compares every file's (mtime, size, inode) with the registry
``$RECALL_HOME/native-memory.json``, then, for a file whose stamp moved, the hash of its text
without recall's block: a file whose notes changed is re-indexed (its old notes replaced), a
deleted one leaves the index; a file only touched, or whose recall block alone was rewritten,
is left as it is (issue 44: recall's own briefing writes re-indexed a CLAUDE.md every pass). ``recall index`` and the service's rescan run it; the
service also runs it soon after a watched ``.md`` file changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import read_json

AUTO_TYPE = "claude-memory"
RECALLED_ROLE = "claude-memory"  # indexer.sources.claude_code.CLAUDE_MEMORY_ROLE: a memory recall in a transcript
CLAUDE_MD_TYPE = "claude-md"
CHUNK_CHARS = 1200
# what Claude Code puts of MEMORY.md in front of the model at session start (seen with 2.1.197 and
# 2.1.332: "WARNING: MEMORY.md is 262 lines (limit: 200). Only part of it was loaded.")
HEAD_LINES = 200
HEAD_BYTES = 25_000
MAX_FILE_BYTES = 512 * 1024
MAX_TOPIC_FILES = 200
# recall's briefing block (recall.memory.briefing.START / END; the ground floor cannot import it)
BRIEFING_START = "<!-- MEMORY:START -->"
BRIEFING_END = "<!-- MEMORY:END -->"
CLAUDE_MD_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BULLET = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+")


def registry_path() -> Path:
    return paths.recall_home() / "native-memory.json"


def encode_cwd(cwd: str) -> str:
    """Claude Code's name for a project folder under its projects root."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def default_auto_memory_dir(project: str) -> Path:
    return paths.claude_config_dir() / "projects" / encode_cwd(project) / "memory"


# Claude Code's settings, as it resolves them -------------------------------------------------------
SETTINGS_SCOPES = ("local", "project", "user")  # the first that sets a key wins, as in Claude Code


def _settings_files(project: str) -> list[tuple[str, Path]]:
    """(scope, file) of the settings Claude Code reads for a session in ``project``, the
    strongest first: ``<project>/.claude/settings.local.json``, ``<project>/.claude/
    settings.json``, ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR`` moves the last)."""
    out: list[tuple[str, Path]] = []
    if project:
        out += [("local", Path(project) / ".claude" / "settings.local.json")]
        out += [("project", Path(project) / ".claude" / "settings.json")]
    out.append(("user", paths.claude_config_dir() / "settings.json"))
    return out


def claude_setting(project: str, key: str) -> tuple[object, str]:
    """(value, scope) of one of Claude Code's settings for ``project``: the strongest scope
    that sets it (local > project > user); (None, "") when none does. A file that is missing
    or not a JSON object sets nothing."""
    for scope, path in _settings_files(project):
        data = read_json(path, None, dict)
        if isinstance(data, dict) and data.get(key) is not None:
            return data[key], scope
    return None, ""


def _usable_dir(value: object) -> Path | None:
    """An ``autoMemoryDirectory`` as Claude Code takes it: ``~/`` is the home folder; anything
    else must be an absolute path, not a filesystem root; otherwise it is ignored (None)."""
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        return None
    text = value.strip()
    if text.startswith(("~/", "~\\")):
        rest = os.path.normpath(text[2:] or ".")
        if rest in (".", "..") or rest.startswith(".." + os.sep):
            return None
        text = os.path.join(str(Path.home()), rest)
    if not os.path.isabs(text):
        return None
    text = os.path.normpath(text)
    if len(text) < 3 or text == os.path.dirname(text):
        return None
    return Path(text)


def auto_memory_setting(project: str) -> tuple[Path | None, str]:
    """The ``autoMemoryDirectory`` Claude Code uses for ``project`` and the scope that set it,
    or (None, "") for its default folder."""
    value, scope = claude_setting(project, "autoMemoryDirectory")
    where = _usable_dir(value)
    return (where, scope) if where is not None else (None, "")


def auto_memory_enabled(project: str) -> bool:
    """Whether Claude Code reads and writes auto memory in ``project``: its ``autoMemoryEnabled``
    setting (local > project > user; default on)."""
    value, _ = claude_setting(project, "autoMemoryEnabled")
    return value is not False


def auto_memory_off_in_session(value: str | None = None) -> bool:
    """``CLAUDE_CODE_DISABLE_AUTO_MEMORY`` set to a true value in the session's environment
    (``value``, as the hook passed it on; else this process's, which the hook inherits from
    Claude Code): auto memory is off for that one session."""
    if value is None:
        value = os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "")
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def auto_memory_dir(project: str) -> Path:
    """The folder of ``project``'s auto memory: its ``autoMemoryDirectory`` setting, else
    ``<projects root>/<encoded project>/memory``."""
    where, _ = auto_memory_setting(project)
    return where if where is not None else default_auto_memory_dir(project)


@dataclass
class Source:
    path: str
    kind: str  # AUTO_TYPE | CLAUDE_MD_TYPE
    project: str  # "" for the user's ~/.claude/CLAUDE.md (every project)


# reading ----------------------------------------------------------------------------------------
def without_briefing(text: str) -> str:
    """``text`` minus recall's own block (the user's part of a CLAUDE.md)."""
    while True:
        start = text.find(BRIEFING_START)
        if start < 0:
            return text
        end = text.find(BRIEFING_END, start)
        end = len(text) if end < 0 else end + len(BRIEFING_END)
        text = text[:start] + text[end:]


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES)
    except OSError:
        return None
    return without_briefing(data.decode("utf-8", "replace"))


def notes(text: str) -> list[tuple[str, str]]:
    """(heading, note) for each bullet (with its continuation lines) or paragraph."""
    out: list[tuple[str, str]] = []
    heading = ""
    current: list[str] = []

    def flush() -> None:
        body = " ".join(" ".join(current).split())
        if body:
            out.append((heading, body))
        current.clear()

    in_front = text.startswith("---\n")
    for i, line in enumerate(text.splitlines()):
        if in_front:
            if i > 0 and line.strip() == "---":
                in_front = False
            continue
        m = _HEADING.match(line)
        if m:
            flush()
            heading = m.group(1).strip()
            continue
        if not line.strip():
            flush()
            continue
        if _BULLET.match(line):
            flush()
            current.append(_BULLET.sub("", line, count=1))
            continue
        current.append(line.strip())
    flush()
    return out


def chunks(text: str, max_chars: int = CHUNK_CHARS) -> list[str]:
    """The notes grouped per heading into pieces of at most ``max_chars`` (a longer note alone)."""
    out: list[str] = []
    cur_head, cur = None, []
    size = 0
    for heading, note in notes(text):
        if cur and (heading != cur_head or size + len(note) > max_chars):
            out.append(_render(cur_head, cur))
            cur, size = [], 0
        cur_head = heading
        cur.append(note)
        size += len(note) + 3
    if cur:
        out.append(_render(cur_head, cur))
    return out


def _render(heading, items: list[str]) -> str:
    body = "\n".join(f"- {n}" for n in items)
    return f"{heading}:\n{body}" if heading else body


# finding the files ----------------------------------------------------------------------------------
def _cwd_of_transcripts(folder: Path) -> str | None:
    """The cwd Claude Code recorded in a transcript of ``folder`` (the auto-memory's project)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return None
    for name in names[:5]:
        try:
            with open(folder / name, "rb") as fh:
                head = fh.read(256 * 1024)
        except OSError:
            continue
        for line in head.split(b"\n"):
            if b'"cwd"' not in line:
                continue
            try:
                cwd = json.loads(line).get("cwd")
            except (ValueError, AttributeError):
                continue
            if isinstance(cwd, str) and cwd:
                return cwd
    return None


def _project_of_folder(folder: Path, by_code: dict[str, str], remembered: dict) -> str | None:
    from indexer.project import canonical_project

    if folder.name in by_code:
        return by_code[folder.name]
    cwd = _cwd_of_transcripts(folder)
    if cwd:
        return canonical_project(cwd)
    prior = remembered.get(folder.name)
    if isinstance(prior, str) and prior:
        return prior  # its transcripts are gone (Claude Code's 30-day clean-up)
    return None


def _memory_files(mem: Path) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(mem):
        dirnames.sort()
        found += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".md")]
    return found[:MAX_TOPIC_FILES]


def discover(roots, known_projects: list[str], remembered: dict | None = None) -> tuple[list[Source], dict]:
    """Every memory file to index, and the folder -> project map worked out on the way.

    A project's auto memory is where Claude Code keeps it (``auto_memory_dir``: its
    ``autoMemoryDirectory`` setting, else the folder beside its transcripts) and only while its
    ``autoMemoryEnabled`` setting is not false: Claude Code neither reads nor writes it then,
    so what is left there is not its memory. A directory set in the user's settings is every
    project's (project "")."""
    remembered = dict(remembered or {})
    by_code = {encode_cwd(p): p for p in known_projects}
    sources: list[Source] = []
    projects = set(known_projects)
    for root in roots:
        root = Path(root)
        try:
            folders = sorted(d for d in root.iterdir() if (d / "memory").is_dir())
        except OSError:
            continue
        for folder in folders:
            project = _project_of_folder(folder, by_code, remembered)
            if not project:
                continue
            remembered[folder.name] = project
            projects.add(project)
            if auto_memory_setting(project)[0] is not None or not auto_memory_enabled(project):
                continue  # Claude Code keeps this project's memory elsewhere, or none
            for f in _memory_files(folder / "memory"):
                sources.append(Source(f, AUTO_TYPE, project))
    for project in [*sorted(projects), ""]:  # "": a directory the user's settings set, for every project
        where, scope = auto_memory_setting(project)
        if where is not None and where.is_dir() and auto_memory_enabled(project):
            owner = "" if scope == "user" else project
            for f in _memory_files(where):
                sources.append(Source(f, AUTO_TYPE, owner))
    for project in sorted(projects):
        for name in CLAUDE_MD_NAMES:
            f = os.path.join(project, name)
            if os.path.isfile(f):
                sources.append(Source(f, CLAUDE_MD_TYPE, project))
    user = paths.claude_config_dir() / "CLAUDE.md"
    if user.is_file():
        sources.append(Source(str(user), CLAUDE_MD_TYPE, ""))
    # one source per file: ~/.claude/CLAUDE.md is also "<project>/.claude/CLAUDE.md" of a session
    # run in $HOME; found twice, it was re-indexed on every rescan as each claim undid the other
    # (issue 36). The user's file belongs to every project; otherwise the first claim holds.
    by_path: dict[str, Source] = {}
    for src in sources:
        key = os.path.realpath(src.path)
        if key not in by_path or not src.project:
            by_path[key] = src
    return [src for src in sources if by_path[os.path.realpath(src.path)] is src], remembered


# documents ------------------------------------------------------------------------------------------
def _file_key(path: str) -> str:
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def label(source: Source) -> str:
    if source.kind == AUTO_TYPE:
        return f"Claude Code memory {os.path.basename(source.path)}"
    if not source.project:
        return "user CLAUDE.md"
    return os.path.relpath(source.path, source.project)


def content_hash(text: str | None) -> str:
    """The hash of the notes a file's text makes (recall's block left out, blank lines and
    spacing aside): the same, nothing to re-index, whatever its mtime says (recall rewrites
    its own block in a CLAUDE.md)."""
    if text is None:
        return ""
    joined = "\0".join(chunks(text))
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def docs_for(source: Source, mtime: float, text: str | None = None) -> list[dict]:
    text = read_text(source.path) if text is None else text
    if text is None:
        return []
    key = _file_key(source.path)
    out = []
    for i, chunk in enumerate(chunks(text)):
        out.append(
            {
                "id": f"cc-{key}-{i}",
                "project": source.project,
                "type": source.kind,
                "content": f"{label(source)}: {chunk}",
                "tags": ["claude-code", os.path.basename(source.path)],
                "updated": mtime,
                "session_ids": [],
            }
        )
    return out


def _stamp(path: str) -> list | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def load_registry() -> dict:
    data = read_json(registry_path(), None, dict)
    if data is None:
        return {"files": {}, "folders": {}}
    files = data.get("files") if isinstance(data.get("files"), dict) else {}
    folders = data.get("folders") if isinstance(data.get("folders"), dict) else {}
    return {"files": files, "folders": folders}


def sync(ix, roots, known_projects: list[str] | None = None) -> dict:
    """Bring the index in line with the memory files on disk; commits when anything changed.
    Returns {"indexed": files re-indexed, "removed": files gone, "notes": documents written}."""
    from indexer.state import known_projects as projects_in_state

    reg = load_registry()
    known = known_projects if known_projects is not None else projects_in_state(paths.state_db_path())
    sources, folders = discover(roots, known, reg["folders"])
    files: dict = reg["files"]
    current = {s.path for s in sources}
    upserts: list[dict] = []
    deletes: list[str] = []
    indexed = removed = 0
    stamps_moved = False
    for s in sources:
        stamp = _stamp(s.path)
        if stamp is None:
            continue
        prior = files.get(s.path) or {}
        if prior.get("stamp") == stamp and prior.get("project") == s.project:
            continue
        text = read_text(s.path)
        digest = content_hash(text)
        if prior.get("hash") == digest and prior.get("project") == s.project and prior.get("kind") == s.kind:
            # touched, or only recall's block in it rewritten: its notes are the same
            files[s.path] = {**prior, "stamp": stamp}
            stamps_moved = True
            continue
        docs = docs_for(s, stamp[0] / 1e9, text)
        ids = [d["id"] for d in docs]
        gone = [f"mem:{i}" for i in prior.get("ids", []) if i not in ids]
        deletes += gone
        upserts += docs
        files[s.path] = {"stamp": stamp, "ids": ids, "project": s.project, "kind": s.kind, "hash": digest}
        stamps_moved = True
        indexed += 1 if docs or gone else 0  # a file with no notes, then or now, changed nothing
    for path in [p for p in files if p not in current]:
        gone = [f"mem:{i}" for i in files[path].get("ids", [])]
        deletes += gone
        del files[path]
        stamps_moved = True
        removed += 1 if gone else 0
    changed = stamps_moved or folders != reg["folders"]
    if upserts:
        ix.upsert_memory_docs(upserts)
    if deletes:
        ix.delete_keys(deletes)
    if upserts or deletes:
        ix.commit()
    if changed:
        paths.atomic_write(registry_path(), json.dumps({"files": files, "folders": folders}))
    return {"indexed": indexed, "removed": removed, "notes": len(upserts)}


def project_notes(project: str) -> list[str]:
    """The notes of the project's auto-memory MEMORY.md and of the user's part of its
    CLAUDE.md files (for the briefing's near-duplicate test); [] when there are none."""
    files = [str(auto_memory_dir(project) / "MEMORY.md")] + [os.path.join(project, n) for n in CLAUDE_MD_NAMES]
    out: list[str] = []
    for f in files:
        text = read_text(f)
        if text:
            out += [n for _, n in notes(text)]
    return out


# what Claude Code already put in front of the model ---------------------------------------------------
def head(text: str, lines: int = HEAD_LINES, max_bytes: int = HEAD_BYTES) -> str:
    """The part of a MEMORY.md Claude Code loads at session start: its first ``lines`` lines,
    cut at the last whole line within ``max_bytes``."""
    out: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True)[:lines]:
        size += len(line.encode("utf-8", "replace"))
        if size > max_bytes:
            break
        out.append(line)
    return "".join(out)


def _head_chunks(text: str) -> list[str]:
    """The chunks of a MEMORY.md that lie wholly in its head (a note cut by the limit is not)."""
    full, top = chunks(text), chunks(head(text))
    return [c for c, t in zip(full, top) if c == t]


def loaded_at_start(cwd: str, auto_memory_off: bool = False) -> frozenset[str]:
    """The notes, as indexed (label and chunk, redacted), that Claude Code itself loads when a
    session starts in ``cwd``: every ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md``
    from ``cwd`` up to the root, the user's ``~/.claude/CLAUDE.md``, and the head of the
    project's auto-memory ``MEMORY.md`` (unless auto memory is off for the session or the
    project). Topic files and the rest of MEMORY.md are read on demand, not at start."""
    from indexer.project import canonical_project
    from indexer.redact import redact

    out: set[str] = set()

    def add(path, name: str, pick=chunks) -> None:
        text = read_text(str(path))
        if text:
            out.update(redact(f"{name}: {c}") for c in pick(text))

    here = Path(os.path.abspath(cwd))
    for folder in (here, *here.parents):
        for name in CLAUDE_MD_NAMES:
            add(folder / name, name)
    add(paths.claude_config_dir() / "CLAUDE.md", "user CLAUDE.md")
    project = canonical_project(str(here)) or str(here)
    for p in dict.fromkeys((str(here), project)):
        if auto_memory_off or not auto_memory_enabled(p):
            continue
        add(auto_memory_dir(p) / "MEMORY.md", "Claude Code memory MEMORY.md", _head_chunks)
    return frozenset(out)


def _is_note(hit) -> bool:
    """A search hit that is one of the notes ``docs_for`` wrote (tagged "claude-code"; a hit's
    tags come back as one space-separated string)."""
    tags = " ".join(str(t) for t in (getattr(hit, "tags", None) or []))
    return getattr(hit, "kind", "") == "memory" and "claude-code" in tags.split()


def is_auto_memory(hit) -> bool:
    """A search hit that is a note of Claude Code's auto memory (``docs_for``'s label)."""
    return _is_note(hit) and str(getattr(hit, "text", "")).startswith("Claude Code memory ")


def _claude_code_own(hit) -> bool:
    return getattr(hit, "role", "") == RECALLED_ROLE or _is_note(hit)


def without_loaded(hits: list, cwd: str | None, session_switch: str | None = None) -> list:
    """``hits`` minus what Claude Code already put in front of the model at the start of a
    session in ``cwd`` (``loaded_at_start``), minus every auto-memory note when auto memory is
    off for the session (``CLAUDE_CODE_DISABLE_AUTO_MEMORY``: ``session_switch`` is its value as
    the hook passed it on to the service, None in the hook's own process), and minus the copies of Claude Code's memory recalled into old transcripts
    (role ``claude-memory``: the memory files themselves are indexed, as they are now): the
    prompt hook never repeats them. Files are read only when a hit is one of Claude Code's own."""
    if not any(_claude_code_own(h) for h in hits):
        return hits
    off = auto_memory_off_in_session(session_switch)
    shown = loaded_at_start(cwd, off) if cwd else frozenset()
    return [
        h
        for h in hits
        if getattr(h, "role", "") != RECALLED_ROLE
        and not (off and is_auto_memory(h))
        and str(getattr(h, "text", "")) not in shown
    ]
