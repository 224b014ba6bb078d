"""The MCP server (``recall mcp``) and the library functions behind its tools."""
