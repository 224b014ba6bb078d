"""Talking to the running recall service over its unix socket (stdlib only: this is on
the prompt hook's hot path, which must not import tantivy, typer, rich, anthropic or mcp).

Protocol: newline-delimited JSON over ``address()`` (``$RECALL_HOME/service.sock``, 0600).

    request   {"v": PROTOCOL, "op": "<name>", "args": {...}, "env": {...}?}
              (``env``: the caller's model variables, see ``recall.core.caller``)
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

Trust: the client sends nothing (prompts, and the caller's credentials for the model call)
to a socket it has not verified. The socket's directory must be owned by this user and
writable by nobody else (``/tmp/recall-<uid>`` made by another user first is refused, not
reused), the socket file must be ours, and the process listening must run as this user
(``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS). A failed check raises
``Untrusted`` (a subclass of Unavailable: the caller works in-process and logs the line).

``RECALL_NO_SERVICE=1`` in the environment makes every ``call`` raise Unavailable (tests,
benchmarks, debugging); the service sets ``LOCAL_ONLY`` in its own process so code
running inside it never calls itself.
"""

from __future__ import annotations

import _socket as socket  # the C module: the wrapper's enum set-up costs ~4 ms on every prompt
import json
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


class Untrusted(Unavailable):
    """The socket, its directory or the process behind it is not this user's own: nothing
    was sent. ``str(exc)`` is one line naming the next step."""


class Timeout(Unavailable):
    """The service accepted the request and did not answer in time (it may be hung)."""


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


def _short_base() -> str:
    return "/tmp" if os.path.isdir("/tmp") else os.environ.get("TMPDIR", "/tmp")


def short_socket_dir() -> str:
    return os.path.join(_short_base(), f"recall-{os.getuid()}")


def check_dir(path: str, create: bool = False) -> None:
    """Raise Untrusted unless ``path`` is a real directory (not a symlink) owned by this
    user that nobody else can write to. ``create`` makes it (0700) when missing and
    tightens the mode of one we own; a directory another user owns is never used."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise Unavailable("the recall service is not running") from None
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    uid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode):
        raise Untrusted(
            f"{path} is not a directory (a symlink or a file put there by someone else): "
            f"recall will not use it; remove it, then run `recall service restart`"
        )
    if st.st_uid != uid:
        raise Untrusted(
            f"the socket directory {path} belongs to uid {st.st_uid}, not to you (uid {uid}): "
            f"recall will not use it; have it removed, or set RECALL_HOME to a shorter path"
        )
    if stat.S_IMODE(st.st_mode) & 0o022:
        if create:
            os.chmod(path, 0o700)
            return
        raise Untrusted(
            f"the socket directory {path} is writable by other users: recall will not use "
            f"it; run `chmod 700 {path}` and `recall service restart`"
        )


def _peer_uid(sock) -> int | None:
    """The uid of the process behind a connected unix socket (None: the OS cannot say)."""
    import struct

    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", raw)[1]
    if hasattr(os, "uname") and os.uname().sysname == "Darwin":  # LOCAL_PEERCRED: struct xucred
        raw = sock.getsockopt(0, 0x001, 76)  # SOL_LOCAL, LOCAL_PEERCRED
        return struct.unpack_from("Ii", raw)[1]
    return None


def verify(sock, addr: str) -> None:
    """Before anything is sent: the socket's directory, the socket file and the listening
    process all belong to this user (raises Untrusted)."""
    import stat

    check_dir(os.path.dirname(addr) or ".")
    uid = os.geteuid()
    try:
        st = os.lstat(addr)
    except OSError as exc:
        raise Unavailable(f"the recall service socket vanished: {exc}") from None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != uid:
        raise Untrusted(
            f"the socket {addr} belongs to uid {st.st_uid}, not to you (uid {uid}): nothing "
            f"was sent to it; remove it and run `recall service restart`"
        )
    try:
        peer = _peer_uid(sock)
    except OSError:
        peer = None
    if peer is not None and peer != uid:
        raise Untrusted(
            f"the process behind {addr} runs as uid {peer}, not as you (uid {uid}): nothing "
            f"was sent to it; remove the socket and run `recall service restart`"
        )


def disabled() -> bool:
    return LOCAL_ONLY or os.environ.get("RECALL_NO_SERVICE", "") not in ("", "0")


def request(op: str, args: dict | None = None, env: dict | None = None) -> bytes:
    req = {"v": PROTOCOL, "op": op, "args": args or {}}
    if env is not None:
        req["env"] = env
    return (json.dumps(req, ensure_ascii=False) + "\n").encode("utf-8")


def call(op: str, args: dict | None = None, timeout: float = 2.0, credentials: bool = False):
    """Ask the service to run ``op``; returns its result (see module docstring).

    ``credentials``: send this process's model variables along (``recall.core.caller``), so
    a model call the op makes uses them; sent only after ``verify`` passed."""
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
        verify(sock, addr)
        try:
            if credentials:
                from recall.core.caller import caller_env

                sock.sendall(request(op, args, caller_env()))
            else:
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
            raise Timeout(f"the recall service did not answer {op!r} within {timeout:g} s") from None
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
        if not st.get("running"):
            return None
        if not st.get("backfill"):
            if st.get("state") not in ("starting", "backfilling", "rebuilding"):
                return None
            st["backfill"] = {"starting": True}  # up, and not yet at the history: no figures yet
        os.kill(int(st.get("pid") or 0), 0)  # a service killed mid-backfill left its file behind
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    bf = st["backfill"]
    return bf if isinstance(bf, dict) else None
