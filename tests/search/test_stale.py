"""Issue 29: which files each session touched (state.db, the archive, forget, rebuild), and the
marks on recalled text whose files changed since: hits (hook, --json, MCP, ask), sessions,
typed memories (briefing, decay, --stale, consolidation's re-check)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.ingest import Indexer
from indexer.touches import bash_touches, describe, paths_in_text, tool_touches
from recall.core import paths
from tests.support.factory import Session

NOW = datetime.now(timezone.utc).replace(microsecond=0)
DAY = 86400.0


# ------------------------------------------------------------------------------ helpers
def git_project(tmp_path: Path, name: str = "shop") -> Path:
    p = tmp_path / name
    (p / ".git").mkdir(parents=True)
    (p / "src" / "lib").mkdir(parents=True)
    return p


def put(path: Path, content: str, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    t = when.timestamp()
    os.utime(path, (t, t))


def index(roots) -> None:
    with Indexer() as ix:
        ix.run(list(roots))


def touch_rows(session_id: str | None = None) -> list[tuple]:
    con = sqlite3.connect(paths.state_db_path())
    try:
        sql = "SELECT session_id, path, op, fp, dest FROM touches"
        rows = con.execute(
            sql + (" WHERE session_id=?" if session_id else ""), (session_id,) if session_id else ()
        ).fetchall()
    finally:
        con.close()
    return sorted(rows)


def archived_records() -> list[dict]:
    out = []
    for f in sorted((paths.archive_dir() / "sessions").glob("*/*.jsonl")):
        out += [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
    return out


# ------------------------------------------------------------------------------ touches at ingest
def test_tool_calls_become_touches_relative_to_the_working_tree(tmp_path):
    p = git_project(tmp_path)
    cwd = str(p)
    assert tool_touches("Write", {"file_path": f"{p}/src/a.ts", "content": "hello"}, cwd, cwd) == [
        ["write", "src/a.ts", "2cf24dba5fb0:5", ""]
    ]
    assert tool_touches("Edit", {"file_path": f"{p}/src/a.ts"}, cwd, cwd) == [["edit", "src/a.ts", "", ""]]
    assert tool_touches("MultiEdit", {"file_path": f"{p}/src/b.ts", "edits": []}, cwd, cwd)[0][:2] == [
        "edit",
        "src/b.ts",
    ]
    assert tool_touches("NotebookEdit", {"notebook_path": f"{p}/nb.ipynb"}, cwd, cwd)[0][:2] == ["edit", "nb.ipynb"]
    assert (
        tool_touches("Write", {"file_path": "/tmp/elsewhere.ts", "content": "x"}, cwd, cwd) == []
    )  # not the project's
    assert tool_touches("Read", {"file_path": f"{p}/src/a.ts"}, cwd, cwd) == []
    got = bash_touches(
        "cd src && git mv a.ts b.ts && rm -f old.py *.pyc; mv x.py y.py lib/ && git rm --cached c.ts", cwd, cwd
    )
    assert got == [
        ["move", "src/a.ts", "", "src/b.ts"],
        ["delete", "src/old.py", "", ""],
        ["move", "src/x.py", "", "src/lib/x.py"],
        ["move", "src/y.py", "", "src/lib/y.py"],
    ]
    assert bash_touches("pytest -x | grep rm && echo mv", cwd, cwd) == []
    assert bash_touches("rm ~/.cache/x /etc/passwd ../sibling/f.py", cwd, cwd) == []  # outside the project
    # a linked worktree: paths relative to its own top, the project is the main root
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {p}/.git/worktrees/wt\n")
    assert tool_touches("Edit", {"file_path": f"{wt}/src/a.ts"}, str(wt / "src"), str(p)) == [
        ["edit", "src/a.ts", "", ""]
    ]


def test_a_failed_or_refused_call_wrote_nothing(tmp_path, claude_projects):
    p = git_project(tmp_path)
    s = Session(cwd=str(p), start=NOW - timedelta(days=2))
    s.user("write the config")
    ok = s.tool_use("Write", {"file_path": f"{p}/config.ts", "content": "x"})
    s.tool_result(ok, "File created successfully")
    no = s.tool_use("Write", {"file_path": f"{p}/secrets.ts", "content": "y"})
    s.tool_result(no, "The user doesn't want to proceed with this tool use.", is_error=True)
    bad = s.tool_use("Bash", {"command": "git mv a.ts b.ts"})
    s.tool_result(bad, "fatal: not under version control, source=a.ts", is_error=True)
    s.write(claude_projects)
    index([claude_projects])
    assert [r[1:3] for r in touch_rows()] == [("config.ts", "write")]
    with Indexer(rebuild=True) as ix:  # the archive says the same
        ix.run([])
    assert [r[1:3] for r in touch_rows()] == [("config.ts", "write")]


def test_paths_in_text_and_the_wording():
    text = (
        "We route refunds through src/lib/refunds.ts (https://stripe.com/docs/a.html, e.g. node.js 1.2); "
        "see README.md, ./scripts/run.sh and ~/notes.md."
    )
    assert paths_in_text(text) == ["src/lib/refunds.ts", "e.g", "node.js", "README.md", "scripts/run.sh"]
    ref = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()
    marks = [
        {"path": "src/lib/refunds.ts", "state": "changed", "since": "2026-01-04T00:00:00Z"},
        {"path": "src/old.ts", "state": "deleted", "since": None},
        {"path": "src/a.ts", "state": "renamed", "since": "2026-03-15T00:00:00Z", "to": "src/b.ts"},
    ]
    assert describe(marks, ref) == (
        "(src/lib/refunds.ts changed 3 days later; src/old.ts deleted; src/a.ts renamed to src/b.ts 2 months later)"
    )
    assert describe(marks, ref, max_items=1).endswith("; 2 more files changed)")
    assert describe([], ref) == ""


@pytest.fixture
def history(tmp_path, claude_projects):
    """A decision names files (session A, 10 days ago); 3 days later session B rewrites one,
    deletes one and renames one; a control session C names files nobody changed."""
    p = git_project(tmp_path)
    t_a, t_b, t_c = NOW - timedelta(days=10), NOW - timedelta(days=7), NOW - timedelta(days=6)
    a = Session(cwd=str(p), start=t_a)
    a.user("how should stripe refunds be processed?")
    a.tool_use("Write", {"file_path": f"{p}/src/lib/refunds.ts", "content": "export const v = 1\n"})
    a.tool_use("Write", {"file_path": f"{p}/src/old.ts", "content": "legacy\n"})
    a.tool_use("Write", {"file_path": f"{p}/src/a.ts", "content": "a\n"})
    a.assistant(
        "We decided stripe refunds go through src/lib/refunds.ts with idempotency keys; the legacy "
        "path stays in src/old.ts and helpers in src/a.ts (docs: https://stripe.com/docs/refunds.html)."
    )
    b = Session(cwd=str(p), start=t_b)
    b.user("rewrite refunds for partial refunds")
    b.tool_use("Write", {"file_path": f"{p}/src/lib/refunds.ts", "content": "export const v = 2 // partial\n"})
    b.tool_use("Bash", {"command": "git rm src/old.ts && git mv src/a.ts src/b.ts", "description": "tidy"})
    b.assistant("Partial refunds done.")
    c = Session(cwd=str(p), start=t_c)
    c.user("where do the stripe webhook types live?")
    c.tool_use("Write", {"file_path": f"{p}/src/types.ts", "content": "export type Hook = {}\n"})
    c.assistant("The stripe webhook types are in src/types.ts, documented in README.md.")
    for s in (a, b, c):
        s.write(claude_projects)
    put(p / "src/lib/refunds.ts", "export const v = 2 // partial\n", t_b + timedelta(seconds=20))
    put(p / "src/b.ts", "a\n", t_b + timedelta(seconds=30))
    put(p / "src/types.ts", "export type Hook = {}\n", t_c + timedelta(seconds=20))
    put(p / "README.md", "# shop\n", t_a - timedelta(days=30))
    index([claude_projects])
    return {"project": p, "a": a, "b": b, "c": c, "roots": [claude_projects]}


def test_touches_are_kept_in_state_db_and_the_archive(history):
    a, b = history["a"], history["b"]
    from indexer.touches import content_fingerprint as fp

    assert touch_rows(a.session_id) == [
        (a.session_id, "src/a.ts", "write", fp(b"a\n"), ""),
        (a.session_id, "src/lib/refunds.ts", "write", fp(b"export const v = 1\n"), ""),
        (a.session_id, "src/old.ts", "write", fp(b"legacy\n"), ""),
    ]
    v2 = fp(b"export const v = 2 // partial\n")
    assert v2.endswith(":30")  # the size a stat can check
    assert touch_rows(b.session_id) == [
        (b.session_id, "src/a.ts", "move", "", "src/b.ts"),
        (b.session_id, "src/lib/refunds.ts", "write", v2, ""),
        (b.session_id, "src/old.ts", "delete", "", ""),
    ]
    recs = [r for r in archived_records() if r["session_id"] == b.session_id and r.get("touched")]
    assert [t for r in recs for t in r["touched"]] == [
        ["write", "src/lib/refunds.ts", v2, ""],
        ["delete", "src/old.ts", "", ""],
        ["move", "src/a.ts", "", "src/b.ts"],
    ]
    # a message without touches is archived as before they existed (not a byte more)
    con = sqlite3.connect(paths.state_db_path())
    touched = {u for (u,) in con.execute("SELECT DISTINCT uuid FROM touches")}
    con.close()
    assert {r["uuid"] for r in archived_records() if "touched" in r} == touched and len(touched) == 6


def test_rebuild_recreates_the_touches_and_forget_removes_them(history):
    before = touch_rows()
    assert len(before) == 7
    with Indexer(rebuild=True) as ix:
        assert ix.run([]).replayed > 0  # from the archive alone
    assert touch_rows() == before
    a, b = history["a"], history["b"]
    with Indexer() as ix:
        ix.forget_session(b.session_id)
    assert touch_rows(b.session_id) == [] and len(touch_rows()) == 4
    from indexer.forgetting import Selection
    from recall.privacy.forget import forget_everywhere

    with Indexer() as ix:  # --match: the messages holding the text go, with their touches
        forget_everywhere(ix, Selection(match="old.ts"))
    assert [r[1] for r in touch_rows(a.session_id)] == ["src/a.ts", "src/lib/refunds.ts"]
    with Indexer() as ix:  # a whole project (an exclusion's --purge goes this way)
        ix.forget_project(str(history["project"]))
    assert touch_rows() == []


def test_history_archived_before_touches_gets_them_once(history):
    """An archive written by an older recall has no "touched": the next run derives them from
    the tool calls' text (no fingerprint), once."""
    for f in (paths.archive_dir() / "sessions").glob("*/*.jsonl"):
        recs = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        f.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "touched"}) + "\n" for r in recs))
    con = sqlite3.connect(paths.state_db_path())
    with con:
        con.execute("DELETE FROM touches")
        con.execute("DELETE FROM meta WHERE key='touches'")
    con.close()
    with Indexer() as ix:
        assert ix.touches_pending()
        ix.run([])
        assert not ix.touches_pending()
    b = history["b"]
    assert touch_rows(b.session_id) == [
        (b.session_id, "src/a.ts", "move", "", "src/b.ts"),
        (b.session_id, "src/lib/refunds.ts", "write", "", ""),
        (b.session_id, "src/old.ts", "delete", "", ""),
    ]


