"""The privacy commands from the outside: `recall forget` (confirmation rules, the proof that
nothing forgotten is found by search, the hook or MCP after a rebuild, with and without the
service), `recall exclude`, `recall pause` / `resume` and the status line."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

from recall.core import config
from recall.memory import briefing, store
from tests.service.test_service import run_cli, serve  # noqa: F401 - serve is a fixture
from tests.support.factory import Session
from tests.support.memory import make_project
from tests.support.wait import wait_for

RECALL = [sys.executable, "-m", "recall.entry"]


def hook(prompt: str, cwd, session_id: str) -> str:
    out = subprocess.run(
        [*RECALL, "hook", "user-prompt-submit"],
        capture_output=True,
        text=True,
        timeout=60,
        input=json.dumps({"prompt": prompt, "cwd": str(cwd), "session_id": session_id}),
        env={**os.environ, "RECALL_NO_SERVICE": "1"},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def raw(query: str) -> str:
    """The hits of ``recall --json`` (the hits only: a "no matches" line names the query)."""
    out = run_cli("--json", "--limit", "20", query)
    assert out.returncode == 0, out.stderr
    return json.dumps(json.loads(out.stdout)["hits"])


def mcp_texts(query: str, cwd) -> str:
    from recall.mcp.tools import memory_search, recall_search

    return json.dumps(
        [recall_search(query, cwd=str(cwd), limit=20)["matches"], memory_search(query, cwd=str(cwd))["matches"]]
    )


def shop(tmp_path, claude_projects):
    config.set_value("hook.synthesize", False)
    config.set_value("hook.min_confidence", 0.0)
    project = make_project(tmp_path, "shop")
    old = Session(cwd=str(project))
    old.user("where is the walrus billing host configured")
    old.assistant("the walrus billing host lives in deploy/billing.yaml")
    old.user("how does the giraffe deploy script run")
    old.assistant("the giraffe deploy script runs from ci")
    old.write(claude_projects)
    with store.transaction(project) as state:
        store.add_memory(
            state, "gotcha", "The walrus billing host lives in deploy/billing.yaml.", session_id=old.session_id
        )
    briefing.write_briefing(project)
    return project, old


def check_gone(project, current: str) -> None:
    assert "walrus" not in raw("walrus billing host")
    assert "walrus" not in hook("where is the walrus billing host configured again?", project, current)
    assert "walrus" not in mcp_texts("walrus billing host", project)
    assert "walrus" not in (project / "CLAUDE.md").read_text()
    assert "giraffe deploy" in raw("giraffe deploy")  # the rest of the session stays


def test_forget_match_then_rebuild_nothing_is_found_by_search_the_hook_or_mcp(tmp_path, claude_projects):
    project, _ = shop(tmp_path, claude_projects)
    assert run_cli("index").returncode == 0
    current = "current-session"
    assert "walrus" in raw("walrus billing host")
    assert "walrus" in hook("where is the walrus billing host configured again?", project, current)
    assert "walrus" in mcp_texts("walrus billing host", project)

    out = run_cli("forget", "--match", "walrus")  # no terminal, no --yes: nothing goes
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "Nothing removed" in out.stderr and "messages: 2" in out.stderr and "memories: 1" in out.stderr
    assert "walrus" in raw("walrus billing host")

    out = run_cli("forget", "--match", "walrus", "--yes")
    assert out.returncode == 0, out.stderr
    assert "2 messages removed from the index" in out.stdout and "1 memory deleted" in out.stdout
    check_gone(project, current)
    assert run_cli("index", "--rebuild").returncode == 0
    check_gone(project, current)

    out = run_cli("forget", "--match", "walrus", "--yes")
    assert out.returncode == 0 and "Nothing to forget" in out.stdout


def test_forget_secret_and_session_prefix_through_the_service(serve, tmp_path, claude_projects):
    project, old = shop(tmp_path, claude_projects)
    other = Session(cwd=str(project))
    other.user("the staging key is plum-ORCHID-4411 for the pelican admin")
    other.write(claude_projects)
    svc = serve().ready()
    wait_for(lambda: "pelican" in raw("pelican admin"))
    out = run_cli("forget", "--secret", "plum-ORCHID-4411", "--yes", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rewritten"] == 1
    hits = raw("pelican admin")
    assert "plum-ORCHID-4411" not in hits and "[redacted:forgotten]" in hits

    bad = run_cli("forget", "--session", "zz-no-such", "--yes")
    assert bad.returncode == 2 and "No session starts with 'zz-no-such'" in bad.stderr
    out = run_cli("forget", "--session", old.session_id[:10], "--yes")
    assert out.returncode == 0, out.stderr
    assert "walrus" not in raw("walrus billing host") and "giraffe" not in raw("giraffe deploy")
    assert store.load(project).memories == []
    assert svc.terminate() == 0
    assert run_cli("index", "--rebuild").returncode == 0
    assert "plum-ORCHID-4411" not in raw("pelican admin") and "walrus" not in raw("walrus billing host")


def run_in_terminal(args: list[str], answer: bytes) -> tuple[int, str]:
    """Run recall with a pseudo-terminal as stdin and stdout; answer its question."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvpe(RECALL[0], [*RECALL, *args], os.environ)
    out = b""
    answered = False
    deadline = time.time() + 120
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not answered and b"for good?" in out:
            os.write(fd, answer)
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def test_with_a_terminal_forget_shows_what_goes_and_asks(tmp_path, claude_projects):
    project, _ = shop(tmp_path, claude_projects)
    assert run_cli("index").returncode == 0
    rc, out = run_in_terminal(["forget", "--match", "walrus"], b"n\n")
    assert rc == 0 and "sessions: 1" in out and "messages: 2" in out and "memories: 1" in out
    assert "summaries:" in out and "Nothing was removed." in out
    assert "walrus" in raw("walrus billing host")
    rc, out = run_in_terminal(["forget", "--match", "walrus"], b"y\n")
    assert rc == 0 and "Forgot messages containing 'walrus'" in out
    assert "walrus" not in raw("walrus billing host")


