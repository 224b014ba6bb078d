"""Issue 35 item 2: a config.json that does not parse (a trailing comma, bytes that are not
UTF-8) stops nothing silently. The hook, the service and the CLI keep the last good settings
(its exclusions above all) and say once, in one line, what is wrong and where; no command
writes over the file it could not read; ``status`` and ``doctor`` never crash on it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from indexer.ingest import index_all
from recall.core import config, paths
from recall.search.searcher import Searcher
from tests.support.factory import Session
from tests.support.memory import make_project

BROKEN = {
    "trailing comma": lambda good: good.rstrip().rstrip("}").rstrip() + ",\n}\n",
    "not UTF-8": lambda good: good.replace('"exclude"', '"exclude\xff"').encode("latin-1"),
}


def entry(*args: str) -> tuple[int, str, str]:
    """``recall ARGS`` through the real entry point, in-process."""
    from recall.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _break(kind: str) -> bytes:
    good = paths.config_path().read_text(encoding="utf-8")
    bad = BROKEN[kind](good)
    data = bad if isinstance(bad, bytes) else bad.encode("utf-8")
    paths.config_path().write_bytes(data)
    return data


def _walrus(claude_projects, project) -> Session:
    s = Session(cwd=str(project))
    s.user("where is the walrus billing host configured")
    s.assistant("the walrus billing host lives in deploy/billing.yaml")
    s.write(claude_projects)
    return s


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_config_that_does_not_parse_keeps_the_last_good_exclusions(kind, tmp_path, claude_projects):
    client = make_project(tmp_path, "client-acme")
    config.set_value("exclude", [str(client)])
    config.set_value("hook.max_chars", 2000)
    _break(kind)
    cfg = config.load()
    assert cfg["exclude"] == [str(client)] and cfg["hook"]["max_chars"] == 2000
    problem = config.problem()
    assert str(paths.config_path()) in problem and "last good settings" in problem and "\n" not in problem
    _walrus(claude_projects, client)
    index_all()
    assert [h.text for h in Searcher().search("walrus billing", limit=10, messages=True)] == []
    # the service's log says it once, and blames no transcript
    for _ in range(5):
        config.load()
    logs = "".join(p.read_text(errors="replace") for p in paths.log_dir().glob("recall.log*"))
    assert logs.count("is not valid JSON") == 1 and ".jsonl" not in logs


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_no_command_writes_over_a_config_it_could_not_read(kind, tmp_path):
    elsewhere = make_project(tmp_path, "elsewhere")
    config.set_value("exclude", [str(make_project(tmp_path, "secret-client"))])
    before = _break(kind)
    for args in (
        ("exclude", "add", str(elsewhere)),
        ("exclude", "remove", str(tmp_path / "secret-client")),
        ("config", "set", "hook.limit", "5"),
        ("config", "unset", "hook.max_chars"),
    ):
        code, out, err = entry(*args)
        assert code == 2, (args, out, err)
        assert "will not write over" in err and str(paths.config_path()) in err, args
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, args
        assert paths.config_path().read_bytes() == before, args


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_status_and_doctor_say_what_is_wrong_and_never_crash(kind):
    config.set_value("exclude", ["/somewhere/private"])
    _break(kind)
    code, out, err = entry("status")
    assert "Please report it" not in out + err and "unexpected error" not in out + err
    assert err.count("is not valid JSON") == 1 and str(paths.config_path()) in err
    code, out, err = entry("doctor")
    assert "Please report it" not in out + err and "unexpected error" not in out + err
    assert "FAIL  config:" in out and "is not valid JSON" in out and "last good settings" in out
    code, out, err = entry("exclude", "list")
    assert code == 0 and "/somewhere/private" in out and err.count("is not valid JSON") == 1


def test_the_hook_says_it_once_and_keeps_the_exclusions():
    config.set_value("exclude", ["/somewhere/private"])
    _break("not UTF-8")

    def hook() -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "recall.entry", "hook", "user-prompt-submit"],
            input=json.dumps({"prompt": "thanks!", "session_id": "s1", "cwd": "/tmp"}),
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(os.environ),
        )
        assert proc.returncode == 0 and proc.stderr == ""
        return json.loads(proc.stdout) if proc.stdout.strip() else {}

    first = hook()
    assert "is not valid JSON" in first["systemMessage"] and str(paths.config_path()) in first["systemMessage"]
    assert hook() == {}  # once
    paths.config_path().write_text('{"exclude": ["/somewhere/private"]}\n')
    assert hook() == {}
    _break("trailing comma")
    assert "is not valid JSON" in hook()["systemMessage"]  # broken again: said again
