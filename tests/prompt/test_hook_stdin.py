"""Issue 17 (Low): the hook never exited if its stdin was never closed. The wait for input
is now bounded by a deadline counted from process start (recall/hooks/dispatch.py), and a
complete JSON object is used at once even if the writer keeps stdin open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from recall.hooks import dispatch
from tests.prompt.test_hook import indexed, payload, set_hook_config  # noqa: F401 (fixtures)


def _spawn(args=("hook", "user-prompt-submit")):
    return subprocess.Popen(
        [sys.executable, "-m", "recall.entry", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )


def test_hook_exits_when_stdin_is_held_open_and_empty():
    set_hook_config(budget_seconds=1)
    proc = _spawn()
    try:
        # stdin stays open and nothing is written: before the fix this waited forever
        rc = proc.wait(timeout=60)
        assert rc == 0
        assert proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()


def test_hook_answers_when_the_payload_arrives_but_stdin_stays_open(indexed, project):  # noqa: F811
    proc = _spawn()
    try:
        proc.stdin.write(json.dumps(payload(project)).encode())
        proc.stdin.flush()  # ...and never closed
        rc = proc.wait(timeout=60)
        assert rc == 0
        out = json.loads(proc.stdout.read())
        assert "SQLite in WAL mode" in out["hookSpecificOutput"]["additionalContext"]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()


def test_other_hooks_stop_waiting_too(monkeypatch):
    monkeypatch.setattr(dispatch, "STDIN_SECONDS", 0.5)
    r, w = os.pipe()  # the writer stays open and silent
    try:

        class Stream:
            def isatty(self):
                return False

            def fileno(self):
                return r

        assert dispatch.read_payload(Stream(), dispatch.input_deadline("stop", time.time())) == {}
    finally:
        os.close(r)
        os.close(w)


def test_input_deadline_counts_from_process_start():
    set_hook_config(budget_seconds=3)
    assert dispatch.input_deadline("user-prompt-submit", 1000.0) == 1003.0
    assert dispatch.input_deadline("session-start", 1000.0) == 1000.0 + dispatch.STDIN_SECONDS


def test_partial_json_then_eof_is_garbage_not_a_hang():
    r, w = os.pipe()
    os.write(w, b'{"prompt": "half')
    os.close(w)
    try:

        class Stream:
            def isatty(self):
                return False

            def fileno(self):
                return r

        assert dispatch.read_payload(Stream(), time.time() + 30) == {}
    finally:
        os.close(r)
