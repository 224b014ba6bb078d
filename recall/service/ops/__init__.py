"""The service's ops, one module per feature; ``recall.service.registry.OP_MODULES`` lists them.

``search``  "search" and "ping"
``hook``    "hook_context": the prompt hook's search and synthesis
``mcp``     the ops behind the MCP tools
``index``   the ops on the index: "status", "index", "memory_docs", "forget"
``memory``  "capture", "memory_fold", and the service's memory worker thread
``team``    the team sync in the service, and its ops
"""