def test_exclude_add_list_remove_and_purge(tmp_path, claude_projects):
    project, _ = shop(tmp_path, claude_projects)
    assert run_cli("index").returncode == 0
    out = run_cli("exclude", "add", str(project / "src" if (project / "src").is_dir() else project))
    assert out.returncode == 0, out.stderr
    assert f"Excluded {project}." in out.stdout and "Already indexed: 4 messages in 1 session" in out.stdout
    assert "walrus" not in raw("walrus billing host")
    assert "walrus" not in hook("where is the walrus billing host configured?", tmp_path, "s-x")
    listed = json.loads(run_cli("exclude", "list", "--json").stdout)
    assert listed == [
        {"pattern": str(project), "indexed": {str(project): {"sessions": 1, "messages": 4}}, "indexed_by_cwd": {}}
    ]

    out = run_cli("exclude", "add", str(project), "--purge")  # no terminal: nothing removed
    assert out.returncode == 2 and "--yes" in out.stderr
    out = run_cli("exclude", "add", str(project), "--purge", "--yes")
    assert out.returncode == 0 and "Removed 4 messages in 1 session" in out.stdout
    assert json.loads(run_cli("exclude", "list", "--json").stdout)[0]["indexed"] == {}

    bad = run_cli("exclude", "add", str(tmp_path / "nothing-*"))
    assert bad.returncode == 2 and "matches no directory and nothing recall has indexed" in bad.stderr
    bad = run_cli("exclude", "remove", "/no/such/project")
    assert bad.returncode == 2 and "is not excluded" in bad.stderr
    assert run_cli("exclude", "remove", str(project)).returncode == 0
    assert json.loads(run_cli("exclude", "list", "--json").stdout) == []


def test_pause_resume_and_the_status_line():
    out = run_cli("pause", "--for", "2h")
    assert out.returncode == 0 and "paused until" in out.stdout
    cap = json.loads(run_cli("status", "--json").stdout)["capture"]
    assert cap["paused"] and cap["until"] - cap["since"] > 7000
    assert "Capture: paused since" in run_cli("status").stdout
    assert hook("a long enough question about the walrus", "/home/dev/app", "s1") == ""
    assert run_cli("resume").stdout.startswith("Capture and injection are on again")
    assert "Capture: on" in run_cli("status").stdout
    bad = run_cli("pause", "--for", "soon")
    assert bad.returncode == 2 and "is not a duration" in bad.stderr


def test_recall_off_through_the_running_service(serve, tmp_path, claude_projects):
    project, old = shop(tmp_path, claude_projects)
    svc = serve().ready()
    wait_for(lambda: "walrus" in raw("walrus billing host"))
    start = len(old.lines)
    old.user("recall: off")
    old.user("one more walrus line after the marker")
    old.append(claude_projects, start)
    wait_for(
        lambda: "walrus" not in raw("walrus billing host") and "giraffe" not in raw("giraffe deploy"),
        what="the switched-off session leaving the index",
    )
    wait_for(lambda: store.load(project).memories == [], what="its memories leaving state.json")
    wait_for(lambda: "walrus" not in (project / "CLAUDE.md").read_text(), what="the CLAUDE.md block following")
    assert svc.terminate() == 0
    assert run_cli("index", "--rebuild").returncode == 0
    assert "walrus" not in raw("walrus billing host")
