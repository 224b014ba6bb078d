"""The briefing: the project's best memories, where Claude reads them at session start.

``memory.claude_md`` in recall's config picks where it goes:
  ``claude_md``  a block between ``<!-- MEMORY:START -->`` and ``<!-- MEMORY:END -->`` in
                 the project root's CLAUDE.md (created if absent); every byte outside the
                 block is preserved;
  ``local``      the same block in CLAUDE.local.md (added to .git/info/exclude);
  ``none``       no file: the SessionStart hook injects the briefing as context.
Switching modes removes recall's block from the file no longer used. A briefing file is
only ever written at the canonical project root, never in $HOME or /, never through a
symlink.

Budget: about 150 lines. Each type has a share (``BUDGETS``, 140 memory lines in all);
shares a type does not fill go to types that have more; a type with more eligible
memories than lines ends with "…and N more (search with recall)". Eligible: active and
effective confidence >= 0.3; ranked by confidence x (1 + accessCount / 10).

Import-light (the SessionStart hook renders from here): no pydantic, no anthropic, no
tantivy.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from recall.core import config, paths
from recall.core.settings import MEMORY_MODES
from recall.core.text import one_line
from recall.memory import TYPES
from recall.memory.store import (
    BRIEFING_FLOOR,
    CLAUDE_MD_EXCLUDE_NOTE,
    Memory,
    State,
    effective_confidence,
    git_exclude,
    load,
    pinned,
    rank,
)

START = "<!-- MEMORY:START -->"
END = "<!-- MEMORY:END -->"
BUDGETS = {"architecture": 25, "decision": 25, "pattern": 25, "gotcha": 20, "progress": 30, "context": 15}
TOTAL = sum(BUDGETS.values())
TITLES = {
    "architecture": "Architecture",
    "decision": "Decisions",
    "pattern": "Patterns",
    "gotcha": "Gotchas",
    "progress": "Progress",
    "context": "Context",
}
LINE_CHARS = 300
MARKS_NOTE = (
    "A mark like (src/app.ts changed 3 days later) means a file the memory names changed "
    "substantially, moved or was deleted since it was written: check the code before relying on it."
)
MODES = MEMORY_MODES  # memory.claude_md (recall.core.settings)
FILES = {"claude_md": "CLAUDE.md", "local": "CLAUDE.local.md"}
INTRO = (
    "What past sessions established about this project, kept current by recall. "
    "Edits between these markers are replaced: use `recall memories add|forget` instead."
)


def mode(cfg: dict | None = None) -> str:
    from recall.core.settings import MemorySettings

    return MemorySettings.from_config(cfg or config.load()).claude_md


def allocate(counts: dict[str, int], budgets: dict[str, int] | None = None) -> dict[str, int]:
    """Lines per type: each type's share, capped by what it has; spare lines go to the types
    that need more, spread evenly, in type order."""
    budgets = budgets or BUDGETS
    alloc = {t: min(counts.get(t, 0), budgets.get(t, 0)) for t in TYPES}
    spare = sum(budgets.get(t, 0) for t in TYPES) - sum(alloc.values())
    while spare > 0:
        needy = [t for t in TYPES if counts.get(t, 0) > alloc[t]]
        if not needy:
            break
        share = max(1, spare // len(needy))
        for t in needy:
            give = min(share, counts[t] - alloc[t], spare)
            alloc[t] += give
            spare -= give
            if spare <= 0:
                break
    return alloc


def said_elsewhere(state: State) -> set[str]:
    """Ids of the active memories that the project's Claude Code auto memory (MEMORY.md) or
    the user's part of its CLAUDE.md files already say: the near-duplicate test memories use
    among themselves (Jaccard of index tokens >= DEDUP_JACCARD) against each of their notes.
    Claude reads those files anyway, so the briefing need not repeat them."""
    from indexer.native_memory import project_notes

    notes = project_notes(state.project) if state.project else []
    if not notes:
        return set()
    from recall.memory.store import DEDUP_JACCARD, jaccard, tokens

    note_tokens = [t for t in (tokens(n) for n in notes) if t]
    return {m.id for m in state.active() if any(jaccard(m.tokens, nt) >= DEDUP_JACCARD for nt in note_tokens)}


def select(state: State, now: float | None = None) -> dict[str, tuple[list[Memory], int]]:
    """Per type: (memories shown, how many more are eligible but not shown). A memory that
    MEMORY.md or the user's CLAUDE.md already says is left out (``said_elsewhere``)."""
    now = time.time() if now is None else now
    eligible: dict[str, list[Memory]] = {t: [] for t in TYPES}
    try:
        repeated = said_elsewhere(state)
    except Exception as exc:  # noqa: BLE001 - an unreadable note file never stops the briefing
        _log().warning("notes of Claude Code's memory files not compared: %s", exc)
        repeated = set()
    for m in state.active():
        if m.id in repeated:
            continue
        if effective_confidence(m, now) >= BRIEFING_FLOOR:
            eligible[m.type].append(m)
    for t in TYPES:
        eligible[t].sort(key=lambda m: (pinned(m), rank(m, now), m.updated), reverse=True)
    alloc = allocate({t: len(v) for t, v in eligible.items()})
    out: dict[str, tuple[list[Memory], int]] = {}
    for t in TYPES:
        mems, n = eligible[t], alloc[t]
        if not mems:
            continue
        if len(mems) > n:  # the overflow line takes the section's last line
            shown = mems[: max(0, n - 1)]
            out[t] = (shown, len(mems) - len(shown))
        else:
            out[t] = (mems, 0)
    return out


