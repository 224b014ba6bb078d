"""The service's query endpoint: a unix socket (0600) answering
``recall.core.service_client`` requests with the ops registered in
``recall.service.registry``. Runs in threads inside ``recall serve``: one accept thread,
one short-lived thread per connection (at most ``MAX_CLIENTS`` at once).

Every response is one JSON line; a connection may carry several requests. The first one
must carry ``"v"`` equal to ``client.PROTOCOL`` (the version handshake); a request of
another version is answered ``{"ok": false, "code": "version"}``.
"""

from __future__ import annotations

import json
import logging
import os
import select
import socket
import stat
import threading
from pathlib import Path

from recall.core import caller
from recall.core import service_client as client
from recall.core.errors import RecallError
from recall.core.paths import ensure_dir
from recall.service import registry

MAX_CLIENTS = 32
MAX_REQUEST = 16 << 20
IDLE_TIMEOUT = 300.0
#: ops that only ask what a caller's credentials would give (`recall doctor` from a shell): their
#: environment is not remembered as the last hook's, which memory extraction runs with (issue 44)
PROBE_OPS = frozenset({"backend"})


def _reply(ok: bool, **fields) -> bytes:
    fields["ok"] = ok
    try:
        return (json.dumps(fields, ensure_ascii=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:
        return (
            json.dumps(
                {"ok": False, "code": "internal", "error": f"the op returned something that is not JSON ({exc})"}
            )
            + "\n"
        ).encode()


def handle(line: bytes, handshaken: bool, log: logging.Logger) -> tuple[bytes, bool]:
    """Answer one request line; returns (response line, handshake done)."""
    try:
        req = json.loads(line)
    except ValueError:
        return _reply(False, code="bad_request", error="the request is not JSON"), handshaken
    if not isinstance(req, dict):
        return _reply(False, code="bad_request", error="the request must be a JSON object"), handshaken
    if "v" in req or not handshaken:
        if req.get("v") != client.PROTOCOL:
            return _reply(
                False,
                code="version",
                server=client.PROTOCOL,
                error=f"the running service speaks {client.PROTOCOL}, this client "
                f"{req.get('v')!r}: restart it with `recall service restart`",
            ), False
        handshaken = True
    name = req.get("op")
    fn = registry.OPS.get(name) if isinstance(name, str) else None
    if fn is None:
        return _reply(False, code="unknown_op", error=f"the service has no op {name!r}"), handshaken
    args = req.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return _reply(False, code="bad_request", error="args must be a JSON object"), handshaken
    env = caller.clean(req.get("env"))
    if env is not None and name not in PROBE_OPS:
        caller.remember(env)  # for the memory worker thread (memory only)
    try:
        with caller.use(env):  # the op's model calls see the caller's variables, not ours
            result = fn(args)
    except RecallError as exc:
        return _reply(False, code="recall", error=str(exc), exit_code=exc.exit_code), handshaken
    except Exception as exc:
        log.exception("op %s failed", name)
        return _reply(False, code="internal", error=f"op {name} failed: {type(exc).__name__}: {exc}"), handshaken
    return _reply(True, result=result), handshaken


class SocketServer:
    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.address = client.address()
        self.sock: socket.socket | None = None
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.slots = threading.BoundedSemaphore(MAX_CLIENTS)
        self.requests = 0

    def start(self) -> None:
        """Bind (replacing a stale socket left by a crash: the caller holds the service
        lock, so no live service owns it) and start accepting."""
        parent = os.path.dirname(self.address)
        if parent == str(Path(client.socket_path()).parent):
            ensure_dir(Path(parent))
        # never listen in a directory another user owns or can write to (raises Untrusted)
        client.check_dir(parent, create=True)
        try:
            st = os.lstat(self.address)
            if stat.S_ISSOCK(st.st_mode) or stat.S_ISLNK(st.st_mode):
                os.unlink(self.address)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(self.address)
        finally:
            os.umask(old)
        os.chmod(self.address, 0o600)
        sock.listen(64)
        sock.setblocking(False)
        self.sock = sock
        self.thread = threading.Thread(target=self._accept_loop, name="recall-socket", daemon=True)
        self.thread.start()
        self.log.info("listening on %s", self.address)

    def _accept_loop(self) -> None:
        assert self.sock is not None
        while not self.stopping.is_set():
            try:
                ready, _, _ = select.select([self.sock], [], [], 0.5)
            except (OSError, ValueError):
                break
            if not ready:
                continue
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                if self.stopping.is_set():
                    break
                continue
            if not self.slots.acquire(blocking=False):
                try:
                    conn.sendall(_reply(False, code="busy", error="the service is busy; try again"))
                finally:
                    conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="recall-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.setblocking(True)
            conn.settimeout(IDLE_TIMEOUT)
            handshaken = False
            buf = bytearray()
            while not self.stopping.is_set():
                nl = buf.find(b"\n")
                if nl < 0:
                    if len(buf) > MAX_REQUEST:
                        conn.sendall(_reply(False, code="bad_request", error="request too large"))
                        return
                    chunk = conn.recv(1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                    continue
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                if not line.strip():
                    continue
                out, handshaken = handle(line, handshaken, self.log)
                self.requests += 1
                conn.sendall(out)
        except (OSError, socket.timeout):
            pass
        finally:
            try:
                conn.close()
            finally:
                self.slots.release()

    def stop(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=2.0)
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            try:
                os.unlink(self.address)
            except OSError:
                pass
            self.sock = None
