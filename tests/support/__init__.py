"""End-to-end test infrastructure.

- ``tests.support.standin``: loopback stand-in for the Anthropic Messages API
  (``StandIn``, ``text``, ``tool_use``, ``error``, ``hang``, request predicates);
  its docstring records what Claude Code sends.
- ``tests.support.claude``: drive the real Claude Code binary as a fake user
  (``ClaudeEnv``, ``claude_binary``, ``require_claude``); its docstring records
  how hooks are fed and where transcripts land.
- ``tests.support.cli``: ``cli(capsys, *args)``, the ``recall`` command line run in-process
  (exit code, stdout, stderr).
"""
