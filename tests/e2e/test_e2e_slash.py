"""End to end with the real Claude Code client: `recall setup` installs /recall, /recall-search,
/remember and /ui; each one's bash output reaches the model request of that very turn;
`recall setup --uninstall` removes exactly them."""

from __future__ import annotations

import json

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config
from recall.memory import store
from tests.support.factory import Session
from tests.support.standin import is_claude_code_request, is_main_request, request_text, text

pytestmark = pytest.mark.e2e

FACT = "The walrus billing host is configured in deploy/billing.yaml under the walrus key."
SYNTH = "quillfeather: billing host in deploy/billing.yaml"


def answer_handler(req):
    """The model behind `recall ask`: answers only when recall sent it the past session's hit
    (the question asked in the test is worded differently)."""
    if is_claude_code_request(req):
        return None
    return text(SYNTH if "where is the walrus billing host configured" in request_text(req) else "NONE")


def main_text(standin, since: int) -> str:
    return "\n".join(
        request_text(r) for r in standin.snapshot()[since:] if is_main_request(r) and is_claude_code_request(r)
    )


@pytest.fixture
def wired(claude_env, standin, claude_projects, capsys):
    config.set_value("memory.enabled", False)
    past = Session(cwd=str(claude_env.project))
    past.user("where is the walrus billing host configured?")
    past.assistant(FACT)
    past.write(claude_projects)
    assert index_all().messages == 2
    code = run(["setup", "--project", str(claude_env.project), "--no-service", "--no-index", "--no-mcp"])
    out = capsys.readouterr()
    assert code == 0, out.err
    for name in ("recall", "recall-search", "remember", "ui"):
        assert f"added the /{name} command" in out.out
    standin.handler = answer_handler
    return claude_env


def test_slash_commands_reach_the_model_and_uninstall_removes_exactly_them(wired, standin, capsys):
    env = wired
    mark = len(standin.snapshot())
    proc = env.run("/recall-search walrus billing host", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = main_text(standin, mark)
    block = sent[sent.find("<command-name>/recall-search") : sent.find("add nothing else")]
    assert "where is the **walrus** **billing** **host** configured?" in block  # the hit, from bash

    mark = len(standin.snapshot())
    proc = env.run("/recall where's the walrus billing host configured?", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = main_text(standin, mark)
    assert SYNTH in sent, sent[sent.find("<command-name>/recall") :][:1500]  # recall's answer, same turn

    mark = len(standin.snapshot())
    proc = env.run("/remember always run make lint before committing", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = main_text(standin, mark)
    assert "Saved as rule " in sent, sent[sent.find("<command-name>/remember") :][:800]
    from recall.rules import store as rules

    assert [(r.text, r.origin) for r in rules.load("project", str(env.project))] == [
        ("always run make lint before committing", "remember")
    ]
    mark = len(standin.snapshot())
    proc = env.run("/remember the billing tests need docker running", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    assert "Remembered as pattern" in main_text(standin, mark)
    mems = store.load(str(env.project)).memories
    assert [(m.type, m.content, m.origin) for m in mems] == [
        ("pattern", "the billing tests need docker running", "manual")
    ]

    other = env.project / ".claude" / "commands" / "mine.md"
    other.write_text("my own command\n")
    code = run(["setup", "--uninstall", "--project", str(env.project)])
    out = capsys.readouterr()
    assert code == 0, out.err
    left = sorted(p.name for p in (env.project / ".claude" / "commands").iterdir())
    assert left == ["mine.md"]
    assert (
        json.loads((env.project / ".claude" / "settings.json").read_text()).get("hooks") is None
        if (env.project / ".claude" / "settings.json").exists()
        else True
    )


def test_the_ui_command_prints_the_page_address(wired, standin):
    """`/ui` (the plugin's `/recall:ui`): the address of the page the running service serves
    reaches the model in the same turn; without a service, the line saying how to start one."""
    import re
    import subprocess
    import sys
    import time

    from recall.core import service_client as client
    from tests.support.ui import Client

    env = wired
    mark = len(standin.snapshot())
    proc = env.run("/ui", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = main_text(standin, mark)
    assert "No recall service runs to serve the page: start it with `recall service start`" in sent, sent[
        sent.find("<command-name>/ui") :
    ][:800]

    serve = subprocess.Popen(
        [sys.executable, "-m", "recall.entry", "serve"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if client.call("status", {}, timeout=1.0).get("state") == "watching":
                    break
            except client.Unavailable:
                pass
            assert time.monotonic() < deadline and serve.poll() is None, "the service did not come up"
            time.sleep(0.1)
        mark = len(standin.snapshot())
        proc = env.run("/ui", allowed_tools=None)
        assert proc.returncode == 0, proc.stderr
        sent = main_text(standin, mark)
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", sent)
        assert found, sent[sent.find("<command-name>/ui") :][:800]
        assert Client(int(found.group(1)), found.group(2)).get("/prompts")[0] == 200
    finally:
        serve.terminate()
        serve.wait(60)
