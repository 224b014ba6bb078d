"""End to end with the real Claude Code client: a prompt that asks for work does not wait for
the model (``recall.prompt.ways``). The hook's first line is Claude Code's async marker, the
prompt goes on at once, and the briefing joins the turn at the model's next request (after the
first tool call). A briefing that is ready only after its turn ended is dropped: it never
reaches the next prompt, although Claude Code would attach it there."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from recall.prompt import injections
from tests.e2e.test_e2e_hook import SYNTH_MARK, recall_requests, recalled_project  # noqa: F401
from tests.support.standin import hang, is_claude_code_request, is_main_request, request_text, text, tool_use
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

TASK = "add the pgbouncer connection pooler settings for postgres to the deploy config"
SYNTH_SECONDS = 2.0


def turns_of(standin, since: int) -> list[dict]:
    """Claude Code's main-loop requests (not its side calls, not recall's synthesis)."""
    return [r for r in standin.snapshot()[since:] if is_claude_code_request(r) and is_main_request(r)]


def script_turns(standin, *replies) -> None:
    """Claude Code's main-loop turns get ``replies`` in order (recall's synthesis never takes one)."""
    standin.script_when = lambda r: is_claude_code_request(r) and is_main_request(r)
    standin.script(*replies)


def slow_synthesis(seconds: float):
    """Haiku stand-in that takes ``seconds`` and writes a briefing from what it was sent."""

    def handler(req):
        if is_claude_code_request(req):
            return None
        if "pgbouncer" in request_text(req):
            return hang(
                seconds, text(f"- {SYNTH_MARK}: pgbouncer in transaction pooling mode [2026-11-20 session abcdef12]")
            )
        return text("NONE")

    return handler


def test_a_task_prompt_goes_on_at_once_and_the_briefing_joins_the_turn(claude_env, standin, recalled_project):
    _session1, mark = recalled_project
    standin.handler = slow_synthesis(SYNTH_SECONDS)
    # the main model's first move is a tool call that lasts until the hook has printed its
    # briefing (it logs the prompt right after), then it answers
    wait = (
        'for i in $(seq 1 900); do grep -q \'"way":"background"\' "$RECALL_HOME/injections.jsonl" 2>/dev/null '
        "&& break; sleep 0.1; done; sleep 1"
    )
    script_turns(standin, tool_use("Bash", {"command": wait, "description": "wait"}), text("done"))
    proc = claude_env.run(TASK, allowed_tools="Bash", timeout=120)
    assert proc.returncode == 0, proc.stderr
    ours = recall_requests(standin, mark)
    assert len(ours) == 1 and "pgbouncer" in request_text(ours[0])
    main = turns_of(standin, mark)
    assert len(main) >= 2
    # the prompt did not wait: Claude Code's first request went out while the model was still writing
    assert main[0]["_time"] < ours[0]["_time"] + SYNTH_SECONDS
    assert SYNTH_MARK not in request_text(main[0])
    # ... and the briefing reached the turn's next request, after the tool's result
    assert SYNTH_MARK in request_text(main[1])
    rec = injections.read()[-1]
    assert rec["way"] == "background" and rec["outcome"] == "synthesized"
    assert rec["held_ms"] < rec["latency_ms"]


def _send(proc, prompt: str) -> None:
    proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
    proc.stdin.flush()


def test_a_briefing_ready_after_its_turn_never_reaches_the_next_prompt(claude_env, standin, recalled_project):
    """One interactive conversation (stream-json): the first prompt's turn ends with an answer
    before the model has written the briefing; the second prompt's request must not carry it."""
    _session1, mark = recalled_project
    standin.handler = slow_synthesis(SYNTH_SECONDS)
    script_turns(standin, text("done at once"), text("second answer"))
    proc = claude_env.popen(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results: list[dict] = []

    def read() -> None:
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "result":
                results.append(event)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        _send(proc, TASK)
        assert wait_for(lambda: len(results) >= 1, timeout=90), "the first turn never ended"
        assert wait_for(lambda: len(recall_requests(standin, mark)) == 1, timeout=30)
        synth = recall_requests(standin, mark)[0]
        # the briefing is written, after its turn ended; the hook has had time to end
        assert wait_for(lambda: time.time() > synth["_time"] + SYNTH_SECONDS + 1.5, timeout=30)
        assert wait_for(lambda: any(r.get("way") == "background" for r in injections.read()), timeout=30)
        _send(proc, "ok thanks, what else is left on the list for today then?")
        assert wait_for(lambda: len(results) >= 2, timeout=90), "the second turn never ended"
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    main = turns_of(standin, mark)
    assert len(main) >= 2
    assert all(SYNTH_MARK not in request_text(r) for r in main)
    first = next(r for r in injections.read() if r.get("way") == "background")
    assert first["outcome"] == "dropped" and "turn ended" in first["why"]


def test_a_question_about_the_past_waits_and_the_briefing_is_in_the_first_request(
    claude_env, standin, recalled_project
):
    """The other way: a question about the past with a strong candidate, whose turn is likely the
    answer alone, waits for the briefing; it is in Claude Code's first request."""
    from tests.e2e.test_e2e_hook import QUESTION

    _session1, mark = recalled_project
    standin.handler = slow_synthesis(SYNTH_SECONDS)
    script_turns(standin, text("pgbouncer, in transaction pooling mode."))
    proc = claude_env.run(QUESTION, timeout=120)
    assert proc.returncode == 0, proc.stderr
    main = turns_of(standin, mark)
    assert main and SYNTH_MARK in request_text(main[0])
    rec = injections.read()[-1]
    assert rec["way"] == "wait" and rec["outcome"] == "synthesized"
