"""``--since`` values: a span back from now (``30m``, ``2h``, ``3d``, ``1w``) or an ISO date/time."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from recall.core.errors import UsageError

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdwy])\s*$", re.I)


def parse_since(value: str, now: float | None = None, option: str = "--since") -> float:
    """Seconds since the epoch for ``value``; raises UsageError naming ``option`` and the
    accepted forms."""
    now = time.time() if now is None else now
    m = SPAN.match(value or "")
    if m:
        return now - float(m.group(1)) * UNITS[m.group(2).lower()]
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise UsageError(
            f"{option} takes a span like 2h, 3d or 1w, or a date like 2026-11-01; got {value!r}."
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()
