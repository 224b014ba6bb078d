"""The log on a full disk (issue 46 item 12): a record that cannot be written costs one short
line on stderr at most, never a traceback, and the hook's answer is unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall.core import log, paths

FULL = Path("/dev/full")  # every write fails with ENOSPC, as on a full disk

pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")


def _full_log() -> None:
    """``$RECALL_HOME/logs/recall.log`` is on a full disk."""
    paths.ensure_dir(paths.log_dir())
    target = log.log_file()
    if target.exists() or target.is_symlink():
        target.unlink()
    os.symlink(FULL, target)


def _hook(project: Path, prompt: str) -> subprocess.CompletedProcess:
    payload = {
        "session_id": "current-session",
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return subprocess.run(
        [sys.executable, "-m", "recall.entry", "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_the_hook_on_a_full_disk_prints_no_traceback(project):
    # a rules file that is not JSON: the hook logs a warning (and goes on without the rules)
    (project / ".memory").mkdir(exist_ok=True)
    (project / ".memory" / "rules.json").write_text("{not json", encoding="utf-8")
    before = _hook(project, "which database did we choose for the job queue?")
    assert before.returncode == 0 and before.stderr == b""
    assert "rules skipped" in log.log_file().read_text(encoding="utf-8")  # the hook does log here

    _full_log()
    run = _hook(project, "which database did we choose for the job queue?")
    err = run.stderr.decode("utf-8", "replace")
    assert run.returncode == 0
    assert "Traceback" not in err and len(err.splitlines()) <= 1, err
    assert run.stdout == before.stdout  # what the hook answers does not depend on its log
    if err:
        assert "log" in err and "No space left" in err


def test_a_full_disk_says_so_once_per_process(capsys):
    _full_log()
    logger = log.get("test")
    for i in range(50):
        logger.warning("record %d %s", i, "x" * 2000)  # past the buffer: the writes themselves fail
    log.setup()
    for h in logging_handlers():
        try:
            h.flush()
        except OSError:
            pass
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) <= 1, err


def test_the_next_log_opens_after_a_full_one(tmp_path, monkeypatch):
    _full_log()
    log.get("test").warning("lost: %s", "x" * 9000)  # left in the handler's buffer
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / "elsewhere"))
    log.get("test").warning("the next home's first record")  # closing the full log raises nothing
    assert "the next home's first record" in log.log_file().read_text(encoding="utf-8")


def logging_handlers():
    import logging

    return list(logging.getLogger("recall").handlers)
