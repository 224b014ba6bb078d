"""``recall ui`` without a browser: the guard (token, cookie, Host, Origin, CSRF, CSP) on every
route, the pages as views of what the CLI knows (the same gate: exclusions, `recall: off`,
forgotten; the same redaction), text rendered as text, the writes (mark wrong, forget a hit's
session, a memory's edit, pin and forget) reaching the CLI, the command and the slash command,
and what the service and the hook import. The browser tests are tests/ui/test_ui_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from indexer import ledger
from indexer.ingest import index_all
from recall.core import config, paths
from recall.prompt import injections
from recall.ui import guard
from tests.support.cli import cli
from tests.support.factory import Session
from tests.support.ui import Client, serving

QUESTION = "which database did we choose for the job queue?"
DECISION = (
    "We decided to use SQLite in WAL mode for the job queue <script>alert('pwned')</script> "
    "<img src=x onerror=alert(2)> because Postgres was overkill."
)
SECRET = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6" * 8


@pytest.fixture
def history(tmp_path, claude_projects):
    shop = tmp_path / "work" / "shop"
    shop.mkdir(parents=True)
    blog = tmp_path / "work" / "blog"
    blog.mkdir(parents=True)
    s1 = Session(cwd=str(shop), start=datetime(2026, 11, 3, 10, tzinfo=timezone.utc))
    s1.user(QUESTION)
    s1.assistant(DECISION)
    s1.user(f"the deploy key is {SECRET} for the walrus host")
    s1.assistant("Noted the walrus host deploy key.")
    s1.write(claude_projects)
    s2 = Session(cwd=str(blog), start=datetime(2026, 11, 4, 10, tzinfo=timezone.utc))
    s2.user("which static site generator for the giraffe blog?")
    s2.assistant("We chose Hugo for the giraffe blog.")
    s2.write(claude_projects)
    index_all()
    return {"shop": shop, "blog": blog, "s1": s1, "s2": s2}


@pytest.fixture
def page():
    with serving() as srv:
        yield srv, Client(srv.port, srv.code())


def body(text: str) -> str:
    return text.split("<main>", 1)[-1]


# the guard -----------------------------------------------------------------------------------
def test_guard_functions():
    assert guard.host_ok("127.0.0.1:8123", 8123) and guard.host_ok("localhost:8123", 8123)
    for bad in ("evil.example:8123", "127.0.0.1:8124", "127.0.0.1", "", None, "127.0.0.1.evil.example:8123"):
        assert not guard.host_ok(bad, 8123), bad
    token = guard.new_token()
    csrf = guard.csrf_token(token)
    assert csrf != token and len(token) >= 30
    ok = {"Origin": "http://127.0.0.1:8123", "X-CSRF-Token": csrf}
    assert guard.write_refusal(ok, 8123, token) is None
    assert guard.write_refusal({**ok, "Origin": "http://localhost:8123"}, 8123, token) is None
    assert guard.write_refusal({**ok, "Origin": "http://evil.example"}, 8123, token) == "cross-origin request"
    assert guard.write_refusal({**ok, "Origin": "http://127.0.0.1:9999"}, 8123, token) == "cross-origin request"
    assert guard.write_refusal({"X-CSRF-Token": csrf}, 8123, token) == "no Origin header"
    assert "CSRF" in guard.write_refusal({**ok, "X-CSRF-Token": "nope"}, 8123, token)
    assert "cross-site" in guard.write_refusal({**ok, "Sec-Fetch-Site": "cross-site"}, 8123, token)
    assert guard.cookie_session(f"a=1; recall_ui_8123={token}", 8123) == token
    assert guard.cookie_session(f"recall_ui_8124={token}", 8123) is None
    assert guard.cookie_session('recall_ui_8123="unterminated', 8123) is None
    sessions = guard.Sessions()
    code = sessions.mint()
    sid, key = sessions.redeem(code)
    assert len({code, sid, key}) == 3 and sessions.known(sid) and not sessions.known(code)
    assert sessions.redeem(code) is None  # once
    assert sessions.admits(sid, key) and not sessions.admits(sid, "x" + key[1:]) and not sessions.admits(key, sid)
    assert guard.key_refusal({guard.KEY_HEADER: key}, sid, sessions) is None
    assert guard.key_refusal({}, sid, sessions).startswith("no key")
    assert guard.key_refusal({guard.KEY_HEADER: sid}, sid, sessions).startswith("wrong key")
    assert guard.key_refusal({guard.KEY_HEADER: key, "Sec-Fetch-Site": "same-site"}, sid, sessions) == (
        "cross-site request (same-site)"  # another port of 127.0.0.1 is the same site, not the same origin
    )
    assert guard.key_refusal({}, sid, sessions, key=key) is None
    for target, where in (("/search?q=x", "/search?q=x"), ("/", "/prompts"), ("//evil.example/x", "/prompts")):
        assert guard.safe_next(target) == where


def test_the_token_once_then_the_cookie_and_nothing_without(history, page):
    srv, c = page
    anon = Client(srv.port)
    for path in (
        "/",
        "/prompts",
        "/search?q=database",
        "/static/ui.js",
        "/events",
        "/fragment/prompts",
        f"/sessions/{history['s1'].session_id}",
    ):
        status, headers, text = anon.get(path)
        assert status == 403, path
        assert "SQLite" not in text and "token" in text
    code = srv.code()
    status, headers, text = anon.get(f"/search?q=x&token={code}")
    assert status == 200 and 'data-next="/search?q=x"' in text and "SQLite" not in text
    key = re.search(r'data-key="([^"]+)"', text).group(1)
    cookie = headers["Set-Cookie"]
    sid = cookie.split(";", 1)[0].split("=", 1)[1]
    assert cookie.startswith(f"recall_ui_{srv.port}={sid};") and len({sid, key, code, srv.token}) == 4
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert srv.token not in text + cookie and srv.csrf not in text  # the server's secret never leaves it
    status, _, text = anon.get(f"/search?q=x&token={code}")  # once only
    assert status == 403 and "used already or has expired" in text and "Set-Cookie" not in _
    assert anon.get("/prompts?token=wrong")[0] == 403
    assert anon.get(f"/prompts?token={srv.token}")[0] == 403  # the secret is no code
    status, headers, text = c.get("/search?q=database")
    assert status == 200 and "SQLite" in text
    assert headers["Content-Security-Policy"] == guard.CSP
    assert "script-src 'self'" in guard.CSP and "unsafe-inline" not in guard.CSP
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"


def test_another_host_is_refused_even_with_the_cookie(history, page):
    srv, c = page
    for host in ("evil.example", f"evil.example:{srv.port}", f"127.0.0.1:{srv.port + 1}", f"rebind.test:{srv.port}"):
        status, _, text = c.get("/search?q=database", host=host)
        assert status == 421 and "SQLite" not in text, host
        status, _ = c.post("/api/prompts/wrong", {"t": "1"}, srv.csrf, host=host)
        assert status == 421
    assert c.get("/prompts", host=f"localhost:{srv.port}")[0] == 200


def test_a_write_needs_the_same_origin_and_the_csrf_token(history, page):
    srv, c = page
    mem_id = _memory(history["shop"], "The walrus host is deployed with Ansible.")
    form = {"project": str(history["shop"]), "id": mem_id}
    for origin, csrf in (
        (None, srv.csrf),
        ("http://evil.example", srv.csrf),
        (f"http://127.0.0.1:{srv.port + 1}", srv.csrf),
        ("same", None),
        ("same", "0" * 40),
        ("null", srv.csrf),
    ):
        status, out = c.post("/api/memories/forget", form, csrf, origin=origin)
        assert status == 403, (origin, csrf)
    status, out = c.post("/api/memories/forget", form, srv.csrf, headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert mem_id in _cli_memories(history["shop"])  # nothing was removed
    assert Client(srv.port).post("/api/memories/forget", form, srv.csrf)[0] == 403  # no cookie
    status, out = c.post("/api/memories/forget", form, srv.csrf)
    assert status == 200 and out["ok"]
    assert mem_id not in _cli_memories(history["shop"])
    assert c.request("PUT", "/prompts")[0] == 405


# text as text; no inline script --------------------------------------------------------------
def test_transcript_text_is_rendered_as_text(history, page):
    srv, c = page
    sid = history["s1"].session_id
    for path in ("/search?q=database+job+queue", f"/sessions/{sid}", "/fragment/search?q=SQLite+WAL"):
        status, _, text = c.get(path)
        assert status == 200, path
        assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in text, path
        assert (
            "<script>alert" not in text
            and "<img src=x" not in text
            and "onerror=alert" not in text.replace("&lt;img src=x onerror=alert(2)&gt;", "")
        ), path
    for path in ("/prompts", "/search", "/sessions", "/memories", "/status", "/charts", f"/sessions/{sid}"):
        text = c.get(path)[2]
        scripts = re.findall(r"<script\b[^>]*>", text)
        assert scripts == ['<script src="/static/ui.js" defer>'], (path, scripts)
        assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", text), path  # no inline handlers of ours
        assert 'style="' not in text, path


def test_static_files_ship_in_the_package(page):
    srv, c = page
    status, headers, js = c.get("/static/ui.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and "EventSource" in js
    assert "innerHTML = html" in js and "eval(" not in js
    status, headers, css = c.get("/static/ui.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css")
    assert c.get("/static/../views.py")[0] == 404
    pyproject = (paths.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"recall.ui" = ["static/*.js", "static/*.css"]' in pyproject


# the pages show what the CLI shows ------------------------------------------------------------
def test_search_filters_and_the_exchange(history, page):
    srv, c = page
    text = body(c.get("/search?q=which+database+job+queue")[2])
    assert "SQLite in WAL mode" in text and f'/sessions/{history["s1"].session_id}' in text
    assert "<mark>database</mark>" in text
    text = body(c.get(f"/fragment/search?q=giraffe+blog&project={history['shop']}")[2])
    assert "Hugo" not in text
    text = body(c.get(f"/fragment/search?q=giraffe+blog&project={history['blog']}")[2])
    assert "Hugo" in text
    assert "No matches" in c.get("/fragment/search?q=giraffe+blog&kind=memory")[2]
    text = c.get("/fragment/search?q=giraffe&since=sometime")[2]
    assert text.startswith('<p class="problem">') and "sometime" in text  # the CLI's own one line


def test_memories_count_as_used_once_the_typing_settles(history, page):
    from recall.memory import store

    srv, c = page
    shop = history["shop"]
    mid = _memory(shop, "The walrus host runs the nightly backup.")

    def used():
        store.fold_access()
        return store.load(str(shop)).by_id(mid).access_count

    assert "nightly backup" in c.get("/fragment/search?q=walrus+nightly+backup&typing=1")[2]
    assert used() == 0  # a keystroke's prefix: nobody read it
    assert "nightly backup" in c.get("/fragment/search?q=walrus+nightly+backup")[2]
    assert used() == 1  # the settled query, as `recall search` counts it


def test_redaction_reaches_every_page(history, page):
    srv, c = page
    for path in ("/search?q=walrus+deploy+key", f"/sessions/{history['s1'].session_id}", "/sessions"):
        text = c.get(path)[2]
        assert SECRET not in text and SECRET[:30] not in text, path
    assert "[redacted" in c.get(f"/sessions/{history['s1'].session_id}")[2]


def test_exclusion_off_and_forgotten_sessions_stay_out_of_every_page(history, page):
    srv, c = page
    s1, s2 = history["s1"].session_id, history["s2"].session_id
    assert "Hugo" in c.get("/search?q=giraffe+blog")[2] and s2[:8] in c.get("/sessions")[2]
    config.set_value("exclude", [str(history["blog"])])
    assert "Hugo" not in c.get("/search?q=giraffe+blog")[2]
    assert s2[:8] not in c.get("/sessions")[2]
    assert str(history["blog"]) not in c.get("/search")[2]  # nor in the project filter
    assert c.get(f"/sessions/{s2}")[0] == 400
    ledger.switch_off([s1])  # `recall: off` typed in that session
    assert "SQLite" not in c.get("/search?q=which+database+job+queue")[2]
    assert s1[:8] not in c.get("/sessions")[2]
    assert c.get(f"/sessions/{s1}")[0] == 400


def test_sessions_and_a_session(history, page):
    srv, c = page
    text = body(c.get("/sessions")[2])
    assert "2026-11-03" in text and "2026-11-04" in text and "~" not in text.split("shop")[0][-3:] or True
    sid = history["s1"].session_id
    text = body(c.get(f"/sessions/{sid}")[2])
    assert f"claude --resume {sid}" in text and "cd " in text
    assert "USER" in text and "CLAUDE" in text and "which database did we choose" in text
    assert "SQLite in WAL mode" in text
    status, _, text = c.get("/sessions/nosuchsession")
    assert status == 400 and "No indexed session starts with" in text


def _memory(project, content: str, mtype: str = "decision") -> str:
    code, out, err = _run_cli("memories", "add", mtype, content, "--project", str(project))
    assert code == 0, err
    return _cli_memories(project, content)


def _run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "recall.entry", *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _cli_memories(project, content: str | None = None):
    code, out, err = _run_cli("memories", "--all", "--json", "--project", str(project))
    assert code == 0, err
    mems = json.loads(out)["memories"]
    if content is not None:
        return next(m["id"] for m in mems if m["content"] == content)
    return {m["id"]: m for m in mems}


def test_memories_edit_pin_forget_and_the_block(history, page):
    srv, c = page
    shop = history["shop"]
    a = _memory(shop, "Deploys go through the walrus host <b>only</b>.")
    b = _memory(shop, "Use SQLite in WAL mode for the job queue.", "architecture")
    text = body(c.get(f"/memories?project={shop}")[2])
    assert "&lt;b&gt;only&lt;/b&gt;" in text and "<b>only</b>" not in text
    block = (shop / "CLAUDE.md").read_text()
    start, end = block.index("<!-- MEMORY:START -->"), block.index("<!-- MEMORY:END -->")
    from html import escape

    assert f'<pre id="block">{escape(block[start : end + len("<!-- MEMORY:END -->")])}</pre>' in text
    form = {"project": str(shop), "id": a}
    assert (
        c.post("/api/memories/edit", {**form, "content": "Deploys go through the walrus host, via Ansible."}, srv.csrf)[
            0
        ]
        == 200
    )
    mems = _cli_memories(shop)
    assert mems[a]["content"] == "Deploys go through the walrus host, via Ansible." and mems[a]["origin"] == "manual"
    assert "via Ansible" in (shop / "CLAUDE.md").read_text()
    assert c.post("/api/memories/edit", {**form, "content": "  "}, srv.csrf)[0] == 400
    assert c.post("/api/memories/pin", {**form, "pinned": "1"}, srv.csrf)[0] == 200
    assert _cli_memories(shop)[a]["pinned"] is True
    assert "unpin" in c.get(f"/memories?project={shop}")[2]
    assert c.post("/api/memories/pin", {**form, "pinned": "0"}, srv.csrf)[0] == 200
    assert "pinned" not in _cli_memories(shop)[a]
    assert c.post("/api/memories/forget", {"project": str(shop), "id": b}, srv.csrf)[0] == 200
    assert b not in _cli_memories(shop) and "SQLite in WAL mode for the job" not in (shop / "CLAUDE.md").read_text()
    status, out = c.post("/api/memories/forget", {"project": str(shop), "id": b}, srv.csrf)
    assert status == 400 and "No memory" in out["error"]
    assert c.post("/api/memories/forget", {"project": "relative/path", "id": a}, srv.csrf)[0] == 400
    elsewhere = history["blog"]  # a folder without recall's memories: never read or written by the page
    status, out = c.post("/api/memories/pin", {"project": str(elsewhere), "id": a}, srv.csrf)
    assert status == 400 and "has no recall memories" in out["error"] and not (elsewhere / ".memory").exists()
    assert c.get(f"/memories?project={elsewhere}")[0] == 400 and not (elsewhere / ".memory").exists()


def test_a_pinned_memory_does_not_fade_and_leads_the_briefing(tmp_path):
    import time

    from recall.memory import briefing, store

    state = store.State(project=str(tmp_path))
    old = store.add_memory(state, "progress", "Half of the refund migration is done.").memory
    old.updated = old.created = time.time() - 30 * 86400
    assert store.effective_confidence(old) == 0.0
    store.set_pinned(state, old.id, True)
    assert store.effective_confidence(old) == old.confidence
    assert "refund migration" in briefing.render_body(state)


def _injection(project, session: str, text: str = "<recalled-context>SQLite WAL</recalled-context>") -> dict:
    rec = {
        "t": 1790000000.123,
        "project": str(project),
        "session": session,
        "outcome": "raw",
        "why": "no backend",
        "hits": [
            {"session": "abcdef1234", "score": 3.2, "confidence": 0.71, "similarity": 0.83},
            "junk",
            {"session": None},
        ],
        "backend": "off",
        "via": "in-process",
        "chars": len(text),
        "tokens": 9,
        "latency_ms": 40.0,
        "text": text,
        "path": "raw",
        "gate": {"setting": "hook.min_confidence", "value": 0.6},
        "best": 0.71,
        "way": "raw",
        "held_ms": 38.4,
    }
    injections.append(rec)
    return rec


def test_prompts_page_and_mark_wrong_reaches_recall_log(history, page, capsys):
    srv, c = page
    _injection(history["shop"], "sess-1", "<recalled-context>use <script>x</script></recalled-context>")
    injections.append({"t": "garbage", "hits": "nope", "text": 5})  # another writer's damaged line
    text = body(c.get("/prompts")[2])
    assert "&lt;recalled-context&gt;use &lt;script&gt;x&lt;/script&gt;" in text
    assert "0.71" in text and "0.83" in text and "path: raw" in text  # confidence, similarity: what the log holds
    assert "way: raw" in text and "held 38 ms" in text and "best 0.71 against hook.min_confidence 0.60" in text
    status, out = c.post("/api/prompts/wrong", {"t": "1790000000.123", "session": "sess-1"}, srv.csrf)
    assert status == 200 and out["marked"] == 1
    code, log, _ = cli(capsys, "log")
    assert code == 0 and "[marked wrong]" in log
    code, log, _ = cli(capsys, "log", "--json")
    assert any(r.get("wrong") is True for r in json.loads(log))
    assert "marked wrong" in c.get("/prompts")[2]
    assert c.post("/api/prompts/wrong", {"t": "1790000000.123", "session": "sess-1", "wrong": "0"}, srv.csrf)[0] == 200
    assert "[marked wrong]" not in cli(capsys, "log")[1]
    assert c.post("/api/prompts/wrong", {"t": "12", "session": "x"}, srv.csrf)[0] == 400


def test_prompts_page_says_whether_the_next_reply_used_each_injection(tmp_path, claude_projects, page, capsys):
    """Issue 37 with issue 34's "Was it used": the verdict `recall log` prints, on the page: for
    good once known (the first paint has it), asked for after the first paint until then."""
    from datetime import timedelta

    from recall.ui import views

    srv, c = page
    cwd = tmp_path / "work" / "api"
    cwd.mkdir(parents=True)
    conv = Session(cwd=str(cwd), start=datetime.now(timezone.utc) - timedelta(hours=2))
    p1 = conv.user("which connection pooler did we pick?")
    conv.assistant("We pick pgbouncer; I'll set pool_mode in deploy/pgbouncer.ini.")
    p2 = conv.user("tidy the export code")
    conv.assistant("As we discussed, I left the rows alone.")
    p3 = conv.user("how do the pool limits work?")  # its reply is not written yet
    conv.write(claude_projects)
    index_all()
    texts = [
        "<recalled-context>\n- [2026-11-20 session 0badc0de] assistant: pgbouncer, transaction pooling; "
        "settings in deploy/pgbouncer.ini\n</recalled-context>",
        "<recalled-context>\n- [2026-11-20 session 0badc0de] <b>The CSV</b> streams\n</recalled-context>",
        "<recalled-context>\n- pool limits: 20 per worker\n</recalled-context>",
    ]
    for line, text in zip((p1, p2, p3), texts):
        t = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).timestamp() + 0.8
        injections.append(
            {
                "t": t,
                "project": str(cwd),
                "session": conv.session_id,
                "outcome": "raw",
                "why": "",
                "hits": [{"session": "0badc0de99", "score": 1.0}],
                "backend": "off",
                "via": "in-process",
                "chars": len(text),
                "tokens": len(text) // 4,
                "latency_ms": 40.0,
                "text": text,
            }
        )
    injections.append(
        {
            "t": time.time(),
            "project": str(cwd),
            "session": conv.session_id,
            "outcome": "nothing",
            "why": "",
            "hits": [],
            "text": "",
        }
    )
    first = body(c.get("/prompts")[2])  # the first paint reads no archive: the verdicts come after it
    assert first.count("used: checking…") == 3 and 'data-load="1"' in first
    text = body(c.get("/fragment/prompts")[2])
    assert "used: yes (repeats deploy/pgbouncer.ini)" in text
    assert "used: yes (cites it (&quot;As we discussed&quot;))" in text  # the why is text, escaped
    assert "used: not known yet (no reply indexed yet)" in text
    assert text.count("used: ") == 3  # nothing injected: nothing to use
    assert "&lt;b&gt;The CSV&lt;/b&gt;" in text and "<b>The CSV" not in text
    log = cli(capsys, "log")[1]  # the same words as `recall log`
    for verdict in (
        "yes (repeats deploy/pgbouncer.ini)",
        'yes (cites it ("As we discussed"))',
        "not known yet (no reply indexed yet)",
    ):
        assert f"used: {verdict}" in log
    # a yes is final: the next first paint has it; the one not known yet is asked for again
    again = body(c.get("/prompts")[2])
    assert "used: yes (repeats deploy/pgbouncer.ini)" in again and again.count("used: checking…") == 1
    # the Charts page: per week, the used and the silent share as `recall stats` counts them
    charts = body(c.get("/charts")[2])
    assert 'data-fragment="/fragment/weekly"' in charts
    weekly = c.get("/fragment/weekly")[2]
    this = views.weekly()[0]
    assert (this["prompts"], this["injections"], this["used"], this["unknown"]) == (4, 3, 2, 1)
    assert this["used_share"] == 1.0 and this["silent_share"] == 0.25
    assert weekly.count("<svg") == 1 and "<td class=\"num\">100%</td><td class=\"num\">25%</td>" in weekly


def test_forgetting_a_hit_forgets_its_session_everywhere(history, page):
    srv, c = page
    sid = history["s2"].session_id
    assert "Hugo" in c.get("/search?q=giraffe+blog")[2]
    status, out = c.post("/api/sessions/forget", {"session": sid}, srv.csrf)
    assert status == 200 and out["forgot"] == sid
    assert "Hugo" not in c.get("/search?q=giraffe+blog")[2]
    code, out, _ = _run_cli("--raw", "giraffe blog")
    assert "Hugo" not in out
    assert c.post("/api/sessions/forget", {"session": "../etc"}, srv.csrf)[0] == 400


def test_status_charts_doctor_and_live_marks(history, page):
    srv, c = page
    _injection(history["shop"], "s")
    text = body(c.get("/status")[2])
    assert "not running" in text and "Model backend" in text and "Team" in text
    from recall.team import local

    local.save_join("postgresql://alice@db.example/team", "alice@db.example:5432/team", "alice")
    text = body(c.get("/fragment/status")[2])
    assert "alice@db.example:5432/team as alice; 0 shared projects;" in text and "not synced yet" in text
    text = body(c.get("/fragment/doctor")[2])
    assert "FAIL" in text or "No problems" in text
    text = body(c.get("/charts")[2])
    assert text.count("<svg") == 3 and "Memories by type" in text and 'data-fragment="/fragment/history"' in text
    hist = c.get("/fragment/history")[2]
    assert hist.count("<svg") == 1 and "messages" in hist
    from recall.ui import views

    before = views.change_marks()
    _injection(history["shop"], "s2")
    assert views.change_marks()["prompts"] != before["prompts"]


def test_events_stream_says_when_a_prompt_was_logged(history, page):
    import http.client
    import threading

    srv, c = page
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    conn.putrequest("GET", f"/events?key={c.key}", skip_host=True)
    conn.putheader("Host", f"127.0.0.1:{srv.port}")
    conn.putheader("Cookie", c.cookie)
    conn.endheaders()
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
    assert resp.fp.readline() == b"retry: 1000\n"
    threading.Timer(0.3, lambda: _injection(history["shop"], "live")).start()
    got = b""
    while b"event: prompts" not in got:
        line = resp.fp.readline()
        assert line, "the stream ended"
        got += line
    conn.close()


# the command, the slash command, what loads where -----------------------------------------------
def test_recall_ui_without_a_service(history):
    proc = subprocess.Popen(
        [sys.executable, "-m", "recall.entry", "ui", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{30,}", url), url
        from tests.support.ui import port_and_token

        port, token = port_and_token(url)
        assert "SQLite" in Client(port, token).get("/search?q=which+database")[2]
    finally:
        proc.terminate()
        proc.wait(30)
    assert "serves the page until Ctrl-C" in proc.stderr.read()
    code, out, err = _run_cli("ui", "--no-open", "--no-serve")  # the slash command's form: said on stdout
    assert code == 0 and "No recall service runs to serve the page: start it with `recall service start`" in out
    assert "Traceback" not in err


def test_the_service_op_starts_the_page_lazily(history):
    """`recall serve` adds the op before the service starts, never the server: that waits for
    `recall ui`."""
    code = (
        "import sys\nfrom recall.service import registry\nfrom recall.ui import op\n"
        "registry.add_module(op)\nassert not registry.load_modules()\n"
        "print(sorted(m for m in sys.modules if m.startswith('recall.ui')), 'http.server' in sys.modules)\n"
        "out = registry.OPS['ui']({'port': None})\n"
        "print('recall.ui.server' in sys.modules, out['url'].startswith('http://127.0.0.1:'))\n"
        "again = registry.OPS['ui']({})\nprint(again['port'] == out['port'] and again['url'] != out['url'])\n"
        "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
        "moved = registry.OPS['ui']({'port': port})\nprint(moved['port'] == port != out['port'])\n"
        "try:\n    registry.OPS['ui']({'port': 'eighty'})\nexcept Exception as exc:\n    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:5] == [
        "['recall.ui', 'recall.ui.op'] False",
        "True True",
        "True",
        "True",
        "port must be a whole number, not 'eighty'.",
    ]


def test_slash_command_runs_recall_ui_without_serving():
    from recall.setup import install

    text = install.slash_command_text("ui")
    assert "ui --no-open --no-serve`" in text and "$ARGUMENTS" not in text and "argument-hint" not in text
    assert install.is_our_slash_command(text)
    assert not install.is_our_slash_command(text.replace("in one line", "in two lines"))


def test_a_long_transcript_is_paged(tmp_path, claude_projects):
    from recall.ui import views

    project = tmp_path / "long"
    project.mkdir()
    s = Session(cwd=str(project))
    for i in range(views.TRANSCRIPT_PAGE + 10):
        s.user(f"question number {i} about the walrus")
    s.write(claude_projects)
    index_all()
    with serving() as srv:
        c = Client(srv.port, srv.code())
        text = c.get(f"/sessions/{s.session_id}")[2]
        assert f"messages 1–{views.TRANSCRIPT_PAGE} of {views.TRANSCRIPT_PAGE + 10}" in text
        assert "question number 0 about" in text and f"question number {views.TRANSCRIPT_PAGE} about" not in text
        text = c.get(f"/sessions/{s.session_id}?from={views.TRANSCRIPT_PAGE}")[2]
        assert f"question number {views.TRANSCRIPT_PAGE + 9} about" in text and "question number 0 about" not in text
        assert c.get(f"/sessions/{s.session_id}?from=nonsense")[0] == 200


# issue 44, items 6 and 7: the prompt on each card, the feed -----------------------------------------
def _at(line: dict, later: float = 0.8) -> float:
    return datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).timestamp() + later


def test_a_prompts_card_shows_its_prompt_and_what_the_log_holds_of_each_hit(tmp_path, claude_projects, page):
    """The log never stores the prompt: the card reads its first line from the archive, as
    `recall stats` does (``recall.prompt.used.turn_at``), escaped, through the readers' gate;
    a hit shows its confidence and similarity, the prompt its way and how long it was held."""
    from datetime import timedelta

    from recall.prompt import used

    srv, c = page
    cwd = tmp_path / "work" / "api"
    cwd.mkdir(parents=True)
    conv = Session(cwd=str(cwd), start=datetime.now(timezone.utc) - timedelta(hours=2))
    p1 = conv.user("which pooler <b>did</b> we pick?\nand a second line of the prompt")
    conv.assistant("pgbouncer.")
    p2 = conv.user("what about the retries?")
    conv.assistant("Three of them.")
    hush = Session(cwd=str(cwd), start=datetime.now(timezone.utc) - timedelta(hours=1))
    p3 = hush.user("the walrus plan, said in a session switched off")
    hush.assistant("ok")
    conv.write(claude_projects)
    hush.write(claude_projects)
    index_all()
    for line, sess in ((p1, conv), (p2, conv), (p3, hush)):
        injections.append(
            {
                "t": _at(line),
                "project": str(cwd),
                "session": sess.session_id,
                "outcome": "nothing",
                "why": "no hit confident enough",
                "hits": [{"session": "0badc0de99", "score": 1.2, "confidence": 0.42, "similarity": 0.61}],
                "path": "raw",
                "gate": {"setting": "hook.min_confidence", "value": 0.6},
                "best": 0.42,
                "way": "nothing",
                "held_ms": 12.0,
                "text": "",
            }
        )
    injections.append({"t": time.time(), "project": str(cwd), "session": "not-archived", "outcome": "trivial"})
    ledger.switch_off([hush.session_id])  # `recall: off` typed in it: its prompt is shown nowhere
    first = body(c.get("/prompts")[2])  # the first paint reads no archive: the fragment after it does
    assert "reading…" in first and 'data-load="1"' in first and "which pooler" not in first
    text = body(c.get("/fragment/prompts")[2])
    assert '<q class="prompt-line">which pooler &lt;b&gt;did&lt;/b&gt; we pick?</q>' in text
    assert "second line" not in text and "<b>did" not in text
    assert '<q class="prompt-line">what about the retries?</q>' in text
    assert "walrus" not in text and text.count("(not in the archive yet)") == 1  # (the one not archived)
    assert text.count('<div class="asked">') == 3  # the switched-off session's prompt: not even a line
    assert text.count('<td class="num conf">0.42</td>') == 3 and "0.61" in text and "features" not in text
    assert "way: nothing" in text and "held 12 ms" in text and "best 0.42 against hook.min_confidence 0.60" in text
    rec = next(r for r in injections.read() if r.get("session") == conv.session_id)  # what `recall stats` reads
    assert used.turn_at(used.turns_for(rec, {}), rec["t"]).prompt.startswith("which pooler <b>did</b>")
    assert "which pooler &lt;b&gt;did" in body(c.get("/prompts")[2])  # once found, the first paint has it
    import os

    from indexer.archive_files import session_relpath
    from indexer.project import canonical_project

    archived = paths.archive_dir() / session_relpath(canonical_project(str(cwd)), conv.session_id)
    tmp = archived.with_name(archived.name + ".tmp")  # rewritten (a forget, a redaction): read again
    tmp.write_text(archived.read_text().replace("which pooler <b>did</b> we pick?", "[redacted: 1 secret]"))
    os.replace(tmp, archived)
    assert "which pooler" not in body(c.get("/prompts")[2])
    assert '<q class="prompt-line">[redacted: 1 secret]</q>' in body(c.get("/fragment/prompts")[2])


def _codex_session(project, sid: str, start: datetime, prompt: str, reply: str):
    """A Codex CLI rollout file (the shape tests/indexer/test_sources.py reads)."""
    import os
    from datetime import timedelta
    from pathlib import Path

    def at(s):
        return (start + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    lines = [
        {"timestamp": at(0), "type": "session_meta", "payload": {"id": sid, "cwd": str(project)}},
        {
            "timestamp": at(1),
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
        },
        {
            "timestamp": at(2),
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": reply}]},
        },
    ]
    folder = Path(os.environ["HOME"]) / ".codex" / "sessions" / start.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture
def timeline(tmp_path, claude_projects):
    """Two projects' last days: Claude Code sessions (one 10 days old), a Codex session, a memory
    of a session, one typed by hand, and the injection log's records."""
    from datetime import timedelta

    from recall.memory import store

    now = datetime.now(timezone.utc)
    shop = tmp_path / "work" / "shop"
    shop.mkdir(parents=True)
    blog = tmp_path / "work" / "blog"
    blog.mkdir(parents=True)
    old = Session(cwd=str(shop), start=now - timedelta(days=10))
    old.user("the old refund question")
    old.assistant("Refunds go through Stripe.")
    s1 = Session(cwd=str(shop), start=now - timedelta(hours=5))
    s1.user("which queue <b>backend</b> for the shop?\nsecond line")
    s1.assistant("SQLite in WAL mode.")
    s2 = Session(cwd=str(blog), start=now - timedelta(hours=3))
    s2.user("which static site generator for the blog?")
    s2.assistant("Hugo.")
    long = Session(cwd=str(blog), start=now - timedelta(days=4))
    long.user("the long migration of the blog's comments")
    long.clock = now - timedelta(days=1)  # worked on again yesterday
    long.assistant("Comments moved to the new store.")
    for s in (old, s1, s2, long):
        s.write(claude_projects)
    codex = "0c0dec00-1111-7222-8333-944445555666"
    _codex_session(shop, codex, now - timedelta(hours=4), "codex: tidy the export code", "Tidied.")
    index_all()
    with store.transaction(shop) as state:
        made = store.add_memory(state, "decision", "The queue is SQLite <i>WAL</i>.", session_id=s1.session_id)
        made.memory.created = made.memory.updated = time.time() - 2 * 3600
    hand = _memory(shop, "Deploys go through the walrus host.", "gotcha")  # now, of no session
    base = {"why": "", "hits": [{"session": old.session_id, "score": 2.0, "confidence": 0.8}], "tokens": 30}
    t1 = time.time() - 3600
    injections.append(
        {**base, "t": t1, "project": str(shop), "session": s1.session_id, "outcome": "raw", "way": "raw",
         "held_ms": 9.0, "text": "<recalled-context>SQLite</recalled-context>"}
    )  # fmt: skip
    injections.append(
        {**base, "t": t1 + 60, "project": str(shop), "session": s1.session_id, "outcome": "nothing", "text": ""}
    )
    injections.append(
        {**base, "t": time.time() - 1800, "project": str(blog), "session": s2.session_id, "outcome": "synthesized",
         "way": "background", "held_ms": 4.0, "text": "<recalled-context>Hugo</recalled-context>"}
    )  # fmt: skip
    return {"shop": shop, "blog": blog, "old": old, "s1": s1, "s2": s2, "long": long, "codex": codex,
            "mem": made.memory.id, "hand": hand, "t1": t1}  # fmt: skip


