"""End to end: the real Claude Code binary starts `recall mcp` from the project's `.mcp.json`;
the loopback Messages API stand-in makes the model call `mcp__recall__memory_search`, and
the tool result Claude Code records in the transcript holds the memory we indexed."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from indexer.ingest import index_all
from tests.mcp.test_mcp import add_memories
from tests.support.claude import ClaudeEnv, require_claude
from tests.support.factory import Session
from tests.support.standin import StandIn, is_main_request, text, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RECALL_BIN = Path(sys.executable).with_name("recall")


def _tool_results(entries: list[dict], tool_use_id: str) -> list[dict]:
    out = []
    for e in entries:
        content = (e.get("message") or {}).get("content")
        if e.get("type") != "user" or not isinstance(content, list):
            continue
        out += [
            b
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id
        ]
    return out


def _text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def test_claude_code_calls_memory_search_and_records_the_hit(tmp_path, claude_projects):
    binary = require_claude()
    with StandIn() as api:
        env = ClaudeEnv.create(tmp_path / "cc", api.url, binary=binary)
        project = env.project
        # an earlier session of this project, indexed, and a typed memory learned from it
        past = Session(cwd=str(project))
        past.user("how do we reset the staging database?")
        past.assistant("Run `make db-reset-staging` with PGHOST pointing at the staging replica.")
        past.write(claude_projects)
        index_all()
        add_memories(
            [
                {
                    "id": "m-staging-reset",
                    "project": str(project),
                    "type": "pattern",
                    "content": "The staging database is reset with `make db-reset-staging` "
                    "(PGHOST must point at the staging replica).",
                    "tags": ["staging", "database"],
                    "updated": time.time(),
                    "session_ids": [past.session_id],
                }
            ]
        )

        # what `recall setup` writes, plus the environment of this test's RECALL_HOME
        (project / ".mcp.json").write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "recall": {
                            "type": "stdio",
                            "command": str(RECALL_BIN),
                            "args": ["mcp"],
                            "alwaysLoad": True,  # its tools offered up front, not behind a tool search
                            "env": {"RECALL_HOME": os.environ["RECALL_HOME"]},
                        }
                    }
                }
            )
        )
        env.write_settings({"enableAllProjectMcpServers": True})

        call = tool_use("mcp__recall__memory_search", {"query": "staging database reset"})
        tool_id = call.content[-1]["id"]
        api.script(call, text("Use make db-reset-staging."))
        # MCP_CONNECTION_NONBLOCKING=0: -p connects MCP servers in the background by default, so
        # the first request could go out before the server is up; make it wait for the connection
        proc = env.run(
            "How do I reset the staging database?",
            allowed_tools="mcp__recall__memory_search",
            timeout=180,
            env={"MCP_CONNECTION_NONBLOCKING": "0"},
        )
        assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"

        # the model saw our tool, with its description and schema
        first = api.main_requests()[0]
        tools = {t.get("name"): t for t in first.get("tools") or []}
        assert "mcp__recall__memory_search" in tools, sorted(tools)
        assert "mcp__recall__memory_ask" in tools and "mcp__recall__recall_search" in tools
        schema = tools["mcp__recall__memory_search"]["input_schema"]
        assert schema["required"] == ["query"] and "limit" in schema["properties"]

        # the transcript records the tool result, holding the memory and the past session
        results = _tool_results(env.transcript_entries(), tool_id)
        assert len(results) == 1, env.transcript_entries()
        result = results[0]
        assert not result.get("is_error"), result
        body = _text(result)
        assert "db-reset-staging" in body and "m-staging-reset" in body
        assert past.session_id in body
        # and the model got it in the next request
        assert any(
            is_main_request(r) and "db-reset-staging" in json.dumps(r["messages"][-1]) for r in api.main_requests()[1:]
        )
