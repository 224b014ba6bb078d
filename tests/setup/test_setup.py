"""`recall setup` (settings.json / .mcp.json merge, idempotence, exact uninstall),
`recall doctor` and `recall config`."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from recall.core import config, paths
from recall.setup import install as st
from tests.support.cli import cli
from tests.support.factory import Session

EVENTS = ("UserPromptSubmit", "SessionStart", "Stop", "PreCompact", "SessionEnd")


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def our_hooks(settings: dict) -> dict[str, list[dict]]:
    out = {}
    for event, groups in settings.get("hooks", {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if st.ours(h):
                    out.setdefault(event, []).append(h)
    return out


EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo mine", "timeout": 3}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
    },
}


def test_setup_merges_without_touching_other_keys(project, capsys):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING, indent=2))
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code == 0, err
    data = read(settings)
    assert data["model"] == "opus" and data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert data["hooks"]["UserPromptSubmit"][0] == EXISTING["hooks"]["UserPromptSubmit"][0]
    ours = our_hooks(data)
    assert set(ours) == set(EVENTS) and all(len(v) == 1 for v in ours.values())
    for event, (h,) in ours.items():
        assert h["type"] == "command" and isinstance(h["timeout"], int) and h["timeout"] > 0
        argv = shlex.split(h["command"])
        assert os.path.isabs(argv[0]) and argv[-2] == "hook"
        assert argv[-1] == st.HOOK_EVENTS[event][0]
    assert ours["UserPromptSubmit"][0]["timeout"] > config.DEFAULTS["hook"]["budget_seconds"]
    mcp = read(project / ".mcp.json")
    entry = mcp["mcpServers"]["recall"]
    assert entry["type"] == "stdio" and entry["args"][-1] == "mcp" and os.path.isabs(entry["command"])
    assert read(project / ".claude" / "settings.local.json")["enabledMcpjsonServers"] == ["recall"]
    assert "added the UserPromptSubmit hook" in out and "registered the recall MCP server" in out
    assert "skipped the service" in out and "skipped the first backfill" in out


def test_setup_is_idempotent(project, capsys):
    cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    files = [project / ".claude" / "settings.json", project / ".mcp.json", project / ".claude" / "settings.local.json"]
    before = [f.read_bytes() for f in files]
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code == 0
    assert [f.read_bytes() for f in files] == before
    assert "changed:" not in out and "already set" in out


def test_setup_updates_a_stale_command_and_drops_duplicates(project, capsys):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/recall hook user-prompt-submit", "timeout": 1}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [stale]}, {"hooks": [dict(stale)]}]}}))
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index", "--no-mcp")
    assert code == 0
    ours = our_hooks(read(settings))
    assert len(ours["UserPromptSubmit"]) == 1
    assert ours["UserPromptSubmit"][0]["command"] == st.hook_command("user-prompt-submit")
    assert "updated the UserPromptSubmit hook" in out and "duplicate" in out
    assert not (project / ".mcp.json").exists()


def test_uninstall_restores_exactly(project, capsys):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(EXISTING, indent=2)
    settings.write_text(original)
    mcp = project / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"db": {"command": "dbtool", "args": []}}}))
    cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    code, out, _ = cli(capsys, "setup", "--uninstall", "--project", str(project))
    assert code == 0
    assert read(settings) == EXISTING
    assert read(mcp) == {"mcpServers": {"db": {"command": "dbtool", "args": []}}}
    assert not (project / ".claude" / "settings.local.json").exists()  # setup had created it
    assert "removed the Stop hook" in out
    code, out, _ = cli(capsys, "setup", "--uninstall", "--project", str(project))
    assert code == 0 and "nothing of recall's" in out


def test_uninstall_deletes_what_setup_created(project, capsys):
    cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert (project / ".claude" / "settings.json").exists()
    cli(capsys, "setup", "--uninstall", "--project", str(project))
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude").exists()
    assert sorted(p.name for p in project.iterdir()) == [".git"]


def test_global_setup_uses_the_user_files(project, capsys, tmp_path):
    user_json = Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    user_json.parent.mkdir(parents=True, exist_ok=True)
    user_json.write_text(json.dumps({"numStartups": 3, "projects": {"/x": {"allowedTools": []}}}))
    code, out, err = cli(capsys, "setup", "--global", "--no-service", "--no-index")
    assert code == 0, err
    settings = paths.claude_config_dir() / "settings.json"
    assert set(our_hooks(read(settings))) == set(EVENTS)
    data = read(user_json)
    assert data["numStartups"] == 3 and data["projects"] == {"/x": {"allowedTools": []}}
    assert data["mcpServers"]["recall"]["args"][-1] == "mcp"
    assert not (project / ".claude").exists()
    cli(capsys, "setup", "--uninstall", "--global")
    assert read(user_json) == {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}}
    assert not settings.exists()


def test_setup_from_a_subdirectory_uses_the_project_root(project, capsys, monkeypatch):
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert cli(capsys, "setup", "--no-service", "--no-index")[0] == 0
    assert (project / ".claude" / "settings.json").exists() and not (sub / ".claude").exists()


@pytest.mark.parametrize(
    "content,needle",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"hooks": []}', '"hooks"'),
        ('{"hooks": {"Stop": {"a": 1}}}', '"hooks.Stop"'),
    ],
)
def test_broken_settings_get_one_clear_line(project, capsys, content, needle):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code != 0
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert settings.read_text() == content  # left alone


def test_bad_arguments(project, capsys, tmp_path):
    code, _, err = cli(capsys, "setup", "--project", str(tmp_path / "missing"), "--no-service")
    assert code != 0 and "is not a directory" in err
    code, _, err = cli(capsys, "setup", "--global", "--project", str(project))
    assert code != 0 and "exclude each other" in err


def test_foreign_mcp_server_named_recall_is_not_overwritten(project, capsys):
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"recall": {"command": "other-tool"}}}))
    code, _, err = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code != 0 and "not recall's" in err
    assert read(project / ".mcp.json") == {"mcpServers": {"recall": {"command": "other-tool"}}}


def test_setup_runs_the_first_backfill(project, capsys, claude_projects):
    s = Session(cwd=str(project))
    s.user("we picked argon2id for password hashing")
    s.write(claude_projects)
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service")
    assert code == 0, err
    assert "indexed 1 message from 1 of 1 transcript file" in out


def test_setup_installs_and_starts_the_service(project, capsys, no_service_manager):
    """With no service manager reachable, setup writes the unit and starts the service detached."""
    from recall.control.lifecycle import stop_service
    from recall.core import service_client as client

    try:
        code, out, err = cli(capsys, "setup", "--project", str(project), "--no-index")
        assert code == 0, err
        info = client.ping(timeout=5)
        assert info is not None
        # one line: what happened (the manager refused, setup started it itself) and what is left
        assert (
            f"changed: started the recall service without a service manager (pid {info['pid']}), as the "
            "service manager refused it (Failed to connect to bus: No medium found): it runs now, but "
            "nothing starts it again after a reboot or logout"
        ) in out
        assert "Started the recall service" not in out and "Run: systemctl" not in out
        code, out, _ = cli(capsys, "doctor", "--project", str(project))
        assert "ok    service: running" in out
    finally:
        stop_service()


def test_setup_run_again_reports_no_change_for_what_did_not_change(
    project, capsys, claude_projects, no_service_manager
):
    """`changed:` only for what changed (issue 36, item 11): the running service, the index that
    holds everything already, a second uninstall."""
    from recall.control.lifecycle import stop_service
    from recall.core import service_client as client

    s = Session(cwd=str(project))
    s.user("we picked argon2id for password hashing")
    s.write(claude_projects)
    try:
        assert cli(capsys, "setup", "--project", str(project))[0] == 0
        pid = client.ping(timeout=5)["pid"]
        code, out, err = cli(capsys, "setup", "--project", str(project))
        assert code == 0, err
        assert f"ok:      the recall service already runs (pid {pid})" in out
        assert "ok:      the recall service keeps the index current (1 transcript file indexed)" in out
        changed = [line for line in out.splitlines() if line.startswith("changed:")]
        assert changed == [], out
    finally:
        stop_service()
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service")
    assert code == 0, err
    assert "ok:      the index is up to date (1 transcript file, nothing new)" in out
    assert not [line for line in out.splitlines() if line.startswith("changed:")], out
    assert cli(capsys, "setup", "--uninstall", "--project", str(project))[0] == 0
    code, out, _ = cli(capsys, "setup", "--uninstall", "--project", str(project))
    assert code == 0
    assert "changed:" not in out and "ok:      No service installed" in out


# ------------------------------------------------------------------------------ doctor
def test_doctor_reports_each_failure_with_its_fix(project, capsys):
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert code == 1
    assert "FAIL  hooks: missing" in out and "recall setup --project" in out
    assert "FAIL  index: no index" in out and "fix: run `recall index`" in out
    assert "warn  API key: none found" in out and "recall config set api_key" in out
    assert "FAIL  MCP server: not registered" in out
    assert "warn  service: not running" in out and "recall service start" in out


def test_doctor_after_setup_is_green(project, capsys, claude_projects, monkeypatch):
    s = Session(cwd=str(project))
    s.user("we picked argon2id for password hashing")
    s.write(claude_projects)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    assert cli(capsys, "setup", "--project", str(project), "--no-service")[0] == 0
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert "ok    hooks: all five" in out
    assert "ok    UserPromptSubmit hook run" in out
    assert "ok    index:" in out and "ok    API key: found in ANTHROPIC_API_KEY" in out
    assert "ok    MCP server: registered" in out
    assert code == 0, out  # the service is only a warning
    # a new transcript line makes the index stale
    s.user("and bcrypt was rejected for its 72-byte limit")
    s.write(claude_projects)
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert code == 1 and "FAIL  index:" in out and "not indexed yet" in out


def test_doctor_spots_an_archive_that_lost_the_text_of_indexed_messages(project, capsys, claude_projects):
    import shutil

    s = Session(cwd=str(project))
    s.user("we picked argon2id for password hashing")
    s.write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    shutil.rmtree(paths.archive_dir() / "sessions")
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert code == 1
    assert (
        f"FAIL  index: 1 of the 1 newest messages have no text: their lines in the archive "
        f"({paths.archive_dir()}) are gone (session {s.session_id})" in out
    )
    assert f"fix: restore {paths.archive_dir()} from a backup" in out


def test_doctor_spots_a_hook_that_cannot_run(project, capsys):
    settings = project / ".claude" / "settings.json"
    assert cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")[0] == 0
    data = read(settings)
    for groups in data["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                h["command"] = h["command"].replace(shlex.split(h["command"])[0], "/gone/bin/recall", 1)
    settings.write_text(json.dumps(data))
    code, out, _ = cli(capsys, "doctor", "--project", str(project))
    assert code == 1 and "FAIL  Stop hook: /gone/bin/recall does not exist" in out


# ------------------------------------------------------------------------------ config
def test_config_set_get_show_unset(capsys):
    assert cli(capsys, "config", "set", "hook.max_chars", "2000")[0] == 0
    assert config.load()["hook"]["max_chars"] == 2000
    assert cli(capsys, "config", "get", "hook.max_chars")[1].strip() == "2000"
    cli(capsys, "config", "set", "hook.synthesize", "off")
    assert config.load()["hook"]["synthesize"] is False
    cli(capsys, "config", "set", "hook.scope", "all")
    assert config.load()["hook"]["scope"] == "all"
    cli(capsys, "config", "set", "hook.skip", "yes,no,later")
    assert config.load()["hook"]["skip"] == ["yes", "no", "later"]
    code, out, _ = cli(capsys, "config", "set", "api_key", "sk-ant-api03-secretsecretsecret1234")
    assert code == 0 and "secretsecretsecret" not in out
    assert config.load()["api_key"] == "sk-ant-api03-secretsecretsecret1234"
    from recall.llm import credentials

    assert credentials.find_api_key() == ("sk-ant-api03-secretsecretsecret1234", str(paths.config_path()))
    code, out, _ = cli(capsys, "config", "show")
    assert code == 0 and "secretsecretsecret" not in out and json.loads(out)["hook"]["max_chars"] == 2000
    assert stat.S_IMODE(paths.config_path().stat().st_mode) == 0o600
    assert cli(capsys, "config", "unset", "hook.max_chars")[0] == 0
    assert config.load()["hook"]["max_chars"] == config.DEFAULTS["hook"]["max_chars"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (("config", "set", "hook.max_chars", "lots"), "is a number"),
        (("config", "set", "hook.synthesize", "maybe"), "true or false"),
        (("config", "set", "nonsense.key", "1"), "no setting"),
        (("config", "set", "hook", "1"), "group of settings"),
        (("config", "get", "hook.nope"), "no setting"),
        (("config", "set", "model.name.family", "haiku"), "single setting"),
        (("config", "set", "model.backend", "gpt"), "is one of auto, api, claude-code, off"),
        (("config", "set", "hook.max_chars.x", "1"), "single setting"),
    ],
)
def test_config_rejects_bad_values_in_one_line(capsys, args, needle):
    code, out, err = cli(capsys, *args)
    assert code != 0 and needle in err and len(err.strip().splitlines()) == 1


def test_hook_command_is_runnable_as_written(project, capsys):
    """The exact command setup writes runs the hook (what Claude Code will do)."""
    cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index", "--no-mcp")
    command = our_hooks(read(project / ".claude" / "settings.json"))["UserPromptSubmit"][0]["command"]
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps({"prompt": "thanks!"}),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert sys.executable  # the venv's recall is what was written


def test_config_set_refuses_to_clobber_a_broken_file(capsys):
    paths.home_dir()
    paths.config_path().write_text('{"hook": {"max_chars": 2000,')
    code, _, err = cli(capsys, "config", "set", "hook.limit", "5")
    assert code != 0 and "not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert paths.config_path().read_text() == '{"hook": {"max_chars": 2000,'


# ------------------------------------------------------------------------------ folder modes (issue 27 item 3)
def _modes(*roots: Path) -> dict[str, int]:
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [".", *dirnames, *filenames]:
                p = os.path.normpath(os.path.join(dirpath, name))
                out[p] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


def test_setup_and_uninstall_change_the_mode_of_nothing_they_did_not_create(project, capsys, tmp_path, monkeypatch):
    home = Path(os.environ["HOME"])
    os.chmod(home, 0o755)
    os.chmod(project, 0o755)
    claude_dir = Path(os.environ["CLAUDE_CONFIG_DIR"])
    claude_dir.mkdir(mode=0o755)
    os.chmod(claude_dir, 0o755)
    (claude_dir / "settings.json").write_text('{"model": "opus"}')
    (project / ".claude").mkdir(mode=0o755)
    os.chmod(project / ".claude", 0o755)
    (home / ".config").mkdir(mode=0o755)
    os.chmod(home / ".config", 0o755)
    before = _modes(home, project, claude_dir)
    assert cli(capsys, "setup", "--global", "--no-service", "--no-index")[0] == 0
    assert cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")[0] == 0
    assert cli(capsys, "setup", "--project", str(project), "--uninstall")[0] == 0
    assert cli(capsys, "setup", "--global", "--uninstall")[0] == 0
    after = _modes(home, project, claude_dir)
    changed = {p: (oct(m), oct(after[p])) for p, m in before.items() if p in after and after[p] != m}
    assert changed == {}
    assert stat.S_IMODE(os.stat(project).st_mode) == 0o755 and stat.S_IMODE(os.stat(home).st_mode) == 0o755


def test_a_folder_an_earlier_setup_made_0700_gets_its_mode_back_on_evidence(tmp_path, capsys, monkeypatch):
    from recall.setup import install

    code = tmp_path / "code"
    for name in ("shop", "blog", "notes"):
        (code / name / ".git").mkdir(parents=True)
        os.chmod(code / name, 0o755)
    shop = code / "shop"
    # what an earlier `recall setup --project` left: recall's .mcp.json, the project 0700
    (shop / ".mcp.json").write_text(json.dumps({"mcpServers": {"recall": install.mcp_entry()}}))
    os.chmod(shop, 0o700)
    code_, out, err = cli(capsys, "doctor", "--project", str(shop))
    assert "warn  folder modes: " + str(shop) + " is 0700, as an earlier `recall setup` left it" in out
    assert cli(capsys, "setup", "--project", str(shop), "--no-service", "--no-index")[0] == 0
    assert stat.S_IMODE(os.stat(shop).st_mode) == 0o755
    # done once: a user who makes it private again is not overruled
    os.chmod(shop, 0o700)
    code_, out, _ = cli(capsys, "setup", "--project", str(shop), "--no-service", "--no-index")
    assert stat.S_IMODE(os.stat(shop).st_mode) == 0o700 and "put back" not in out

    # no evidence: a project whose neighbours are 0700 too stays as it is
    secret = tmp_path / "secret"
    for name in ("a", "b"):
        (secret / name).mkdir(parents=True)
        os.chmod(secret / name, 0o700)
    (secret / "a" / ".mcp.json").write_text(json.dumps({"mcpServers": {"recall": install.mcp_entry()}}))
    code_, out, _ = cli(capsys, "setup", "--project", str(secret / "a"), "--no-service", "--no-index")
    assert stat.S_IMODE(os.stat(secret / "a").st_mode) == 0o700 and "put back" not in out


def test_home_made_0700_by_an_earlier_global_setup(tmp_path, capsys, monkeypatch):
    from recall.setup import install

    homes = tmp_path / "homes"
    for name in ("alice", "bob", "me"):
        (homes / name).mkdir(parents=True)
        os.chmod(homes / name, 0o755)
    me = homes / "me"
    monkeypatch.setenv("HOME", str(me))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    (me / ".claude.json").write_text(json.dumps({"mcpServers": {"recall": install.mcp_entry()}}))
    os.chmod(me, 0o700)
    code_, out, err = cli(capsys, "setup", "--global", "--no-service", "--no-index")
    assert code_ == 0, err
    assert stat.S_IMODE(os.stat(me).st_mode) == 0o755
    assert f"put back the mode of {me}: 755 like the folders beside it (2 of the 2 folder(s) beside it are 755)" in out


# ------------------------------------------------------------------------------ `recall` on PATH (issue 27 item 5)
def test_setup_puts_recall_on_the_path_and_says_when_that_folder_is_not_on_it(project, capsys, monkeypatch):
    link = Path(os.environ["HOME"]) / ".local" / "bin" / "recall"
    code, out, err = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code == 0, err
    target = st.recall_executable()[0]
    assert link.is_symlink() and os.readlink(link) == target
    assert f"changed: linked {link} -> {target}: `recall` works from any shell" in out
    assert f"note:    {link.parent} is not on your PATH: add `export PATH=\"$HOME/.local/bin:$PATH\"`" in out
    proc = subprocess.run([str(link), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("recall ")
    # on PATH now: nothing more to say; the link is setup's, so uninstall takes it away again
    monkeypatch.setenv("PATH", f"{link.parent}{os.pathsep}{os.environ['PATH']}")
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert f"ok:      `recall` on your PATH is this install ({link})" in out and "not on your PATH" not in out
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--uninstall")
    assert f"removed the link {link}" in out and not link.exists()


def test_setup_never_replaces_another_recall_on_the_path(project, capsys):
    link = Path(os.environ["HOME"]) / ".local" / "bin" / "recall"
    link.parent.mkdir(parents=True)
    link.write_text("#!/bin/sh\necho someone else's recall\n")
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert code == 0 and f"{link} exists and is not recall setup's: left alone" in out
    assert link.read_text() == "#!/bin/sh\necho someone else's recall\n"


def test_setup_warns_when_the_install_lives_in_a_temporary_or_git_tracked_place(tmp_path, project, capsys, monkeypatch):
    # a checkout of its own, wherever this one lives (CI may clone under /tmp): the temporary
    # folders are named apart from it, so each warning is seen on its own (issue 36)
    clone = (tmp_path / "checkouts" / "recall").resolve()
    (clone / ".git").mkdir(parents=True)
    scratch = (tmp_path / "scratch").resolve()
    scratch.mkdir()
    import tempfile

    assert os.path.realpath(tempfile.gettempdir()) in st.temporary_folders()  # the real list
    monkeypatch.setattr(st, "temporary_folders", lambda: {str(scratch)})
    warn = st.install_location_warning(str(clone / ".venv" / "bin" / "recall"))
    assert warn.startswith(
        f"recall runs from {clone}/.venv/bin/recall, inside the git checkout {clone}: moving or "
        "deleting the checkout (or its .venv) breaks Claude Code's hooks on every prompt"
    )
    assert f"`pipx install {clone}` or `uv tool install {clone}`" in warn
    tmp_exe = scratch / "x" / "bin" / "recall"
    assert "in a temporary folder" in st.install_location_warning(str(tmp_exe))
    assert (
        st.install_location_warning(str(tmp_path / "opt" / "pipx" / "venvs" / "recall-memory" / "bin" / "recall"))
        is None
    )
    # an install in a clone's .venv (wherever this test's own venv lives): setup says so
    monkeypatch.setattr(st, "recall_executable", lambda: [str(clone / ".venv" / "bin" / "recall")])
    code, out, _ = cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")
    assert "note:    recall runs from" in out and "inside the git checkout" in out


# ------------------------------------------------------------------------------ purge keeps the records (issue 35 item 7)
def _records(tmp_path) -> None:
    from indexer.archive import Tombstones
    from indexer.ledger import pause

    Tombstones(paths.archive_dir() / "forgotten.json").add(session="forgotten-session-1")
    pause(None)
    config.set_value("exclude", [str(tmp_path / "client-secret-project")])
    (paths.archive_dir() / "sessions").mkdir(parents=True, exist_ok=True)
    (paths.archive_dir() / "sessions" / "history.jsonl").write_text("{}\n")


def test_purge_says_a_new_setup_would_bring_back_what_was_forgotten(tmp_path, capsys, no_service_manager):
    _records(tmp_path)
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge")
    assert code == 2 and "a new `recall setup` would index all of that again without them" in err
    assert "but not the records of what you forgot" in err and "--drop-records drops them too" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--drop-records")
    assert code == 2 and "so a new `recall setup` will index all of that again" in err
    assert "run the same `recall setup --uninstall --global --purge --drop-records` again with --yes" in err


def test_purge_keeps_the_records_when_asked(tmp_path, capsys, monkeypatch, no_service_manager):
    from indexer.archive import Tombstones
    from recall.cli import command_utils

    _records(tmp_path)
    answers = iter([True, True])  # remove it for good? keep the records?
    monkeypatch.setattr(command_utils, "interactive", lambda: True)
    import typer

    monkeypatch.setattr(typer, "confirm", lambda *a, **kw: next(answers))
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge")
    assert code == 0, err
    assert "kept in " in out and "only the records of forgets, pauses and `recall: off` sessions, 1 exclusion(s)" in out
    assert not (paths.archive_dir() / "sessions").exists()  # the history itself is gone
    assert "forgotten-session-1" in Tombstones(paths.archive_dir() / "forgotten.json").sessions
    from indexer.ledger import current_pause, read_controls

    assert current_pause(read_controls()) is not None  # still paused: nothing is captured meanwhile
    assert config.load()["exclude"] == [str(tmp_path / "client-secret-project")]
    assert json.loads(paths.config_path().read_text()) == {"exclude": [str(tmp_path / "client-secret-project")]}


def test_purge_with_yes_keeps_the_records_unless_told_to_drop_them(tmp_path, capsys, no_service_manager):
    # issue 46 item 6: without a terminal the records stay unless the user says otherwise in so many words
    _records(tmp_path)
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes", "--keep-records")
    assert code == 0 and (paths.archive_dir() / "forgotten.json").exists()
    assert not (paths.archive_dir() / "sessions").exists()
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes")
    assert code == 0 and (paths.archive_dir() / "forgotten.json").exists()
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes", "--drop-records")
    assert code == 0 and not paths.recall_home().exists()
    assert "dropped the records of forgets, pauses and `recall: off` sessions, 1 exclusion(s)" in out
