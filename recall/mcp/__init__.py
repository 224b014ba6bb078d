"""The MCP server (``recall mcp``) and the library functions behind its tools.

``server``      the server and its tools' declarations
``tools``       the functions behind the memory tools (search, related, ask)
``rule_tools``  the functions behind the rule tools
"""
