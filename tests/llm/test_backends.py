"""Model backends (issue 16): ``model.backend``, the choice and its reasons, the caller's
credentials travelling with a hook's request to a service that has none, the Claude Code
backend's flag check, and the injection log behind ``recall log`` / ``recall status``."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from recall.core import caller, config, paths
from recall.llm import backend, claude_code, credentials, errors
from recall.prompt import injections
from tests.prompt.test_hook import (  # noqa: F401 (fixtures)
    DECISION,
    QUESTION,
    SYNTH,
    context_of,
    indexed,
    payload,
    run_hook_process,
    service,
    set_hook_config,
)
from tests.support.cli import cli
from tests.support.standin import text

HOOK_KEY = "sk-ant-api03-" + "HookOnlyKey9" * 7


def fake_claude(
    directory: Path,
    flags: str = "--print --safe-mode --no-session-persistence --tools "
    "--output-format --model --system-prompt --strict-mcp-config",
    version: str = "2.1.197",
    run: str = "exit 3",
) -> Path:
    """A `claude` on PATH that only answers --version and --help (for the flag check)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    help_lines = "\\n".join(f"  {f} <x>   the flag" for f in flags.split())
    path.write_text(
        f"#!/bin/sh\ncase \"$1\" in\n  --version) echo '{version} (Claude Code)';;\n"
        f"  --help) printf '{help_lines}\\n';;\n  *) {run};;\nesac\n"
    )
    path.chmod(0o755)
    return path


# ------------------------------------------------------------------------------ the setting
def test_model_backend_setting_and_the_older_model_string(capsys):
    assert config.backend_setting() == "auto" and config.model() == config.DEFAULT_MODEL
    code, out, _ = cli(capsys, "config", "set", "model.backend", "claude-code")
    assert code == 0 and config.backend_setting() == "claude-code"
    code, _, err = cli(capsys, "config", "set", "model.backend", "gpt")
    assert code == 2 and err.strip() == "recall: model.backend is one of auto, api, claude-code, off, not 'gpt'."
    assert cli(capsys, "config", "set", "model", "claude-haiku-9")[0] == 0  # the older spelling
    assert config.model() == "claude-haiku-9" and config.backend_setting() == "claude-code"
    paths.atomic_write(paths.config_path(), json.dumps({"model": "claude-haiku-7"}))  # an older file
    assert config.model() == "claude-haiku-7" and config.backend_setting() == "auto"
    config.set_value("model.backend", "off")
    assert config.model() == "claude-haiku-7" and config.backend_setting() == "off"


