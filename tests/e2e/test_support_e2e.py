"""Proves the end-to-end test infrastructure: the API stand-in and the real-client driver."""

from __future__ import annotations

import json
import shlex
import threading
import time

import anthropic
import pytest

from tests.support.claude import ClaudeEnv, require_claude
from tests.support.standin import (
    StandIn,
    error,
    hang,
    is_agent_request,
    is_main_request,
    is_side_request,
    request_text,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def standin():
    with StandIn() as s:
        yield s


@pytest.fixture
def claude_env(tmp_path, standin):
    binary = require_claude()
    return ClaudeEnv.create(tmp_path, standin.url, binary=binary)


def _client(standin: StandIn, **kw) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=standin.url, api_key="x", **kw)


def _user(s: str) -> list[dict]:
    return [{"role": "user", "content": s}]


# --------------------------------------------------------------------------- (a) anthropic SDK


def test_sdk_non_streaming_gets_scripted_text(standin):
    standin.script(text("scripted hello"))
    msg = _client(standin).messages.create(model="claude-haiku-4-5", max_tokens=50, messages=_user("hi"))
    assert msg.content[0].text == "scripted hello"
    assert msg.stop_reason == "end_turn"
    assert msg.model == "claude-haiku-4-5"
    # after the script: the default reply
    again = _client(standin).messages.create(model="m", max_tokens=50, messages=_user("hi again"))
    assert again.content[0].text == "ok"
    reqs = standin.messages_requests()
    assert [r["messages"][0]["content"] for r in reqs] == ["hi", "hi again"]
    headers = reqs[0]["_headers"]  # anthropic 2.x sends a bearer token, 0.x x-api-key
    assert reqs[0]["_path"] == "/v1/messages"
    assert headers.get("x-api-key") == "x" or headers.get("authorization") == "Bearer x"


def test_sdk_streaming_gets_scripted_text_and_tool_use(standin):
    standin.script(
        text("streamed words here"), tool_use("get_weather", {"city": "Paris", "days": [1, 2]}, text="checking")
    )
    client = _client(standin)
    events = list(client.messages.create(model="m", max_tokens=50, messages=_user("hi"), stream=True))
    types = [e.type for e in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert "content_block_start" in types and "content_block_stop" in types
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == "streamed words here"

    with client.messages.stream(model="m", max_tokens=50, messages=_user("weather?")) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].text == "checking"
    assert final.content[1].name == "get_weather"
    assert final.content[1].input == {"city": "Paris", "days": [1, 2]}
    assert standin.messages_requests()[-1]["stream"] is True


def test_sdk_errors_count_tokens_and_handler(standin):
    seen = []

    def handler(req):
        seen.append(req["messages"][0]["content"])
        return text("from handler") if "handled" in req["messages"][0]["content"] else None

    standin.handler = handler
    standin.script(error(529, "Overloaded"))
    client = _client(standin, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as exc:
        client.messages.create(model="m", max_tokens=5, messages=_user("x"))
    assert exc.value.status_code == 529
    assert exc.value.body["error"]["type"] == "overloaded_error"
    assert client.messages.create(model="m", max_tokens=5, messages=_user("handled")).content[0].text == "from handler"
    assert client.messages.create(model="m", max_tokens=5, messages=_user("other")).content[0].text == "ok"
    assert seen == ["handled", "other"]  # the scripted error did not reach the handler
    assert client.messages.count_tokens(model="m", messages=_user("count me")).input_tokens > 0
    # the SDK retries a retryable error by itself and then gets the next reply
    standin.script(error(500, "boom"), text("second try"))
    retrying = _client(standin, max_retries=2)
    assert retrying.messages.create(model="m", max_tokens=5, messages=_user("y")).content[0].text == "second try"


def test_hang_does_not_block_other_requests(standin):
    standin.script(hang(0.8, text("slow")))
    client = _client(standin, max_retries=0)
    result = {}
    t = threading.Thread(
        target=lambda: result.setdefault(
            "slow", client.messages.create(model="m", max_tokens=5, messages=_user("slow")).content[0].text
        )
    )
    t.start()
    standin.wait_for(count=1, timeout=5)
    started = time.monotonic()
    fast = client.messages.create(model="m", max_tokens=5, messages=_user("fast")).content[0].text
    assert fast == "ok" and time.monotonic() - started < 0.6
    t.join(10)
    assert result["slow"] == "slow"
    with pytest.raises(anthropic.APITimeoutError):
        standin.script(hang(3))
        _client(standin, max_retries=0, timeout=0.3).messages.create(model="m", max_tokens=5, messages=_user("z"))


def test_request_classification():
    cc = {"user-agent": "claude-cli/2.1.197 (external, sdk-cli)"}
    main = {
        "_path": "/v1/messages",
        "_method": "POST",
        "_headers": cc,
        "tools": [{"name": "Bash"}],
        "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=1; cc_entrypoint=sdk-cli;"}],
    }
    sub = dict(
        main,
        system=[{"type": "text", "text": "x-anthropic-billing-header: cc_entrypoint=sdk-cli; cc_is_subagent=true;"}],
    )
    title = dict(main, tools=[], output_config={"format": {"type": "json_schema", "schema": {}}})
    sdk = {"_path": "/v1/messages", "_method": "POST", "_headers": {"user-agent": "Anthropic/Python 2.12.0"}}
    assert is_main_request(main) and not is_side_request(main)
    assert is_agent_request(sub) and not is_main_request(sub)
    assert is_side_request(title) and not is_agent_request(title)
    assert is_main_request(sdk)
    assert not is_agent_request({"_path": "/v1/messages/count_tokens", "_method": "POST"})


