"""Issue 46: who can open ``recall ui``.

1. No process's command line or environment ever holds the server's secret or a live code:
   ``recall ui`` opens the browser on a local file only this user can read (0600) that carries a
   one-time code on; the printed address holds another. A code opens the page once, within
   ``guard.CODE_TTL``, then is dead.
2. Browsers send 127.0.0.1's cookies to every port: the cookie, replayed by another port's page or
   server, gets a data-free shell and nothing else (every read of data and every write needs the
   session's key, kept in the page's own origin's storage).
8. An excluded project's memories are neither shown nor changed, in the page or by ``recall
   memories``.
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import re
import stat
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.ingest import index_all
from recall.core import config, paths
from recall.ui import guard
from tests.support.factory import Session
from tests.support.ui import Client, browser, exchange, port_and_token, require_browser, serving
from tests.support.wait import wait_for

RECALL = [sys.executable, "-m", "recall.entry"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*RECALL, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def history(tmp_path, claude_projects):
    shop = tmp_path / "work" / "shop"
    shop.mkdir(parents=True)
    blog = tmp_path / "work" / "blog"
    blog.mkdir(parents=True)
    s1 = Session(cwd=str(shop), start=datetime(2026, 11, 3, 10, tzinfo=timezone.utc))
    s1.user("which database did we choose for the job queue?")
    s1.assistant("We decided to use SQLite in WAL mode for the job queue.")
    s1.write(claude_projects)
    s2 = Session(cwd=str(blog), start=datetime(2026, 11, 4, 10, tzinfo=timezone.utc))
    s2.user("which static site generator for the giraffe blog?")
    s2.assistant("We chose Hugo for the giraffe blog.")
    s2.write(claude_projects)
    index_all()
    for project, text in ((shop, "The walrus host runs the nightly backup."), (blog, "The giraffe blog uses Hugo.")):
        out = run("memories", "add", "decision", text, "--project", str(project))
        assert out.returncode == 0, out.stderr
    return {"shop": shop, "blog": blog, "s1": s1, "s2": s2}


# 1. no command line holds a secret ---------------------------------------------------------------
class Minted:
    """Every code, session id and key the servers of this process hand out."""

    def __init__(self, monkeypatch) -> None:
        self.values: list[str] = []
        if not hasattr(guard, "Sessions"):  # (a server of one token for good: the token is in the list)
            return
        mint, redeem = guard.Sessions.mint, guard.Sessions.redeem

        def minting(sessions, file=None):
            code = mint(sessions, file)
            self.values.append(code)
            return code

        def redeeming(sessions, code):
            out = redeem(sessions, code)
            self.values.extend(out or ())
            return out

        monkeypatch.setattr(guard.Sessions, "mint", minting)
        monkeypatch.setattr(guard.Sessions, "redeem", redeeming)


class Scanner(threading.Thread):
    """Reads every process's command line and environment it can, over and over, until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[bytes, str] = {}  # what was read -> which process and file
        self.rounds = 0
        self.stopping = threading.Event()

    def scan(self) -> None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            for name in ("cmdline", "environ"):
                try:
                    data = Path(f"/proc/{pid}/{name}").read_bytes()
                except OSError:
                    continue
                if data:
                    self.seen.setdefault(data, f"/proc/{pid}/{name}")
        self.rounds += 1

    def run(self) -> None:
        while not self.stopping.is_set():
            self.scan()

    def holding(self, secrets: list[str]) -> list[tuple[str, str]]:
        return [(where, s) for data, where in self.seen.items() for s in secrets if s and s.encode() in data]

    def wait_rounds(self, n: int) -> None:
        start = self.rounds
        wait_for(lambda: self.rounds >= start + n, 60, "the scan of every process")


@pytest.fixture
def service(monkeypatch):
    """The service's socket in this process, with its "ui" op: `recall ui` (a real process)
    asks it, and the page's server runs here, where the test sees its secret."""
    from recall.service import registry
    from recall.service.socket_server import SocketServer
    from recall.ui import op

    registry.load_modules()
    assert "ui" in registry.OPS
    srv = SocketServer(logging.getLogger("test-ui-service"))
    srv.start()
    try:
        yield op
    finally:
        srv.stop()
        op.stop()


