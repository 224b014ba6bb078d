"""``recall memories``, ``recall consolidate``, ``recall ask``, the status/doctor lines, and the
hook path staying import-light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recall.llm import usage
from recall.memory import status, store
from tests.support.cli import cli
from tests.support.memory import is_consolidation, use_standin
from tests.support.standin import error, text


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    return project


def test_add_list_show_forget(project, capsys):
    code, out, _ = cli(
        capsys, "memories", "add", "gotcha", "Redis must run before the worker starts", "--tags", "redis,worker"
    )
    assert code == 0 and out.startswith("Added gotcha ")
    mid = out.split()[2].rstrip(".")
    code, out, _ = cli(capsys, "memories", "add", "decision", "我们选择", "tantivy", "作为搜索引擎")
    assert code == 0
    code, out, _ = cli(capsys, "memories", "add", "gotcha", "The worker must start after Redis runs")
    assert "supersedes " + mid in out
    code, out, _ = cli(capsys, "memories")
    assert code == 0 and "gotcha:" in out and "decision:" in out and "我们选择 tantivy 作为搜索引擎" in out
    assert mid not in out
    code, out, _ = cli(capsys, "memories", "--all", "--type", "gotcha")
    assert mid in out and "[superseded]" in out and "decision:" not in out
    code, out, _ = cli(capsys, "memories", "--json")
    data = json.loads(out)
    assert data["project"] == str(project) and len(data["memories"]) == 2
    new_id = next(m["id"] for m in data["memories"] if m["type"] == "gotcha")
    code, out, _ = cli(capsys, "memories", "show", new_id[:5])
    assert code == 0 and f"supersedes:  {mid}" in out and "tags:        redis, worker" in out
    assert "- The worker must start after Redis runs" in (project / "CLAUDE.md").read_text()
    code, out, _ = cli(capsys, "memories", "forget", new_id)
    assert code == 0 and out.startswith("Forgot gotcha")
    assert "worker" not in (project / "CLAUDE.md").read_text()
    assert {m.type for m in store.load(str(project)).memories} == {"gotcha", "decision"}  # the superseded one stays


@pytest.mark.parametrize(
    "args, message",
    [
        (("memories", "add", "todo", "x"), "not a memory type: use one of"),
        (("memories", "--type", "nope"), "not a memory type"),
        (("memories", "show", "zzz"), "list them with `recall memories`"),
        (("memories", "forget", "zzz"), "list them with `recall memories`"),
        (("memories", "--project", "/no/such/dir"), "is not a directory"),
        (("consolidate",), "nothing to consolidate"),
    ],
)
def test_bad_input_is_one_clear_line(project, capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code != 0 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_corrupt_state_is_one_line(project, capsys):
    (project / ".memory").mkdir()
    (project / ".memory" / "state.json").write_text("{")
    code, _, err = cli(capsys, "memories")
    assert code == 1 and "is not valid JSON" in err and len(err.strip().splitlines()) == 1


def test_consolidate_and_ask_need_a_key(project, capsys):
    cli(capsys, "memories", "add", "gotcha", "Redis must run first")
    for args in (("consolidate",), ("ask", "why redis?")):
        code, _, err = cli(capsys, *args)
        assert code == 1 and "Model calls are off: no Anthropic key and no Claude Code found" in err


def test_consolidate_command(project, capsys, monkeypatch, standin):
    use_standin(monkeypatch, standin)
    facts = [
        "Redis must run before the worker",
        "Use UTC timestamps in Postgres",
        "CI caches node_modules by lockfile hash",
        "pytest -n auto breaks sqlite fixtures",
        "The staging DB resets nightly",
    ]
    for f in facts:
        cli(capsys, "memories", "add", "gotcha", f)
    ids = [m.id for m in store.load(str(project)).active()]
    standin.script(text(json.dumps({"keep": ids[:4], "drop": [ids[4]]})))
    code, out, _ = cli(capsys, "consolidate")
    assert code == 0 and "Reviewed gotcha: 0 merged memories from 0, 1 dropped." in out
    assert is_consolidation(standin.messages_requests()[0])
    assert "The staging DB resets nightly" not in (project / "CLAUDE.md").read_text()
    cli(capsys, "memories", "add", "gotcha", "Webpack is gone: the build uses Vite")
    standin.script(error(500, "down", should_retry=False))
    code, _, err = cli(capsys, "consolidate")
    assert code == 1 and "Consolidation stopped (model error" in err


def test_ask_answers_from_memories_and_transcripts(project, capsys, monkeypatch, standin):
    use_standin(monkeypatch, standin)
    cli(
        capsys,
        "memories",
        "add",
        "decision",
        "We picked pgbouncer in transaction mode because the ORM opens a connection per request",
    )
    standin.script(text("pgbouncer, in transaction mode [2026-11-22 memory]"))
    code, out, _ = cli(capsys, "ask", "which connection pooler did we pick?")
    assert code == 0 and out.strip() == "pgbouncer, in transaction mode [2026-11-22 memory]"
    req = standin.messages_requests()[0]
    assert "We picked pgbouncer in transaction mode" in json.dumps(req["messages"])
    # the memory shown counts as a use once the access log is folded
    cli(capsys, "memories")
    assert store.load(str(project)).active()[0].access_count == 1


def test_status_and_doctor_lines(project, monkeypatch, standin):
    lines = status.status_lines(str(project))
    assert lines[0] == (
        "Memory:  memory extraction is off: no Anthropic key and no Claude Code found: set "
        "ANTHROPIC_API_KEY, run `recall config set api_key KEY`, or install and log in to Claude Code"
    )
    from recall.cli.checks import check_memory

    checks = check_memory(project)
    assert checks[0].warn and "memory extraction is off" in checks[0].detail
    use_standin(monkeypatch, standin, daily_call_cap=1)
    usage.record_usage("claude-haiku-4-5", 1_000_000, 100_000, "extraction")
    lines = status.status_lines(str(project))
    assert lines[0].startswith("Memory:  extraction on (api); 1/1 extraction calls today; est. cost $1.50 today")
    assert "daily cap is reached" in lines[1]
    assert "0 active memories in " + str(project) in lines[2]


def test_capture_hooks_stay_import_light(project, monkeypatch, standin, claude_projects):
    use_standin(monkeypatch, standin)
    code = (
        "import sys, json\n"
        "from recall.hooks import capture\n"
        f"capture.stop({{'session_id': 's1', 'cwd': {str(project)!r}, 'transcript_path': ''}})\n"
        f"capture.session_end({{'session_id': 's1', 'cwd': {str(project)!r}}})\n"
        f"capture.session_start({{'session_id': 's1', 'cwd': {str(project)!r}, 'source': 'startup'}})\n"
        "heavy = [m for m in ('anthropic', 'pydantic', 'tantivy', 'typer', 'rich', 'mcp', 'httpx2') "
        "if m in sys.modules]\n"
        "print(json.dumps(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "RECALL_NO_SERVICE": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_remember_cleans_a_nul_and_a_lone_surrogate(project, capsys):
    """Issue 35 item 3: neither crashes `recall remember`; each is stored as U+FFFD."""
    code, out, err = cli(
        capsys,
        "remember",
        "--project",
        str(project),
        "--json",
        "the firmware dump has a lone \ud800 half and a \0 byte",
    )
    assert code == 0, err
    m = json.loads(out)
    assert "\ufffd half" in m["content"] and "\0" not in m["content"]
    (mem,) = [x for x in store.load(str(project)).memories if x.id == m["id"]]
    assert mem.content == m["content"]
    assert store.state_path(str(project)).read_text(encoding="utf-8")  # valid UTF-8 on disk
