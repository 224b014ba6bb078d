"""Claude Code's own rule files, listed beside recall's rules (read-only).

Claude Code loads ``.claude/rules/**/*.md`` of the project (and ``~/.claude/rules/``) by
itself: one without ``paths:`` frontmatter at every session start, one with ``paths:`` only
once Claude has read a file matching them. recall never changes them; ``recall rules
list`` shows them so a user sees in one place what may reach Claude.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 200


@dataclass
class NativeRule:
    path: str  # the file
    scope: str  # "project" or "user"
    paths: list[str] = field(default_factory=list)
    summary: str = ""  # its first line of text

    def public(self) -> dict:
        return {
            "file": self.path,
            "scope": self.scope,
            "paths": self.paths,
            "summary": self.summary,
            "native": True,
            "read_only": True,
        }


def _frontmatter(text: str) -> tuple[dict, str]:
    """(``paths`` of a YAML-ish frontmatter block, the body); tolerant of what people write."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    head, body = text[3:end], text[end + 4 :]
    out: dict = {}
    key = None
    for line in head.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key:
            out.setdefault(key, []).append(stripped[2:].strip().strip("'\""))
            continue
        name, sep, value = stripped.partition(":")
        if not sep:
            continue
        key = name.strip()
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            out[key] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
        elif value:
            out[key] = [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
        else:
            out[key] = []
    return out, body


def _summary(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:160]
    return ""


def _scan(root: Path, scope: str) -> list[NativeRule]:
    out: list[NativeRule] = []
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".md"):
                continue
            f = Path(dirpath) / name
            try:
                text = f.read_text(encoding="utf-8", errors="replace")[:20_000]
            except OSError:
                continue
            meta, body = _frontmatter(text)
            out.append(NativeRule(str(f), scope, [str(p) for p in meta.get("paths", [])], _summary(body)))
            if len(out) >= MAX_FILES:
                return out
    return out


def native_rules(project: str | None) -> list[NativeRule]:
    """The project's ``.claude/rules`` files, then the user's (``~/.claude/rules``)."""
    from recall.core.paths import claude_config_dir

    found = _scan(Path(project) / ".claude" / "rules", "project") if project else []
    return found + _scan(claude_config_dir() / "rules", "user")
