"""The papercuts of a first hour with recall (issue 27 item 8), each pinned."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from indexer.ingest import index_all
from tests.support.cli import cli
from tests.support.factory import Session

ROOT = Path(__file__).resolve().parents[2]
RECALL = [sys.executable, "-m", "recall.entry"]


def recall(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*RECALL, *args], capture_output=True, timeout=120, **kw)


def test_a_mistyped_command_says_did_you_mean(capsys):
    code, out, err = cli(capsys, "statsu")
    assert code == 2 and err == (
        "recall: no command `statsu`: did you mean `status`? (To search for the word: `recall search statsu`.)\n"
    )
    code, out, err = cli(capsys, "sesions")
    assert code == 2 and "did you mean `sessions`?" in err


def test_dash_h_is_help_everywhere(capsys):
    for args in (["-h"], ["status", "-h"], ["memories", "add", "-h"], ["service", "install", "-h"]):
        code, out, err = cli(capsys, *args)
        assert code == 0 and out.startswith("Usage: recall") and "-h, --help" in out, args


def test_help_shows_no_python_types_and_is_not_cut_at_eg(capsys):
    pages = []
    for args in (
        [],
        ["index"],
        ["serve"],
        ["remember"],
        ["ask"],
        ["memories", "add"],
        ["service"],
        ["service", "install"],
        ["config"],
        ["rules", "add"],
        ["search"],
        ["sessions"],
        ["log"],
    ):
        code, out, _ = cli(capsys, *args, "--help")
        assert code == 0
        pages.append(out)
    text = "\n".join(pages)
    assert not re.search(r"<(list|str|int|path|Path)[^>]*>", text), re.findall(r"<[^>]+>", text)
    assert "--source DIR" in text and "\n  TYPE  architecture" in text
    assert not re.search(r"\be\.g\.\s*$", text, re.M)


def test_non_utf8_arguments_are_one_line_errors():
    out = recall("--raw", os.fsdecode(b"caf\xe9"))
    assert out.returncode == 2
    assert (
        out.stderr == b"recall: the argument 'caf\\xe9' is not valid UTF-8: set your terminal to UTF-8 "
        b"(LANG=C.UTF-8, say) and type it again.\n"
    )
    assert recall("sessions", "--since", os.fsdecode(b"\xff")).returncode == 2


def test_an_empty_query_is_an_error(capsys):
    for args in (["--raw", ""], ["", "--json"], ["search", "  "]):
        code, out, err = cli(capsys, *args)
        assert (
            code == 2 and err == 'recall: Nothing to search for: give a query, like `recall --raw "stripe webhook"`.\n'
        ), args
    out = recall("--raw", "")
    assert out.returncode == 2 and b"Nothing to search for" in out.stderr


def test_bare_digits_are_not_search_words(claude_projects, capsys):
    s = Session(cwd="/home/dev/infra")
    s.user("the bucket lives in eu-west-1 since the move")
    s.write(claude_projects)
    t = Session(cwd="/home/dev/blog")
    t.user("step 1 of the blog post: pick a title")
    t.write(claude_projects)
    index_all()
    code, out, _ = cli(capsys, "--raw", "--json", "eu-west-1")
    hits = json.loads(out)["hits"]
    assert [h["session_id"] for h in hits] == [s.session_id]
    code, out, _ = cli(capsys, "--raw", "--json", "1")  # a query of digits alone still finds them
    assert {h["session_id"] for h in json.loads(out)["hits"]} == {s.session_id, t.session_id}


def test_forget_before_errors_name_before(capsys):
    code, out, err = cli(capsys, "forget", "--before", "soon", "--yes")
    assert code == 2 and err.startswith("recall: --before takes a span like 2h, 3d or 1w")


def test_sessions_since_a_future_date(claude_projects, capsys):
    s = Session(cwd="/home/dev/shop")
    s.user("hello there, fix the cart")
    s.write(claude_projects)
    index_all()
    code, out, err = cli(capsys, "sessions", "--since", "2099-01-01")
    assert code == 2 and "--since 2099-01-01 is in the future" in err
    code, out, err = cli(capsys, "sessions", "--since", "1h")
    assert code == 0 and out.startswith("No sessions active since 1h; the last one was ")
    assert "No sessions indexed yet" not in out


def test_counts_are_singular_for_one(claude_projects, capsys):
    s = Session(cwd="/home/dev/shop")
    s.user("the one and only message")
    s.write(claude_projects)
    code, out, _ = cli(capsys, "index")
    assert "Indexed 1 message from 1 of 1 file " in out
    code, out, _ = cli(capsys, "status")
    assert "Index:   1 message, 1 session" in out and "1 messages" not in out and "1 sessions" not in out


def test_the_exclude_hint_quotes_its_glob(claude_projects, capsys, tmp_path):
    work = tmp_path / "clients"
    (work / "acme").mkdir(parents=True)
    s = Session(cwd=str(work / "acme"))
    s.user("the acme invoices")
    s.write(claude_projects)
    index_all()
    pattern = f"{work}/*"
    code, out, _ = cli(capsys, "exclude", "add", pattern)
    assert code == 0 and f"`recall exclude add '{pattern}' --purge` removes them." in out


def test_rules_add_says_what_it_added(capsys, tmp_path):
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    code, out, _ = cli(capsys, "rules", "add", "Run make test, not pytest.", "--any", "test", "--project", str(p))
    rid = out.split()[2]
    assert code == 0 and out == (
        f"Added rule {rid} for {p}: told to Claude when any \"test\".\n"
        f"`recall rules test \"PROMPT\"` shows when it fires; `recall rules edit {rid}` "
        "changes it.\n"
    )


def test_memories_columns_have_a_header(capsys, tmp_path):
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    assert cli(capsys, "memories", "add", "gotcha", "the cart test needs UTC", "--project", str(p))[0] == 0
    code, out, _ = cli(capsys, "memories", "--project", str(p))
    lines = out.splitlines()
    assert lines[0] == "gotcha:" and re.match(r"^  ID\s+CONF  USED  MEMORY$", lines[1])
    assert "the cart test needs UTC" in lines[2]


def test_show_has_json(claude_projects, capsys):
    s = Session(cwd="/home/dev/shop")
    s.user("why is the cart test flaky")
    s.assistant("The fixture builds dates in local time.")
    s.write(claude_projects)
    index_all()
    code, out, _ = cli(capsys, "show", s.session_id[:8], "--json")
    data = json.loads(out)
    assert code == 0 and data["session_id"] == s.session_id and data["summary"] is None
    assert data["no_summary"].startswith("No summary (before recall was installed")
    assert [m["role"] for m in data["transcript"]] == ["user", "assistant"]
    assert data["transcript"][1]["text"] == "The fixture builds dates in local time."


def test_the_readme_says_what_a_search_returns():
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith('recall --raw --limit 5 "stripe webhook"'))
    assert "one per session" not in line and "memories and summaries" in line


def test_the_everyday_commands_start_without_typer(claude_projects, tmp_path):
    """What keeps them fast (docs/benchmarks.md has the figures): their plain forms never import
    typer, click or pydantic."""
    probe = (
        "import sys, runpy; sys.argv = ['recall'] + sys.argv[1:]; from recall.entry import main; "
        "code = main(sys.argv[1:]); "
        "print('\\nLOADED', sorted(m for m in ('typer', 'click', 'pydantic', 'anthropic', 'mcp') "
        "if m in sys.modules))"
    )
    for args in (["status"], ["log"], ["sessions"], ["memories", "--project", str(tmp_path)], ["--raw", "anything"]):
        out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip().endswith("LOADED []"), (args, out.stdout[-300:], out.stderr[-500:])
