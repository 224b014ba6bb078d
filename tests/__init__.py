"""recall's tests, a folder per floor of docs/architecture.md's map: ``core/``, ``indexer/``,
``llm/``, ``memory/``, ``search/``, ``rules/``, ``team/``, ``prompt/`` (the prompt hook),
``mcp/``, ``privacy/``, ``service/``, ``setup/`` (the install wing), ``ui/``, ``cli/``; then
``e2e/`` (the real clients), ``benchmarks/`` (the suite's harness and docs/benchmarks.md),
``house/`` (the map, the docs and the suite's hermeticity checked against the code) and
``issues/`` (regression tests of numbered findings that span floors). A new test goes in the
folder of the floor it tests.

What tests share is in ``support/`` (``wait_for``, transcript factories, the Messages API
stand-in, the clients' drivers) and in ``conftest.py`` (the isolated state every test gets, and
the fixtures ``project``, ``claude_projects``, ``standin``, ``claude_env``, ...). What two floors
share belongs there, not in a test module (a few fixtures still live in the module of their floor:
``service/test_service.py``'s ``serve``, ``prompt/test_hook.py``'s ``indexed``, ...).
"""