def test_the_feed_newest_first_over_the_last_days_by_project_and_agent(timeline):
    from recall.core.errors import UsageError
    from recall.ui import views

    tl = timeline
    items = views.feed(3)
    assert [x["t"] for x in items] == sorted((x["t"] for x in items), reverse=True)
    got = [(x["kind"], x["session"]) for x in items]
    assert got == [
        ("memory", ""),  # typed by hand just now: of no session
        ("injection", tl["s2"].session_id),
        ("injection", tl["s1"].session_id),  # (the record that got nothing is no injection)
        ("memory", tl["s1"].session_id),  # a memory opens the session it came from
        ("session", tl["s2"].session_id),
        ("session", tl["codex"]),
        ("session", tl["s1"].session_id),
        ("session", tl["long"].session_id),  # started 4 days ago, went on yesterday
    ]
    by = {(x["kind"], x["session"]): x for x in items}
    s1 = by[("session", tl["s1"].session_id)]
    assert s1["what"] == "started" and s1["text"] == "which queue <b>backend</b> for the shop?"  # its first line
    assert s1["agent"] == "claude-code" and by[("session", tl["codex"])]["agent"] == "codex"
    assert by[("session", tl["long"].session_id)]["what"] == "went on"
    inj = by[("injection", tl["s1"].session_id)]
    assert (inj["what"], inj["way"], inj["held_ms"], inj["project"]) == ("raw", "raw", 9.0, str(tl["shop"]))
    mem = by[("memory", tl["s1"].session_id)]
    assert (mem["what"], mem["type"], mem["text"]) == ("created", "decision", "The queue is SQLite <i>WAL</i>.")
    assert tl["old"].session_id not in {x["session"] for x in items}  # 10 days ago: not in the last 3
    assert tl["old"].session_id in {x["session"] for x in views.feed(30)}
    shop = views.feed(3, project=str(tl["shop"]))
    assert shop and {x["project"] for x in shop} == {str(tl["shop"])}
    assert tl["s2"].session_id not in {x["session"] for x in shop}
    assert [x["session"] for x in views.feed(3, agent="codex")] == [tl["codex"]]
    claude = views.feed(3, agent="claude-code")
    assert tl["codex"] not in {x["session"] for x in claude} and ("memory", "") not in {
        (x["kind"], x["session"]) for x in claude
    }  # a memory of no session is of no agent
    assert views.feed(1, agent="gemini") == []
    for bad in ({"days": 2}, {"agent": "vim"}, {"project": "relative/path"}):
        with pytest.raises(UsageError):
            views.feed(**{"days": 3, **bad})
    config.set_value("exclude", [str(tl["blog"])])  # an excluded project: neither its sessions nor its injections
    assert str(tl["blog"]) not in {x["project"] for x in views.feed(3)}


