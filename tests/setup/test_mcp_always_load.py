"""Claude Code 2.1.332 defers an MCP server's tools behind its tool search unless the entry says
``alwaysLoad`` (issue 44, found by CI's newest-client pass): `recall setup`'s entry says it (2.1.197
knows the key too); other agents' entries stay plain."""

from __future__ import annotations

from recall.setup import install


def test_claude_codes_mcp_entry_loads_recalls_tools_up_front():
    out, done, _ = install.merge_mcp({}, ".mcp.json")
    assert out["mcpServers"]["recall"] == {**install.mcp_entry(), "alwaysLoad": True} and done
    assert "alwaysLoad" not in install.mcp_entry()
    # an entry an earlier setup wrote, without the key, is brought up to date
    out, done, _ = install.merge_mcp({"mcpServers": {"recall": install.mcp_entry()}}, ".mcp.json")
    assert out["mcpServers"]["recall"]["alwaysLoad"] is True and done
