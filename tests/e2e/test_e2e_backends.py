"""End to end, issue 16, with the real Claude Code binary and the loopback stand-in:

* the README's main command (`recall setup`, which starts the service from a shell with no
  key) and the key only in Claude Code's environment: a question about an earlier decision
  reaches the model with a Haiku synthesis (made by the service with the hook's key);
* no Anthropic key visible to recall at all, Claude Code authenticated by an ``apiKeyHelper``:
  a finished session still produces typed memories (state.json and the CLAUDE.md block) and
  `recall ask` answers, both through Claude Code's own login; the headless child fires none
  of the hooks (counted), starts none of the user's MCP servers, and its transcript never
  reaches the index."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config, paths
from recall.llm import usage
from recall.memory import queue
from recall.prompt import injections
from recall.search.searcher import Searcher
from tests.support.claude import TEST_API_KEY, require_claude
from tests.support.memory import EXTRACTION_MARK, active, extraction, is_extraction, system_of
from tests.support.standin import is_claude_code_request, is_messages_request, request_text, text, tool_use
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

DECISION = (
    "We decided on pgbouncer in transaction pooling mode, because the ORM opens one "
    "connection per request and Postgres ran out of slots."
)
QUESTION = "which connection pooler did we settle on for postgres, and why?"
SYNTH_MARK = "quillfeather"
ANSWER_MARK = "You answer a developer's question"
ANSWER = "Notes live in notes.txt at the project root, one line per note (heronwick)."


def hook_command(name: str) -> str:
    return f"{shlex.quote(sys.executable)} -m recall.entry hook {name}"


def test_service_started_without_a_key_synthesizes_with_the_key_of_claude_code(
    claude_env, standin, monkeypatch, capsys
):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.delenv("RECALL_NO_SERVICE", raising=False)
    assert "ANTHROPIC_API_KEY" not in os.environ  # this shell, which starts the service, has no key
    config.set_value("memory.enabled", False)
    config.set_value("hook.budget_seconds", 30)
    standin.script(text(DECISION))
    proc = claude_env.run("which connection pooler should we use for postgres?")
    assert proc.returncode == 0, proc.stderr
    session1 = claude_env.transcripts(include_subagents=False)[0].stem
    try:
        code = run(["setup", "--project", str(claude_env.project)])  # the README's main command
        out = capsys.readouterr()
        assert code == 0, out.err
        from recall.core import service_client as client

        assert client.ping(timeout=5.0), out.out
        assert wait_for(lambda: Searcher().search("connection pooler postgres", messages=True, limit=5), timeout=60)

        def synthesis(req):
            if is_claude_code_request(req):
                return None
            return text(
                f"- {SYNTH_MARK}: pgbouncer in transaction pooling mode [2026-11-20 session abcdef12]"
                if "pgbouncer" in request_text(req)
                else "NONE"
            )

        standin.handler = synthesis
        mark = len(standin.snapshot())
        proc = claude_env.run(QUESTION)
        assert proc.returncode == 0, proc.stderr
        ours = [r for r in standin.snapshot()[mark:] if is_messages_request(r) and not is_claude_code_request(r)]
        assert (
            len(ours) == 1 and DECISION in request_text(ours[0]) and f"session {session1[:8]}]" in request_text(ours[0])
        )
        headers = ours[0]["_headers"]
        assert TEST_API_KEY in (headers.get("x-api-key", ""), headers.get("authorization", "").removeprefix("Bearer "))
        main = [r for r in standin.snapshot()[mark:] if is_messages_request(r) and is_claude_code_request(r)][0]
        sent = request_text(main)
        block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
        assert SYNTH_MARK in block
        (rec,) = [r for r in injections.read() if r["outcome"] != "trivial"][-1:]
        assert rec["outcome"] == "synthesized" and rec["via"] == "service" and rec["backend"] == "api"
        code = run(["doctor", "--project", str(claude_env.project)])
        out = capsys.readouterr().out
        assert "model backend" in out
        for path in paths.recall_home().rglob("*"):
            if path.is_file() and not path.is_socket():
                assert TEST_API_KEY.encode() not in path.read_bytes(), path
    finally:
        run(["service", "stop"])
        capsys.readouterr()


def test_claude_code_login_gives_memories_and_answers_with_no_api_key(claude_env, standin, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    config.save({"memory": {"idle_seconds": 0, "timeout_seconds": 60}})
    project = claude_env.project
    (project / ".git" / "info").mkdir(parents=True)
    claude_md = project / "CLAUDE.md"
    claude_md.write_text("# Rules\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to(require_claude())
    # Claude Code authenticates through its own settings; no ANTHROPIC_API_KEY anywhere
    claude_env.write_settings({"apiKeyHelper": f"echo {TEST_API_KEY}"}, scope="user")
    fired = tmp_path / "fired.jsonl"
    for scope in ("user", "project"):
        for event in ("UserPromptSubmit", "Stop", "SessionStart", "SessionEnd"):
            claude_env.add_hook(
                event, f"sh -c 'cat >> {shlex.quote(str(fired))}; echo >> {shlex.quote(str(fired))}'", scope=scope
            )
    claude_env.add_hook("Stop", hook_command("stop"), timeout=30)
    claude_env.add_hook("UserPromptSubmit", hook_command("user-prompt-submit"), timeout=30)
    # a user MCP server that records the command line of whoever starts it
    started = tmp_path / "mcp-started.txt"
    data = json.loads(claude_env.claude_json.read_text())
    data["mcpServers"] = {
        "recorder": {
            "type": "stdio",
            "command": "sh",
            "args": [
                "-c",
                f"tr '\\0' ' ' < /proc/$PPID/cmdline >> {shlex.quote(str(started))}; echo >> {shlex.quote(str(started))}",
            ],
        }
    }
    claude_env.claude_json.write_text(json.dumps(data))
    env = claude_env.environ({"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    env.pop("ANTHROPIC_API_KEY")
    memories = [
        {
            "type": "decision",
            "content": "Notes live in notes.txt at the project root, one line per note",
            "tags": ["notes"],
        },
        {"type": "gotcha", "content": "The Write tool needs an absolute file_path", "tags": ["tools"]},
    ]

    def model(req):
        if is_extraction(req):
            return text(extraction(*memories))
        if ANSWER_MARK in system_of(req):
            return text(ANSWER)
        return None

    standin.handler = model
    standin.script(
        tool_use("Write", {"file_path": str(project / "notes.txt"), "content": "first note\n"}),
        text("Done: wrote notes.txt with your first note."),
    )
    argv, _ = claude_env.command("Create notes.txt with my first note")
    proc = subprocess.run(
        argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: len(active(project)) == 2 and not queue.pending() and queue.lock_free(), timeout=120)

    # the extraction ran through Claude Code (its own login), not the SDK
    extractions = [r for r in standin.messages_requests() if is_extraction(r)]
    assert len(extractions) == 1 and is_claude_code_request(extractions[0])
    assert extractions[0]["tools"] == []
    assert "<!-- MEMORY:START -->" in claude_md.read_text() and "notes.txt" in claude_md.read_text()
    spent = usage.usage_summary()
    assert spent["by_backend"].get("claude-code", 0) >= 1 and spent["by_purpose"].get("extraction") == 1

    # the headless child fired no hook and wrote no transcript
    (main,) = claude_env.transcripts(include_subagents=True)
    seen = [json.loads(line) for line in fired.read_text().splitlines() if line.strip()]
    assert seen and {p.get("session_id") for p in seen} == {main.stem}
    assert any(p.get("hook_event_name") == "Stop" for p in seen)
    # nor started the user's MCP servers (the main session did: the recorder works)
    starters = started.read_text().splitlines() if started.exists() else []
    assert any("Create notes.txt" in line for line in starters), starters
    assert not [line for line in starters if "--safe-mode" in line], starters  # the main session's, and only its

    # `recall ask` answers through the same login
    index_all()
    proc = subprocess.run(
        [sys.executable, "-m", "recall.entry", "ask", "--project", str(project), "where do the notes live?"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert ANSWER in proc.stdout
    assert len(claude_env.transcripts(include_subagents=True)) == 1
    hits = Searcher().search("maintain the long-term memory of a software project", messages=True, limit=20)
    assert not [h for h in hits if EXTRACTION_MARK in (h.text or "")]
    assert len(seen) == len([line for line in fired.read_text().splitlines() if line.strip()])
