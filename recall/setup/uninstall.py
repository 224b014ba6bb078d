"""What ``recall setup --uninstall`` does beyond the settings files: it unwires every project
setup wired (with ``--global``), stops and removes the service, stops a memory worker, says
plainly what it leaves, and with ``--purge`` removes that too.

What recall leaves after an uninstall (and ``--purge`` removes, only what recall wrote):
  * ``$RECALL_HOME``: the archive of your history, the index, the config, the logs;
  * each project's ``.memory/`` (``state.json``: its typed memories, ``rules.json``);
  * recall's block in each project's ``CLAUDE.md`` / ``CLAUDE.local.md`` (between
    ``<!-- MEMORY:START -->`` and ``<!-- MEMORY:END -->``; a file left empty is deleted);
  * the lines recall added to each project's ``.git/info/exclude`` (``/.memory/``,
    ``/CLAUDE.local.md``).

The purge keeps, in ``$RECALL_HOME``, the records of what was forgotten, paused and excluded
(``privacy_records``: no text of it), unless told in so many words (``--drop-records``):
Claude Code still keeps its transcripts, and a new setup would index all of it again.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from recall.core import paths
from recall.core.text import counted
from recall.memory.store import CLAUDE_MD_EXCLUDE_NOTE

#: the files recall writes in a project's .memory/ (anything else there is left, and said)
MEMORY_FILES = ("state.json", "state.lock", "rules.json", "rules.lock")
EXCLUDE_LINES = ("/.memory/", "/CLAUDE.local.md")


def _without_recall_lines(lines: list[str]) -> list[str]:
    """An exclude file's lines without recall's: ``EXCLUDE_LINES``, and the ``/CLAUDE.md`` line
    recall wrote under its note (a ``/CLAUDE.md`` line of the user's stays)."""
    kept, skip_next = [], False
    for ln in lines:
        if skip_next:
            skip_next = False
            if ln.strip() == "/CLAUDE.md":
                continue
        if ln.strip() == CLAUDE_MD_EXCLUDE_NOTE:
            skip_next = True
            continue
        if ln.strip() in EXCLUDE_LINES:
            continue
        kept.append(ln)
    return kept


def known_projects() -> list[Path]:
    """Every project recall may have written into: the ones setup wired, the ones the index
    and the memory cursors name; only those that still exist."""
    from recall.setup.install import wired_projects

    found: set[str] = set(wired_projects())
    db = paths.state_db_path()
    if db.exists():
        import sqlite3

        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                found.update(r[0] for r in conn.execute("SELECT DISTINCT project FROM sessions") if r[0])
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    cursors = paths.recall_home() / "memory" / "cursors"
    if cursors.is_dir():
        from recall.core.jsonio import read_json

        for f in cursors.glob("*.json"):
            project = read_json(f, {}, dict).get("project")
            if isinstance(project, str) and project:
                found.add(project)
    return sorted(Path(p) for p in found if os.path.isdir(p))


def leftovers(projects: list[Path]) -> dict:
    """What of recall's is still on disk: {"home": path or None, "memories": [...],
    "blocks": [...], "excludes": [...]}."""
    from recall.memory.briefing import END, START

    home = paths.recall_home()
    out: dict = {"home": str(home) if home.exists() else None, "memories": [], "blocks": [], "excludes": []}
    for p in projects:
        if any((p / ".memory" / n).exists() for n in MEMORY_FILES):
            out["memories"].append(str(p / ".memory"))
        for name in ("CLAUDE.md", "CLAUDE.local.md"):
            try:
                text = (p / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if START in text and END in text:
                out["blocks"].append(str(p / name))
        try:
            lines = (p / ".git" / "info" / "exclude").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        if any(ln.strip() in EXCLUDE_LINES or ln.strip() == CLAUDE_MD_EXCLUDE_NOTE for ln in lines):
            out["excludes"].append(str(p / ".git" / "info" / "exclude"))
    return out


def leftover_lines(left: dict) -> list[str]:
    lines = []
    if left["home"]:
        lines.append(f"your history (archive, index, config, logs) in {left['home']}")
    if left["memories"]:
        lines.append(
            f"the memories of {counted(len(left['memories']), 'project')}: "
            + ", ".join(left["memories"][:5])
            + (" …" if len(left["memories"]) > 5 else "")
        )
    if left["blocks"]:
        lines.append(
            f"recall's block in {counted(len(left['blocks']), 'CLAUDE.md file')}: "
            + ", ".join(left["blocks"][:5])
            + (" …" if len(left["blocks"]) > 5 else "")
        )
    if left["excludes"]:
        lines.append(f"recall's lines in {counted(len(left['excludes']), '.git/info/exclude file')}")
    return lines


def stop_worker() -> str | None:
    """Stop a detached memory worker (it holds the worker lock with its pid)."""
    from recall.memory import queue

    if queue.lock_free():
        return None
    try:
        pid = int(queue.holder())
    except ValueError:
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return None
    return f"stopped the memory worker (pid {pid})"


DROP_RECORDS = "recall setup --uninstall --global --purge --drop-records"


def privacy_records() -> dict:
    """What keeps forgotten, paused and excluded things out of a new setup's backfill (Claude
    Code still keeps the transcripts), only those present: {"tombstones": path, "key": path,
    "controls": path, "worktrees": path, "exclude": [...], "sources": {...}}. None of them holds
    the text of what they keep out: ``archive/forgotten.json`` (ids, paths, dates, the keyed
    digests of the ``--match``/``--secret`` rules), ``forget.key`` (the key those digests need),
    ``controls.json`` (pause windows, sessions switched off), ``worktrees.json`` (the removed
    worktrees a forgotten or excluded project had), and of ``config.json`` the ``exclude`` list
    and the agents whose sessions are not read (``sources``)."""
    from indexer.forget_rules import key_path
    from indexer.ledger import controls_path
    from recall.core import config

    out: dict = {}
    for name, path in (
        ("tombstones", paths.archive_dir() / "forgotten.json"),
        ("key", key_path()),
        ("controls", controls_path()),
    ):
        if path.is_file():
            out[name] = path
    try:
        cfg = config.load()
    except Exception:  # noqa: BLE001 - a damaged config keeps no exclusion (the purge goes on)
        cfg = {}
    exclude = cfg.get("exclude") or []
    if exclude:
        out["exclude"] = list(exclude)
    sources = cfg.get("sources")
    if isinstance(sources, dict) and any(v is False for v in sources.values()):
        out["sources"] = {k: False for k, v in sources.items() if v is False}
    wt = paths.recall_home() / "worktrees.json"  # (indexer.project)
    if ("tombstones" in out or "exclude" in out) and wt.is_file():
        out["worktrees"] = wt
    return out


def records_text(records: dict) -> str:
    parts = []
    if "tombstones" in records:
        parts.append("forgets")
    if "controls" in records:
        parts.append("pauses and `recall: off` sessions")
    if records.get("exclude"):
        parts.append(counted(len(records["exclude"]), "exclusion"))
    if records.get("sources"):
        parts.append("the agents whose sessions are not read (" + ", ".join(sorted(records["sources"])) + ")")
    return ", ".join(parts)


def records_files(records: dict, where: Path) -> list[str]:
    """The files the records are kept in, relative to ``where``."""
    files = [records[k] for k in ("tombstones", "key", "controls", "worktrees") if k in records]
    names = [str(Path(f).relative_to(where)) if Path(f).is_relative_to(where) else str(f) for f in files]
    if records.get("exclude") or records.get("sources"):
        names.append("config.json (" + " and ".join(k for k in ("exclude", "sources") if records.get(k)) + " only)")
    return names


def _remove_all_but(root: Path, keep: set[Path]) -> bool:
    """Delete everything under ``root`` but the files of ``keep`` (and the folders holding
    them); whether nothing else is left."""
    ok = True
    try:
        entries = list(os.scandir(root))
    except OSError:
        return False
    for e in entries:
        path = Path(e.path)
        if path in keep:
            continue
        if e.is_dir(follow_symlinks=False) and any(k.is_relative_to(path) for k in keep):
            ok = _remove_all_but(path, keep) and ok
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            ok = False
    return ok


def _purge_home(where: Path, keep_records: bool) -> list[str]:
    """``$RECALL_HOME`` deleted, but for the privacy records when ``keep_records``: each line
    says exactly what went and what stayed."""
    import json

    records = privacy_records()
    if not (keep_records and records):
        shutil.rmtree(where, ignore_errors=True)
        if where.exists():
            return [f"could not delete all of {where}: remove it yourself"]
        out = [f"deleted {where} (your history, the index, the config, the logs)"]
        if records:
            out.append(
                f"dropped the records of {records_text(records)}: a new `recall setup` indexes again what "
                "you forgot, paused and excluded (Claude Code still keeps its transcripts)"
            )
        return out
    keep = {Path(records[k]) for k in ("tombstones", "key", "controls", "worktrees") if k in records}
    cfg = {k: records[k] for k in ("exclude", "sources") if records.get(k)}
    if cfg:
        keep.add(paths.config_path())
    ok = _remove_all_but(where, keep)
    if cfg:
        paths.atomic_write(paths.config_path(), json.dumps(cfg, indent=2) + "\n")
    out = [
        f"deleted your history, the index, the logs and the rest of the config in {where}"
        if ok
        else f"could not delete all of your history in {where}: remove what is left yourself"
    ]
    out.append(
        f"kept in {where} only the records of {records_text(records)} ({', '.join(records_files(records, where))}; "
        f"no text of what they keep out), so a new `recall setup` does not bring it back: "
        f"`{DROP_RECORDS}` drops them too"
    )
    return out


def purge(projects: list[Path], home: bool = True, keep_records: bool = True) -> list[str]:
    """Remove what recall leaves in ``projects`` (see the module), and with ``home`` the whole
    of ``$RECALL_HOME`` but for the records of what was forgotten, paused and excluded
    (``privacy_records``; ``keep_records=False``, said in so many words: those too); returns
    one line per thing removed or kept."""
    from recall.memory import briefing

    done = []
    for p in projects:
        mem = p / ".memory"
        removed = 0
        for name in MEMORY_FILES:
            try:
                (mem / name).unlink()
                removed += 1
            except FileNotFoundError:
                pass
            except OSError:
                done.append(f"could not remove {mem / name}: remove it yourself")
        for tmp in mem.glob(".*.tmp") if mem.is_dir() else ():
            tmp.unlink(missing_ok=True)
        if removed:
            try:
                mem.rmdir()
                done.append(f"removed {mem}")
            except OSError:
                done.append(f"removed recall's files from {mem} (your other files there are kept)")
        for name in ("CLAUDE.md", "CLAUDE.local.md"):
            path = p / name
            if not path.is_file() or path.is_symlink():
                continue
            try:
                before = path.read_bytes()
            except OSError:
                continue
            after = briefing.splice(before, None)
            if after is None or after == before:
                continue
            if not after.strip():
                path.unlink()
                done.append(f"deleted {path} (it held only recall's block)")
            else:
                paths.atomic_write(path, after, mode=path.stat().st_mode & 0o777, private_dir=False)
                done.append(f"removed recall's block from {path}")
        exclude = p / ".git" / "info" / "exclude"
        try:
            text = exclude.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        kept = _without_recall_lines(text.splitlines(keepends=True))
        if len(kept) != len(text.splitlines(keepends=True)):
            paths.atomic_write(exclude, "".join(kept), mode=exclude.stat().st_mode & 0o777, private_dir=False)
            done.append(f"removed recall's lines from {exclude}")
    where = paths.recall_home()
    if home and where.exists():
        done += _purge_home(where, keep_records)
    return done
