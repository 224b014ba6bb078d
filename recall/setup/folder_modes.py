"""Undo what recall's setup did to folder modes before issue 27.

Until then, the settings writer made the folder of every file it wrote private: ``recall
setup --global`` turned ``$HOME`` (the folder of ``~/.claude.json``) and ``~/.claude`` to
0700, a project setup turned the project folder (``.mcp.json``) and its ``.claude`` to 0700.
Nothing recorded the modes before, so the repair has to go on evidence, and it is
deliberately conservative: a folder is put back only when all of these hold.

1. Its mode is exactly 0700 (what recall set; any other mode was changed since by someone else).
2. recall's setup wrote into it: the file recall writes there holds recall's entry
   (``.claude.json``/``.mcp.json``: the ``recall`` MCP server; ``settings.json``: recall's
   hooks). That proves the old writer ran ``chmod 700`` on it.
3. Its neighbours say it was not 0700 by choice: its sibling folders (other projects beside a
   project, the other folders of a project beside its ``.claude``, the other homes in
   ``/home`` beside ``$HOME``) that recall never wrote into share one mode, and none of them is
   0700. That mode is the one restored. With no such sibling there is no evidence: nothing is
   changed, and ``recall doctor`` says what to run if the user did not choose 0700 themselves.
4. It was not repaired before (``$RECALL_HOME/setup.json`` keeps what was restored, so a user
   who sets 0700 again afterwards is never overruled).

Judgment call: a wrong loosening would leak (a folder the user had made private is opened up),
while a wrong "leave it" only keeps a folder private; so where the evidence is thin, recall
tells rather than acts. ``$HOME`` on a one-user machine is the usual such case.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import read_json
from recall.core.text import counted


@dataclass
class Suspect:
    folder: Path
    why: str  # which file of recall's proves setup wrote there
    restore_to: int | None  # the mode its neighbours share, or None (no evidence)
    evidence: str  # what the neighbours say


def _mode(path: Path) -> int | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISDIR(st.st_mode) else None


def _holds_recall(file: Path, kind: str) -> bool:
    from recall.core.wiring import is_our_mcp
    from recall.setup.install import load_json, ours

    try:
        data = load_json(file) or {}
    except Exception:  # noqa: BLE001 - a broken file is no evidence
        return False
    if kind == "mcp":
        servers = data.get("mcpServers")
        return isinstance(servers, dict) and is_our_mcp(servers.get("recall"))
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return any(
        ours(h)
        for groups in hooks.values()
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
    )


def _touched_by_recall(folder: Path) -> str | None:
    """Which file of recall's setup is in ``folder`` (the proof its old writer chmod-ed it)."""
    for name, kind in (
        (".claude.json", "mcp"),
        (".mcp.json", "mcp"),
        ("settings.json", "hooks"),
        ("settings.local.json", "hooks"),
    ):
        f = folder / name
        if f.is_file() and _holds_recall(f, kind):
            return str(f)
    return None


def _siblings(folder: Path) -> list[Path]:
    parent = folder.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    out = []
    for n in names:
        p = parent / n
        if p == folder or n in ("lost+found",) or p.is_symlink():
            continue
        if _mode(p) is not None and not _touched_by_recall(p):
            out.append(p)
    return out


def _judge(folder: Path, why: str) -> Suspect:
    modes = Counter(m for m in (_mode(p) for p in _siblings(folder)) if m is not None)
    if not modes:
        return Suspect(folder, why, None, f"no folder beside it in {folder.parent} to tell its usual mode")
    if 0o700 in modes:
        return Suspect(
            folder,
            why,
            None,
            f"{counted(modes[0o700], 'folder')} beside it {'is' if modes[0o700] == 1 else 'are'} 0700 too: it may be your choice",
        )
    mode, n = modes.most_common(1)[0]
    if n * 3 < sum(modes.values()) * 2:
        return Suspect(
            folder, why, None, f"the folders beside it have mixed modes ({', '.join(f'{m:o}' for m in modes)})"
        )
    return Suspect(
        folder,
        why,
        mode,
        f"{n} of the {counted(sum(modes.values()), 'folder')} beside it {'is' if n == 1 else 'are'} {mode:o}",
    )


def _manifest() -> dict:
    return read_json(paths.recall_home() / "setup.json", {}, dict)


def candidates(project: Path | None = None, global_: bool = True) -> list[Path]:
    """The folders recall's setup writes into: ``$HOME`` (or ``$CLAUDE_CONFIG_DIR``) and
    ``~/.claude``; a project and its ``.claude``."""
    from recall.setup.install import mcp_file, settings_file

    out: list[Path] = []
    if global_:
        out += [mcp_file(None, True).parent, settings_file(None, True).parent]
    if project is not None:
        out += [project, project / ".claude"]
    return [Path(key) for key in dict.fromkeys(os.path.abspath(p) for p in out)]  # each once, in order


def suspects(folders: list[Path]) -> list[Suspect]:
    """The folders among ``folders`` that recall's old setup made 0700 and were never repaired."""
    restored = _manifest().get("modes_restored") or {}
    out = []
    for folder in folders:
        if _mode(folder) != 0o700 or str(folder) in restored:
            continue
        why = _touched_by_recall(folder)
        if why:
            out.append(_judge(folder, why))
    return out


def repair(folders: list[Path]) -> tuple[list[str], list[str]]:
    """Put back the mode of each folder with evidence (see the module). Returns (what was
    changed, what was left with the reason and the command to run)."""
    changed, left = [], []
    done: dict = {}
    for s in suspects(folders):
        if s.restore_to is None:
            if usual_mode(s.folder) == 0o700:
                continue  # 0700 is how folders are made here: most likely it was 0700 before too
            left.append(
                f"{s.folder} is 0700, as an earlier `recall setup` left it (it wrote {s.why}); "
                f"recall cannot tell its mode before ({s.evidence}), so it is left: if you did not "
                f"choose 0700, run `chmod {usual_mode(s.folder):o} {_q(s.folder)}`"
            )
            continue
        try:
            os.chmod(s.folder, s.restore_to)
        except OSError as exc:
            left.append(
                f"could not put back the mode of {s.folder} ({exc.strerror}): run "
                f"`chmod {s.restore_to:o} {_q(s.folder)}`"
            )
            continue
        done[str(s.folder)] = {"from": "700", "to": f"{s.restore_to:o}", "time": time.time()}
        changed.append(
            f"put back the mode of {s.folder}: {s.restore_to:o} like the folders beside it "
            f"({s.evidence}); an earlier `recall setup` had made it 0700 (`chmod 700 {_q(s.folder)}` "
            "if you want it private)"
        )
    if done:
        data = _manifest()
        data["modes_restored"] = {**(data.get("modes_restored") or {}), **done}
        paths.atomic_write(paths.recall_home() / "setup.json", json.dumps(data, indent=2) + "\n")
    return changed, left


def usual_mode(folder: Path) -> int:
    """The mode a folder is usually made with here: for a home, the system's setting for new
    homes (``HOME_MODE`` in /etc/login.defs, ``DIR_MODE`` in /etc/adduser.conf); else what
    ``mkdir`` gives under the current umask."""
    if os.path.abspath(folder) == os.path.abspath(Path.home()):
        for conf, key in (("/etc/login.defs", "HOME_MODE"), ("/etc/adduser.conf", "DIR_MODE")):
            try:
                for line in Path(conf).read_text(encoding="utf-8", errors="replace").splitlines():
                    parts = line.replace("=", " ").split()
                    if len(parts) >= 2 and parts[0] == key:
                        return int(parts[1], 8)
            except (OSError, ValueError):
                continue
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _q(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
