"""The first hour, round two (issue 36): messages that say what is true."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recall.core import paths
from tests.memory.test_sessions import two_sessions  # noqa: F401 (fixture)
from tests.support.cli import cli


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    return project


# item 13 -------------------------------------------------------------------------------------------------------
def test_ask_with_a_logged_out_claude_names_the_ways_out(project, capsys, claude_logged_out):
    cli(capsys, "memories", "add", "decision", "We picked pgbouncer in transaction mode")
    code, out, err = cli(capsys, "ask", "which pooler did we pick?")
    assert code == 1
    assert "Claude Code answered with an error: Not logged in" in err
    assert (
        "Ways out: `recall ask --or-hits ...` prints the best matches without a model; give recall an API key "
        "(export ANTHROPIC_API_KEY or `recall config set api_key KEY`); or log Claude Code in (`claude /login`)." in err
    )
    assert len(err.strip().splitlines()) == 1
    code, out, _ = cli(capsys, "ask", "--or-hits", "which pooler did we pick?")
    assert code == 0 and "pgbouncer" in out


def test_a_backfill_stopped_by_a_logged_out_claude_says_to_log_in_first(two_sessions, capsys, claude_logged_out):
    from recall.core import config

    config.save({"memory": {"idle_seconds": 0, "timeout_seconds": 5}})
    code, out, err = cli(capsys, "memories", "--backfill", "--all-projects", "--yes")
    assert code == 1 and "Backfill stopped (" in err and "Not logged in" in err
    assert "Log Claude Code in (`claude /login`) or give recall an API key" in err
    assert "then run the same command again: it goes on where it stopped." in err


# item 14 -------------------------------------------------------------------------------------------------------
def test_ask_outside_any_project_says_so_and_fails(tmp_path, capsys, monkeypatch, claude_logged_out):
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    monkeypatch.chdir(nowhere)
    code, out, err = cli(capsys, "ask", "what did we decide?")
    assert code == 2 and out == ""
    assert f"No past session ran in {nowhere.resolve()} and it has no memories" in err
    assert "--all-projects" in err and "Nothing" not in err


# item 15 -------------------------------------------------------------------------------------------------------
def test_forget_secret_keeps_the_summaries_that_do_not_hold_it_and_show_says_what_forget_removed(
    claude_projects, project, capsys
):
    from indexer.forgetting import SECRET_MARK, Selection
    from indexer.ingest import Indexer, index_all
    from recall.memory import summaries
    from recall.privacy.forget import forget_everywhere, plan
    from tests.support.factory import Session

    secret = "hunter2-Vq8Kd93xLmZ"
    s = Session(cwd=str(project))
    s.user(f"the staging door opens with {secret}, the pelican cache warms at boot")
    s.write(claude_projects)
    other = Session(cwd=str(project))
    other.user(f"again {secret} for the heron queue")
    other.assistant("the queue drains nightly at two")
    other.write(claude_projects)
    index_all()
    summaries.put(s.session_id, str(project), f"Goal: warm the pelican cache; the door code was {secret}.")
    summaries.put(other.session_id, str(project), "Goal: drain the heron queue.")
    sel = Selection(secret=secret).check()
    assert plan(sel)["summaries"] == 1
    with Indexer() as ix:
        out = forget_everywhere(ix, sel)
    assert out.get("summaries_rewritten") == 1
    assert summaries.get(other.session_id)["summary"] == "Goal: drain the heron queue."
    assert summaries.get(s.session_id)["summary"] == f"Goal: warm the pelican cache; the door code was {SECRET_MARK}."
    code, out, _ = cli(capsys, "show", other.session_id)
    assert "Goal: drain the heron queue." in out and "No summary" not in out

    # a forget that takes a session's messages takes its summary: show says so, not "before recall"
    with Indexer() as ix:
        forget_everywhere(ix, Selection(match="heron").check())
    assert summaries.get(other.session_id) is None
    code, out, _ = cli(capsys, "show", other.session_id)
    assert "No summary: `recall forget` removed it with what was forgotten" in out
    assert "before recall was installed" not in out


# item 16 -------------------------------------------------------------------------------------------------------
def test_bad_values_get_recall_s_wording(capsys, tmp_path):
    code, _, err = cli(capsys, "search", "--limit", "abc", "redis")
    assert code == 2 and err.strip() == (
        "recall: --limit/-n takes a whole number. Run `recall search --help` to see what it takes."
    )
    assert "Input should be" not in err
    code, _, err = cli(capsys, "config", "set", "hook.max_chars", "-5")
    assert code == 2 and "hook.max_chars is a number >= 0, not '-5'" in err and "No such option" not in err


def test_a_non_utf8_argument_is_shown_with_single_backslashes(capfd):
    import os
    import subprocess
    import sys

    bad = os.fsdecode(b"caf\xe9 redis")
    proc = subprocess.run([sys.executable, "-m", "recall.entry", "--raw", bad], capture_output=True, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert "the argument 'caf\\xe9 redis' is not valid UTF-8" in err and "\\\\x" not in err


def test_the_purge_hint_keeps_global(capsys, tmp_path, monkeypatch):
    (tmp_path / "recall-home").mkdir(exist_ok=True)
    (tmp_path / "recall-home" / "config.json").write_text("{}")
    code, _, err = cli(capsys, "setup", "--uninstall", "--global", "--purge")
    assert code == 2, err
    assert "run the same `recall setup --uninstall --global --purge` again with --yes" in err


# item 17 -------------------------------------------------------------------------------------------------------
def test_a_failed_team_join_says_nothing_was_joined(tmp_path, capsys):
    url = f"postgresql://alice@/shop?host={tmp_path / 'no-server'}&port=5999"
    code, out, err = cli(capsys, "team", "join", url)
    assert code != 0 and "Cannot reach the team server" in err
    assert "sync resumes" not in err and "Nothing was joined" in err and "recall team join" in err
    code, out, _ = cli(capsys, "team", "status")
    assert "Not in a team" in out


def test_team_status_says_an_unreachable_server_once_and_counts_in_words(capsys, monkeypatch):
    from recall.team import member

    error = (
        "Cannot reach the team server shop@db (connection refused). Everything local keeps working; sync "
        "resumes by itself when it is back."
    )
    monkeypatch.setattr(
        member,
        "status",
        lambda: {
            "joined": True,
            "server": "shop@db",
            "role": "alice",
            "reachable": False,
            "error": error,
            "service": {"connected": False, "error": error},
            "projects": [],
            "shared_last_day": {"memory": 1, "summary": 0, "rule": 0, "withdrawn": 0},
            "on_server": 1,
            "not_indexed": 0,
            "last_push": None,
            "last_pull": None,
        },
    )
    code, out, _ = cli(capsys, "team", "status")
    assert out.count("Everything local keeps working") == 1, out
    assert "Sync: not connected (the server cannot be reached, as above); it retries by itself." in out
    assert "1 item sent (1 memory)" in out
    # the service not running: still said once
    monkeypatch.setattr(
        member,
        "status",
        lambda: {
            "joined": True,
            "server": "shop@db",
            "role": "alice",
            "reachable": False,
            "error": error,
            "service": None,
            "projects": [],
            "shared_last_day": {"memory": 2, "withdrawn": 0},
            "on_server": 2,
            "not_indexed": 0,
            "last_push": None,
            "last_pull": None,
        },
    )
    code, out, _ = cli(capsys, "team", "status")
    assert out.lower().count("everything local") == 1, out
    assert "Sync: paused, the recall service is not running (`recall service start`)." in out


# item 18 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "state, said",
    [
        (
            "starting",
            "recall: the service has only started indexing your history: these results cover what is indexed "
            "so far (newest sessions first); `recall status` shows how far it is.",
        ),
        ("watching", ""),
    ],
)
def test_raw_search_says_the_service_has_not_indexed_the_history_yet(claude_projects, state, said):
    """Between the service's start and its backfill's first figures (setup returns, the README's
    `recall --raw` runs at once), a search says its results are partial; caught up, it says nothing."""
    import subprocess
    import sys

    from indexer.ingest import Indexer
    from tests.support.factory import Session

    s = Session()
    s.user("the retry budget for webhooks")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    paths.service_status_path().write_text(
        json.dumps({"running": True, "pid": os.getpid(), "state": state, "backfill": None})
    )
    out = subprocess.run(
        [sys.executable, "-m", "recall.entry", "--raw", "--limit", "5", "retry budget"],
        capture_output=True,
        text=True,
        env=dict(os.environ, RECALL_NO_SERVICE="1"),
        timeout=120,
    )
    assert out.returncode == 0 and "webhooks" in out.stdout
    assert out.stderr.strip() == said


# item 19 -------------------------------------------------------------------------------------------------------
def _git(cwd, *args) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1"),
    ).stdout


def test_a_claude_md_recall_created_stays_out_of_git_status_and_a_user_s_stays_theirs(tmp_path, capsys):
    from recall.memory.store import CLAUDE_MD_EXCLUDE_NOTE

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    _git(theirs, "init", "-q")
    (theirs / "CLAUDE.md").write_text("# House rules\nRun make test.\n")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _git(fresh, "init", "-q")
    for project in (fresh, theirs):
        code, _, err = cli(capsys, "memories", "add", "decision", "We picked pgbouncer", "--project", str(project))
        assert code == 0, err
        assert "MEMORY:START" in (project / "CLAUDE.md").read_text()
    # recall created fresh/CLAUDE.md: not in git status; .memory/ neither
    assert _git(fresh, "status", "--porcelain") == "", (fresh / ".git" / "info" / "exclude").read_text()
    exclude = (fresh / ".git" / "info" / "exclude").read_text()
    assert f"{CLAUDE_MD_EXCLUDE_NOTE}\n/CLAUDE.md\n" in exclude
    # theirs had a CLAUDE.md of its own: still the user's to see and track
    assert "CLAUDE.md" in _git(theirs, "status", "--porcelain")
    assert "/CLAUDE.md" not in (theirs / ".git" / "info" / "exclude").read_text()
    # a purge takes out recall's lines only
    from recall.setup import uninstall

    lines = ["# the user's\n", "/CLAUDE.md\n", "/.memory/\n", CLAUDE_MD_EXCLUDE_NOTE + "\n", "/CLAUDE.md\n"]
    assert uninstall._without_recall_lines(lines) == ["# the user's\n", "/CLAUDE.md\n"]


def test_a_claude_md_an_older_recall_created_is_excluded_at_its_next_write(tmp_path, capsys):
    project = tmp_path / "older"
    project.mkdir()
    _git(project, "init", "-q")
    code, _, err = cli(capsys, "memories", "add", "decision", "We picked pgbouncer", "--project", str(project))
    assert code == 0, err
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text("\n".join(ln for ln in exclude.read_text().splitlines() if "CLAUDE" not in ln) + "\n")
    assert "CLAUDE.md" in _git(project, "status", "--porcelain")  # as an older recall left it
    cli(capsys, "memories", "add", "gotcha", "Redis must run first", "--project", str(project))
    assert _git(project, "status", "--porcelain") == ""


# item 4 --------------------------------------------------------------------------------------------------------
def test_an_unchanged_memory_file_is_not_re_indexed_on_every_rescan(monkeypatch):
    """A session run in $HOME makes $HOME a project: ~/.claude/CLAUDE.md is then found twice
    (the user's file, and that project's .claude/CLAUDE.md); the service logged "Claude Code memory
    files: 1 re-indexed" every 30 s for it."""
    from indexer import native_memory as nm
    from indexer.ingest import Indexer, index_all
    from tests.support.factory import Session

    home = Path(os.environ["HOME"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    projects = home / ".claude" / "projects"
    projects.mkdir(parents=True)
    s = Session(cwd=str(home))
    s.user("a question asked from the home folder")
    s.write(projects)
    (home / ".claude" / "CLAUDE.md").write_text("# Mine\nAlways run make test.\n")
    index_all()
    with Indexer() as ix:
        first = nm.sync(ix, [projects])
        again = [nm.sync(ix, [projects]) for _ in range(2)]
    assert first["indexed"] == 0  # index_all took it in already
    assert [a["indexed"] for a in again] == [0, 0]
    assert nm.load_registry()["files"][str(home / ".claude" / "CLAUDE.md")]["project"] == ""


# item 1 --------------------------------------------------------------------------------------------------------
def _new_shell(home: Path, *args: str):
    """`recall ARGS` typed in a new shell of that user: ~/.local/bin on PATH, nothing else of ours."""
    import subprocess

    env = {"HOME": str(home), "PATH": f"{home / '.local' / 'bin'}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(["sh", "-c", 'recall "$@"', "sh", *args], capture_output=True, text=True, env=env, timeout=60)


def test_plugin_users_get_recall_on_path_saying_what_to_do_until_the_runtime_is_built(tmp_path, monkeypatch):
    from recall.setup import plugin_runtime as pr
    from tests.setup.test_plugin import fake_runtime

    home = Path(os.environ["HOME"])
    data = home / ".claude" / "plugins" / "data" / "recall-recall"
    data.mkdir(parents=True)
    line = pr.put_command_on_path(data)
    link = home / ".local" / "bin" / "recall"
    assert line.startswith(f"linked {link} -> {data / 'bin' / 'recall'}")
    assert os.readlink(link) == str(data / "bin" / "recall")
    # not built yet: one line with the next step, not the shell's "No such file or directory" (rc 127)
    proc = _new_shell(home, "status")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (
        "recall: the Claude Code plugin's runtime is not built yet: start a Claude Code session "
        "(its start builds it in the background, a minute or two), then run recall again.\n"
    )
    # while it builds (or after it failed): what the builder says
    (data / "build.state").write_text("recall: its runtime (version 0.1.0) is being built in the background.\n")
    assert (
        _new_shell(home, "status").stderr == "recall: its runtime (version 0.1.0) is being built in the background.\n"
    )
    # built: the runtime's recall, with the plugin's data folder
    fake_runtime(data)
    proc = _new_shell(home, "status", "--json")
    assert proc.stdout.strip() == f"ran: status --json data={data}" and proc.returncode == 3
    assert pr.put_command_on_path(data).endswith("(already)")


def test_the_plugin_never_links_over_a_recall_that_is_not_its_own(tmp_path):
    from recall.setup import plugin_runtime as pr

    home = Path(os.environ["HOME"])
    data = home / ".claude" / "plugins" / "data" / "recall-recall"
    data.mkdir(parents=True)
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    other = tmp_path / "venv" / "bin" / "recall"  # recall setup's link, or another tool called recall
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\necho other\n")
    (bin_dir / "recall").symlink_to(other)
    assert "is not this plugin's" in pr.put_command_on_path(data)
    assert os.readlink(bin_dir / "recall") == str(other)
    (bin_dir / "recall").unlink()
    (bin_dir / "recall").write_text("#!/bin/sh\necho a tool of its own\n")
    assert "left alone" in pr.put_command_on_path(data)
    assert (bin_dir / "recall").read_text() == "#!/bin/sh\necho a tool of its own\n"
    # a link of this plugin from another marketplace's data folder is ours to repoint
    (bin_dir / "recall").unlink()
    (bin_dir / "recall").symlink_to(home / ".claude" / "plugins" / "data" / "recall-old" / "bin" / "recall")
    assert pr.put_command_on_path(data).startswith("linked")


def test_the_runtime_build_puts_recall_on_path_from_its_start(tmp_path, monkeypatch):
    """The first session's start runs the builder: the link is there before the build ends (here
    it fails at once: no plugin source), and says what failed."""
    import subprocess
    import sys

    from recall.setup import plugin_runtime as pr

    home = Path(os.environ["HOME"])
    data = home / ".claude" / "plugins" / "data" / "recall-recall"
    empty = tmp_path / "empty-plugin"
    empty.mkdir()
    proc = subprocess.run(
        [sys.executable, "-I", pr.__file__, "build", "--root", str(empty), "--data", str(data), "--version", "0.1.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert os.readlink(home / ".local" / "bin" / "recall") == str(data / "bin" / "recall")
    out = _new_shell(home, "doctor")
    assert out.returncode == 1 and out.stderr.startswith("recall: building its runtime failed:")


# item 6 --------------------------------------------------------------------------------------------------------
def _program(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "recall"
    exe.write_text(text)
    exe.chmod(0o755)
    return exe


OTHER_TOOL = "#!/usr/bin/python3\nimport sys\nfrom recall_cli.main import app\nsys.exit(app())\n"


def test_doctor_says_when_the_recall_on_path_is_not_this_install(tmp_path, capsys, monkeypatch):
    from recall.cli import checks
    from recall.control import units

    this = _program(tmp_path / "this" / "bin", "#!/bin/sh\n# from recall.entry import main\n")
    monkeypatch.setattr(units, "recall_executable", lambda: [str(this)])
    monkeypatch.setenv("PATH", f"{this.parent}{os.pathsep}{os.environ['PATH']}")
    c = checks.check_command()
    assert c.ok and c.detail == f"`recall` on your PATH is this install ({this})"
    other = _program(tmp_path / "other" / "bin", OTHER_TOOL)
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}{os.environ['PATH']}")
    c = checks.check_command()
    assert not c.ok and c.warn
    assert c.detail == (
        f"`recall` on your PATH ({other}) is another program, not this install ({this}): typing `recall` runs that one"
    )
    second = _program(tmp_path / "second" / "bin", "#!/x/python\nfrom recall.entry import main\nmain()\n")
    monkeypatch.setenv("PATH", f"{second.parent}{os.pathsep}{os.environ['PATH']}")
    assert "is another install of recall, not this install" in checks.check_command().detail
    code, out, _ = cli(capsys, "doctor")
    assert f"warn  recall command: `recall` on your PATH ({second}) is another install of recall" in out


def test_setup_never_takes_the_recall_command_of_another_tool(tmp_path, capsys, monkeypatch):
    from recall.setup import install as st

    this = _program(tmp_path / "venv" / "bin", "#!/bin/sh\n# from recall.entry import main\n")
    monkeypatch.setattr(st, "recall_executable", lambda: [str(this)])
    other = _program(tmp_path / "usr-local" / "bin", OTHER_TOOL)
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}{os.environ['PATH']}")
    report, created = st.Report(), []
    st.link_command(report, created)
    link = Path(os.environ["HOME"]) / ".local" / "bin" / "recall"
    assert not os.path.lexists(link) and created == []
    assert report.notes == [
        f"`recall` on your PATH is another program ({other}): setup did not link this install "
        f"over it; run this recall as {this} (an alias works: alias recall={this})"
    ]
    assert other.read_text() == OTHER_TOOL


# item 3 --------------------------------------------------------------------------------------------------------
def test_with_setup_first_the_plugin_s_slash_commands_stand_down_and_doctor_says_which(tmp_path, capsys, monkeypatch):
    """`recall setup`, then the plugin: setup is the active install everywhere. Its hooks answer (the
    plugin's stand down per event), its MCP server serves the tools (the plugin's has none), and
    the plugin's /recall:... commands point to setup's /recall... instead of answering twice."""

    from recall import entry
    from recall.cli.commands.mcp import _stand_down
    from tests.setup.test_plugin import enable_plugin

    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    assert cli(capsys, "setup", "--global", "--no-service", "--no-index")[0] == 0
    data = enable_plugin(tmp_path)
    monkeypatch.setenv("RECALL_PLUGIN_DATA", str(data))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    # the plugin's slash commands: one line pointing to setup's, nothing run
    for args in (["ask", "--or-hits", "which pooler?"], ["--raw", "--limit", "5", "pooler"], ["remember", "x y"]):
        code = entry.main(args)
        out = capsys.readouterr().out
        assert code == 0 and out.startswith("recall setup's /recall, /recall-search and /remember (")
        assert "the plugin's /recall:... commands stand down" in out
    # the plugin's MCP server serves no tools where setup registered one
    assert _stand_down() and "stands down" in _stand_down()
    # `recall` typed in a shell (the plugin's ~/.local/bin/recall) is never stood down
    monkeypatch.setenv("RECALL_PLUGIN_SHELL", "1")
    assert entry.main(["remember", "we", "use", "pgbouncer"]) == 0
    assert "stand down" not in capsys.readouterr().out
    # without setup's commands, the plugin's answer
    monkeypatch.delenv("RECALL_PLUGIN_SHELL")
    assert cli(capsys, "setup", "--uninstall", "--global")[0] == 0
    assert entry.main(["remember", "and", "redis", "first"]) == 0
    assert "stand down" not in capsys.readouterr().out


def test_a_claude_md_the_user_shares_gets_no_exclude_line(tmp_path, capsys):
    project = tmp_path / "shared"
    project.mkdir()
    _git(project, "init", "-q")
    code, _, err = cli(capsys, "memories", "add", "decision", "We picked pgbouncer", "--project", str(project))
    assert code == 0, err
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text(
        "\n".join(ln for ln in exclude.read_text().splitlines() if "CLAUDE" not in ln and "git add -f" not in ln) + "\n"
    )
    _git(project, "add", "-f", "CLAUDE.md")  # the user shares it
    cli(capsys, "memories", "add", "gotcha", "Redis must run first", "--project", str(project))
    assert "CLAUDE.md" not in exclude.read_text()


# item 12 (no service to ask) -----------------------------------------------------------------------------------
def test_status_without_a_service_names_the_backend_today_s_extractions_used(capsys, claude_logged_out):
    from recall.llm import usage

    usage.record_usage("claude-haiku-4-5", 100, 10, "extraction", backend="api")
    code, out, _ = cli(capsys, "status", "--json")
    features = json.loads(out)["backends"]["features"]
    assert features["synthesis"]["backend"] == "claude-code"
    assert features["memory"]["backend"] == "api"
    assert features["memory"]["why"].startswith("today's extraction calls went to api")


# item 11 (under the plugin) ------------------------------------------------------------------------------------
def test_setup_under_the_plugin_reports_no_change_on_a_re_run(tmp_path, capsys, claude_projects, monkeypatch):
    from tests.setup.test_plugin import enable_plugin
    from tests.support.factory import Session

    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    project = tmp_path / "proj"
    project.mkdir()
    s = Session(cwd=str(project))
    s.user("we picked argon2id for password hashing")
    s.write(claude_projects)
    enable_plugin(tmp_path)
    code, out, err = cli(capsys, "setup", "--project", str(project))
    assert code == 0, err
    assert "changed: indexed 1 message" in out and "setup added none of its own" in out
    code, out, err = cli(capsys, "setup", "--project", str(project))
    assert code == 0, err
    assert not [ln for ln in out.splitlines() if ln.startswith("changed:")], out
    assert "ok:      the index is up to date (1 transcript file, nothing new)" in out


def test_the_plugin_s_link_goes_with_the_plugin(tmp_path):
    from recall.setup import plugin_runtime as pr

    home = Path(os.environ["HOME"])
    data = home / ".claude" / "plugins" / "data" / "recall-recall"
    data.mkdir(parents=True)
    pr.put_command_on_path(data)
    other = home / ".claude" / "plugins" / "data" / "recall-other"
    assert not pr.remove_command_link(other)  # another data folder's: not this one's to remove
    assert pr.remove_command_link(data)
    assert not os.path.lexists(home / ".local" / "bin" / "recall")