def test_auto_prefers_a_key_then_claude_code_then_off(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    choice = backend.choose()
    assert choice.name == "off" and "no Anthropic key and no Claude Code found" in choice.why
    fake_claude(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    choice = backend.choose()
    assert choice.name == "claude-code" and choice.source == str(tmp_path / "bin" / "claude")
    assert "Claude Code's own login" in choice.why
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-not-real")
    assert backend.choose().name == "api" and backend.choose().source == "ANTHROPIC_AUTH_TOKEN"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-not-real")
    assert backend.choose().source == "ANTHROPIC_API_KEY"
    config.set_value("model.backend", "claude-code")
    assert backend.choose().name == "claude-code"
    config.set_value("model.backend", "off")
    assert backend.choose().name == "off" and "model.backend is off" in backend.choose().why
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    config.set_value("model.backend", "api")
    choice = backend.choose()
    assert choice.name == "off" and choice.why.startswith("model.backend is api but no Anthropic key was found")
    with pytest.raises(errors.NoKey) as err:
        backend.require()
    assert str(err.value).startswith("Model calls are off: model.backend is api")


def test_an_older_claude_code_without_a_flag_is_not_used_and_says_why(tmp_path, monkeypatch):
    fake_claude(
        tmp_path / "bin",
        flags="--print --no-session-persistence --tools --output-format --model --system-prompt",
        version="1.0.3",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    choice = backend.choose()
    assert choice.name == "off"
    assert "Claude Code 1.0.3 at" in choice.why and "lacks --safe-mode: update it (`claude update`)" in choice.why
    # checked once per binary: the answer is cached by path, size and mtime
    assert "1.0.3" in (paths.recall_home() / "cache" / "claude-code.json").read_text()


def test_the_caller_environment_replaces_the_services(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-the-services-own")
    with caller.use({"ANTHROPIC_AUTH_TOKEN": "tok-of-the-hook", "PATH": str(tmp_path)}):
        creds = credentials.find_credentials()
        assert creds["auth_token"] == "tok-of-the-hook" and "api_key" not in creds
        assert caller.current()["PATH"] == str(tmp_path)
    with caller.use({"PATH": str(tmp_path)}):  # the caller has no key: the service's is not borrowed
        assert credentials.find_credentials() is None
    assert credentials.find_credentials()["api_key"] == "sk-the-services-own"
    assert caller.clean({"ANTHROPIC_API_KEY": "k", "LD_PRELOAD": "/evil.so", "PATH": 3}) == {"ANTHROPIC_API_KEY": "k"}


# ------------------------------------------------------------------------------ credentials through the service
def test_a_service_without_a_key_synthesizes_with_the_hooks_key(service, project, standin):
    """Issue 16 item 1: the key exists only in Claude Code's environment (the hook's); the
    service (this test process) has none. The hook's key travels with its request over the
    verified socket and the synthesis is made with it; it is never written anywhere."""
    assert "ANTHROPIC_API_KEY" not in os.environ
    set_hook_config(budget_seconds=60)
    standin.handler = lambda req: text(SYNTH)
    proc = run_hook_process(payload(project), env={"ANTHROPIC_API_KEY": HOOK_KEY, "ANTHROPIC_BASE_URL": standin.url})
    assert proc.returncode == 0 and proc.stderr == ""
    assert SYNTH in context_of(json.loads(proc.stdout))
    assert len(service) == 1 and "env" not in service[0] and HOOK_KEY not in json.dumps(service[0])
    (req,) = standin.messages_requests()
    sent = req["_headers"].get("x-api-key") or req["_headers"].get("authorization", "").removeprefix("Bearer ")
    assert sent == HOOK_KEY
    assert "ANTHROPIC_API_KEY" not in os.environ  # the service's own environment is untouched
    for path in paths.recall_home().rglob("*"):
        if path.is_file():
            assert HOOK_KEY.encode() not in path.read_bytes(), path
    (rec,) = injections.read()
    assert rec["outcome"] == "synthesized" and rec["backend"] == "api" and rec["via"] == "service"


def test_without_credentials_the_hook_says_why_it_fell_back(indexed, project, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing") + os.pathsep + os.path.dirname(sys.executable))
    proc = run_hook_process(payload(project, QUESTION + " (asked by zqxwvu)"), env={"RECALL_NO_SERVICE": "1"})
    assert proc.returncode == 0 and "SQLite in WAL mode" in context_of(json.loads(proc.stdout))
    proc = run_hook_process(payload(project, "thanks!"))
    assert proc.stdout == ""
    records = injections.read()
    assert [r["outcome"] for r in records] == ["raw", "trivial"]
    raw = records[0]
    assert raw["why"] == "no backend" and raw["backend"] == "off" and raw["via"] == "in-process"
    assert raw["hits"] and raw["hits"][0]["session"] == indexed["s1"].session_id
    assert raw["chars"] == len(raw["text"]) and raw["tokens"] == (raw["chars"] + 3) // 4
    assert "SQLite in WAL mode" in raw["text"] and raw["latency_ms"] > 0
    assert stat.S_IMODE(injections.log_path().stat().st_mode) == 0o600
    assert "zqxwvu" not in injections.log_path().read_text()  # the prompt itself is not kept

    code, out, _ = cli(capsys, "log", "--json")
    listed = json.loads(out)
    assert code == 0 and [r["n"] for r in listed] == [1, 2] and listed[0]["outcome"] == "trivial"
    code, out, _ = cli(capsys, "log")
    assert "#1" in out and "trivial" in out and "raw (no backend) via in-process" in out
    code, out, _ = cli(capsys, "log", "--show", "2")
    assert code == 0 and out == raw["text"] + "\n"
    code, out, err = cli(capsys, "log", "--show", "9")
    assert code == 2 and err.strip() == (
        "recall: No prompt #9 in the log (it holds 2): `recall log` numbers them, 1 being the newest."
    )
    code, out, err = cli(capsys, "log", "--limit", "0")
    assert code == 2 and err.strip() == "recall: --limit takes a number of prompts >= 1, not 0."
    code, out, _ = cli(capsys, "status")
    assert "Prompts: last 24 h: 0 synthesized, 1 raw (1 no backend), 0 nothing found, 1 trivial" in out
    assert "Backend: model.backend = auto: off for every feature (no Anthropic key and no Claude Code found" in out
    code, out, _ = cli(capsys, "status", "--json")
    info = json.loads(out)
    assert info["prompts_today"]["injected_tokens"] == raw["tokens"]
    assert info["backends"]["features"]["memory"]["backend"] == "off"
    config.set_value("hook.synthesize", False)
    fake_claude(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    code, out, _ = cli(capsys, "status")
    assert "         the per-prompt synthesis: off (hook.synthesize is false)" in out
    assert "         memory extraction and consolidation: claude-code (Claude Code's own login" in out


def test_the_injection_log_is_bounded(monkeypatch):
    monkeypatch.setattr(injections, "MAX_BYTES", 2000)
    for i in range(100):
        injections.append({"t": float(i), "outcome": "raw", "text": "x" * 100})
    sizes = [p.stat().st_size for p in paths.recall_home().glob("injections.jsonl*")]
    assert len(sizes) == 2 and all(s <= 2000 for s in sizes)
    kept = injections.read()
    assert kept[-1]["t"] == 99.0 and len(kept) < 100


def test_doctor_names_the_backend_of_each_feature(tmp_path, monkeypatch, capsys):
    fake_claude(
        tmp_path / "bin", run='[ "$1" = auth ] && echo \'{"loggedIn": true, "authMethod": "claude.ai"}\' || exit 3'
    )  # logged in
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    code, out, _ = cli(capsys, "doctor")
    assert (
        "ok    model backend: model.backend = auto: synthesis: claude-code; memory: claude-code; "
        "ask: claude-code (Claude Code's own login (no Anthropic key found)" in out
    )


def test_doctor_fails_when_the_service_would_have_no_backend_the_hook_has(tmp_path, monkeypatch, capsys):
    """A service that, even given the hook's credentials, would run without a backend (an
    older service, a Claude Code it cannot run...) is a FAIL, not a silent raw fallback."""
    import logging

    from recall.cli.checks import check_backend
    from recall.service import registry as ops
    from recall.service.socket_server import SocketServer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-shell-not-real")
    ops.load_modules()
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    try:
        check = check_backend(service_up=True)
        assert check.ok and check.detail.startswith("model.backend = auto: synthesis: api; memory: api; ask: api")
        monkeypatch.setitem(
            ops.OPS,
            "backend",
            lambda args: {
                "caller": {"backend": "off", "why": "it is old"},
                "service": {"backend": "off", "why": "it is old"},
            },
        )
        check = check_backend(service_up=True)
        assert not check.ok and not check.warn
        assert "but the service, given the hook's credentials, would use off (it is old)" in check.detail
        assert check.fix.startswith("run `recall service restart`")
    finally:
        srv.stop()


def test_the_service_answers_which_backend_for_the_caller(monkeypatch):
    from recall.service import registry as ops

    ops.load_modules()
    with caller.use({"ANTHROPIC_API_KEY": "sk-of-the-hook"}):
        out = ops.OPS["backend"]({})
    assert out["caller"]["backend"] == "api" and out["caller"]["source"] == "ANTHROPIC_API_KEY"
    assert out["service"]["backend"] == "off" and "sk-of-the-hook" not in json.dumps(out)


def test_a_hand_edited_backend_is_reported_by_doctor(capsys):
    paths.atomic_write(paths.config_path(), json.dumps({"model": {"backend": "gpt-9"}}))
    assert config.backend_setting() == "auto"
    code, out, _ = cli(capsys, "doctor")
    assert code == 1 and "FAIL  config: model.backend in" in out and "is 'gpt-9', not one of auto, api" in out
    assert "fix: edit" in out


def test_a_hung_claude_code_is_killed_at_its_timeout(tmp_path, monkeypatch):
    pidfile = tmp_path / "child.pid"
    fake_claude(tmp_path / "bin", run=f"echo $$ > {pidfile}; sleep 60")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    with pytest.raises(errors.ModelError) as err:
        claude_code.complete("system", "prompt", purpose="test", timeout=1.0)
    assert str(err.value) == "Claude Code did not answer within 1 s (stopped)"
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # the child got the recursion guard and not the parent session's variables
    fake_claude(tmp_path / "bin", run=f"env > {tmp_path / 'env.txt'}; exit 1")
    monkeypatch.setenv("CLAUDECODE", "1")
    with pytest.raises(errors.ModelError):
        claude_code.complete("system", "prompt", purpose="test", timeout=10.0)
    child_env = (tmp_path / "env.txt").read_text()
    assert "RECALL_CHILD=1" in child_env and "CLAUDECODE=" not in child_env


def test_a_binary_that_is_not_claude_code_is_probed_once(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    count = tmp_path / "runs"
    fake.write_text(f"#!/bin/sh\necho x >> {count}\necho 'claude 0.1 (some other tool)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    claude_code._probed.clear()
    assert backend.choose().name == "off" and "is not Claude Code" in backend.choose().why
    claude_code._probed.clear()  # a new process: the answer comes from the cache file
    assert "is not Claude Code" in backend.choose().why
    assert len(count.read_text().splitlines()) == 2  # --version and --help, once
