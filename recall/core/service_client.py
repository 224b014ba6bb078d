"""Talking to the running recall service over its unix socket (stdlib only: this is on
the prompt hook's hot path, which must not import tantivy, typer, rich, anthropic or mcp).

Protocol: newline-delimited JSON over ``address()`` (``$RECALL_HOME/service.sock``, 0600).

    request   {"v": PROTOCOL, "op": "<name>", "args": {...}}
    response  {"ok": true, "result": ...}
            | {"ok": false, "error": "one line", "code": "version|unknown_op|bad_request|recall|internal"}

The first request of a connection must carry ``"v"`` (``call`` sends it on every
request): a service of another protocol or package version answers ``code: "version"``
and ``call`` raises ``Unavailable``, so a client never talks to an old service after an
upgrade; it falls back to working in-process.

``call(op, args, timeout)`` returns the result or raises:
  * ``Unavailable``   no service / no socket / refused / timeout / version mismatch /
                      an op the service does not know / an internal error in the op:
                      the caller should do the work in-process;
  * ``RemoteError``   (a subclass of Unavailable) the op rejected the request with a
                      user-facing one-line message (``str(exc)``, ``exc.exit_code``).
                      Callers that only catch Unavailable still fall back safely.

``RECALL_NO_SERVICE=1`` in the environment makes every ``call`` raise Unavailable (tests,
benchmarks, debugging); the service sets ``LOCAL_ONLY`` in its own process so code
running inside it never calls itself.
"""

from __future__ import annotations

import json
import _socket as socket  # the C module: the wrapper's enum set-up costs ~4 ms on every prompt
import os

from recall import __version__
from recall.core.paths import service_status_path, socket_path

PROTOCOL_VERSION = 1
PROTOCOL = f"{PROTOCOL_VERSION}:{__version__}"
MAX_RESPONSE = 64 << 20
_MAX_SUN_PATH = 100  # sockaddr_un.sun_path is 104 (macOS) / 108 (Linux) bytes

LOCAL_ONLY = False


class Unavailable(Exception):
    """The service cannot answer: do the work in-process."""


class RemoteError(Unavailable):
    """The service answered with a user-facing error (``str(exc)`` is one line)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def address() -> str:
    """Where the service listens: ``socket_path()``, or, when that path is too long for a
    unix socket, a per-user short path under the temp dir derived from it."""
    path = str(socket_path())
    if len(os.fsencode(path)) <= _MAX_SUN_PATH:
        return path
    import hashlib  # only for home paths too long for a unix socket

    digest = hashlib.sha1(os.fsencode(path)).hexdigest()[:16]
    return os.path.join(short_socket_dir(), f"{digest}.sock")


def short_socket_dir() -> str:
    base = "/tmp" if os.path.isdir("/tmp") else os.environ.get("TMPDIR", "/tmp")
    return os.path.join(base, f"recall-{os.getuid()}")


def disabled() -> bool:
    return LOCAL_ONLY or os.environ.get("RECALL_NO_SERVICE", "") not in ("", "0")


def request(op: str, args: dict | None = None) -> bytes:
    return (json.dumps({"v": PROTOCOL, "op": op, "args": args or {}}, ensure_ascii=False) + "\n").encode("utf-8")


def call(op: str, args: dict | None = None, timeout: float = 2.0):
    """Ask the service to run ``op``; returns its result (see module docstring)."""
    if disabled():
        raise Unavailable("the service is not used in this process")
    addr = address()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        try:
            sock.connect(addr)
        except (FileNotFoundError, ConnectionRefusedError):
            raise Unavailable("the recall service is not running") from None
        except OSError as exc:
            raise Unavailable(f"cannot reach the recall service at {addr}: {exc}") from None
        try:
            sock.sendall(request(op, args))
            buf = bytearray()
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                nl = chunk.find(b"\n")
                if nl >= 0:
                    buf += chunk[:nl]
                    break
                buf += chunk
                if len(buf) > MAX_RESPONSE:
                    raise Unavailable("the recall service answered too much")
        except socket.timeout:
            raise Unavailable(f"the recall service did not answer {op!r} within {timeout:g} s") from None
        except OSError as exc:
            raise Unavailable(f"the recall service dropped the connection: {exc}") from None
    finally:
        sock.close()
    if not buf:
        raise Unavailable("the recall service closed the connection without answering")
    try:
        reply = json.loads(buf)
    except ValueError:
        raise Unavailable("the recall service sent an unreadable answer") from None
    if not isinstance(reply, dict):
        raise Unavailable("the recall service sent an unreadable answer")
    if reply.get("ok"):
        return reply.get("result")
    error = str(reply.get("error") or "the recall service failed")
    if reply.get("code") == "recall":
        raise RemoteError(error, int(reply.get("exit_code") or 1))
    raise Unavailable(error)


def ping(timeout: float = 1.0) -> dict | None:
    """The service's identity ({"pid", "version", "protocol", ...}) or None when it is down."""
    try:
        return call("ping", {}, timeout=timeout)
    except Unavailable:
        return None


def catching_up() -> dict | None:
    """The running service's backfill progress (``service.json``, refreshed every few seconds)
    while it is still indexing the history, else None: searches answer from what is indexed
    so far and say so."""
    try:
        with open(service_status_path(), "rb") as fh:
            st = json.loads(fh.read())
        if not st.get("running") or not st.get("backfill"):
            return None
        os.kill(int(st.get("pid") or 0), 0)  # a service killed mid-backfill left its file behind
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    bf = st["backfill"]
    return bf if isinstance(bf, dict) else None
