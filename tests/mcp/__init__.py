"""recall/mcp/: the MCP server and its tools."""