def _line(m: Memory) -> str:
    """``- content``, and after it the mark of a memory whose files changed since
    (``(src/lib/refunds.ts changed 3 days later)``, recall.memory.stale)."""
    from recall.memory.stale import mark_text

    text = one_line(m.content, LINE_CHARS)
    mark = mark_text(m)
    return f"- {text} {mark}" if mark else f"- {text}"


def render_body(state: State, now: float | None = None) -> str:
    """The briefing's markdown (no markers); empty when nothing is eligible."""
    sections = select(state, now)
    if not sections:
        return ""
    lines = ["## Project memory (recall)", "", INTRO]
    if any(m.stale for shown, _more in sections.values() for m in shown):
        lines.append(MARKS_NOTE)
    for t in TYPES:
        if t not in sections:
            continue
        shown, more = sections[t]
        lines += ["", f"### {TITLES[t]}"]
        lines += [_line(m) for m in shown]
        if more:
            lines.append(f"- …and {more} more (search with recall)")
    return "\n".join(lines)


def render_block(state: State, now: float | None = None) -> str:
    body = render_body(state, now) or "## Project memory (recall)\n\nNo memories yet."
    return f"{START}\n{body}\n{END}"


def splice(existing: bytes | None, block: str | None) -> bytes | None:
    """``existing`` with recall's block replaced by ``block`` (appended when absent, removed
    when ``block`` is None). Bytes outside the markers are kept exactly. None: nothing to do,
    or the markers are malformed (an END before START, a START without END)."""
    start_b, end_b = START.encode(), END.encode()
    data = existing or b""
    s = data.find(start_b)
    e = data.find(end_b, s + len(start_b)) if s >= 0 else -1
    if s < 0 and data.find(end_b) >= 0:
        return None  # an END without START: do not guess which text is ours
    if s >= 0 and e < 0:
        return None
    if block is None:
        if s < 0:
            return None
        tail = data[e + len(end_b) :]
        head = data[:s]
        if tail.startswith(b"\n") and (not head or head.endswith(b"\n")):
            tail = tail[1:]  # the newline we added after the block
        if not tail and head.endswith(b"\n\n"):
            head = head[:-1]  # the blank line we added before a block appended at the end
        return head + tail
    new = block.encode("utf-8")
    if s >= 0:
        return data[:s] + new + data[e + len(end_b) :]
    if not data:
        return new + b"\n"
    sep = b"\n" if data.endswith(b"\n") else b"\n\n"
    return data + sep + new + b"\n"


def safe_root(project: str | Path) -> Path | None:
    """The project root if a briefing file may be written there (an existing directory that
    is not $HOME or /)."""
    try:
        root = Path(project).resolve()
    except OSError:
        return None
    if not str(project) or not root.is_dir():
        return None
    if root == Path(root.anchor) or root == Path.home().resolve():
        return None
    return root


