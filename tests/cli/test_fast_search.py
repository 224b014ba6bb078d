"""`recall --raw/--json QUERY` skips typer: same answers as the typer CLI, fewer imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from indexer.ingest import index_all
from recall import entry
from recall.cli import fast_search
from recall.cli.app import app, run
from tests.search.test_index_search import webhook_session
from tests.service.test_client import server  # noqa: F401 - the in-process service fixture


def test_commands_match_the_typer_app():
    import typer

    group = typer.main.get_command(app)
    assert fast_search.COMMANDS - {"hook"} == set(group.commands) - {"search"}  # hook: recall.entry


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--raw", "webhook"], {"text": "webhook", "raw": True, "limit": 10}),
        (["--raw", "--limit", "5", "what", "did we decide"], {"text": "what did we decide", "limit": 5}),
        (["-n3", "--json", "x"], {"limit": 3, "as_json": True, "raw": False}),
        (["--limit=7", "--raw", "x", "--messages"], {"limit": 7, "messages": True}),
        (["search", "--raw", "--since", "3d", "--project", "/p", "x"], {"since": "3d", "project": "/p"}),
        (["--raw", "--", "--limit", "-n"], {"text": "--limit -n", "limit": 10}),
        (["--raw", "-", "x"], {"text": "- x"}),
    ],
)
def test_parse_accepts_plain_searches(args, expected):
    opts = fast_search.parse(args)
    assert opts is not None and {k: opts[k] for k in expected} == expected


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["index"],
        ["status", "--json"],
        ["--help"],
        ["--version"],
        ["--raw"],  # no query words
        ["webhook"],
        ["--limit", "5", "webhook"],  # a synthesized answer: the full CLI
        ["--raw", "--limit", "0", "x"],
        ["--raw", "--limit", "many", "x"],
        ["--raw", "--limit"],
        ["--raw", "--bogus", "x"],
        ["--raw", "-5", "x"],
        ["--raw", "--limit=", "x"],
        ["--raw", "--limit", "1001", "x"],
    ],
)
def test_parse_leaves_everything_else_to_typer(args):
    assert fast_search.parse(args) is None


@pytest.mark.parametrize(
    "args",
    [
        ["--raw", "--limit", "5", "webhook signatures"],
        ["--raw", "--json", "-n", "2", "stripe"],
        ["search", "--json", "--messages", "stripe"],
        ["--raw", "nothing-matches-this-zzz"],
        ["--raw", "--since", "yesterday", "x"],  # a RecallError: the same one line
        ["--raw", "--project", "/nowhere/at/all", "stripe"],
    ],
)
def test_same_output_as_the_typer_cli(claude_projects, capsys, args):
    webhook_session().write(claude_projects)
    index_all()
    assert fast_search.parse(args) is not None
    fast = (entry.main(list(args)), *capsys.readouterr())
    slow = (run(list(args)), *capsys.readouterr())
    assert fast == slow


def test_same_error_without_an_index(capsys):
    fast = (entry.main(["--raw", "x"]), *capsys.readouterr())
    slow = (run(["--raw", "x"]), *capsys.readouterr())
    assert fast == slow and fast[0] == 1 and "run `recall index`" in fast[2]


def shell_search(watch: tuple[str, ...]) -> list[str]:
    """`recall --raw --json stripe` in a new process: asserts it found hits, returns which of
    the ``watch`` modules (top-level names, or full names) it imported."""
    code = (
        "import sys, json; from recall.entry import main; rc = main(['--raw', '--json', 'stripe']); "
        f"watch = {watch!r}; "
        "print(json.dumps(sorted(m for m in sys.modules if m in watch or m.split('.')[0] in watch)), "
        "file=sys.stderr); sys.exit(rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hits"]
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_shell_search_does_not_import_typer(claude_projects):
    webhook_session().write(claude_projects)
    index_all()
    assert shell_search(("typer", "click", "rich", "anthropic", "mcp")) == []


def test_with_the_service_a_shell_search_imports_neither_tantivy_nor_the_indexer(claude_projects, server):
    webhook_session().write(claude_projects)
    index_all()
    assert shell_search(("typer", "click", "rich", "tantivy", "indexer", "sqlite3", "recall.search.searcher")) == []