# ------------------------------------------------------------------------------ marks on hits
def marks_by_session(text: str, cwd: Path) -> dict[str, dict[str, dict]]:
    """{session: {path: mark}} over every message hit of each session."""
    from recall.search.run import run_search

    out: dict[str, dict[str, dict]] = {}
    for h in run_search(text, project=cwd, cwd=str(cwd), messages=True, limit=30):
        out.setdefault(h.session_id, {}).update({m["path"]: m for m in h.stale})
    return out


def test_marks_where_files_changed_and_nowhere_else(history, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, a, b, c = history["project"], history["a"], history["b"], history["c"]
    got = marks_by_session("stripe refunds idempotency webhook types partial", p)
    assert {a.session_id, b.session_id, c.session_id} <= set(got)
    marks = got[a.session_id]
    assert set(marks) == {"src/lib/refunds.ts", "src/old.ts", "src/a.ts"}
    assert marks["src/lib/refunds.ts"]["state"] == "changed"
    assert marks["src/old.ts"]["state"] == "deleted"
    assert marks["src/a.ts"] == {
        "path": "src/a.ts",
        "state": "renamed",
        "to": "src/b.ts",
        "since": marks["src/a.ts"]["since"],
    }
    since = datetime.fromisoformat(marks["src/lib/refunds.ts"]["since"].replace("Z", "+00:00"))
    assert abs((since - (NOW - timedelta(days=7))).total_seconds()) < 120  # when session B wrote it
    assert got[b.session_id] == {}  # the session that made the change
    assert got[c.session_id] == {}  # its files (and README.md) did not change


def test_a_file_changed_outside_claude_code_and_a_refreshed_checkout(history, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, c = history["project"], history["c"]
    put(p / "README.md", "# shop\n\nnew install steps\n", NOW - timedelta(days=1))  # edited by hand
    put(p / "src/types.ts", "export type Hook = {}\n", NOW - timedelta(hours=1))  # checkout: same content
    got = marks_by_session("stripe webhook types", p)[c.session_id]
    assert [(m["path"], m["state"]) for m in got.values()] == [("README.md", "changed")]
    assert got["README.md"]["since"].startswith((NOW - timedelta(days=1)).strftime("%Y-%m-%d"))
    put(p / "src/types.ts", "export type Hook = { id: string }\n", NOW - timedelta(hours=1))  # a real change
    assert set(marks_by_session("stripe webhook types", p)[c.session_id]) == {"README.md", "src/types.ts"}


def test_no_marks_when_the_project_folder_is_gone_or_marks_are_off(history, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, a = history["project"], history["a"]
    from recall.search.run import run_search
    from recall.search.stale import mark_hits

    hit = next(
        h
        for h in run_search("stripe refunds idempotency", project=p, cwd=str(p), messages=True, limit=30)
        if h.session_id == a.session_id and h.stale
    )
    moved = tmp_path / "moved-away"
    p.rename(moved)
    hit.stale = None
    assert mark_hits([hit], str(tmp_path))[0].stale == []  # nothing to compare with: no "deleted" everywhere
    moved.rename(p)
    from recall.core import config
    from recall.prompt import context as rc

    config.save({"hook": {"stale_marks": False, "synthesize": False}})
    out = rc.build_context(
        {"prompt": "how are stripe refunds processed with idempotency keys?", "cwd": str(p), "session_id": "now"},
        time.time() + 10,
    )
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "changed 3 days later" not in ctx and "A mark like" not in ctx


def test_the_hook_block_marks_each_file_once_and_says_what_marks_mean(history, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    from recall.core import config
    from recall.prompt import context as rc
    from recall.prompt.block import MARKS_NOTE

    config.save({"hook": {"synthesize": False}})
    p = history["project"]
    trace: dict = {}
    out = rc.build_context(
        {"prompt": "how are stripe refunds processed with idempotency keys?", "cwd": str(p), "session_id": "now"},
        time.time() + 10,
        trace=trace,
    )
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert ctx.count(MARKS_NOTE) == 1 and ctx.index(MARKS_NOTE) < ctx.index("- [")
    assert ctx.count("src/lib/refunds.ts changed 3 days later") == 1  # once per session, not per hit
    assert "src/old.ts deleted 3 days later" in ctx and "src/a.ts renamed to src/b.ts 3 days later" in ctx
    # every marked line is one line
    line = next(ln for ln in ctx.splitlines() if "refunds.ts changed 3 days later" in ln)
    assert line.startswith("- [") and "refunds" in line


def test_json_mcp_and_ask_carry_the_marks(history, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, a, c = history["project"], history["a"], history["c"]
    env = {**os.environ, "RECALL_NO_SERVICE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "recall.entry", "--json", "--messages", "stripe refunds idempotency"],
        capture_output=True,
        text=True,
        cwd=str(p),
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["hits"]
    assert all(isinstance(r["stale"], list) for r in rows)
    mine = [r for r in rows if r["session_id"] == a.session_id]
    assert mine and {(m["path"], m["state"]) for m in mine[0]["stale"]} == {
        ("src/lib/refunds.ts", "changed"),
        ("src/old.ts", "deleted"),
        ("src/a.ts", "renamed"),
    }
    assert all(set(m) >= {"path", "state", "since"} for m in mine[0]["stale"])
    raw = subprocess.run(
        [sys.executable, "-m", "recall.entry", "--raw", "--messages", "stripe refunds idempotency"],
        capture_output=True,
        text=True,
        cwd=str(p),
        env=env,
        timeout=120,
    )
    assert "  ! (src/lib/refunds.ts changed 3 days later" in raw.stdout
    from recall.mcp import tools

    res = tools.memory_search("stripe refunds idempotency webhook", cwd=str(p))
    by = {m["session_id"]: m for m in res["matches"]}
    assert by[a.session_id]["stale"] and by[c.session_id]["stale"] == []
    res = tools.recall_search("stripe refunds idempotency", cwd=str(p), messages=True, limit=20)
    assert any(m["stale"] for m in res["matches"] if m["session_id"] == a.session_id)
    from recall.cli.commands.ask import gather

    monkeypatch.chdir(p)
    hits = gather("stripe refunds idempotency", str(p))
    assert any(h.stale for h in hits if h.session_id == a.session_id)


def test_the_mcp_tools_structured_and_text_output_carry_the_marks(history):
    from recall.mcp import server, tools

    p, a = history["project"], history["a"]
    page = server.fit(
        tools.memory_search("stripe refunds idempotency webhook", cwd=str(p)), server.SearchOut, server.render_search
    )
    wired = server.wire(page)["matches"]
    assert all("stale" in m for m in wired)
    mine = [m for m in wired if m["session_id"] == a.session_id]
    assert mine and {x["state"] for x in mine[0]["stale"]} == {"changed", "deleted", "renamed"}
    assert "    ! (src/" in server.render_search(page) and "changed 3 days later" in server.render_search(page)


def test_files_are_judged_in_the_worktree_the_prompt_comes_from(history, tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    from recall.search.stale import files_root

    p, c = history["project"], history["c"]
    wt = tmp_path / "wt-feature"
    (p / ".git" / "worktrees" / "wt-feature").mkdir(parents=True)
    (p / ".git" / "worktrees" / "wt-feature" / "commondir").write_text("../..\n")
    (p / ".git" / "worktrees" / "wt-feature" / "gitdir").write_text(f"{wt}/.git\n")  # git's back-pointer
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {p}/.git/worktrees/wt-feature\n")
    put(wt / "README.md", "# shop\n", NOW - timedelta(days=60))
    put(wt / "src/types.ts", "export type Hook = {}\n", NOW - timedelta(days=6))
    put(p / "README.md", "# shop, edited on main\n", NOW - timedelta(days=1))
    assert files_root(str(p), str(wt / "src")) == str(wt) and files_root(str(p), "/elsewhere") == str(p)
    assert set(marks_by_session("stripe webhook types", wt)[c.session_id]) == set()  # as the worktree has them
    assert set(marks_by_session("stripe webhook types", p)[c.session_id]) == {"README.md"}


def test_the_service_search_op_marks_in_the_callers_tree(history):
    from recall.search.searcher import Searcher
    from recall.service import registry
    from recall.service.ops import search as search_ops

    p, a = history["project"], history["a"]
    warm = Searcher()
    orig = registry.searcher
    search_ops.searcher = lambda: warm
    try:
        rows = search_ops.search(
            {"text": "stripe refunds idempotency", "messages": True, "limit": 20, "project": str(p), "cwd": str(p)}
        )
    finally:
        search_ops.searcher = orig
    assert any(r["stale"] for r in rows if r["session_id"] == a.session_id)


def test_the_synthesis_is_told_about_the_marks(history, monkeypatch, standin):
    from recall.core import config
    from recall.prompt import context as rc
    from tests.support.standin import text

    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    config.save({"hook": {"budget_seconds": 60}})
    standin.script(text("- Refunds go through src/lib/refunds.ts, which has changed since: check it [x]"))
    p = history["project"]
    out = rc.build_context(
        {"prompt": "how are stripe refunds processed with idempotency keys?", "cwd": str(p), "session_id": "now"},
        time.time() + 50,
    )
    req = standin.messages_requests()[-1]
    system = req["system"] if isinstance(req["system"], str) else " ".join(b["text"] for b in req["system"])
    body = json.dumps(req["messages"])
    assert "Changed since: src/" in body and "src/lib/refunds.ts changed 3 days later" in body
    assert "prefer the" in system and "newest session" in system and "must say so" in system
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "A mark like" in ctx and "has changed since" in ctx


# ------------------------------------------------------------------------------ sessions
def test_sessions_and_show_say_what_became_of_the_files(history, monkeypatch):
    p, a = history["project"], history["a"]
    env = {**os.environ, "RECALL_NO_SERVICE": "1"}

    def recall(*args):
        out = subprocess.run(
            [sys.executable, "-m", "recall.entry", *args],
            capture_output=True,
            text=True,
            cwd=str(p),
            env=env,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    rows = {r["session_id"]: r for r in json.loads(recall("sessions", "--json"))["sessions"]}
    assert {(m["path"], m["state"]) for m in rows[a.session_id]["stale"]} == {
        ("src/lib/refunds.ts", "changed"),
        ("src/old.ts", "deleted"),
        ("src/a.ts", "renamed"),
    }
    assert rows[history["b"].session_id]["stale"] == [] and rows[history["c"].session_id]["stale"] == []
    assert "! 3 files it wrote changed since" in recall("sessions")
    shown = recall("show", a.session_id, "--no-pager")
    assert "Files it wrote, and what became of them:" in shown
    assert "src/lib/refunds.ts  [write]  changed since" in shown and "src/old.ts  [write]  deleted" in shown
    assert "src/a.ts  [write]  renamed to src/b.ts" in shown


def test_show_asks_git_for_the_commits_since(tmp_path, claude_projects, monkeypatch):
    p = tmp_path / "repo"
    p.mkdir()
    genv = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args, who="Ada", when=None):
        e = dict(genv, GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL="a@x", GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL="a@x")
        if when is not None:
            e["GIT_AUTHOR_DATE"] = e["GIT_COMMITTER_DATE"] = when.isoformat()
        subprocess.run(["git", "-C", str(p), *args], check=True, capture_output=True, env=e)

    git("init", "-q")
    t0 = NOW - timedelta(days=5)
    s = Session(cwd=str(p), start=t0)
    s.user("add the invoice module")
    s.tool_use("Write", {"file_path": f"{p}/invoice.py", "content": "A = 1\n"})
    s.tool_use("Write", {"file_path": f"{p}/legacy.py", "content": "L = 1\n"})
    s.write(claude_projects)
    put(p / "invoice.py", "A = 1\n", t0)
    put(p / "legacy.py", "L = 1\n", t0)
    git("add", "-A")
    git("commit", "-qm", "first", when=t0)
    index([claude_projects])
    (p / "invoice.py").write_text("A = 2\n")
    git("add", "-A")
    git("commit", "-qm", "bump", who="Grace", when=NOW - timedelta(days=2))
    git("mv", "legacy.py", "old_legacy.py")
    git("commit", "-qm", "rename", who="Linus", when=NOW - timedelta(days=1))
    from recall.memory import sessions as sess
    from recall.search.stale import session_files

    rows = {r["path"]: r for r in session_files(sess.resolve(s.session_id), str(p))}
    assert rows["invoice.py"]["state"] == "changed"
    assert [c["author"] for c in rows["invoice.py"]["commits"]] == ["Grace"]
    assert rows["legacy.py"]["state"] == "renamed" and rows["legacy.py"]["to"] == "old_legacy.py"
    assert rows["legacy.py"]["commits"][0]["author"] == "Linus"


# ------------------------------------------------------------------------------ typed memories
@pytest.fixture
def memproject(tmp_path):
    p = git_project(tmp_path, "memproj")
    (p / ".git" / "info").mkdir()
    lines = "".join(f"export function step{i}() {{ return {i} }}\n" for i in range(20))
    put(p / "src/lib/refunds.ts", lines, NOW - timedelta(days=20))
    put(p / "src/old.ts", "legacy\n", NOW - timedelta(days=20))
    return p


def add(project: Path, mtype: str, content: str, now: float | None = None):
    from recall.memory import store

    with store.transaction(str(project)) as st:
        out = store.add_memory(st, mtype, content, now=now)
    return out.memory


def test_a_memory_fingerprints_the_files_it_names(memproject):
    m = add(memproject, "decision", "Refunds go through src/lib/refunds.ts; src/missing.ts was never there.")
    assert [f["path"] for f in m.files] == ["src/lib/refunds.ts"]
    f = m.files[0]
    assert f["fp"].endswith(":" + str((memproject / "src/lib/refunds.ts").stat().st_size)) and len(f["sketch"]) == 128
    from recall.memory import store

    assert store.load(str(memproject)).by_id(m.id).files == m.files  # kept in state.json


def test_substantial_changes_and_deletions_mark_a_memory_small_edits_do_not(memproject):
    from recall.memory import store
    from recall.memory.stale import refresh

    big = add(memproject, "decision", "Refunds go through src/lib/refunds.ts with idempotency keys.")
    gone = add(memproject, "gotcha", "The legacy flow in src/old.ts must not be called from webhooks.")
    st = store.load(str(memproject))
    assert refresh(st) == set()
    f = memproject / "src/lib/refunds.ts"
    f.write_text(f.read_text() + "export const extra = 1\n")  # one line more of 21: not substantial
    st = store.load(str(memproject))
    assert refresh(st) == set() and not st.by_id(big.id).stale
    f.write_text("".join(f"export const other{i} = {i}\n" for i in range(15)))  # rewritten
    (memproject / "src/old.ts").unlink()
    st = store.load(str(memproject))
    assert refresh(st) == {big.id, gone.id}
    assert [(x["path"], x["state"]) for x in st.by_id(big.id).stale] == [("src/lib/refunds.ts", "changed")]
    assert [(x["path"], x["state"]) for x in st.by_id(gone.id).stale] == [("src/old.ts", "deleted")]


def test_a_stale_memory_is_marked_in_the_briefing_decays_and_is_listed(memproject, monkeypatch):
    from recall.memory import briefing, store

    now = time.time()
    m = add(memproject, "decision", "Refunds go through src/lib/refunds.ts with idempotency keys.", now=now - 30 * DAY)
    add(memproject, "pattern", "Run the tests with make test.", now=now - 30 * DAY)
    assert store.effective_confidence(store.load(str(memproject)).by_id(m.id), now) == 1.0
    put(memproject / "src/lib/refunds.ts", "rewritten\nentirely\n", NOW - timedelta(days=3))
    briefing.write_briefing(str(memproject))
    text = (memproject / "CLAUDE.md").read_text()
    assert "Refunds go through src/lib/refunds.ts with idempotency keys. (src/lib/refunds.ts changed" in text
    assert text.count(briefing.MARKS_NOTE) == 1
    saved = store.load(str(memproject)).by_id(m.id)
    assert saved.stale and saved.stale[0]["state"] == "changed"  # persisted: decay counts from the change
    conf = store.effective_confidence(saved, now)
    assert 0.7 < conf < 0.85  # 3 of STALE_DECAY_DAYS (14) gone
    assert store.effective_confidence(saved, now + 11 * DAY) < store.BRIEFING_FLOOR  # leaves the briefing
    assert store.effective_confidence(saved, now + 12 * DAY) == 0.0
    env = {**os.environ, "RECALL_NO_SERVICE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "recall.entry", "memories", "--stale", "--json"],
        capture_output=True,
        text=True,
        cwd=str(memproject),
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["memories"]
    assert [x["id"] for x in listed] == [m.id] and listed[0]["stale"][0]["path"] == "src/lib/refunds.ts"
    out = subprocess.run(
        [sys.executable, "-m", "recall.entry", "memories"],
        capture_output=True,
        text=True,
        cwd=str(memproject),
        env=env,
        timeout=120,
    )
    assert "! (src/lib/refunds.ts changed" in out.stdout
    # said again by a later session: true of the files as they are now
    m2 = add(memproject, "decision", "Refunds go through src/lib/refunds.ts with idempotency keys.")
    assert m2.id == m.id and m2.stale == [] and store.load(str(memproject)).by_id(m.id).stale == []


def test_consolidation_rechecks_stale_memories_against_newer_sessions(
    memproject, claude_projects, monkeypatch, standin
):
    from recall.memory import consolidate, store
    from tests.support.memory import prompt_of, use_standin
    from tests.support.standin import text

    use_standin(monkeypatch, standin)
    now = time.time()
    keep = add(memproject, "decision", "Refunds go through src/lib/refunds.ts with idempotency keys.", now - 20 * DAY)
    upd = add(memproject, "gotcha", "src/lib/refunds.ts retries twice on a 409 from stripe.", now - 20 * DAY)
    drop = add(memproject, "gotcha", "Never call src/old.ts from the webhook handler.", now - 20 * DAY)
    alone = add(memproject, "pattern", "Helpers live in src/helpers.ts.", now - 20 * DAY)  # not there: no files
    later = Session(cwd=str(memproject), start=NOW - timedelta(days=2))
    later.user("make refund retries configurable")
    later.tool_use("Write", {"file_path": f"{memproject}/src/lib/refunds.ts", "content": "retries = cfg.retries\n"})
    later.tool_use("Bash", {"command": "git rm src/old.ts"})
    later.assistant("Refund retries now come from cfg.retries (default 3) in src/lib/refunds.ts; src/old.ts is gone.")
    later.write(claude_projects)
    index([claude_projects])
    put(memproject / "src/lib/refunds.ts", "retries = cfg.retries\n", NOW - timedelta(days=2))
    (memproject / "src/old.ts").unlink()
    answer = {
        "verdicts": [
            {"id": keep.id, "verdict": "keep", "content": None},
            {"id": upd.id, "verdict": "update", "content": "src/lib/refunds.ts retries cfg.retries times (default 3)."},
            {"id": drop.id, "verdict": "drop", "content": None},
        ]
    }
    standin.script(text(json.dumps(answer)))
    res = consolidate.consolidate(str(memproject), force=True)
    reqs = standin.messages_requests()
    assert len(reqs) == 1, [prompt_of(r)[:80] for r in reqs]
    prompt = prompt_of(reqs[0])
    assert keep.id in prompt and upd.id in prompt and drop.id in prompt and alone.id not in prompt
    assert "NEWER SESSION" in prompt and "cfg.retries (default 3)" in prompt
    assert res.rechecked == 3 and res.recheck_kept == 1 and res.recheck_updated == 1 and res.recheck_dropped == 1
    st = store.load(str(memproject))
    k = st.by_id(keep.id)
    assert k.active and k.stale == [] and k.files[0]["fp"].endswith(":22")  # a new snapshot
    old = st.by_id(upd.id)
    assert old.status == "superseded" and st.by_id(old.superseded_by).content.startswith("src/lib/refunds.ts retries")
    assert st.by_id(drop.id).status == "archived"
    # nothing newer touched a stale memory's files: no call
    standin.script(text(json.dumps({"verdicts": []})))
    put(memproject / "src/lib/refunds.ts", "totally\ndifferent\nnow\n", NOW)
    res = consolidate.consolidate(str(memproject), force=True)
    assert res.rechecked == 0 and len(standin.messages_requests()) == 1


# ------------------------------------------------------------------------------ the benchmark
def test_the_benchmarks_fixtures_mark_where_they_should(tmp_path, monkeypatch):
    """benchmarks.stale's fixture history alone (no dev data): every hit of a decision whose
    file changed carries exactly that mark, no other hit carries any, and the section renders."""
    from benchmarks import stale as bench

    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    project = tmp_path / "pool"
    (project / ".git").mkdir(parents=True)
    for rel, text in bench.PROJECT_FILES.items():
        bench._put(project / rel, text, bench.UNTOUCHED)
    root = tmp_path / "claude" / "projects"
    topics, expected = bench.fixtures(project, root)
    index([root])
    built = {"project": project, "topics": topics, "expected": expected, "questions": []}
    res = bench.marks(built)
    for path in ("hook", "raw"):
        t = res[path]["by_prompts"]["fixture"]
        assert t["prompts"] == len(bench.TOPICS) and t["expect"] > 0
        assert t["exact"] == t["expect"] and t["spurious"] == 0, res[path]
    assert {t["kind"] for t in topics} == set(bench.KINDS)
    row = bench.in_process(
        built, bench.prompts_for_latency(dict(built, questions=[("q", "what about ducks?")]), 4), rounds=1
    )
    assert row["runs"] == 4 and row["marked_hits"] > 0
    doc = bench.sections(
        {
            **{"pool_sessions": 0, "fixture_topics": len(topics), "dev_questions": 0, "when": "now", "cpus": 2},
            "marks": {**res, "raw": res["raw"]},
            "latency": [row],
        }
    )
    assert doc[0].startswith("## Stale marks (issue 29)\n") and "| prompt hook: fixture topics |" in "\n".join(doc)


def test_a_symlink_out_of_the_project_marks_nothing(history, monkeypatch, tmp_path):
    """Issue 35: a project file that is a link to a file outside showed the outside file's time."""
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, c = history["project"], history["c"]
    outside = tmp_path / "elsewhere" / "notes.md"
    put(outside, "someone else's notes, edited yesterday\n", NOW - timedelta(days=1))
    (p / "README.md").unlink()
    (p / "README.md").symlink_to(outside)
    assert marks_by_session("stripe webhook types", p)[c.session_id] == {}


def test_an_edit_within_the_slack_with_another_size_is_a_change(history, monkeypatch):
    """Issue 35: a file the session wrote, edited seconds after it (within the 5 s allowed for
    clock skew) to another size, read as unchanged."""
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    p, c = history["project"], history["c"]
    put(p / "src/types.ts", "export type Hook = { id: string; at: number }\n", c.clock + timedelta(seconds=2))
    assert set(marks_by_session("stripe webhook types", p)[c.session_id]) == {"src/types.ts"}