def test_structured_output_side_call_gets_schema_json(standin):
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    msg = _client(standin).messages.create(
        model="m",
        max_tokens=5,
        messages=_user("title?"),
        extra_body={"output_config": {"format": {"type": "json_schema", "schema": schema}}},
    )
    assert json.loads(msg.content[0].text) == {"title": "stand-in"}


# --------------------------------------------------------------------------- (b)-(d) the real client


def _entries(env: ClaudeEnv) -> list[dict]:
    paths = env.transcripts(include_subagents=False)
    assert len(paths) == 1, paths
    return env.transcript_entries(paths[0])


def _content(entry: dict) -> list[dict]:
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content or []


def test_real_client_tool_use_lands_in_transcript(claude_env, standin):
    call = tool_use("Bash", {"command": "echo hello-from-tool", "description": "Say hello"})
    standin.script(call, text("FINAL-ANSWER all done"))
    proc = claude_env.run("please run the greeting", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "FINAL-ANSWER all done" in proc.stdout
    assert claude_env.last_run_seconds < 30

    mains = standin.main_requests()
    assert len(mains) == 2 and standin.pending == 0
    assert not standin.unknown, standin.unknown
    tool_result = mains[1]["messages"][-1]["content"][-1]
    assert tool_result["type"] == "tool_result" and "hello-from-tool" in json.dumps(tool_result)

    entries = _entries(claude_env)
    users = [e for e in entries if e.get("type") == "user"]
    assistants = [e for e in entries if e.get("type") == "assistant"]
    assert any(b.get("text") == "please run the greeting" for e in users for b in _content(e))
    uses = [b for e in assistants for b in _content(e) if b.get("type") == "tool_use"]
    assert uses and uses[0]["name"] == "Bash" and uses[0]["input"]["command"] == "echo hello-from-tool"
    assert uses[0]["id"] == call.content[-1]["id"]
    results = [b for e in users for b in _content(e) if b.get("type") == "tool_result"]
    assert results and results[0]["tool_use_id"] == uses[0]["id"]
    assert "hello-from-tool" in json.dumps(results[0]["content"])
    texts = [b.get("text") for e in assistants for b in _content(e) if b.get("type") == "text"]
    assert texts[-1] == "FINAL-ANSWER all done"


def test_user_prompt_submit_additional_context_reaches_model_and_transcript(claude_env, standin):
    out = {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "<recalled-context>MARKER-123</recalled-context>",
        }
    }
    seen = claude_env.project / "ups-input.json"
    claude_env.add_hook(
        "UserPromptSubmit", f"cat > {shlex.quote(str(seen))}; printf '%s' {shlex.quote(json.dumps(out))}"
    )
    proc = claude_env.run("what did we decide yesterday?", timeout=60)
    assert proc.returncode == 0, proc.stderr

    hook_input = json.loads(seen.read_text())
    assert hook_input["hook_event_name"] == "UserPromptSubmit"
    assert hook_input["prompt"] == "what did we decide yesterday?"
    assert hook_input["cwd"] == str(claude_env.project)

    main = standin.main_requests()[0]
    assert "MARKER-123" in request_text(main)
    # 2.1.x: a mid-conversation `role: system` message carries the hook's context
    carriers = [m for m in main["messages"] if "MARKER-123" in json.dumps(m)]
    assert carriers
    assert "UserPromptSubmit hook additional context: <recalled-context>MARKER-123</recalled-context>" in json.dumps(
        carriers[0]["content"]
    )

    attachments = [e["attachment"] for e in _entries(claude_env) if e.get("type") == "attachment"]
    ctx = [a for a in attachments if a.get("type") == "hook_additional_context"]
    assert ctx, [a.get("type") for a in attachments]
    assert ctx[0]["hookEvent"] == "UserPromptSubmit"
    assert ctx[0]["content"] == ["<recalled-context>MARKER-123</recalled-context>"]


def test_stop_hook_fires(claude_env, standin):
    marker = claude_env.project / "stop-fired.json"
    claude_env.add_hook("Stop", f"cat > {shlex.quote(str(marker))}")
    standin.script(text("goodbye STOP-TEXT"))
    proc = claude_env.run("say goodbye", timeout=60)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(marker.read_text())
    assert payload["hook_event_name"] == "Stop"
    assert payload["last_assistant_message"] == "goodbye STOP-TEXT"
    transcript = claude_env.transcripts(include_subagents=False)[0]
    assert payload["transcript_path"] == str(transcript)
    assert payload["session_id"] == transcript.stem
