"""The everyday commands and a shell search import and compile only what they use (issue 48
items 4 and 6): `recall status` compiles none of the redaction patterns and imports no
searcher; `recall --raw` answered by the service builds no ``Hit`` dataclass (nor imports
dataclasses, typing or datetime), and prints exactly what the typer CLI prints."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest

from indexer.ingest import index_all
from recall import entry
from recall.cli import everyday
from recall.cli.app import run
from recall.core.lazy_re import lazy
from recall.search import run as search_run
from recall.search.hit import Hit
from tests.search.test_index_search import webhook_session
from tests.service.test_client import server  # noqa: F401 - the in-process service fixture

# In a new process: run the command, then say on stderr which watched modules it loaded and
# how many of the redaction rules' patterns are compiled (a module-level re.Pattern, a table
# entry, or a lazy pattern that has been used).
PROBE = """
import json, re, sys
from recall.entry import main
rc = main(sys.argv[1:])
watch = set(json.loads(WATCH))
red = sys.modules.get("indexer.redact")

def compiled(v):
    if isinstance(v, re.Pattern):
        return 1
    if type(v).__name__ == "LazyPattern":
        return int("match" in vars(v))
    if isinstance(v, (list, tuple)):
        return sum(compiled(x) for x in v)
    if isinstance(v, dict):
        return sum(compiled(x) for x in v.values())
    return 0

n = sum(compiled(v) for v in vars(red).values()) if red else 0
loaded = sorted(m for m in sys.modules if m in watch or m.split(".")[0] in watch)
print(json.dumps({"loaded": loaded, "redaction_patterns_compiled": n, "redact_imported": red is not None}), file=sys.stderr)
sys.exit(rc)
"""


def probe(args: list[str], watch: tuple[str, ...]) -> tuple[str, dict]:
    code = PROBE.replace("WATCH", repr(json.dumps(list(watch))))
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


HEAVY = ("typer", "click", "rich", "recall.search.searcher", "recall.search.confidence", "recall.search.query")


def test_status_compiles_no_redaction_pattern_and_imports_no_searcher(claude_projects):
    webhook_session().write(claude_projects)
    index_all()
    out, seen = probe(["status"], HEAVY)
    assert "Index:   4 messages, 1 session" in out  # it did count the index (opened without a searcher)
    assert seen["loaded"] == []
    # status reads the redaction rules' version (a pass under way?): the module is imported,
    # none of its ~200 patterns compiled (they were 40% of status's time)
    assert seen["redaction_patterns_compiled"] == 0


def test_the_other_everyday_commands_compile_no_redaction_pattern(claude_projects, tmp_path):
    s = webhook_session()
    s.write(claude_projects)
    index_all()
    for args in (
        ["log"],
        ["sessions"],
        ["show", s.session_id[:8], "--no-pager"],
        ["memories", "--project", str(tmp_path)],
    ):
        _, seen = probe(args, ("typer", "click", "rich"))
        assert seen["loaded"] == [] and seen["redaction_patterns_compiled"] == 0, (args, seen)


def test_with_the_service_a_shell_search_builds_no_hit_dataclass(claude_projects, server):  # noqa: F811
    webhook_session().write(claude_projects)
    index_all()
    out, seen = probe(
        ["--raw", "--limit", "5", "webhook signatures"],
        ("dataclasses", "typing", "datetime", "recall.search.hit", "recall.search.timespec", "shutil"),
    )
    assert "**signatures**" in out
    assert seen["loaded"] == [] and not seen["redact_imported"]


@pytest.mark.parametrize(
    "args",
    [
        ["--raw", "--limit", "5", "webhook signatures"],
        ["--raw", "--json", "-n", "2", "stripe"],
        ["--json", "--messages", "stripe"],
        ["--raw", "nothing-matches-this-zzz"],
        ["--raw", "--since", "30d", "stripe"],
        ["--raw", "--since", "yesterday", "x"],  # a RecallError: the same one line
    ],
)
def test_with_the_service_the_fast_path_prints_what_the_typer_cli_prints(claude_projects, capsys, server, args):  # noqa: F811
    webhook_session().write(claude_projects)
    index_all()
    fast = (entry.main(list(args)), *capsys.readouterr())
    slow = (run(list(args)), *capsys.readouterr())
    assert fast == slow


def test_service_rows_read_like_hits():
    assert search_run.HIT_FIELDS == tuple(f.name for f in dataclasses.fields(Hit))
    hit = Hit("s1", "u1", "/p", "/p/src", "2026-11-01T09:00:00Z", "user", "text", "snip", 1.23456, kind="memory")
    row = json.loads(json.dumps(hit.as_json()))  # as the socket carries it
    light = search_run.ServiceHit(row)
    assert light.as_json() == Hit(**row).as_json() == row
    for name in search_run.HIT_FIELDS:
        assert getattr(light, name) == getattr(Hit(**row), name), name
    with pytest.raises(AttributeError):
        light.nonsense  # noqa: B018
    assert search_run._service_rows([row]) and not search_run._service_rows([{**row, "new_field": 1}])
    assert not search_run._service_rows([{"session_id": "s"}]) and not search_run._service_rows({"a": 1})


def test_a_lazy_pattern_is_the_pattern():
    rx = lazy(r"(\w+)@(\w+)", re.I)
    assert rx.pattern == r"(\w+)@(\w+)" and "match" not in vars(rx)  # nothing compiled yet
    assert rx.search("mail Bob@Example now").groups() == ("Bob", "Example")
    assert rx.sub(r"\2", "a@b c@d") == "b d" and rx.findall("a@b") == [("a", "b")]
    assert rx.flags == re.compile(rx.pattern, re.I).flags and "match" in vars(rx)


def test_archive_stats_count_what_the_glob_finds():
    from recall.core import paths

    root = paths.archive_dir() / "sessions"
    for rel, body in (
        ("-p-a/s1.jsonl", "x" * 10),
        ("-p-a/s2.jsonl", "y" * 5),
        ("-p-b/.hidden.jsonl", "z"),
        ("-p-b/notes.txt", "ignored"),
        ("loose.jsonl", "not in a project folder"),
        ("-p-c/deeper/s3.jsonl", "too deep"),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    os.symlink(root / "-p-a", root / "-p-link")
    found = list(root.glob("*/*.jsonl"))
    assert everyday._archive_stats() == {
        "path": str(paths.archive_dir()),
        "sessions": len(found),
        "bytes": sum(p.stat().st_size for p in found),
    }
    assert len(found) == 5
