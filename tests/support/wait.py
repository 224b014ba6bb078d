"""The one ``wait_for`` of the suite: poll a predicate until it holds (a value that is true) or
the time is up, then fail naming what was awaited (``what``, or a function that says it then:
a log's tail) and the last value seen."""

from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(
    pred: Callable[[], Any], timeout: float = 60.0, what: str | Callable[[], str] = "condition", interval: float = 0.05
) -> Any:
    """``pred()``'s first true value; AssertionError when it has none within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {said} (last value {last!r})")
        time.sleep(interval)