def _write_file(path: Path, block: str | None) -> bool:
    """Splice ``block`` into ``path``; returns whether the file changed."""
    if path.is_symlink():
        _log().warning("not writing the memory briefing through the symlink %s", path)
        return False
    try:
        existing = path.read_bytes()
        file_mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        if block is None:
            return False
        existing, file_mode = None, 0o644
    new = splice(existing, block)
    if new is None:
        if block is not None:
            _log().warning(
                "%s has malformed %s / %s markers: fix them so recall can update its block", path, START, END
            )
        return False
    if new == existing:
        return False
    paths.atomic_write(path, new, mode=file_mode, private_dir=False)  # the project root is not ours
    return True


def _only_ours(path: Path) -> bool:
    """Whether the file holds nothing but recall's block (one an older recall created)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    rest = splice(data, None)
    return rest is not None and not rest.strip()


def _named(root: Path, name: str) -> bool:
    """Whether the project's .gitignore or .git/info/exclude already names ``name``."""
    want = {name, "/" + name}
    for f in (root / ".gitignore", root / ".git" / "info" / "exclude"):
        try:
            if want & {ln.strip() for ln in f.read_text(encoding="utf-8", errors="replace").splitlines()}:
                return True
        except OSError:
            continue
    return False


def _tracked(root: Path, name: str) -> bool:
    """Whether git tracks ``name`` in ``root`` (then an exclude line changes nothing: left alone)."""
    if not (root / ".git").is_dir():
        return False
    import subprocess

    try:
        return (
            subprocess.run(
                ["git", "ls-files", "--error-unmatch", "--", name],
                cwd=root,
                capture_output=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return True  # cannot tell: leave the user's git alone


def _log():
    from recall.core import log

    return log.get("memory")


def write_briefing(
    project: str | Path,
    state: State | None = None,
    *,
    cfg: dict | None = None,
    now: float | None = None,
    refreshed: bool = False,
) -> Path | None:
    """Bring the project's briefing file up to date; returns the file written, or None.
    The memories' stale marks are refreshed first (``recall.memory.stale``) unless
    ``refreshed``.

    Never creates a file just to say there are no memories; never writes outside the root.
    """
    root = safe_root(project)
    if root is None:
        return None
    state = state if state is not None else load(str(project))
    if not refreshed:
        from recall.memory.store import refresh_stale

        refresh_stale(str(project), state)
    want = mode(cfg)
    written = None
    for m, name in FILES.items():
        path = root / name
        if m != want:
            if path.exists():
                _write_file(path, None)  # switching modes: take our block out of the other file
            continue
        body = render_body(state, now)
        if not body and not path.exists():
            continue
        if m == "local":
            git_exclude(root, name)
        created = not path.exists() and not path.is_symlink()
        if _write_file(path, render_block(state, now)):
            written = path
        if m == "claude_md" and (created or _only_ours(path) and not _named(root, name) and not _tracked(root, name)):
            # a CLAUDE.md recall made for its memories stays out of `git status` (issue 36): a
            # file the user had, wrote into, or tracks (`git add -f` shares it) is theirs
            git_exclude(root, name, note=CLAUDE_MD_EXCLUDE_NOTE)
    return written


def session_context(cwd: str, *, cfg: dict | None = None, now: float | None = None) -> str | None:
    """For the SessionStart hook: refresh the briefing file (decay moves on while no session
    runs); in ``none`` mode return the briefing to inject as context."""
    from indexer.project import canonical_project

    project = canonical_project(os.path.abspath(cwd)) if cwd else ""
    if not project:
        return None
    try:
        state = load(project)
    except Exception as exc:  # noqa: BLE001 - a hook never fails; the log says why
        _log().warning("memory briefing skipped: %s", exc)
        return None
    cfg = cfg or config.load()
    if not state.memories:
        return None
    from recall.memory.store import refresh_stale

    refresh_stale(project, state)  # decay and marks follow the files, too
    if safe_root(project) is not None:
        try:  # in "none" mode this takes a block left from another mode out of the files
            write_briefing(project, state, cfg=cfg, now=now, refreshed=True)
        except OSError as exc:
            _log().warning("memory briefing not written: %s", exc)
    if mode(cfg) == "none" or safe_root(project) is None:
        return render_body(state, now) or None
    return None