BROWSER_SCRIPT = """\
#!{python}
# A browser: what it was started with, then what a browser does with the page it was given.
import http.client, json, os, re, sys, time
from pathlib import Path
from urllib.parse import unquote, urlsplit
report = Path({report!r})
url = sys.argv[1]
Path(str(report) + ".argv").write_text(json.dumps(sys.argv))
while not Path(str(report) + ".scanned").exists():  # the scan sees this command line, whatever comes next
    time.sleep(0.05)
path = unquote(urlsplit(url).path)
st = os.stat(path)
page = Path(path).read_text()
target = re.search(r'http-equiv="refresh" content="0;url=([^"]+)"', page).group(1).replace("&amp;", "&")
parts = urlsplit(target)
conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=30)
conn.request("GET", parts.path + "?" + parts.query, headers={{"Host": parts.netloc}})
resp = conn.getresponse()
body = resp.read().decode()
cookie = resp.getheader("Set-Cookie").split(";")[0]
key = re.search(r'data-key="([^"]+)"', body).group(1)
conn.request("GET", "/prompts", headers={{"Host": parts.netloc, "Cookie": cookie, "X-Recall-Key": key}})
resp = conn.getresponse()
shown = resp.read().decode()
report.write_text(json.dumps({{"argv": sys.argv, "mode": st.st_mode & 0o777, "file_gone": not os.path.exists(path),
                              "status": resp.status, "prompts": "<h1>Prompts</h1>" in shown}}))
while not Path(str(report) + ".done").exists():
    time.sleep(0.05)
"""


