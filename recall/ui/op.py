"""The service's "ui" op: start the page's server in a thread of the service the first time
``recall ui`` asks (never at the service's start: nothing of it is imported before), and answer
where it listens.

``ui``  args ``{"port": int | null, "open": bool}`` -> ``{"port", "url", "pid"}``, and
        ``"open_file"`` when ``open``: ``url`` holds a one-time code, the file (0600, under
        ``$RECALL_HOME/ui/``) another, for the browser to be opened on (``UIServer.open_file``).
        Each call mints new ones; the server's secret never leaves it. (The socket is the
        user's own, 0600, its listener checked by ``recall.core.service_client``.) A port other
        than the one it listens on moves it there.
"""

from __future__ import annotations

import os
import threading

from recall.core.errors import RecallError, UsageError
from recall.service.registry import op

_lock = threading.Lock()
_server = None


def _port(value) -> int | None:
    if value is None or value == "":
        return None
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"port must be a whole number, not {value!r}.") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range: give 1-65535 (or leave --port out for a free one).")
    return port


@op("ui")
def ui(args: dict) -> dict:
    global _server
    port = _port((args or {}).get("port"))
    with _lock:
        if _server is not None and port not in (None, 0, _server.port):
            _server.stop()
            _server = None
        if _server is None:
            from recall.ui import server

            try:
                _server = server.start(port or 0)
            except OSError as exc:
                raise RecallError(
                    f"cannot serve the page on 127.0.0.1:{port or 0} ({exc.strerror or exc}): "
                    "pick another port with --port."
                ) from None
        out = {"port": _server.port, "url": _server.url(), "pid": os.getpid()}
        if (args or {}).get("open"):
            out["open_file"] = _server.open_file()
        return out


def stop() -> None:
    """Stop the page's server (the service stopping)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
