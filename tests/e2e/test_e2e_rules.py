"""Triggered rules end to end with the real Claude Code client: after `recall setup`, a rule
on `migrations/**` reaches the model request when the prompt mentions a migration file,
does not when it does not, and fires from a file Claude read in the session's last turns."""

from __future__ import annotations

import pytest

from recall.cli.app import run
from recall.core import config
from tests.support.standin import is_main_request, request_text, text, tool_use

pytestmark = pytest.mark.e2e

RULE = "Run `sqitch verify` before touching anything under migrations/ (rule quillmarsh)."


def main_turns(standin, since):
    return [r for r in standin.snapshot()[since:] if is_main_request(r)]


@pytest.fixture
def ruled_project(claude_env, monkeypatch, capsys):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    config.set_value("memory.enabled", False)  # no extraction workers in these tests
    config.set_value("hook.budget_seconds", 30)
    code = run(["setup", "--project", str(claude_env.project), "--no-service"])
    out = capsys.readouterr()
    assert code == 0, out.err
    code = run(["rules", "add", RULE, "--path", "migrations/**", "--project", str(claude_env.project)])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out.split()[2]  # "Added rule <id> for <project>: …"


def test_a_path_rule_reaches_the_model_only_when_the_prompt_touches_the_path(claude_env, standin, ruled_project):
    mark = len(standin.snapshot())
    proc = claude_env.run("Add an index on orders.created_at in migrations/0008_orders_index.sql please")
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_turns(standin, mark)[0])
    assert "<recalled-context>" in sent
    block = sent[sent.index("<recalled-context>") : sent.index("</recalled-context>")]
    assert f"[rule {ruled_project}] {RULE}" in block

    mark = len(standin.snapshot())
    proc = claude_env.run("Rename the helper function in utils.py to something clearer")
    assert proc.returncode == 0, proc.stderr
    turns = main_turns(standin, mark)
    assert turns and all("quillmarsh" not in request_text(r) for r in turns)


def test_a_path_rule_fires_on_a_file_read_in_the_last_turns(claude_env, standin, ruled_project):
    (claude_env.project / "migrations").mkdir()
    (claude_env.project / "migrations" / "0007_users.sql").write_text("create table users (id int);\n")
    mark = len(standin.snapshot())
    standin.script(
        tool_use("Read", {"file_path": str(claude_env.project / "migrations" / "0007_users.sql")}),
        text("It creates the users table."),
    )
    proc = claude_env.run("What does the newest schema file create?", allowed_tools="Read")
    assert proc.returncode == 0, proc.stderr
    first = main_turns(standin, mark)
    assert first and all("quillmarsh" not in request_text(r) for r in first)  # nothing read yet

    mark = len(standin.snapshot())
    proc = claude_env.run("Now write the next one, adding an email column", extra_args=("-c",))
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_turns(standin, mark)[0])
    assert f"[rule {ruled_project}] {RULE}" in sent  # fired from the file Read in the last turn
