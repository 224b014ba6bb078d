"""Where rules are kept, and whether there are any: the prompt hook asks ``any_rules`` before
it imports the rest of ``recall.rules`` (most users have none, and the matcher, the store
and RE2 cost milliseconds to import)."""

from __future__ import annotations

import os
from pathlib import Path

from recall.core import paths


def project_of(cwd) -> str | None:
    """The canonical project of a hook payload's ``cwd`` (None without a usable one)."""
    if not isinstance(cwd, str) or not cwd or not os.path.isdir(cwd):
        return None
    from indexer.project import canonical_project

    return canonical_project(os.path.abspath(cwd))


def project_file(project: str) -> Path:
    return Path(project) / ".memory" / "rules.json"


def global_file() -> Path:
    return paths.recall_home() / "rules.json"


def any_rules(project: str | None) -> bool:
    """Whether a rule file exists for ``project`` or globally (an empty one counts)."""
    return global_file().exists() or (project is not None and project_file(project).exists())
