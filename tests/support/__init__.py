"""End-to-end test infrastructure.

- ``tests.support.standin``: loopback stand-in for the Anthropic Messages API
  (``StandIn``, ``text``, ``tool_use``, ``error``, ``hang``, request predicates);
  its docstring records what Claude Code sends.
- ``tests.support.claude``: drive the real Claude Code binary as a fake user
  (``ClaudeEnv``, ``claude_binary``, ``require_claude``); its docstring records
  how hooks are fed and where transcripts land.
- ``tests.support.cli``: ``cli(capsys, *args)``, the ``recall`` command line run in-process
  (exit code, stdout, stderr).
- ``tests.support.wait``: ``wait_for(pred, timeout, what)``, the suite's one poll-until-true.
- ``tests.support.factory``: ``Session``, a Claude Code transcript written line by line.
- ``tests.support.memory``: projects and worktrees on disk, ``Transcript``, the memory stand-in's
  answers and request predicates.
- ``tests.support.secrets_corpus``: the secrets redaction must catch, and the text it must leave
  alone (the redaction tests and benchmarks read it).

The shared fixtures (``project``, ``claude_projects``, ``standin``, ...) are in tests/conftest.py.
"""
