"""Issue 47 (item 1): which way a prompt takes, and a briefing written in the background never
reaching another turn (``recall.prompt.ways``, ``recall.prompt.turns``). The real client's side
of both is in tests/e2e/test_e2e_background.py."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

from recall.core.settings import HookSettings
from recall.prompt import turns, ways
from recall.search.hit import Hit


def _hit(confidence=None, similarity=None):
    return Hit("s1", "u1", "/p", "/p", "", "assistant", "t", "", 1.0, confidence=confidence, similarity=similarity)


HOOK = HookSettings(min_confidence=0.6, background=True)
HOOK_OFF = HookSettings(min_confidence=0.6, background=False)


def test_a_question_about_the_past_with_a_strong_candidate_waits():
    assert ways.model_way("why did we drop redis?", [_hit(0.8)], HOOK) == ways.WAIT
    assert ways.model_way("what's our convention for money amounts?", [_hit(0.3, 0.62)], HOOK) == ways.WAIT


def test_every_other_model_prompt_goes_on_in_the_background():
    assert ways.model_way("why did we drop redis?", [_hit(0.4, 0.35)], HOOK) == ways.BACKGROUND  # weak
    assert ways.model_way("add a retry to the upload job", [_hit(0.9)], HOOK) == ways.BACKGROUND  # work
    assert ways.model_way("can you add a retry to the upload job?", [_hit(0.9)], HOOK) == ways.BACKGROUND
    assert ways.model_way("please fix the flaky test?", [_hit(0.9)], HOOK) == ways.BACKGROUND


def test_hook_background_false_waits_as_before():
    assert ways.model_way("add a retry to the upload job", [_hit(0.1)], HOOK_OFF) == ways.WAIT


def test_a_briefing_is_dropped_once_its_turn_ended_or_a_newer_prompt_began():
    started = time.time()
    mark = turns.mark_prompt("conv-1")
    assert turns.ended_since("conv-1", mark, started) is None
    assert turns.ended_since("conv-2", None, started) is None  # nothing known of another conversation
    turns.mark_stop("conv-1")
    assert turns.ended_since("conv-1", mark, started) == "the turn ended"
    later = time.time()
    mark2 = turns.mark_prompt("conv-1")
    assert turns.ended_since("conv-1", mark2, later) is None  # this prompt's own turn goes on
    assert turns.ended_since("conv-1", mark, later + 3600) == "a newer prompt began"
    assert turns.ended_since(None, None, started) is None


def test_marks_are_private_and_pruned(tmp_path):
    from recall.core import paths

    turns.mark_prompt("conv-9")
    folder = paths.recall_home() / "turns"
    assert (os.stat(folder).st_mode & 0o777) == 0o700
    files = list(folder.iterdir())
    assert files and all((f.stat().st_mode & 0o777) == 0o600 for f in files)
    assert "conv-9" not in " ".join(f.name for f in files)  # named by a hash
    assert turns.prune(now=time.time() + turns.KEEP_SECONDS + 10) == len(files)
    assert list(folder.iterdir()) == []


def test_the_async_marker_is_the_first_line_and_printed_once(monkeypatch):
    from recall.hooks import dispatch

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(dispatch, "_emitted", False)
    dispatch.emit_async(20000)
    dispatch.emit({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}})
    dispatch.emit_async(20000)  # after the output: never
    lines = out.getvalue().splitlines()
    assert json.loads(lines[0]) == {"async": True, "asyncTimeout": 20000}
    assert json.loads(lines[1])["hookSpecificOutput"]["additionalContext"] == "x"
    assert len(lines) == 2


def test_the_stop_hook_marks_the_turn(monkeypatch):
    """`recall hook stop` marks the conversation's turn as ended, with or without memory."""
    env = {**os.environ, "RECALL_NO_SERVICE": "1"}
    payload = json.dumps({"session_id": "conv-stop", "hook_event_name": "Stop"})
    started = time.time()
    proc = subprocess.run(
        [sys.executable, "-m", "recall.entry", "hook", "stop"], input=payload, text=True, capture_output=True, env=env
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert turns.ended_since("conv-stop", None, started) == "the turn ended"
