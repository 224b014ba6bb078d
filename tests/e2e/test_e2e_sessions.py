"""Session summaries end to end with the real Claude Code client: after `recall setup`, a
session's SessionEnd hook queues it, the memory worker has the model (the stand-in) write
its summary, and `recall sessions` and search find it."""

from __future__ import annotations

import json

import pytest

from indexer.ingest import index_all
from recall.cli.app import run
from recall.memory import queue, summaries
from tests.support.memory import system_of, use_standin
from tests.support.standin import is_claude_code_request, text
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SUMMARY = (
    "Goal: list the files of the project\nDecided: none\nFiles: none\n"
    "Outcome: the listing was shown (quillbrook)\nOpen: none"
)


def test_a_finished_session_gets_a_summary_listed_and_searchable(claude_env, standin, monkeypatch, capsys):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    use_standin(monkeypatch, standin)

    def handler(req):
        if is_claude_code_request(req):
            return None
        if "summary of one finished Claude Code session" in system_of(req):
            return text(SUMMARY)
        return text('{"memories": []}')  # the extraction: nothing worth keeping

    standin.handler = handler
    assert run(["setup", "--project", str(claude_env.project), "--no-service"]) == 0
    capsys.readouterr()
    standin.script(text("Here are the files: README.md."))
    proc = claude_env.run("Please list the files of this project for me")
    assert proc.returncode == 0, proc.stderr
    (transcript,) = claude_env.transcripts(include_subagents=False)
    sid = transcript.stem

    assert wait_for(
        lambda: summaries.get(sid) is not None and not queue.pending() and queue.lock_free(),
        timeout=90,
        what="a summary written after the session ended",
    )
    assert summaries.get(sid)["summary"] == SUMMARY
    sent = [r for r in standin.messages_requests() if "summary of one finished" in system_of(r)]
    assert len(sent) == 1 and "Please list the files of this project" in json.dumps(sent[0])

    index_all()
    assert run(["sessions", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sessions"]
    assert row["session_id"] == sid and row["summary"] == SUMMARY
    assert row["first_prompt"] == "Please list the files of this project for me"
    assert run(["--json", "quillbrook"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [h["session_id"] for h in hits] == [sid] and hits[0]["uuid"] == f"sum-{sid}"
