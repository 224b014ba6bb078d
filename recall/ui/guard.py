"""What every request to the page must pass (``recall ui``), as plain functions the server
calls and the tests check one by one:

* the ``Host`` header names the loopback address the server listens on (``127.0.0.1:PORT`` or
  ``localhost:PORT``): a page of another site whose name was re-pointed at 127.0.0.1 (DNS
  rebinding) sends its own name, and is refused;
* the server's secret never leaves it. ``recall ui`` gets one-time codes (``Sessions.mint``):
  an address holding one (``?token=CODE``) opens the page once, within ``CODE_TTL`` seconds,
  and is dead after; its answer sets an HttpOnly, SameSite=Strict cookie naming a fresh session
  and hands the page that session's key, which the page keeps in its own origin's storage;
* browsers send 127.0.0.1's cookies to every port, so the cookie alone grants nothing but a
  data-free shell page (and the static files): every read of data (the pages' contents, the
  fragments, ``/events``) and every write needs the session's key as well (``X-Recall-Key``, or
  ``?key=`` for the event stream, which cannot set headers), which only a page of recall's own
  origin (its port) can read;
* a write (POST) comes from the page's own origin (``Origin``, and ``Sec-Fetch-Site`` when the
  browser sends it) and carries the CSRF token the page was given (``X-CSRF-Token``);
* every answer carries a Content-Security-Policy that allows only the page's own origin (no
  inline script, no other host), and is never cached or framed.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from http.cookies import SimpleCookie

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

KEY_HEADER = "X-Recall-Key"
CODE_TTL = 300.0  # seconds a one-time code stays good when nobody uses it
MAX_SESSIONS = 64  # the oldest session is dropped past this many (each opening of the page makes one)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(token: str) -> str:
    """The CSRF token of a server's pages: derived from its secret, never the secret itself."""
    return hmac.new(token.encode(), b"recall-ui-csrf", hashlib.sha256).hexdigest()[:40]


def cookie_name(port: int) -> str:
    """One cookie per port: the service's page and a `recall ui` of its own can both be open."""
    return f"recall_ui_{port}"


def set_cookie(port: int, session: str) -> str:
    return f"{cookie_name(port)}={session}; HttpOnly; SameSite=Strict; Path=/"


def loopback_hosts(port: int) -> set[str]:
    return {f"127.0.0.1:{port}", f"localhost:{port}"}


def host_ok(host: str | None, port: int) -> bool:
    """The Host header names this server by its loopback name (DNS rebinding is refused)."""
    return bool(host) and host.strip().lower() in loopback_hosts(port)


def same(a: str | None, b: str) -> bool:
    return bool(a) and hmac.compare_digest(a.encode(), b.encode())


def cookie_session(cookie_header: str | None, port: int) -> str | None:
    """The session the request's cookie names (None: no cookie of this port's)."""
    if not cookie_header:
        return None
    jar = SimpleCookie()
    try:
        jar.load(cookie_header)
    except Exception:  # noqa: BLE001 - a malformed Cookie header is no cookie
        return None
    morsel = jar.get(cookie_name(port))
    return morsel.value if morsel is not None else None


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()


def _remove(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


class Sessions:
    """A server's one-time codes and the sessions they opened, in memory only (a server that
    stops takes them all with it). Codes and session ids are kept as their SHA-256, looked up,
    then compared in constant time."""

    def __init__(self, code_ttl: float = CODE_TTL, clock=time.monotonic) -> None:
        self.code_ttl = code_ttl
        self.clock = clock
        self._lock = threading.Lock()
        self._codes: dict[str, tuple[float, str | None]] = {}  # digest -> (expires, a file to remove with it)
        self._sessions: dict[str, str] = {}  # digest of the session id -> its key, oldest first

    def mint(self, file: str | None = None) -> str:
        """A new one-time code; ``file`` (the page the browser is opened on, holding it) is
        removed once the code is used or expired."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[_digest(code)] = (self.clock() + self.code_ttl, file)
        self.sweep()
        return code

    def redeem(self, code: str | None) -> tuple[str, str] | None:
        """(session id, key) of a new session for a live code, which dies with this call; None
        for a code used already, expired or never minted."""
        if not code:
            return None
        with self._lock:
            entry = self._codes.pop(_digest(code), None)
        self.sweep()
        if entry is None:
            return None
        expires, file = entry
        _remove(file)
        if self.clock() >= expires:
            return None
        sid, key = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        with self._lock:
            self._sessions[_digest(sid)] = key
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
        return sid, key

    def known(self, sid: str | None) -> bool:
        """Whether the cookie names a live session (what the shell and the static files need)."""
        return bool(sid) and _digest(sid) in self._sessions

    def admits(self, sid: str | None, key: str | None) -> bool:
        """Whether ``key`` is the key of the session ``sid`` (what every read of data and every
        write needs)."""
        if not sid or not key:
            return False
        with self._lock:
            expected = self._sessions.get(_digest(sid))
        return expected is not None and same(key, expected)

    def sweep(self) -> None:
        """Forget the expired codes, and remove their files."""
        now = self.clock()
        with self._lock:
            dead = [d for d, (expires, _f) in self._codes.items() if now >= expires]
            files = [self._codes.pop(d)[1] for d in dead]
        for f in files:
            _remove(f)

    def live_codes(self) -> int:
        self.sweep()
        return len(self._codes)

    def close(self) -> None:
        """The server stops: every code and session dies, every pending file goes."""
        with self._lock:
            files = [f for _e, f in self._codes.values()]
            self._codes.clear()
            self._sessions.clear()
        for f in files:
            _remove(f)


def key_refusal(headers, sid: str | None, sessions: Sessions, key: str | None = None) -> str | None:
    """Why a read of data or a write is refused, or None: it must carry the key of the session
    its cookie names (``key``: given another way than the header, the event stream's query),
    and come from the page itself when the browser says where it comes from."""
    site = (headers.get("Sec-Fetch-Site") or "").strip().lower()
    if site and site != "same-origin":
        return f"cross-site request ({site})"
    given = key if key is not None else headers.get(KEY_HEADER)
    if not given:
        return (
            "no key: a cookie alone opens nothing here, only the page's own script reads and writes "
            "(open the address `recall ui` printed)"
        )
    if not sessions.admits(sid, given):
        return "wrong key: open the address `recall ui` printed (run `recall ui` again for a new one)"
    return None


def write_refusal(headers, port: int, token: str) -> str | None:
    """Why a write (POST) is refused, or None: it must come from this page's origin and carry
    its CSRF token."""
    origin = (headers.get("Origin") or "").strip().lower()
    if origin not in {f"http://{h}" for h in loopback_hosts(port)}:
        return "cross-origin request" if origin else "no Origin header"
    site = (headers.get("Sec-Fetch-Site") or "").strip().lower()
    if site and site not in ("same-origin", "none"):
        return f"cross-site request ({site})"
    if not same(headers.get("X-CSRF-Token"), csrf_token(token)):
        return "missing or wrong CSRF token"
    return None


def safe_next(target: str) -> str:
    """Where the page goes once a code was traded: a path of this origin only (never
    ``//host``); ``/prompts`` for the root."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or target == "/":
        return "/prompts"
    return target
