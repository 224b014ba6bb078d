"""The page of ``recall ui`` for tests: a server of this process (``serving``), plain HTTP
requests with or without its cookie and key (``Client``, which trades a one-time code for them
as the page does: ``exchange``), and Debian's chromium driven by selenium
(``browser``; skipped when absent, a failure with ``RECALL_REQUIRE_BROWSER=1``, set by ``.ci/run``).
Nothing here downloads a browser or a driver."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

CI_VAR = "RECALL_REQUIRE_BROWSER"
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,860",
)


@contextlib.contextmanager
def serving(port: int = 0):
    from recall.ui import server

    srv = server.start(port)
    try:
        yield srv
    finally:
        srv.stop()


def exchange(port: int, code: str) -> tuple[str, str]:
    """(the Cookie header, the session's key) a one-time code opens, as a browser gets them:
    the answer's Set-Cookie and the key it hands the page's script (``data-key``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", f"/?token={code}", skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", f"127.0.0.1:{port}")
        conn.endheaders()
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        assert resp.status == 200, (resp.status, text)
        cookie = resp.getheader("Set-Cookie").split(";", 1)[0]
        found = re.search(r'data-key="([^"]+)"', text)
        assert found, text
        return cookie, found.group(1)
    finally:
        conn.close()


class Client:
    """Raw HTTP to the page: every header as given (Host, Origin, Cookie, the key), nothing
    added. With a one-time ``code``, it first trades it for a session (``exchange``); ``key``
    False sends the cookie alone (what another port's page or server has)."""

    def __init__(self, port: int, code: str | None = None, key: bool = True) -> None:
        self.port = port
        self.cookie, self.key = exchange(port, code) if code else (None, None)
        if not key:
            self.key = None

    def request(
        self,
        method: str,
        path: str,
        headers: dict | None = None,
        body: dict | None = None,
        host: str | None = None,
        cookie: bool = True,
    ):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            h = {"Host": host or f"127.0.0.1:{self.port}"}
            if cookie and self.cookie:
                h["Cookie"] = self.cookie
            if self.key:
                h["X-Recall-Key"] = self.key
            data = None
            if body is not None:
                data = urlencode(body).encode()
                h["Content-Type"] = "application/x-www-form-urlencoded"
                h["Content-Length"] = str(len(data))
            h.update(headers or {})
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in h.items():
                conn.putheader(k, v)
            conn.endheaders(data)
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def post(self, path: str, body: dict, csrf: str | None, origin: str | None = "same", **kw):
        headers = {}
        if origin == "same":
            origin = f"http://127.0.0.1:{self.port}"
        if origin:
            headers["Origin"] = origin
        if csrf:
            headers["X-CSRF-Token"] = csrf
        headers.update(kw.pop("headers", {}))
        status, hdrs, text = self.request("POST", path, headers=headers, body=body, **kw)
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text


def port_and_token(url: str) -> tuple[int, str]:
    """The port and the one-time code of an address ``recall ui`` printed."""
    parts = urlsplit(url)
    return int(parts.port), parts.query.split("token=", 1)[1]


def _found(candidates) -> str | None:
    for c in candidates:
        if os.path.exists(c):
            return c
    return None


def require_browser() -> tuple[str, str]:
    """(chromium, chromedriver), or a skip saying what is missing (a failure in CI)."""
    chromium, driver = _found(CHROMIUM), _found(DRIVER) or shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromium-driver", driver)) if not path]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (pip install -e '.[test]')")
    if missing:
        why = f"no browser for the UI tests: {', '.join(missing)} missing (apt-get install chromium chromium-driver)"
        if os.environ.get(CI_VAR):
            pytest.fail(why + f"; {CI_VAR} is set, so this fails instead of skipping")
        pytest.skip(why)
    return chromium, driver


@contextlib.contextmanager
def browser(profile: Path):
    """A headless chromium of Debian's, through its chromedriver, with a fresh profile."""
    chromium, driver_path = require_browser()
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium's manager never fetches anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        yield drv
    finally:
        drv.quit()
