"""The page's HTTP server: the standard library's threading server on 127.0.0.1, one thread
per request, started lazily (by the service when ``recall ui`` first asks it, or by ``recall ui``
itself when no service runs). Every request passes ``recall.ui.guard`` first: the server's
secret never leaves it, ``url`` and ``open_file`` hand out one-time codes, and a read of data or
a write needs the key of the session a code opened, not only its cookie. Pages are
rendered by ``recall.ui.pages`` from ``recall.ui.views`` (the readers the CLI uses), writes go
to ``recall.ui.actions``; ``/events`` streams server-sent events when the injection log, the
sessions or the service's status change.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from recall.core.errors import RecallError
from recall.ui import guard

MAX_BODY = 256 * 1024
EVENT_POLL = 0.2  # seconds between two looks at what the live events watch
HEARTBEAT = 15.0  # an SSE comment this often keeps proxies and the browser's timer quiet
STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}

log = logging.getLogger("recall.ui")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ui: "UIServer"

    def handle_error(self, request, client_address) -> None:  # a closed tab mid-answer: not an error
        log.debug("ui request from %s ended early", client_address, exc_info=True)


class UIServer:
    """One running page server: ``url()`` is what ``recall ui`` prints, ``open_file()`` what it
    opens the browser on; each holds a one-time code of its own. ``token`` is the server's
    secret (the CSRF token is derived from it): it is never printed, sent or written."""

    def __init__(self, port: int = 0, token: str | None = None) -> None:
        self.token = token or guard.new_token()
        self.csrf = guard.csrf_token(self.token)
        self.sessions = guard.Sessions()
        self.keyed = 0  # requests served with a session's key (the page's own script's)
        self.stop_event = threading.Event()
        self.httpd = _HTTPServer(("127.0.0.1", int(port or 0)), Handler)
        self.httpd.ui = self
        self.port = int(self.httpd.server_address[1])
        self.thread: threading.Thread | None = None
        self.requests = 0
        self.started = time.time()

    def code(self, file: str | None = None) -> str:
        """A new one-time code (``guard.Sessions.mint``)."""
        return self.sessions.mint(file)

    def url(self, path: str = "/", code: str | None = None) -> str:
        """An address that opens the page once, within ``guard.CODE_TTL`` seconds."""
        return f"http://127.0.0.1:{self.port}{path}?token={code or self.code()}"

    def open_file(self) -> str:
        """A local page for the browser to be opened on, readable by this user only (0600, in
        ``$RECALL_HOME/ui/``), that goes on to an address with a code of its own: the browser's
        command line holds this file's path, never a code. It is removed once its code is used,
        or at the code's expiry."""
        from recall.core import paths
        from recall.ui import pages

        folder = paths.ensure_dir(paths.recall_home() / "ui")
        path = str(folder / f"open-{self.port}-{secrets.token_hex(8)}.html")
        code = self.code(file=path)
        paths.atomic_write(paths.Path(path), pages.open_file(self.url("/", code)), mode=0o600)
        timer = threading.Timer(self.sessions.code_ttl + 1.0, self.sessions.sweep)
        timer.daemon = True
        timer.start()
        return path

    def start(self) -> "UIServer":
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.25}, name="recall-ui", daemon=True
        )
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self.sessions.close()
        try:
            self.httpd.shutdown()
        except Exception:  # noqa: BLE001 - never started
            pass
        self.httpd.server_close()
        if self.thread is not None:
            self.thread.join(5.0)


def start(port: int = 0) -> UIServer:
    """A new server on 127.0.0.1:``port`` (0: a free port), serving in a thread of its own.
    OSError when the port is taken."""
    return UIServer(port).start()


