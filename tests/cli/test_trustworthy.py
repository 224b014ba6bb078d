"""`recall doctor` and `recall status` can be trusted (issue 27 item 7): doctor writes nothing
into the injection log, says when the Claude Code backend is not logged in, and status names
the backend each call really used (and what failed)."""

from __future__ import annotations

import json
import os

import pytest

from recall.core import paths
from recall.llm import backend, claude_code, errors, usage
from recall.memory import worker
from tests.support.cli import cli


def test_doctor_writes_nothing_into_the_injection_log(project, capsys, claude_projects):
    assert cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")[0] == 0
    log = paths.recall_home() / "injections.jsonl"
    before = log.read_bytes() if log.exists() else b""
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert "ok    UserPromptSubmit hook run" in out
    after = log.read_bytes() if log.exists() else b""
    assert after == before
    code, out, _ = cli(capsys, "log")
    assert "trivial" not in out


def test_doctor_says_when_claude_code_is_not_logged_in(project, capsys, claude_logged_out):
    assert backend.choose().name == "claude-code"
    assert claude_code.login_status() == (False, "`claude auth status`: loggedIn false")
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert "FAIL  model backend: model.backend = auto" in out
    assert (
        f"but Claude Code at {claude_logged_out} is not logged in (`claude auth status`: loggedIn false): "
        "its model calls fail (none succeeded today)" in out
    )
    assert "fix: run `claude` and log in (/login), or give recall an API key" in out


def test_doctor_does_not_say_every_call_fails_when_the_hooks_calls_succeed(project, capsys, claude_logged_out):
    """The hooks run Claude Code in its own environment, which may hold a login this shell lacks:
    doctor says what it saw in each place, not "every model call fails" (issue 36, item 12)."""
    from recall.llm import usage

    for purpose in ("recall", "recall", "extraction"):
        usage.record_usage("claude-haiku-4-5", 100, 10, purpose, backend="claude-code")
    usage.record_usage("claude-haiku-4-5", 0, 0, "recall", backend="claude-code", error="Not logged in")
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert "every model call fails" not in out
    assert "warn  model backend:" in out
    assert (
        "says it is not logged in in this shell (`claude auth status`: loggedIn false), but 3 of today's "
        "model calls through it succeeded (from the hooks and the service)" in out
    )


def test_status_names_the_backend_memory_extraction_uses_in_the_service(
    project, capsys, claude_logged_out, no_service_manager, monkeypatch
):
    """Memory extraction runs in the service with the last hook's credentials: status names that
    backend, not the one this shell would pick (issue 36, item 12)."""
    import json

    from recall.control.lifecycle import start_service, stop_service
    from recall.core import service_client as client

    start_service()
    try:
        with monkeypatch.context() as m:  # a hook's call, with the API key Claude Code's environment holds
            m.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-hook-key-not-real")
            client.call("ping", {}, timeout=5.0, credentials=True)
        code, out, _ = cli(capsys, "status", "--json")
        features = json.loads(out)["backends"]["features"]
        # the hooks' synthesis runs with the hook's credentials too, not this shell's logged-out claude (issue 44)
        assert features["synthesis"]["backend"] == "api", features["synthesis"]
        assert features["synthesis"]["why"].startswith("in the service, with the last hook's credentials")
        assert features["ask"]["backend"] == "claude-code"  # `recall ask` from this shell: the logged-out claude
        assert features["memory"]["backend"] == "api", features["memory"]
        assert features["memory"]["why"].startswith("in the service, with the last hook's credentials")
        code, out, _ = cli(capsys, "status")
        assert "memory extraction and consolidation: api (in the service" in out
    finally:
        stop_service()


def test_doctor_accepts_a_logged_in_claude_code(project, capsys, tmp_path, monkeypatch):
    from tests.support.claude import fake_logged_out_claude

    fake = fake_logged_out_claude(tmp_path / "bin")
    text = (
        fake.read_text()
        .replace('"loggedIn": false', '"loggedIn": true')
        .replace('"authMethod": "none"', '"authMethod": "claude.ai"')
        .replace("exit 1;;\nesac", "exit 0;;\nesac", 1)
    )
    fake.write_text(text)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert (
        "ok    model backend:" in out
        and "Claude Code is logged in (`claude auth status`: logged in with claude.ai)" in out
    )


def test_status_names_the_backend_each_call_used_and_what_failed(capsys, claude_logged_out):
    with pytest.raises(errors.ModelError):
        claude_code.complete("system", "prompt", purpose="extraction")
    usage.record_usage("claude-haiku-4-5", 100, 20, "synthesis", backend="api")
    usage.record_usage("claude-haiku-4-5", 100, 20, "extraction", backend="api")
    code, out, _ = cli(capsys, "status")
    assert code == 0
    assert "Model:   3 calls today" in out
    assert "         today on api: 2 (" in out and "synthesis 1" in out and "extraction 1" in out
    assert "         today on claude-code: 1 (extraction 1); 1 failed: Not logged in · Please run /login" in out
    code, out, _ = cli(capsys, "status", "--json")
    by = json.loads(out)["model_usage"]["today_by_backend"]
    assert by["claude-code"]["failed"] == 1 and by["api"]["calls"] == 2


def test_status_shows_memory_work_kept_for_another_try(capsys, tmp_path):
    from recall.memory import queue as q

    q.enqueue(
        "session-end",
        "s-9",
        "",
        str(tmp_path),
        retry={"attempts": 2, "retry_at": 4e9, "error": "model error: overloaded"},
    )
    code, out, _ = cli(capsys, "status")
    assert "1 session kept for another try after an error" in out and "model error: overloaded" in out
    assert worker.retrying()[0]["attempts"] == 2
