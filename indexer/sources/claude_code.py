"""Claude Code's sessions: ``~/.claude/projects/<encoded cwd>/<session>.jsonl`` (or
``$CLAUDE_CONFIG_DIR/projects``, and any ``--source`` folder), subagents' transcripts below
them. The parser is ``indexer.transcripts`` (this module only says where and which files)."""

from __future__ import annotations

from pathlib import Path

from indexer.transcripts import FileContext, read_lines

NAME = "claude-code"
LABEL = "Claude Code"


def roots() -> list[Path]:
    from recall.core import paths

    return [paths.claude_config_dir() / "projects"]


def wants(name: str) -> bool:
    return name.endswith(".jsonl")


def whole(name: str) -> bool:
    return False  # appended to: read from where the last read stopped


def context(path: Path) -> FileContext:
    return FileContext(path)


read = read_lines