def test_recall_ui_puts_no_code_on_any_command_line(history, service, tmp_path, monkeypatch):
    """The audit's case: another user reads every /proc/*/cmdline (and whatever environ it can)
    while `recall ui` opens the page. Nothing there holds the server's secret, a code, a session
    or its key; the browser was given a 0600 file under $RECALL_HOME, gone once its code was used;
    the printed address holds a code of its own, still good once."""
    minted = Minted(monkeypatch)
    report = tmp_path / "browser.json"
    script = tmp_path / "fake-browser"
    script.write_text(BROWSER_SCRIPT.format(python=sys.executable, report=str(report)))
    script.chmod(0o700)
    scanner = Scanner()
    scanner.start()
    proc = subprocess.Popen(
        [*RECALL, "ui"],
        env={**os.environ, "BROWSER": str(script)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(Path(f"{report}.argv").exists, 120, "`recall ui` to start the browser")
        scanner.wait_rounds(2)  # the browser, given its command line, and `recall ui` wait for it
        Path(f"{report}.scanned").touch()
        wait_for(lambda: report.exists() or proc.poll() is not None, 120, "the browser to open the page")
        scanner.wait_rounds(2)  # the page open, the browser and `recall ui` still running
        Path(f"{report}.done").touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        scanner.stopping.set()
        scanner.join(30)
    srv = service._server
    secrets = [srv.token, srv.csrf, *minted.values]
    assert scanner.holding(secrets) == [], scanner.holding(secrets)
    assert proc.returncode == 0, err
    got = json.loads(report.read_text())
    assert got["status"] == 200 and got["prompts"], got
    assert got["mode"] == 0o600 and got["file_gone"], got
    opened = got["argv"][1]
    assert opened.startswith(f"file://{paths.recall_home()}/ui/open-") and opened.endswith(".html"), opened
    assert not list((paths.recall_home() / "ui").iterdir())  # removed once its code was used
    assert len(minted.values) == 2 + 2  # two codes (printed, browser's), one session (id, key)
    assert any(got["argv"][1].encode() in data for data in scanner.seen)  # the scan saw the browser's line
    url = out.strip()
    port, code = port_and_token(url)
    assert port == srv.port and code in minted.values
    assert "<h1>Prompts</h1>" in Client(port, code).get("/prompts")[2]  # the printed one: good once
    with pytest.raises(AssertionError, match="used already"):
        exchange(port, code)


BROWSER_WRAPPER = """\
#!/bin/sh
echo $$ > {pidfile}
exec {chromium} --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \\
  --disable-background-networking --disable-component-update --disable-sync \\
  --user-data-dir={profile} "$1"
"""


@pytest.mark.slow
def test_recall_ui_opens_chromium_with_no_code_on_any_command_line(history, service, tmp_path, monkeypatch):
    """The same with the real browser: `recall ui` starts headless chromium (its BROWSER), which
    follows the local file to the page and reads it with its key; no process of it, of recall or
    of anyone else holds a code, a session or the server's secret."""
    chromium, _driver = require_browser()
    minted = Minted(monkeypatch)
    pidfile = tmp_path / "chromium.pid"
    wrapper = tmp_path / "browser"
    wrapper.write_text(BROWSER_WRAPPER.format(pidfile=pidfile, chromium=chromium, profile=tmp_path / "profile"))
    wrapper.chmod(0o700)
    scanner = Scanner()
    scanner.start()
    proc = subprocess.Popen(
        [*RECALL, "ui"],
        env={**os.environ, "BROWSER": str(wrapper)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: service._server is not None and service._server.keyed > 0, 120, "chromium to read the page")
        srv = service._server
        assert not list((paths.recall_home() / "ui").iterdir())  # the file went with its code
        scanner.wait_rounds(2)
    finally:
        scanner.stopping.set()
        scanner.join(30)
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), 15)
            except ProcessLookupError:
                pass
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    secrets = [srv.token, srv.csrf, *minted.values]
    assert len(minted.values) == 4
    assert scanner.holding(secrets) == [], scanner.holding(secrets)
    assert any(b"open-" in data and b"--headless" in data for data in scanner.seen)  # chromium's own line


# a code opens the page once, within its time -------------------------------------------------------
def test_a_code_opens_the_page_once_and_dies_at_its_time(history):
    with serving() as srv:
        code = srv.code()
        c = Client(srv.port, code)
        assert "SQLite" in c.get("/search?q=which+database")[2]
        status, _, text = Client(srv.port).get(f"/?token={code}")
        assert status == 403 and "used already or has expired" in text and "run `recall ui` again" in text
        assert "SQLite" in c.get("/search?q=which+database")[2]  # the session it opened lives on

        now = [1000.0]
        srv.sessions.clock = lambda: now[0]
        late = srv.code()
        opened = Path(srv.open_file())
        assert opened.parent == paths.recall_home() / "ui" and stat.S_IMODE(opened.stat().st_mode) == 0o600
        assert stat.S_IMODE(opened.parent.stat().st_mode) == 0o700
        held = re.search(r"token=([\w-]+)", opened.read_text()).group(1)
        assert held not in (late, code) and srv.url() != srv.url()  # each its own code
        now[0] += guard.CODE_TTL + 1
        assert Client(srv.port).get(f"/?token={late}")[0] == 403
        assert not opened.exists()  # an expired code takes its file with it
        assert Client(srv.port).get(f"/?token={held}")[0] == 403
        assert srv.sessions.live_codes() == 0  # the two addresses minted above died with them
    assert not list((paths.recall_home() / "ui").iterdir())


def test_the_file_goes_when_its_code_is_used_and_when_the_server_stops(history):
    with serving() as srv:
        used = Path(srv.open_file())
        left = Path(srv.open_file())
        assert used.exists() and left.exists()
        port, code = port_and_token(re.search(r'content="0;url=([^"]+)"', used.read_text()).group(1))
        assert port == srv.port
        Client(port, code)
        assert not used.exists() and left.exists()
    assert not left.exists()


# 2. the cookie alone, from another port ----------------------------------------------------------
def _reads_and_writes(history) -> tuple[list[str], list[tuple[str, dict]]]:
    sid = history["s1"].session_id
    pages = [
        "/prompts",
        "/search?q=which+database",
        "/sessions",
        f"/sessions/{sid}",
        f"/memories?project={history['shop']}",
        "/status",
        "/charts",
        "/nosuchpage",
    ]
    reads = [
        "/fragment/prompts",
        "/fragment/search?q=which+database",
        "/fragment/sessions",
        "/fragment/status",
        "/fragment/doctor",
        "/fragment/history",
        "/fragment/weekly",
        "/events",
    ]
    writes = [
        ("/api/prompts/wrong", {"t": "1790000000.123", "session": "s"}),
        ("/api/sessions/forget", {"session": sid}),
        ("/api/memories/forget", {"project": str(history["shop"]), "id": "x"}),
        ("/api/memories/pin", {"project": str(history["shop"]), "id": "x", "pinned": "1"}),
        ("/api/memories/edit", {"project": str(history["shop"]), "id": "x", "content": "changed"}),
    ]
    return pages + reads, writes


def _memories(project) -> dict:
    out = run("memories", "--all", "--json", "--project", str(project))
    assert out.returncode == 0, out.stderr
    return {m["id"]: m for m in json.loads(out.stdout)["memories"]}


def test_the_cookie_replayed_from_another_port_gets_nothing(history):
    """The audit's case: the cookie a browser got, sent by anything but the page itself (a
    server on another port it was sent to, a page there), with the right Host: every page is the
    same data-free shell, every read of data and every write is refused in one line."""
    with serving() as srv:
        page = Client(srv.port, srv.code())
        replay = Client(srv.port)
        replay.cookie = page.cookie  # exactly what another port receives
        routes, writes = _reads_and_writes(history)
        mem = next(iter(_memories(history["shop"])))
        writes = [(p, {**f, "id": mem} if "id" in f else f) for p, f in writes]
        shell = None
        for path in routes:
            status, headers, text = replay.get(path)
            assert "SQLite" not in text and "walrus" not in text and srv.csrf not in text, path
            assert "Set-Cookie" not in headers, path
            if path.startswith(("/fragment/", "/events")):
                assert status == 403 and "no key: a cookie alone opens nothing here" in text, path
            else:
                assert status == 200 and 'data-shell=""' in text, path
                shell = shell or text
                assert text == shell, path  # the same bytes whatever was asked: nothing of the data
            for site in ("same-site", "cross-site"):  # what a page of another port sends
                status, _, text = replay.get(path, headers={"Sec-Fetch-Site": site})
                assert "SQLite" not in text and "walrus" not in text, (path, site)
        for path, form in writes:
            for origin in ("same", f"http://127.0.0.1:{srv.port + 1}"):
                status, out = replay.post(path, form, srv.csrf, origin=origin)
                assert status == 403 and "write refused" in out, (path, origin)
        assert _memories(history["shop"])[mem]["content"] == "The walrus host runs the nightly backup."
        assert "pinned" not in _memories(history["shop"])[mem]
        assert history["s1"].session_id[:8] in page.get("/sessions")[2]  # nothing was forgotten
        # the page itself, with its key: all of it
        assert "SQLite" in page.get("/search?q=which+database")[2]
        assert "SQLite" in page.get("/fragment/search?q=which+database")[2]
        status, _, text = page.get("/events", headers={"Sec-Fetch-Site": "same-site"})
        assert status == 403 and "cross-site request (same-site)" in text
        # another session's key opens nothing of this one
        other = Client(srv.port, srv.code())
        mixed = Client(srv.port)
        mixed.cookie, mixed.key = page.cookie, other.key
        status, _, text = mixed.get("/fragment/search?q=which+database")
        assert status == 403 and "wrong key" in text


class _Elsewhere(http.server.BaseHTTPRequestHandler):
    """Another local port (a dev server the user opened): it keeps the Cookie header the browser
    sends it, and its page tries to read recall's page and the key, then reports."""

    target = ""
    cookies: list = []
    reports: list = []

    def do_GET(self):  # noqa: N802
        self.cookies.append(self.headers.get("Cookie") or "")
        if self.path.startswith("/report?"):
            from urllib.parse import parse_qs

            self.reports.append(
                {k: v[-1] for k, v in parse_qs(self.path.split("?", 1)[1], keep_blank_values=True).items()}
            )
            body = b"ok"
        elif self.path == "/go":  # sends the browser to recall's page
            body = f'<!doctype html><script>location.href = "{self.target}/search?q=which+database";</script>'.encode()
        else:
            body = textwrap.dedent(
                f"""\
                <!doctype html><title>elsewhere</title><script>
                var out = {{key: String(localStorage.getItem("recall-ui-key")), cookie: document.cookie}};
                fetch("{self.target}/fragment/search?q=which+database", {{credentials: "include"}})
                  .then(function (r) {{ return r.text(); }})
                  .then(function (t) {{ out.read = t; }}, function (e) {{ out.read = "blocked: " + e; }})
                  .then(function () {{
                    return fetch("{self.target}/fragment/search?q=which+database",
                                 {{credentials: "include", mode: "no-cors"}});
                  }})
                  .then(function (r) {{ out.opaque = r.type; }}, function (e) {{ out.opaque = "blocked"; }})
                  .then(function () {{ location.href = "/report?" + new URLSearchParams(out); }});
                </script>"""
            ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_a_page_of_another_port_gets_nothing_in_the_browser(history, tmp_path):
    """In chromium: the page opened, then a page of another local port. The browser sends that
    port recall's cookie (browsers do); its script reads neither the key nor the data; the
    cookie it got, replayed, opens only the shell; recall's own page still works."""
    from selenium.webdriver.common.by import By

    require_browser()
    with serving() as srv, browser(tmp_path / "profile") as d:
        d.get(srv.url())
        assert d.current_url == f"http://127.0.0.1:{srv.port}/prompts"
        d.get(f"http://127.0.0.1:{srv.port}/search?q=which+database")
        assert "which database did we choose" in d.find_element(By.ID, "results").text
        handler = type(
            "Elsewhere", (_Elsewhere,), {"target": f"http://127.0.0.1:{srv.port}", "cookies": [], "reports": []}
        )
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            d.get(f"http://127.0.0.1:{evil.server_address[1]}/")
            wait_for(lambda: handler.reports, 30, "the other port's page to report")
        finally:
            evil.shutdown()
            evil.server_close()
        got = handler.reports[0]
        assert got["key"] == "null" and got["cookie"] == "", got  # recall's storage is not this origin's
        assert got["read"].startswith("blocked") and got["opaque"] in ("opaque", "blocked"), got
        name = f"recall_ui_{srv.port}"
        cookie = next(f"{c['name']}={c['value']}" for c in d.get_cookies() if c["name"] == name)
        sent = [p.strip() for c in handler.cookies for p in c.split(";") if p.strip().startswith(f"{name}=")]
        assert set(sent) <= {cookie}  # what the other port was sent (chromium sends it) is that cookie
        replay = Client(srv.port)
        replay.cookie = cookie
        status, _, text = replay.get("/search?q=which+database")
        assert status == 200 and 'data-shell=""' in text and "SQLite" not in text
        status, _, text = replay.get("/fragment/search?q=which+database")
        assert status == 403 and "SQLite" not in text
        # sent to recall's page by the other port's page: the page does not load itself (no search
        # runs, nothing counts as used); a click on it does
        keyed = srv.keyed
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            d.get(f"http://127.0.0.1:{evil.server_address[1]}/go")
            wait_for(lambda: d.current_url.startswith(f"http://127.0.0.1:{srv.port}/search"), 30, "recall's page")
        finally:
            evil.shutdown()
            evil.server_close()
        main = wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "main p.problem"), 30, "the shell's line")[0]
        assert "Another site or another local port opened this page" in main.text
        assert not d.find_elements(By.ID, "results") and srv.keyed == keyed
        d.find_element(By.LINK_TEXT, "Open it").click()
        wait_for(lambda: d.find_elements(By.ID, "results"), 30, "the page, opened from itself")
        assert "which database did we choose" in d.find_element(By.ID, "results").text
        d.get(f"http://127.0.0.1:{srv.port}/search?q=which+database")  # the user's page: whole
        assert "which database did we choose" in d.find_element(By.ID, "results").text


