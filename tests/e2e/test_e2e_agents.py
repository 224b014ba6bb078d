"""End to end with the real Codex CLI, Gemini CLI and Claude Code clients, each against its
loopback stand-in: a decision stated in a Codex session (in a worktree of the repository) and one
stated in a Gemini session are injected into a Claude Code prompt in the same repository, found by
`recall --raw --agent codex`, and forgotten everywhere by `recall forget`; `recall setup --codex`
and `--gemini` register recall's MCP server where the real clients see it."""

from __future__ import annotations

import json
import subprocess

import pytest

from recall.cli.app import run
from recall.core import config
from tests.support.agents import AgentAPI, CodexEnv, GeminiEnv, call, require_codex, require_gemini, say
from tests.support.standin import is_claude_code_request, is_messages_request, request_text, text
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

CODEX_DECISION = (
    "Decision: the job queue uses Postgres advisory locks instead of Redis, because a lost "
    "Redis lock let two workers charge the same invoice twice."
)
GEMINI_DECISION = (
    "Decision: the image thumbnails are cached in Cloudflare R2 with a seven day lifetime, "
    "because regenerating them on every deploy doubled our cold start time."
)


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def synthesis(req):
    """Haiku stand-in: a briefing of what recall sent it (a decision comes back only if recall sent it)."""
    if is_claude_code_request(req):
        return None
    sent = request_text(req)
    lines = [f"- {d} [from a past session]" for d in (CODEX_DECISION, GEMINI_DECISION) if d in sent]
    return text("\n".join(lines) if lines else "NONE")


def claude_main(standin, since):
    return [r for r in standin.snapshot()[since:] if is_messages_request(r) and is_claude_code_request(r)][0]


def recall_out(capsys, *args):
    code = run(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.fixture
def agents_project(claude_env, standin, tmp_path, monkeypatch, request, capsys):
    """One repository (and a worktree of it): a real Codex session in the worktree decides the job
    queue, a real Gemini session in the repository decides the thumbnails cache; `recall setup`
    wires the repository for Claude Code and indexes all of it."""
    codex_bin, gemini_js = require_codex(), require_gemini()
    project = claude_env.project
    _git("init", "-q", "-b", "main", cwd=project)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init", cwd=project)
    worktree = tmp_path / "worktree"
    _git("worktree", "add", "-q", "-b", "queue", str(worktree), cwd=project)
    agents_home = tmp_path / "agents-home"
    monkeypatch.setenv("CODEX_HOME", str(agents_home / ".codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(agents_home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.delenv("RECALL_NO_SERVICE", raising=False)
    config.set_value("memory.enabled", False)
    config.set_value("hook.budget_seconds", 30)
    with AgentAPI() as api:
        api.script(call("exec_command", {"cmd": "git status"}), say(CODEX_DECISION))
        codex = CodexEnv(agents_home, worktree.resolve(), api.url, codex_bin)
        proc = codex.run("Redis locks or Postgres advisory locks for the job queue? Decide.")
        assert proc.returncode == 0, proc.stderr
        assert CODEX_DECISION in proc.stdout and codex.sessions()
        api.script(say(GEMINI_DECISION))
        gemini = GeminiEnv(agents_home, project, api.url, gemini_js)
        proc = gemini.run("Where should image thumbnails be cached, and for how long? Decide.")
        assert proc.returncode == 0, proc.stderr
        assert gemini.sessions()
    code = run(["setup", "--project", str(project)])
    out = capsys.readouterr()
    assert code == 0, out.err
    request.addfinalizer(lambda: run(["service", "stop"]))
    from recall.control.index import index_via_service

    assert index_via_service([], False) is not None
    standin.handler = synthesis
    return project, worktree


def test_a_codex_and_a_gemini_decision_reach_a_claude_code_prompt(claude_env, standin, agents_project, capsys):
    project, worktree = agents_project
    # found by agent, in the repository's one project (the worktree's session included)
    out = recall_out(capsys, "--raw", "--agent", "codex", "job queue advisory locks")
    assert "same invoice twice" in out and "(Codex CLI)" in out
    hits = json.loads(recall_out(capsys, "--json", "--project", str(project), "thumbnails cached R2"))["hits"]
    assert hits[0]["agent"] == "gemini" and hits[0]["project"] == str(project)
    hits = json.loads(recall_out(capsys, "--json", "--project", str(worktree), "job queue advisory locks"))["hits"]
    assert hits[0]["agent"] == "codex" and hits[0]["project"] == str(project)

    # a Claude Code prompt in the repository gets both decisions
    mark = len(standin.snapshot())
    proc = claude_env.run("for the job queue, which locks did we pick and why?")
    assert proc.returncode == 0, proc.stderr
    sent = request_text(claude_main(standin, mark))
    assert "<recalled-context>" in sent
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert "Postgres advisory locks" in block
    mark = len(standin.snapshot())
    proc = claude_env.run("where do the image thumbnails get cached, and for how long?")
    assert proc.returncode == 0, proc.stderr
    sent = request_text(claude_main(standin, mark))
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert "Cloudflare R2" in block

    # forgotten everywhere: search, the hook, and a re-read of the Codex transcript still on disk
    code = run(["forget", "--match", "Postgres advisory locks", "--yes"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    out = recall_out(capsys, "--raw", "--agent", "codex", "Postgres advisory locks")
    assert "same invoice twice" not in out
    from recall.control.index import index_via_service

    index_via_service([], False)
    assert wait_for(
        lambda: "same invoice twice" not in recall_out(capsys, "--raw", "Postgres advisory locks"), timeout=10
    )
    mark = len(standin.snapshot())
    proc = claude_env.run("for the job queue, which locks did we pick and why?")
    assert proc.returncode == 0, proc.stderr
    assert "advisory locks instead" not in request_text(claude_main(standin, mark))


def test_setup_registers_recall_where_the_real_clients_see_it(tmp_path, monkeypatch, capsys):
    codex_bin, gemini_js = require_codex(), require_gemini()
    home = tmp_path / "agents-home"
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    project = tmp_path / "proj"
    project.mkdir()
    assert run(["setup", "--codex", "--gemini"]) == 0, capsys.readouterr().err
    with AgentAPI() as api:
        codex = CodexEnv(home, project, api.url, codex_bin)
        proc = codex.command("mcp", "list", "--json")
        assert proc.returncode == 0, proc.stderr
        servers = {s["name"]: s for s in json.loads(proc.stdout)}
        assert servers["recall"]["enabled"] and servers["recall"]["transport"]["args"][-1] == "mcp"
        gemini = GeminiEnv(home, project, api.url, gemini_js)
        proc = gemini.command("mcp", "list")
        said = proc.stdout + proc.stderr  # (0.61.0 prints the list on stderr)
        assert "✓ recall:" in said and "recall mcp (stdio) - Connected" in said, said
        assert run(["setup", "--uninstall", "--codex", "--gemini"]) == 0
        proc = codex.command("mcp", "list", "--json")
        assert "recall" not in {s["name"] for s in json.loads(proc.stdout or "[]")}
