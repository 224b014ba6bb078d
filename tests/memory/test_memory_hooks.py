"""The real capture hooks and worker: ``recall hook stop|pre-compact|session-end|session-start``
as Claude Code runs them, the detached worker, the lock, the service path, the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from recall.core import config
from recall.core import service_client as client
from recall.memory import queue, store, worker
from recall.search.searcher import Searcher
from tests.support.memory import Transcript, active, env_without_service, extraction, is_extraction, use_standin
from tests.support.standin import text
from tests.support.wait import wait_for

GOTCHA = {
    "type": "gotcha",
    "content": "Stripe webhook verification needs the raw body: use express.raw() on the webhook route",
    "tags": ["stripe", "webhooks"],
}


@pytest.fixture
def session(claude_projects, project):
    t = Transcript(claude_projects, project)
    t.user("Fix the stripe webhook, signatures fail")
    t.assistant("The body is parsed by express.json() before verification; switching to express.raw().")
    t.tool("Edit", file_path=str(project / "src/server.ts"), old_string="a", new_string="b")
    return t


def hook(name: str, payload, env=None, wait: bool = True):
    cmd = [sys.executable, "-m", "recall.entry", "hook", name]
    data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or env_without_service(),
        text=True,
    )
    if not wait:
        proc.stdin.write(data)
        proc.stdin.close()
        return proc
    out, err = proc.communicate(data, timeout=60)
    return proc.returncode, out, err


def settled():
    return not queue.pending() and queue.lock_free()


def test_stop_hook_hands_off_to_a_detached_worker(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    (project / "CLAUDE.md").write_text("# Ours\n\nkeep me\n")
    standin.script(text(extraction(GOTCHA)))
    rc, out, err = hook("stop", session.payload(hook_event_name="Stop", stop_hook_active=False))
    assert rc == 0 and out == "" and err == ""
    assert wait_for(lambda: active(project) and settled())
    mems = active(project)
    assert [m["type"] for m in mems] == ["gotcha"] and mems[0]["sessions"] == [session.session_id]
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# Ours\n\nkeep me\n") and "express.raw()" in claude_md
    req = standin.messages_requests()
    assert len(req) == 1 and is_extraction(req[0])
    assert "TOOL [Edit]: src/server.ts" in req[0]["messages"][0]["content"]
    # the memory is in the index: one search finds memories and transcripts
    hits = Searcher().search("stripe raw body", doctypes=("memory", "message"), messages=True, project=str(project))
    mem_hits = [h for h in hits if h.kind == "memory"]
    assert mem_hits and mem_hits[0].uuid == mems[0]["id"] and mem_hits[0].project == str(project)
    status = worker.read_status()
    assert status["last_report"]["added"] == 1 and status["last_report"]["index"] == "direct"


def test_two_hooks_racing_extract_once(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    standin.handler = lambda req: text(extraction(GOTCHA)) if is_extraction(req) else None
    procs = [hook("session-end", session.payload(reason="other"), wait=False) for _ in range(2)]
    procs.append(hook("pre-compact", session.payload(trigger="auto"), wait=False))
    for p in procs:
        assert p.wait(60) == 0
    assert wait_for(lambda: active(project) and settled())
    time.sleep(0.5)
    assert wait_for(settled)
    assert len([r for r in standin.messages_requests() if is_extraction(r)]) == 1
    assert len(store.load(str(project)).memories) == 1


def test_workers_racing_on_the_lock(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    standin.handler = lambda req: text(extraction(GOTCHA)) if is_extraction(req) else None
    for _ in range(3):
        queue.enqueue("session-end", session.session_id, str(session.path), str(project))
    env = env_without_service()
    procs = [subprocess.Popen([sys.executable, "-m", "recall.memory.worker"], env=env) for _ in range(3)]
    for p in procs:
        assert p.wait(120) == 0
    assert settled() and len(active(project)) == 1
    assert len([r for r in standin.messages_requests() if is_extraction(r)]) == 1


def test_trigger_queued_while_the_lock_is_held_is_not_stranded(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin)
    standin.script(text(extraction(GOTCHA)))
    fd = queue.try_lock()  # "another worker" holds the lock: the hook starts nobody
    try:
        rc, _, _ = hook("session-end", session.payload())
        assert rc == 0 and len(queue.pending()) == 1
    finally:
        queue.release(fd)
    reports = worker.run(wait=True)  # the holder re-checks the queue after releasing
    assert [r["added"] for r in reports] == [1] and settled()


def test_stop_waits_for_the_session_to_go_idle(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin, idle_seconds=30)
    cfg = config.load()
    group = worker.coalesce(
        [
            (
                None,
                {
                    "session_id": session.session_id,
                    "event": "stop",
                    "transcript_path": str(session.path),
                    "time": time.time(),
                },
            )
        ]
    )
    g = group[session.session_id]
    assert worker.due_at(g, cfg) >= session.path.stat().st_mtime + 30
    g["event"] = "session-end"
    assert worker.due_at(g, cfg) == 0.0
    # a queued Stop is left alone until then; a later SessionEnd for the session runs at once
    queue.enqueue("stop", session.session_id, str(session.path), str(project))
    assert worker.run(wait=False) == [] and len(queue.pending()) == 1
    standin.script(text(extraction(GOTCHA)))
    queue.enqueue("session-end", session.session_id, str(session.path), str(project))
    reports = worker.run(wait=False)
    assert len(reports) == 1 and reports[0]["event"] == "session-end" and not queue.pending()


def test_below_threshold_stop_makes_no_call(monkeypatch, standin, claude_projects, project):
    use_standin(monkeypatch, standin)
    t = Transcript(claude_projects, project).user("hi").assistant("hello")
    rc, _, _ = hook("stop", t.payload())
    assert rc == 0 and wait_for(settled)
    assert worker.run() == [] and not standin.messages_requests()
    assert not store.state_path(project).exists()


def test_no_key_queues_nothing(monkeypatch, standin, session, project):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    for name in ("stop", "pre-compact", "session-end"):
        rc, out, _ = hook(name, session.payload())
        assert rc == 0 and out == ""
    assert queue.pending() == [] and not standin.messages_requests()


def test_disabled_queues_nothing(monkeypatch, standin, session, project):
    use_standin(monkeypatch, standin, enabled=False)
    rc, _, _ = hook("session-end", session.payload())
    assert rc == 0 and queue.pending() == []


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", json.dumps({"session_id": 7})])
def test_garbage_payloads_never_fail(monkeypatch, standin, stdin):
    use_standin(monkeypatch, standin)
    for name in ("stop", "pre-compact", "session-end", "session-start"):
        rc, out, err = hook(name, stdin)
        assert rc == 0 and out == "" and "Traceback" not in err
    assert queue.pending() == []


def test_session_start_hook_injects_in_none_mode(monkeypatch, standin, project):
    use_standin(monkeypatch, standin, claude_md="none")
    with store.transaction(str(project)) as st:
        store.add_memory(st, "decision", "We chose tantivy for the index")
    rc, out, _ = hook("session-start", {"session_id": "s", "cwd": str(project), "source": "compact"})
    assert rc == 0
    ctx = json.loads(out)["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart" and "We chose tantivy" in ctx["additionalContext"]
    assert not (project / "CLAUDE.md").exists()


def test_service_takes_the_capture(monkeypatch, standin, session, project, tmp_path):
    use_standin(monkeypatch, standin)
    standin.script(text(extraction(GOTCHA)))
    env = dict(os.environ)
    env.pop("RECALL_NO_SERVICE", None)
    serve = subprocess.Popen(
        [sys.executable, "-m", "recall.entry", "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        info = wait_for(lambda: client.ping(timeout=1.0), timeout=60)
        assert info and "capture" in info["ops"]
        rc, out, _ = hook("session-end", session.payload(), env=env)
        assert rc == 0 and out == ""
        assert wait_for(lambda: active(project) and settled(), timeout=60)
        mid = active(project)[0]["id"]

        def indexed():  # the service's writer put the memory document in the index
            hits = Searcher().search("stripe raw body", doctypes=("memory",), messages=True)
            return [h for h in hits if h.uuid == mid]

        assert wait_for(indexed, timeout=30)
    finally:
        serve.terminate()
        serve.wait(60)
    assert len([r for r in standin.messages_requests() if is_extraction(r)]) == 1


def test_service_without_a_key_extracts_with_the_hooks_credentials(monkeypatch, standin, session, project):
    """Issue 16 item 1: the key is only in Claude Code's environment (the hook's); the service,
    started from another shell, has none: the capture hook's credentials go along with the
    request and the service's worker uses them (kept in memory only)."""
    use_standin(monkeypatch, standin)
    standin.script(text(extraction(GOTCHA)))
    hook_env = dict(os.environ)
    hook_env.pop("RECALL_NO_SERVICE", None)
    serve_env = {k: v for k, v in hook_env.items() if k != "ANTHROPIC_API_KEY"}  # started from another shell
    serve = subprocess.Popen(
        [sys.executable, "-m", "recall.entry", "serve"],
        env=serve_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(lambda: client.ping(timeout=1.0), timeout=60)
        assert client.call("capture", {"event": "stop", "session_id": session.session_id}) == {
            "queued": False,
            "reason": "no model backend for this caller",
        }
        rc, _, _ = hook("session-end", session.payload(), env=hook_env)
        assert rc == 0
        assert wait_for(lambda: active(project) and settled(), timeout=60)
    finally:
        serve.terminate()
        serve.wait(60)
    assert len([r for r in standin.messages_requests() if is_extraction(r)]) == 1
