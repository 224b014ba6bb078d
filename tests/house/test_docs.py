"""The docs tell the truth: every command and option is in docs/cli.md, and the examples in
docs/cli.md, docs/rules.md and the README run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import typer.main

from recall.cli.app import app, run
from tests.support.factory import Session

ROOT = Path(__file__).resolve().parents[2]
CLI_MD = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
RULES_MD = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix=()):
    for name, cmd in group.commands.items():
        path = (*prefix, name)
        yield path, cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path)


COMMANDS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_and_option_is_documented(path, cmd):
    assert f"recall {' '.join(path)}" in CLI_MD, f"docs/cli.md does not mention `recall {' '.join(path)}`"
    for param in cmd.params:
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert opt in CLI_MD, f"docs/cli.md does not mention {opt} of `recall {' '.join(path)}`"


def _examples(markdown: str) -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", markdown, re.S):
        for line in block.splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("recall ") and "|" not in line:
                lines.append(line)
    return lines


EXAMPLES = sorted(set(_examples(CLI_MD) + _examples(README) + _examples(RULES_MD)))


def test_there_are_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("line", EXAMPLES)
def test_documented_examples_run(line, claude_projects, tmp_path, monkeypatch, capsys):
    s = Session(cwd=str(tmp_path / "shop"))
    (tmp_path / "shop").mkdir()
    s.user("the stripe webhook and the flaky test; auth middleware; why did we drop redis?")
    s.assistant("We decided to verify signatures with the vault secret.")
    s.write(claude_projects)
    (tmp_path / "old-laptop" / ".claude" / "projects").mkdir(parents=True)
    (tmp_path / "code" / "secret-client").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "shop")
    assert run(["index"]) == 0
    argv = [a.replace("~", str(tmp_path)) for a in shlex.split(line)[1:]]
    code = run(argv)
    out = capsys.readouterr()
    if argv[0] == "doctor":  # nothing is set up here: it must say what to fix, and exit 1
        assert code in (0, 1) and ("fix:" in out.out or code == 0), out
    else:
        assert code == 0, out.err
