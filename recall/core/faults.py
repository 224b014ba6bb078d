"""Crash points for the crash tests: ``RECALL_KILL_AT=<name>`` makes the process kill itself
with SIGKILL (no clean-up, no flush: what a `kill -9`, an OOM kill or a power cut leaves) when
it reaches the point of that name. Unset, a point costs one environment lookup.

Named points: ``forget:intent`` (the intent recorded, nothing removed yet) and
``forget:<step>`` after each step of a forget (``indexer.forgetting``,
``recall.privacy.forget``)."""

from __future__ import annotations

import os
import signal


def point(name: str) -> None:
    if os.environ.get("RECALL_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
