"""``recall ui`` in a real browser: Debian's chromium, driven through its chromedriver by selenium
(``tests/support/ui.py``: skipped when they are absent, a failure in CI). A real ``recall serve``
serves the page (``recall ui --no-open`` asks it for the URL); a real hook call's injection shows
up on the Prompts page by itself; search finds a known session and opening it shows its exchange;
forgetting a memory in the page removes it from ``recall memories``; a Prompts card shows the prompt
it ran on and its hits' confidence; the Feed lists sessions, memories and injections newest first,
narrows to a project, takes a new injection live and opens a session; a request without the token,
under another host name, or a cross-origin POST is refused. Screenshots go to
``$RECALL_UI_SCREENSHOTS`` when set (docs/ui/ is made so), else to the test's temp folder."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from recall.core import service_client as client
from tests.support.factory import Session
from tests.support.ui import browser, port_and_token, require_browser
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow
RECALL = [sys.executable, "-m", "recall.entry"]
QUESTION = "which database did we choose for the job queue?"
DECISION = (
    "We decided to use SQLite in WAL mode for the job queue, because Postgres was overkill "
    "for a single host and Redis lost jobs on restart. <script>alert('pwned')</script>"
)
BOUND = 1.0  # seconds: "an injection appears on the Prompts page within a second"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*RECALL, *args], input=stdin, capture_output=True, text=True, timeout=180)


@pytest.fixture
def shots(tmp_path) -> Path:
    where = Path(os.environ.get("RECALL_UI_SCREENSHOTS") or tmp_path / "shots")
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture
def world(tmp_path, claude_projects, monkeypatch):
    """Two projects' sessions on disk, two memories, and a running ``recall serve`` that indexed them."""
    require_browser()
    monkeypatch.setenv("RECALL_WRITER_HEAP_MB", "48")
    shop = tmp_path / "work" / "shop"
    shop.mkdir(parents=True)
    blog = tmp_path / "work" / "blog"
    blog.mkdir(parents=True)
    s1 = Session(cwd=str(shop), start=datetime(2026, 11, 3, 10, tzinfo=timezone.utc))
    s1.user(QUESTION)
    s1.assistant(DECISION)
    tid = s1.tool_use("Edit", {"file_path": f"{shop}/queue/store.py"})
    s1.tool_result(tid, "The file has been updated.")
    s1.write(claude_projects)
    s2 = Session(cwd=str(blog), start=datetime(2026, 11, 4, 10, tzinfo=timezone.utc))
    s2.user("which static site generator for the blog?")
    s2.assistant("We chose Hugo for the blog, with the PaperMod theme.")
    s2.write(claude_projects)
    for mtype, text in (
        ("decision", "The job queue stores jobs in SQLite (WAL mode)."),
        ("gotcha", "Redis lost queued jobs on restart: do not use it for the queue."),
    ):
        out = run("memories", "add", mtype, text, "--project", str(shop))
        assert out.returncode == 0, out.stderr
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([*RECALL, "serve"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def up():
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        try:
            st = client.call("status", {}, timeout=1.0)
        except client.Unavailable:
            return None
        return (
            st.get("pid") == proc.pid
            and st.get("state") == "watching"
            and (st.get("counts") or {}).get("messages", 0) >= 4
        )

    try:
        wait_for(up, 120, "the service to index the sessions", 0.1)
        out = run("ui", "--no-open")
        assert out.returncode == 0, out.stderr
        url = out.stdout.strip()
        yield {"url": url, "shop": shop, "blog": blog, "s1": s1, "s2": s2, "tmp": tmp_path, "pid": proc.pid}
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        log.close()


def memories_of(project) -> dict[str, str]:
    out = run("memories", "--json", "--project", str(project))
    assert out.returncode == 0, out.stderr
    return {m["id"]: m["content"] for m in json.loads(out.stdout)["memories"]}


def no_alert(driver) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def test_the_page_in_a_browser(world, shots, tmp_path):
    from selenium.webdriver.common.by import By

    port, token = port_and_token(world["url"])
    assert world["url"] == f"http://127.0.0.1:{port}/?token={token}"
    with browser(tmp_path / "profile") as d:
        d.get(world["url"])
        assert d.current_url == f"http://127.0.0.1:{port}/prompts"  # the token traded for the cookie
        assert "No prompts logged yet" in d.find_element(By.ID, "prompts").text
        wait_for(lambda: "on" in d.find_element(By.ID, "live").get_attribute("class"), 30, "the live stream")

        # a real hook call: its injection appears on the open page by itself
        payload = {
            "session_id": "current-session",
            "transcript_path": "/nowhere.jsonl",
            "cwd": str(world["shop"]),
            "hook_event_name": "UserPromptSubmit",
            "prompt": QUESTION,
        }
        hook = run("hook", "user-prompt-submit", stdin=json.dumps(payload))
        assert hook.returncode == 0 and "SQLite in WAL mode" in hook.stdout, hook.stderr
        first = wait_for(
            lambda: d.find_elements(By.CSS_SELECTOR, '#prompts article[data-n="1"]'),
            BOUND,
            "the hook's injection on the Prompts page",
        )
        text = first[0].text
        assert "raw" in text and "confidence" in text and world["s1"].session_id[:8] in text
        assert "SQLite in WAL mode" in first[0].find_element(By.CSS_SELECTOR, "pre.injected").text
        assert no_alert(d)
        # whether the next reply used it, as `recall log` says (its conversation is not archived yet)
        wait_for(lambda: "used: not known yet" in d.find_element(By.ID, "prompts").text, 30, "the used verdict")
        d.save_screenshot(str(shots / "prompts.png"))

        # search as you type finds the session; opening it shows the exchange
        d.get(f"http://127.0.0.1:{port}/search")
        box = d.find_element(By.ID, "q")
        box.send_keys("which database job queue")
        wait_for(
            lambda: d.find_element(By.ID, "results").get_attribute("data-query") == "which database job queue",
            30,
            "the results of the whole query",
        )  # (each keystroke's results replace the last)
        link = wait_for(
            lambda: d.find_elements(By.CSS_SELECTOR, f'#results a[href="/sessions/{world["s1"].session_id}"]'),
            30,
            "the known session among the hits",
        )
        hit = d.find_element(By.CSS_SELECTOR, "#results article")
        hit.find_element(By.TAG_NAME, "summary").click()
        assert "SQLite in WAL mode" in hit.text and "<script>alert('pwned')</script>" in hit.text
        assert no_alert(d)
        d.save_screenshot(str(shots / "search.png"))
        link[0].click()
        wait_for(lambda: d.current_url.endswith(f"/sessions/{world['s1'].session_id}"), 30, "the session page")
        transcript = d.find_element(By.ID, "transcript").text
        assert QUESTION in transcript and "SQLite in WAL mode for the job queue" in transcript
        assert "<script>alert('pwned')</script>" in transcript and no_alert(d)  # shown as text, run never
        assert f"claude --resume {world['s1'].session_id}" in d.find_element(By.TAG_NAME, "main").text
        assert "queue/store.py" in d.find_element(By.TAG_NAME, "main").text
        d.save_screenshot(str(shots / "session.png"))

        d.get(f"http://127.0.0.1:{port}/sessions")
        assert world["s2"].session_id[:8] in d.find_element(By.ID, "sessions").text

        # forgetting a memory in the page removes it from `recall memories`
        before = memories_of(world["shop"])
        gotcha = next(i for i, c in before.items() if c.startswith("Redis lost"))
        d.get(f"http://127.0.0.1:{port}/memories?project={world['shop']}")
        assert "Redis lost queued jobs" in d.find_element(By.ID, "memories").text
        assert "<!-- MEMORY:START -->" in d.find_element(By.ID, "block").text
        d.save_screenshot(str(shots / "memories.png"))
        d.find_element(By.CSS_SELECTOR, f'button[data-action="mem-forget"][data-id="{gotcha}"]').click()
        d.switch_to.alert.accept()
        wait_for(lambda: gotcha not in memories_of(world["shop"]), 30, "the memory gone from `recall memories`")
        assert len(memories_of(world["shop"])) == len(before) - 1

        d.get(f"http://127.0.0.1:{port}/status")
        assert f"pid {world['pid']}" in d.find_element(By.ID, "status").text
        wait_for(lambda: "checking" not in d.find_element(By.ID, "doctor").text, 120, "the doctor's checks")
        d.save_screenshot(str(shots / "status.png"))
        d.get(f"http://127.0.0.1:{port}/charts")
        wait_for(lambda: len(d.find_elements(By.CSS_SELECTOR, "figure.chart svg")) == 5, 30, "the five charts")
        assert "used share" in d.find_element(By.ID, "weekly").text  # per week, as `recall stats` counts it
        d.save_screenshot(str(shots / "charts.png"))


def _hook(cwd, session_id: str, prompt: str) -> None:
    payload = {
        "session_id": session_id,
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    hook = run("hook", "user-prompt-submit", stdin=json.dumps(payload))
    assert hook.returncode == 0 and "SQLite in WAL mode" in hook.stdout, hook.stderr


def test_a_prompts_card_and_the_feed_in_a_browser(world, claude_projects, shots, tmp_path):
    """Issue 44, items 6 and 7: a Prompts card shows the prompt it ran on (from the archive) and
    its hit's confidence; the Feed shows a session, a memory and an injection newest first, its
    project filter narrows it, a new injection appears by itself, a click opens the session."""
    import re

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    port, _token = port_and_token(world["url"])
    now = datetime.now(timezone.utc)
    shop, blog = world["shop"], world["blog"]
    asked = QUESTION + "\nit must survive a restart of the host"  # the conversation's prompt, archived
    conv = Session(cwd=str(shop), start=now - timedelta(seconds=40))
    conv.user(asked)
    conv.write(claude_projects)
    other = Session(cwd=str(blog), start=now - timedelta(minutes=3))
    other.user("which theme for the blog's new layout?")
    other.assistant("PaperMod, with the archive page on.")
    other.write(claude_projects)
    for s in (conv, other):
        sid = s.session_id
        wait_for(lambda: run("show", sid).returncode == 0, 60, "the service to index the new sessions", 0.3)
    _hook(shop, conv.session_id, asked)
    with browser(tmp_path / "profile") as d:
        d.get(world["url"])
        card = wait_for(
            lambda: d.find_elements(By.CSS_SELECTOR, '#prompts article[data-n="1"] .asked q'), 30, "the card's prompt"
        )
        assert card[0].text.strip("“”") == QUESTION  # its first line, read from the archive
        article = d.find_element(By.CSS_SELECTOR, '#prompts article[data-n="1"]')
        confidences = [td.text for td in article.find_elements(By.CSS_SELECTOR, "table.hits td.conf")]
        assert confidences and all(re.fullmatch(r"\d\.\d\d", c) for c in confidences), confidences
        assert "restart of the host" not in article.text and no_alert(d)
        d.save_screenshot(str(shots / "prompts.png"))

        d.find_element(By.CSS_SELECTOR, 'nav a[href="/feed"]').click()
        wait_for(lambda: d.current_url.endswith("/feed"), 30, "the Feed page")
        wait_for(lambda: "on" in d.find_element(By.ID, "live").get_attribute("class"), 30, "the live stream")

        def items():  # read at once (a live refresh replaces the section's elements)
            got = d.execute_script(
                "return Array.from(document.querySelectorAll('#feed article.item'))"
                ".map(function (a) { return [a.dataset.kind, a.dataset.session, a.dataset.t]; });"
            )
            return [(k, s, float(t)) for k, s, t in got]

        got = items()
        kinds = [k for k, _s, _t in got]
        assert [t for _k, _s, t in got] == sorted((t for _k, _s, t in got), reverse=True)  # newest first
        assert {"session", "memory", "injection"} <= set(kinds), got
        assert kinds[0] == "injection"  # the hook's, the newest of them all
        assert ("injection", conv.session_id) in [(k, s) for k, s, _t in got]
        assert ("session", other.session_id) in [(k, s) for k, s, _t in got]
        assert "The job queue stores jobs in SQLite (WAL mode)." in d.find_element(By.ID, "feed").text
        d.save_screenshot(str(shots / "feed.png"))

        # the project filter narrows it to one project
        Select(d.find_element(By.CSS_SELECTOR, '#feed-filters select[name="project"]')).select_by_value(str(blog))
        wait_for(
            lambda: {s for _k, s, _t in items()} == {other.session_id}, 30, "the feed narrowed to the blog's items"
        )
        assert "project=" in d.current_url
        Select(d.find_element(By.CSS_SELECTOR, '#feed-filters select[name="project"]')).select_by_value("")
        wait_for(lambda: conv.session_id in {s for _k, s, _t in items()}, 30, "every project's items again")

        # a new injection appears by itself, on top
        _hook(shop, "live-session", QUESTION)
        wait_for(lambda: items()[0][:2] == ("injection", "live-session"), 30, "the new injection on the feed")

        # a click opens the session
        def click_session():
            from selenium.common.exceptions import StaleElementReferenceException

            try:
                d.find_element(
                    By.CSS_SELECTOR, f'#feed article[data-kind="session"][data-session="{other.session_id}"] a.open'
                ).click()
            except StaleElementReferenceException:  # the section re-rendered under the click: again
                return False
            return True

        wait_for(click_session, 30, "a click on the session's item")
        wait_for(lambda: d.current_url.endswith(f"/sessions/{other.session_id}"), 30, "the session page")
        assert "PaperMod, with the archive page on." in d.find_element(By.ID, "transcript").text
        assert no_alert(d)


class _Attacker(http.server.BaseHTTPRequestHandler):
    """Another origin on this machine (another port of 127.0.0.1): a page that posts to the UI."""

    target = ""
    fields: dict = {}

    def do_GET(self):  # noqa: N802
        from html import escape

        inputs = "".join(f'<input name="{escape(k)}" value="{escape(v)}">' for k, v in self.fields.items())
        page = (
            f'<!doctype html><form id="f" method="post" action="{escape(self.target)}">{inputs}</form>'
            '<script>document.getElementById("f").submit()</script>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


def test_the_browser_is_refused_without_the_token_under_another_host_and_cross_origin(world, tmp_path):
    from selenium.webdriver.common.by import By

    port, token = port_and_token(world["url"])
    mems = memories_of(world["shop"])
    victim = next(iter(mems))
    with browser(tmp_path / "profile") as d:
        d.get(f"http://127.0.0.1:{port}/prompts")  # no token, no cookie
        assert "Refused" in d.title + d.find_element(By.TAG_NAME, "body").text
        assert "no token" in d.find_element(By.TAG_NAME, "body").text

        d.get(world["url"])  # now with the cookie
        assert d.current_url.endswith("/prompts")
        d.get(f"http://127.0.0.1:{port}/search?q=which+database")
        assert "which database did we choose" in d.find_element(By.ID, "results").text

        # a page of another origin posts a forget to the UI with the browser's cookie
        page = f"http://127.0.0.1:{port}/api/memories/forget"
        handler = type(
            "Attacker", (_Attacker,), {"target": page, "fields": {"project": str(world["shop"]), "id": victim}}
        )
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            d.get(f"http://127.0.0.1:{evil.server_address[1]}/")
            wait_for(lambda: d.current_url.startswith(page), 30, "the cross-origin form to be posted")
            assert "write refused: cross-origin request" in d.find_element(By.TAG_NAME, "body").text
        finally:
            evil.shutdown()
            evil.server_close()
    assert victim in memories_of(world["shop"])  # nothing was forgotten


def test_another_host_name_for_127_0_0_1_is_refused(world, tmp_path):
    """DNS rebinding: a name of the attacker's that resolves to 127.0.0.1 (chromium's host
    resolver rules stand in for the DNS answer)."""
    from selenium.webdriver.common.by import By

    port, token = port_and_token(world["url"])
    from tests.support import ui as support

    flags = support.FLAGS
    support.FLAGS = (*flags, "--host-resolver-rules=MAP rebind.attacker.test 127.0.0.1")
    try:
        with browser(tmp_path / "profile") as d:
            d.get(f"http://rebind.attacker.test:{port}/?token={token}")
            body = d.find_element(By.TAG_NAME, "body").text
            assert "Refused" in body and "loopback address" in body and "SQLite" not in body
            d.get(f"http://rebind.attacker.test:{port}/search?q=which+database")
            assert "SQLite" not in d.find_element(By.TAG_NAME, "body").text
    finally:
        support.FLAGS = flags
