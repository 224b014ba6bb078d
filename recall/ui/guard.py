"""What every request to the page must pass (``recall ui``), as plain functions the server
calls and the tests check one by one:

* the ``Host`` header names the loopback address the server listens on (``127.0.0.1:PORT`` or
  ``localhost:PORT``): a page of another site whose name was re-pointed at 127.0.0.1 (DNS
  rebinding) sends its own name, and is refused;
* the random token of the printed URL, once (``?token=``), then an HttpOnly, SameSite=Strict
  cookie holding it: a request with neither is refused;
* a write (POST) comes from the page's own origin (``Origin``, and ``Sec-Fetch-Site`` when the
  browser sends it) and carries the CSRF token the page was given (``X-CSRF-Token``);
* every answer carries a Content-Security-Policy that allows only the page's own origin (no
  inline script, no other host), and is never cached or framed.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
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


def new_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(token: str) -> str:
    """The CSRF token of a server's pages: derived from its secret, never the secret itself."""
    return hmac.new(token.encode(), b"recall-ui-csrf", hashlib.sha256).hexdigest()[:40]


def cookie_name(port: int) -> str:
    """One cookie per port: the service's page and a `recall ui` of its own can both be open."""
    return f"recall_ui_{port}"


def set_cookie(port: int, token: str) -> str:
    return f"{cookie_name(port)}={token}; HttpOnly; SameSite=Strict; Path=/"


def loopback_hosts(port: int) -> set[str]:
    return {f"127.0.0.1:{port}", f"localhost:{port}"}


def host_ok(host: str | None, port: int) -> bool:
    """The Host header names this server by its loopback name (DNS rebinding is refused)."""
    return bool(host) and host.strip().lower() in loopback_hosts(port)


def same(a: str | None, b: str) -> bool:
    return bool(a) and hmac.compare_digest(a.encode(), b.encode())


def cookie_token(cookie_header: str | None, port: int) -> str | None:
    if not cookie_header:
        return None
    jar = SimpleCookie()
    try:
        jar.load(cookie_header)
    except Exception:  # noqa: BLE001 - a malformed Cookie header is no cookie
        return None
    morsel = jar.get(cookie_name(port))
    return morsel.value if morsel is not None else None


def authorized(cookie_header: str | None, port: int, token: str) -> bool:
    return same(cookie_token(cookie_header, port), token)


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