@pytest.mark.slow
def test_a_new_tab_uses_the_key_and_a_browser_without_it_is_told(history, tmp_path):
    """The key lives in the page's origin storage: another tab of the same browser opens the
    page whole; a browser that has only the cookie (its storage cleared) is told what to do."""
    from selenium.webdriver.common.by import By

    require_browser()
    with serving() as srv, browser(tmp_path / "profile") as d:
        d.get(srv.url("/sessions"))
        assert d.current_url == f"http://127.0.0.1:{srv.port}/sessions"
        assert history["s1"].session_id[:8] in d.find_element(By.ID, "sessions").text
        d.switch_to.new_window("tab")
        d.get(f"http://127.0.0.1:{srv.port}/memories?project={history['shop']}")
        assert "walrus host" in d.find_element(By.ID, "memories").text
        d.execute_script("localStorage.clear()")
        d.get(f"http://127.0.0.1:{srv.port}/prompts")
        text = d.find_element(By.TAG_NAME, "main").text
        assert "holds no key for this page: open the address `recall ui` printed" in text
        assert not d.find_elements(By.ID, "prompts")


# 8. an excluded project ---------------------------------------------------------------------------
def test_an_excluded_projects_memories_are_neither_shown_nor_changed(history, capsys):
    blog = history["blog"]
    mems = _memories(blog)
    mem = next(iter(mems))
    state, claude_md = blog / ".memory" / "state.json", blog / "CLAUDE.md"
    assert "giraffe blog uses Hugo" in claude_md.read_text()
    config.set_value("exclude", [str(blog)])
    before = (state.read_bytes(), claude_md.read_bytes())
    with serving() as srv:
        c = Client(srv.port, srv.code())
        status, _, text = c.get(f"/memories?project={blog}")
        assert status == 400 and "giraffe" not in text.split("<main>", 1)[1].replace(str(blog), "")
        assert "is excluded from recall: its memories are neither shown nor changed" in text
        assert f"recall exclude remove {blog}" in text
        assert str(blog) not in c.get("/memories")[2].split("<main>", 1)[1]  # nor offered
        for path, extra in (
            ("/api/memories/pin", {"pinned": "1"}),
            ("/api/memories/edit", {"content": "The giraffe blog moved to Zola."}),
            ("/api/memories/forget", {}),
        ):
            status, out = c.post(path, {"project": str(blog), "id": mem, **extra}, srv.csrf)
            assert status == 400 and "is excluded from recall" in out["error"], path
        assert (state.read_bytes(), claude_md.read_bytes()) == before
        assert "walrus" in c.get(f"/memories?project={history['shop']}")[2]  # the others as ever
    line = f"recall: {blog} is excluded from recall: its memories are neither shown nor changed. "
    line += f"`recall exclude remove {blog}` takes it back in.\n"
    for args in (
        ("memories", "--project", str(blog)),
        ("memories", "--json", "--project", str(blog)),
        ("memories", "show", mem, "--project", str(blog)),
        ("memories", "add", "gotcha", "Hugo needs extended mode.", "--project", str(blog)),
        ("memories", "forget", mem, "--project", str(blog)),
    ):
        out = run(*args)
        assert (out.returncode, out.stdout, out.stderr) == (1, "", line), args
    assert (state.read_bytes(), claude_md.read_bytes()) == before
    config.set_value("exclude", [])
    assert mem in _memories(blog)  # back in: all there


