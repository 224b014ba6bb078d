"""An upgrade or reinstall under a running service is safe (issue 27 item 1).

The README's second command used to reinstall the package into the first one's venv: the
running service then failed every import of a module it had not loaded yet, a finished
session's memory extraction failed and was dropped, and `recall doctor` said "No problems".
Now the service notices that its installed code changed and restarts itself on the new code;
queued memory work that fails is kept and retried; doctor names a service running other code
than the installed one; and the test command installs into a venv of its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recall.core import service_client as client
from recall.memory import queue as q
from recall.memory import worker
from tests.support.factory import Session
from tests.support.wait import wait_for

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


# ------------------------------------------------------------------------------ the memory queue
def test_memory_work_that_fails_is_kept_and_retried(monkeypatch, tmp_path):
    calls = []

    def run_session(group, cfg):
        calls.append(group["session_id"])
        if len(calls) == 1:  # what a reinstall under a running process looks like
            raise ModuleNotFoundError("No module named 'recall.memory.extract'")
        return {"session_id": group["session_id"], "stopped": "", "problem": ""}

    monkeypatch.setattr(worker, "run_session", run_session)
    monkeypatch.setattr(worker, "has_key", lambda cfg=None: True)
    monkeypatch.setattr(worker, "RETRY_WAIT_WITHIN", 5.0)
    q.enqueue("session-end", "s-1", "", str(tmp_path))
    assert worker.run(wait=False) == []
    (item,) = worker.retrying()
    assert item["session_id"] == "s-1" and item["attempts"] == 1
    assert "ModuleNotFoundError" in item["error"] and item["retry_at"] > time.time() + 30
    assert worker.run(wait=True) == []  # a waiting worker does not stay for a retry a minute away
    assert calls == ["s-1"]
    # once due, it runs again and succeeds; then it is gone from the queue
    ((path, rec),) = q.pending()
    rec["retry_at"] = time.time() - 1
    path.write_text(json.dumps(rec))
    reports = worker.run(wait=False)
    assert [r["session_id"] for r in reports] == ["s-1"] and q.pending() == []


def test_a_model_error_keeps_the_session_for_another_try_and_the_cap_waits_for_midnight(monkeypatch, tmp_path):
    monkeypatch.setattr(
        worker,
        "run_session",
        lambda g, cfg: {"stopped": "model error: Claude Code answered with an error: Not logged in"},
    )
    monkeypatch.setattr(worker, "has_key", lambda cfg=None: True)
    q.enqueue("session-end", "s-2", "", str(tmp_path))
    worker.run(wait=False)
    (item,) = worker.retrying()
    assert "Not logged in" in item["error"] and 30 < item["retry_at"] - time.time() <= 61
    assert worker.retry_delay(3, "model error") == 240.0 and worker.retry_delay(30, "x") == worker.RETRY_MAX
    now = 86400 * 20000 + 3600  # 01:00 UTC
    assert worker.retry_delay(1, "daily cap reached", now=now) == 23 * 3600 + 60


# ------------------------------------------------------------------------------ the service
def _found(word: str) -> bool:
    from recall.core.errors import RecallError
    from recall.search.run import run_search

    try:
        return bool(run_search(word, limit=3))
    except RecallError:  # no index yet: the service is still starting
        return False


def _copy_code(dest: Path) -> Path:
    src = dest / "src"
    for pkg in ("recall", "indexer"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _serve(tmp_path: Path, src: Path, **env) -> subprocess.Popen:
    full = dict(os.environ, PYTHONPATH=str(src), RECALL_CODE_CHECK_SECONDS="0.3", RECALL_WRITER_HEAP_MB="48", **env)
    log = open(tmp_path / "serve.log", "ab")
    return subprocess.Popen(
        [sys.executable, "-m", "recall.entry", "serve"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=str(tmp_path),
        env=full,
    )


def _reinstall(src: Path) -> None:
    """What `pip install` over an install does: the old files go, new ones come."""
    old = src.parent / "old"
    old.mkdir(exist_ok=True)
    shutil.move(str(src / "recall"), str(old / f"recall-{time.time_ns()}"))
    shutil.copytree(ROOT / "recall", src / "recall", ignore=shutil.ignore_patterns("__pycache__"))


def test_the_service_restarts_itself_on_new_code_and_keeps_working(tmp_path, claude_projects):
    src = _copy_code(tmp_path)
    proc = _serve(tmp_path, src, RECALL_CODE_SETTLE_SECONDS="0.5")
    try:
        first = wait_for(lambda: client.ping(timeout=1.0), 90, "the service")
        assert first["pid"] == proc.pid and first["code"]
        s = Session(cwd="/home/dev/shop")
        s.user("the kingfisher deploy needs a manual approval")
        s.write(claude_projects)
        wait_for(lambda: _found("kingfisher"), 60, "the first line indexed")
        _reinstall(src)
        second = wait_for(
            lambda: (p := client.ping(timeout=1.0)) and p["started"] != first["started"] and p,
            90,
            "the service on the new code",
        )
        assert second["pid"] == proc.pid  # the same process (exec): systemd and launchd still see it
        assert second["code"] != first["code"]
        s.user("the heron rollback is scripted in ops/rollback.sh")
        s.write(claude_projects)
        wait_for(lambda: _found("heron"), 60, "a line indexed after the restart")
        log = (tmp_path / "serve.log").read_text(errors="replace")
        assert "the installed code changed: stopping to restart on the new code" in log
        assert "Traceback" not in log and "ModuleNotFoundError" not in log
    finally:
        proc.terminate()
        proc.wait(60)
    assert proc.returncode == 0


def test_doctor_names_a_service_running_older_code(tmp_path, claude_projects):
    src = _copy_code(tmp_path)
    proc = _serve(tmp_path, src, RECALL_CODE_SETTLE_SECONDS="3600")  # it notices, but does not restart yet
    try:
        info = wait_for(lambda: client.ping(timeout=1.0), 90, "the service")
        _reinstall(src)
        env = dict(os.environ, PYTHONPATH=str(src))
        out = subprocess.run(
            [sys.executable, "-m", "recall.entry", "doctor", "--project", str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(tmp_path),
            timeout=300,
        )
        assert (
            f"FAIL  service: running (pid {info['pid']}), but on the code from before the last install or upgrade"
        ) in out.stdout, out.stdout + out.stderr
        assert "fix: run `recall service restart`" in out.stdout
    finally:
        proc.terminate()
        proc.wait(60)


# ------------------------------------------------------------------------------ the README
def _readme_command(marker: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- {marker} -->\s*```sh\n(.+?)\n```", text, re.S)
    assert m, marker
    return m.group(1).strip()


def test_the_test_command_does_not_touch_the_main_commands_install():
    main, test = _readme_command("main-command"), _readme_command("test-command")
    venv = lambda cmd: re.search(r"python3 -m venv (\S+)", cmd).group(1)  # noqa: E731
    assert venv(main) != venv(test)
    assert f"{venv(main)}/" not in test and f"{venv(test)}/" not in main
    ignored = (ROOT / ".gitignore").read_text()
    assert f"{venv(test)}/" in ignored