def _static(name: str) -> bytes:
    return resources.files("recall.ui").joinpath("static", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    server_version = "recall-ui"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    # the headers and the body go out as two writes: without TCP_NODELAY the body waits for the
    # browser's delayed ACK of the headers (~40 ms on Linux), on every keystroke's search
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        log.debug("ui: " + format, *args)

    def log_request(self, code="-", size="-") -> None:
        # the path without its query: a one-time code or the event stream's key never reaches the log
        self.log_message("%s %s %s", self.command, self.path.split("?", 1)[0], code)

    # answers ----------------------------------------------------------------------------
    def _send(
        self, status: int, body: bytes | str, ctype: str = "text/html; charset=utf-8", extra: dict | None = None
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        for k, v in guard.HEADERS.items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status: int, why: str) -> None:
        from recall.ui import pages

        log.info("ui refused %s %s: %s", self.command, self.path.split("?")[0], why)
        self.close_connection = True  # a refused request's body is never read: the connection ends with it
        self._send(status, pages.refused(why), extra={"Connection": "close"})

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False), "application/json; charset=utf-8")

    # the guard ---------------------------------------------------------------------------
    def _admitted(self) -> tuple[str, dict, str] | None:
        """(path, query, session) of an admitted request (its cookie names a live session);
        None after refusing it, or after trading a one-time code for a session."""
        ui = self.server.ui
        ui.requests += 1
        if not guard.host_ok(self.headers.get("Host"), ui.port):
            self._refuse(421, "this page answers only to its loopback address (127.0.0.1 or localhost)")
            return None
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if "token" in query and self.command == "GET":
            opened = ui.sessions.redeem(query["token"])
            if opened is None:
                self._refuse(
                    403,
                    "this address was used already or has expired (each opens the page once, within "
                    f"{int(ui.sessions.code_ttl // 60)} minutes): run `recall ui` again for a new one",
                )
                return None
            sid, key = opened
            from recall.ui import pages

            rest = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "token"])
            target = guard.safe_next((parts.path or "/") + (f"?{rest}" if rest else ""))
            self._send(200, pages.hop(key, target), extra={"Set-Cookie": guard.set_cookie(ui.port, sid)})
            return None
        sid = guard.cookie_session(self.headers.get("Cookie"), ui.port)
        if not ui.sessions.known(sid):
            self._refuse(403, "no token: open the address `recall ui` printed (run `recall ui` again for a new one)")
            return None
        return parts.path or "/", query, sid

    def _key_refusal(self, sid: str, key: str | None = None) -> str | None:
        ui = self.server.ui
        why = guard.key_refusal(self.headers, sid, ui.sessions, key)
        if why is None:
            ui.keyed += 1
        return why

    # verbs -------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        admitted = self._admitted()
        if admitted is None:
            return
        path, query, sid = admitted
        try:
            self._get(path, query, sid)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except RecallError as exc:
            from recall.ui import pages

            self._send(400, pages.page("recall", pages.problem(str(exc)), self.server.ui.csrf))
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback in the page
            log.exception("ui: GET %s failed", path)
            from recall.ui import pages

            self._send(500, pages.page("recall", pages.problem(f"{type(exc).__name__}: {exc}"), self.server.ui.csrf))

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802
        admitted = self._admitted()
        if admitted is None:
            return
        path, _query, sid = admitted
        why = guard.write_refusal(self.headers, self.server.ui.port, self.server.ui.token) or self._key_refusal(sid)
        if why:
            self._refuse(403, f"write refused: {why}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self._refuse(413, "request body too large")
            return
        raw = self.rfile.read(length) if length else b""
        form = {k: v[-1] for k, v in parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True).items()}
        from recall.ui import actions

        try:
            result = actions.run(path, form)
        except KeyError:
            self._json(404, {"ok": False, "error": f"no action {path}"})
            return
        except RecallError as exc:
            self._json(400, {"ok": False, "error": str(exc)})
            return
        except Exception as exc:  # noqa: BLE001
            log.exception("ui: POST %s failed", path)
            self._json(500, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            return
        self._json(200, {"ok": True, **(result or {})})

    def _other(self) -> None:
        if self._admitted() is not None:
            self._send(405, "method not allowed", "text/plain; charset=utf-8", {"Allow": "GET, HEAD, POST"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other

    # GET routes --------------------------------------------------------------------------
    def _get(self, path: str, query: dict, sid: str) -> None:
        from recall.ui import pages

        csrf = self.server.ui.csrf
        if path == "/":
            self._send(303, "", extra={"Location": "/prompts"})
        elif path.startswith("/static/") and path[len("/static/") :] in STATIC:
            name = path[len("/static/") :]
            self._send(200, _static(name), STATIC[name])
        elif path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
        elif path == "/events" or path.startswith("/fragment/"):
            # EventSource cannot set a header: the stream's key comes in its query
            why = self._key_refusal(sid, (query.get("key") or None) if path == "/events" else None)
            if why:
                self._refuse(403, why)
            elif path == "/events":
                self._events()
            else:
                self._send(200, pages.fragment(path[len("/fragment/") :], query))
        elif self._key_refusal(sid):  # a navigation, or the cookie replayed: the page without its data
            site = (self.headers.get("Sec-Fetch-Site") or "").strip().lower()
            self._send(200, pages.shell(elsewhere=site in ("same-site", "cross-site")))
        else:
            html = pages.route(path, query, csrf)
            if html is None:
                self._send(404, pages.page("Not found", pages.problem(f"No page {path}."), csrf))
            else:
                self._send(200, html)

    # live events -------------------------------------------------------------------------
    def _events(self) -> None:
        from recall.ui import views

        self.send_response(200)
        for k, v in guard.HEADERS.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        ui = self.server.ui
        seen = views.change_marks()
        last_beat = time.monotonic()
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while not ui.stop_event.wait(EVENT_POLL):
                now = views.change_marks()
                changed = [k for k in now if now[k] != seen.get(k)]
                seen = now
                for kind in changed:
                    self.wfile.write(f"event: {kind}\ndata: {int(time.time() * 1000)}\n\n".encode())
                if changed:
                    self.wfile.flush()
                    last_beat = time.monotonic()
                elif time.monotonic() - last_beat >= HEARTBEAT:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    last_beat = time.monotonic()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