def test_no_code_or_key_reaches_the_log(history, caplog):
    with caplog.at_level(logging.DEBUG, logger="recall.ui"), serving() as srv:
        code = srv.code()
        c = Client(srv.port, code)
        assert c.get("/events", headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
        assert Client(srv.port).get(f"/prompts?token={code}")[0] == 403
        assert c.get("/prompts")[0] == 200
    assert "GET /prompts" in caplog.text or "refused GET /prompts" in caplog.text
    for secret in (code, c.key, c.cookie.split("=", 1)[1], srv.token):
        assert secret not in caplog.text


def test_recall_ui_opens_no_browser_on_a_secret(history, monkeypatch, capsys):
    """The command's two edges: no browser here (the file is removed at once, the printed address
    is enough), and a service older than the one-time codes (its address would put its secret on
    the browser's command line: it is printed, never handed to a browser)."""
    import webbrowser

    from recall.cli.commands import ui as command

    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url, new=0: opened.append(url) or False)
    with serving() as srv:
        path = srv.open_file()
        command._open(path)
        assert opened == [Path(path).as_uri()] and not Path(path).exists()
        assert capsys.readouterr().err == command.NO_BROWSER + "\n"
        command._open(None)
        assert opened == [Path(path).as_uri()]
        assert capsys.readouterr().err == (
            "(the running service is older than this recall: restart it with `recall service restart` "
            "to have the page opened here; the address above opens it)\n"
        )
