"""``recall index`` while the service runs: the service does it (op "index"), so the one index
writer stays the service's. Progress is the service's backfill progress, polled from its status
and handed to the caller's callback."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from recall.core.errors import RecallError


def index_via_service(
    sources: list[Path],
    rebuild: bool,
    on_start: Callable[[dict], None] | None = None,
    on_progress: Callable[[dict], None] | None = None,
):
    """Ask the running service to index (``rebuild``: from scratch). ``on_start(info)`` is called
    once the service answers (its ping: pid, version); ``on_progress(backfill)`` every half second
    while it works. Returns the ``indexer.ingest.Summary``, or None when no service answers."""
    from indexer.ingest import Summary
    from recall.core import service_client as client

    info = client.ping(timeout=1.0)
    if not info:
        return None
    if on_start is not None:
        on_start(info)
    args = {"sources": [str(Path(s).expanduser().resolve()) for s in sources], "rebuild": rebuild}
    try:
        result = _call_with_progress(args, on_progress)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        return None
    return Summary.from_dict(result)


def _call_with_progress(args: dict, on_progress: Callable[[dict], None] | None) -> dict:
    """The service's "index" op, in a thread; meanwhile its backfill progress, polled from its
    status every half second, goes to ``on_progress``."""
    from recall.core import service_client as client

    box: dict = {}

    def call() -> None:
        try:
            box["result"] = client.call("index", args, timeout=24 * 3600.0)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
        if not worker.is_alive():
            break
        if on_progress is None:
            continue
        try:
            bf = (client.call("status", {}, timeout=2.0) or {}).get("backfill")
        except client.Unavailable:
            bf = None
        if bf:
            on_progress(bf)
    if "error" in box:
        raise box["error"]
    return box["result"]
