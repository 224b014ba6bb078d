"""Stand-ins for programs on the machine that a test must not reach."""

from __future__ import annotations

from pathlib import Path


def unreachable_service_manager(folder: Path) -> Path:
    """``folder`` holding a ``systemctl`` and a ``launchctl`` that cannot reach a user bus, as in a
    container: put it first on PATH and recall's service runs detached, no real unit is
    touched. Returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in ("systemctl", "launchctl"):
        f = folder / tool
        f.write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
        f.chmod(0o755)
    return folder
