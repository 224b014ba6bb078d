"""Uninstall leaves nothing capturing (issue 27 item 4), end to end with the real Claude Code:
`recall setup --global` wires recall in and starts the service; a session is indexed; `recall
setup --uninstall --global` stops and removes the service and its unit, says what it leaves and
the one command that removes that too; a new session after it is not indexed, queued or logged."""

from __future__ import annotations

import json
import time

import pytest

from recall.core import paths
from recall.core import service_client as client
from tests.support.cli import cli
from tests.support.standin import text
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e


def hits(capsys, word: str) -> list:
    code, out, err = cli(capsys, "--raw", "--json", word)
    assert code == 0, err
    return json.loads(out)["hits"]


def test_after_uninstall_a_new_session_is_not_indexed(
    tmp_path, monkeypatch, capsys, standin, claude_env, no_service_manager
):
    monkeypatch.setenv("HOME", str(claude_env.home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    (claude_env.project / ".git" / "info").mkdir(parents=True)
    from recall.control.lifecycle import remove_service
    from recall.control.units import unit_path

    try:
        code, out, err = cli(capsys, "setup", "--global", "--no-index")
        assert code == 0, err + out
        info = client.ping(timeout=5)
        assert info is not None, out
        pid = int(info["pid"])
        assert unit_path().exists()

        standin.script(text("Noted the zebrafinch migration."))
        assert claude_env.run("remember the zebrafinch migration plan").returncode == 0
        assert wait_for(lambda: hits(capsys, "zebrafinch"), timeout=30)  # captured while installed

        code, out, err = cli(capsys, "setup", "--uninstall", "--global")
        assert code == 0, err
        assert f"the service is stopped (pid {pid})" in out and f"Removed {unit_path()}" in out
        assert f"your history (archive, index, config, logs) in {paths.recall_home()}" in out
        assert "To remove those too: `recall setup --uninstall --global --purge` (it asks first" in out
        assert "Nothing captures your sessions any more." in out
        assert not unit_path().exists()
        assert client.ping(timeout=1) is None
        from recall.core.service_state import pid_alive

        assert not pid_alive(pid)
        settings = claude_env.home / ".claude" / "settings.json"  # setup created it: deleted again
        assert not settings.exists() or " hook " not in settings.read_text()

        queue = paths.recall_home() / "memory" / "queue"
        queued_before = sorted(queue.glob("*.json")) if queue.exists() else []
        log_before = (
            (paths.recall_home() / "injections.jsonl").read_bytes()
            if (paths.recall_home() / "injections.jsonl").exists()
            else b""
        )
        standin.script(text("Noted the quokkamarmot rollout."))
        assert claude_env.run("plan the quokkamarmot rollout").returncode == 0
        time.sleep(2.0)  # a service or a hook would have indexed it within a second
        assert client.ping(timeout=1) is None
        assert hits(capsys, "quokkamarmot") == []
        assert hits(capsys, "zebrafinch")  # the history is kept
        assert (sorted(queue.glob("*.json")) if queue.exists() else []) == queued_before  # no capture queued
        log_after = (
            (paths.recall_home() / "injections.jsonl").read_bytes()
            if (paths.recall_home() / "injections.jsonl").exists()
            else b""
        )
        assert log_after == log_before  # no hook ran

        # --purge removes what was left, asking first (no terminal here: --yes)
        code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge")
        assert code == 2 and "run the same `recall setup --uninstall --global --purge` again with --yes" in err
        assert paths.recall_home().exists()
        code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes")
        assert code == 0, err
        assert not paths.recall_home().exists() and "Done: recall is removed." in out
    finally:
        remove_service()