def test_the_feed_page_its_filters_and_its_live_section(timeline, page):
    srv, c = page
    tl = timeline
    text = body(c.get("/feed")[2])
    assert '<a href="/feed" class="on">Feed</a>' in c.get("/feed")[2]
    assert 'data-live="prompts sessions"' in text and 'data-fragment="/fragment/feed?days=3"' in text
    assert f'href="/sessions/{tl["s1"].session_id}"' in text and f'href="/sessions/{tl["codex"]}"' in text
    assert "which queue &lt;b&gt;backend&lt;/b&gt; for the shop?" in text and "<b>backend" not in text
    assert "The queue is SQLite &lt;i&gt;WAL&lt;/i&gt;." in text and "way: background" in text
    assert "Codex CLI" in text and "its project's memories" in text
    part = body(c.get(f"/fragment/feed?days=3&project={tl['blog']}")[2])
    assert tl["s2"].session_id in part and tl["s1"].session_id not in part
    part = body(c.get("/fragment/feed?days=3&agent=codex")[2])
    assert tl["codex"] in part and tl["s1"].session_id not in part
    assert "days must be one of 1, 3, 7, 30." in c.get("/fragment/feed?days=5")[2]
    assert "agent &#x27;vim&#x27;: use one of claude-code, codex, gemini." in c.get("/fragment/feed?agent=vim")[2]
