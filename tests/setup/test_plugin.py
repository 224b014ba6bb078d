"""recall as a Claude Code plugin, piece by piece (tests/e2e/test_e2e_plugin.py runs the whole with the
real client): the manifests and hooks/hooks.json say what `recall setup` writes; the launcher
(hooks/recall) is silent until the runtime is ready, then hands over; the runtime's build
records and says what failed; setup and the plugin never both answer; doctor says which one is
wired."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall import __version__
from recall.cli.app import run
from recall.core import config, wiring
from recall.setup import install as st
from recall.setup import plugin_runtime

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "hooks" / "recall"
PLUGIN_EXE = '"${CLAUDE_PLUGIN_ROOT}/hooks/recall"'
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]
HOOK_NAMES = [name for name, _ in st.HOOK_EVENTS.values()]


def setup_exe() -> str:
    return " ".join(shlex.quote(p) for p in st.recall_executable())


# ------------------------------------------------------------------------------ what the plugin is
def test_hooks_json_has_the_events_and_commands_setup_writes():
    plugin = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    setup, _, _ = st.merge_hooks({}, "settings.json", config.DEFAULTS)
    as_plugin = json.loads(
        json.dumps(setup["hooks"]).replace(json.dumps(setup_exe())[1:-1], json.dumps(PLUGIN_EXE)[1:-1])
    )
    assert plugin == as_plugin, "hooks/hooks.json drifted from `recall setup`:\n" + json.dumps(as_plugin, indent=2)
    for event, groups in plugin.items():
        assert wiring.ours(groups[0]["hooks"][0]) == wiring.hook_name(event) == st.HOOK_EVENTS[event][0]


def test_plugin_commands_are_the_ones_setup_installs():
    folder = ROOT / ".claude-plugin" / "commands"
    assert sorted(p.stem for p in folder.iterdir()) == sorted(st.SLASH_COMMANDS)
    for name in st.SLASH_COMMANDS:
        want = st.slash_command_text(name).replace(setup_exe(), PLUGIN_EXE)
        assert (folder / f"{name}.md").read_text() == want, f".claude-plugin/commands/{name}.md drifted:\n{want}"


def test_manifests_name_recall_at_one_version():
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert plugin["name"] == market["name"] == "recall"  # /plugin install recall@recall
    assert [(p["name"], p["source"]) for p in market["plugins"]] == [("recall", "./.plugin")]
    assert plugin["version"] == __version__ == re.search(r'^version = "(.+)"', pyproject, re.M).group(1)
    # alwaysLoad: its tools in every request, not behind Claude Code 2.1.332's tool search (issue 44)
    assert plugin["mcpServers"] == {
        "recall": {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/recall", "args": ["mcp"], "alwaysLoad": True}
    }
    assert (ROOT / plugin["commands"]).is_dir()
    # the launcher's and the builder's minimum Python is the package's
    need = re.search(r'^requires-python = ">=(\d+)\.(\d+)"', pyproject, re.M).groups()
    assert tuple(map(int, need)) == plugin_runtime.MIN_PYTHON
    assert f"sys.version_info < {plugin_runtime.MIN_PYTHON}" in LAUNCHER.read_text()
    assert all((ROOT / name).exists() for name in plugin_runtime.SOURCE)


def test_the_plugin_folder_holds_what_the_plugin_needs_and_no_virtualenv():
    """`claude plugin install` copies the marketplace entry's source folder (following links) into
    its plugin cache: ./plugin, links to what the plugin runs and builds from, never the
    clone's .venv or .venv-test (397 MB once) nor a project .mcp.json (issue 36, item 2)."""
    folder = ROOT / ".plugin"
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([".claude-plugin", "hooks", *plugin_runtime.SOURCE])
    for p in folder.iterdir():
        assert p.is_symlink() and not os.path.isabs(os.readlink(p)), p
        assert p.resolve() == (ROOT / p.name).resolve()
    assert (folder / ".claude-plugin" / "plugin.json").is_file() and (folder / "hooks" / "hooks.json").is_file()
    reached = {
        os.path.relpath(os.path.join(d, n), folder)
        for d, dirs, files in os.walk(folder, followlinks=True)
        for n in dirs + files
    }
    assert not [r for r in reached if r.split(os.sep)[0].startswith((".venv", ".mcp.json", ".git"))]


def test_hooks_folder_holds_the_launcher_and_nothing_else():
    assert sorted(p.name for p in (ROOT / "hooks").iterdir()) == ["hooks.json", "recall"]
    assert os.access(LAUNCHER, os.X_OK) and LAUNCHER.read_text().startswith("#!/bin/sh\n")
    assert subprocess.run(["sh", "-n", str(LAUNCHER)], capture_output=True).returncode == 0


# ------------------------------------------------------------------------------ the launcher
@pytest.fixture
def data(tmp_path):
    d = tmp_path / "plugin-data"
    d.mkdir()
    return d


@pytest.fixture
def no_python_path(tmp_path):
    """A PATH with the few tools the launcher uses, and no python."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mkdir",):
        os.symlink(shutil.which(tool), bin_dir / tool)
    return str(bin_dir)


def launch(args, data, *, stdin="", env=None, root=ROOT, path=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RECALL_PLUGIN"))}
    full.update(
        {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}
        if data
        else {"CLAUDE_PLUGIN_ROOT": str(root)}
    )
    if path:
        full["PATH"] = path
    full.pop("RECALL_PYTHON", None)
    full.update(env or {})
    return subprocess.run(
        [str(root / "hooks" / "recall"), *args], input=stdin, capture_output=True, text=True, env=full, timeout=60
    )


def fake_runtime(data: Path, version: str = VERSION) -> Path:
    """A runtime whose `recall` prints what it was given."""
    bin_dir = data / "runtime" / version / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "recall").write_text('#!/bin/sh\necho "ran: $* data=$RECALL_PLUGIN_DATA"\nexit 3\n')
    (bin_dir / "recall").chmod(0o755)
    (data / "runtime" / version / ".ready").write_text("{}\n")
    return bin_dir


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_until_ready_every_hook_exits_at_once_and_prints_nothing(name, data, no_python_path):
    proc = launch(
        ["hook", name], data, stdin=json.dumps({"prompt": "which pooler?", "session_id": "s"}), path=no_python_path
    )
    assert proc.returncode == 0
    if name != "session-start":
        assert (proc.stdout, proc.stderr) == ("", "")


def test_session_start_with_no_python_says_what_to_do(data, no_python_path):
    proc = launch(["hook", "session-start"], data, path=no_python_path)
    assert proc.returncode == 0 and proc.stderr == ""
    message = json.loads(proc.stdout)["systemMessage"]
    assert message.count("\n") == 0 and "no python3 3.11 or newer" in message and "install Python 3.11+" in message
    assert "no python3" in (data / "build.state").read_text()
    assert plugin_runtime.status(data, VERSION)["state"] == "failed"


def test_session_start_says_why_the_last_build_failed_and_builds_again(data, tmp_path):
    (data / "build-failed").write_text(
        json.dumps({"systemMessage": "recall: building its Python runtime failed: pip could not download"}) + "\n"
    )
    calls = tmp_path / "calls"
    fake = tmp_path / "python3.12"
    fake.write_text(f'#!/bin/sh\ncase "$1" in -c) exit 0;; esac\necho "$*" >> {calls}\n')
    fake.chmod(0o755)
    proc = launch(["hook", "session-start"], data, env={"RECALL_PYTHON": str(fake)})
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["systemMessage"].startswith("recall: building its Python runtime failed")
    wait = __import__("tests.support.wait", fromlist=["wait_for"]).wait_for
    assert wait(lambda: calls.exists() and calls.read_text(), timeout=10)
    assert calls.read_text().split() == [
        "-I",
        f"{ROOT}/recall/setup/plugin_runtime.py",
        "build",
        "--root",
        str(ROOT),
        "--data",
        str(data),
        "--version",
        VERSION,
    ]


def test_ready_runtime_runs_recall_with_the_arguments(data):
    fake_runtime(data)
    proc = launch(["hook", "user-prompt-submit"], data, stdin="{}")
    assert (proc.returncode, proc.stdout) == (3, f"ran: hook user-prompt-submit data={data}\n")
    proc = launch(["--raw", "--limit", "5", "two words"], data)
    assert proc.stdout == f"ran: --raw --limit 5 two words data={data}\n"


def test_without_claude_plugin_data_it_finds_the_plugins_data_folder(tmp_path):
    config_dir = tmp_path / "claude-config"
    data = config_dir / "plugins" / "data" / "recall-mymarket"
    fake_runtime(data)
    proc = launch(["--raw", "q"], None, env={"CLAUDE_CONFIG_DIR": str(config_dir)})  # a slash command's bash line
    assert proc.stdout == f"ran: --raw q data={data}\n"


def test_a_new_plugin_version_is_not_ready_until_built(data, tmp_path, no_python_path):
    fake_runtime(data, version="0.0.1")
    root = tmp_path / "root"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "recall", "version": "0.0.2"}))
    (root / "hooks").mkdir()
    shutil.copy2(LAUNCHER, root / "hooks" / "recall")
    proc = launch(["hook", "user-prompt-submit"], data, stdin="{}", root=root, path=no_python_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_until_ready_commands_say_so_and_mcp_serves_no_tools(data):
    building = "recall: its runtime (version x) is being built in the background since 10:00:00"
    (data / "build.state").write_text(building + "\n")
    proc = launch(["--raw", "--limit", "5", "q"], data)  # /recall-search: the model passes it on
    assert (proc.returncode, proc.stdout) == (0, building + "\n")
    proc = launch(["doctor"], data)  # by hand
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", building + "\n")
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_search"}},
    ]
    proc = launch(
        ["mcp"], data, stdin="".join(json.dumps(r) + "\n" for r in requests), env={"RECALL_PYTHON": sys.executable}
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-11-25"
    assert "being built" in replies[0]["result"]["instructions"]
    assert replies[1]["result"] == {"tools": []} and replies[2]["error"]["code"] == -32601


# ------------------------------------------------------------------------------ the build
def test_a_failed_build_is_recorded_and_said_in_one_line(data, tmp_path):
    root = tmp_path / "broken-plugin"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert plugin_runtime.Build(root, data, VERSION)() == 1
    record = json.loads((data / "build.json").read_text())
    assert (record["state"], record["step"]) == ("failed", "source")
    hook_output = (data / "build-failed").read_text()
    assert hook_output.count("\n") == 1
    message = json.loads(hook_output)["systemMessage"]
    assert message.startswith("recall: building its Python runtime failed:") and "README.md is missing" in message
    assert "To fix: reinstall the plugin" in message and str(data / "build.log") in message
    assert "FAILED at source" in (data / "build.log").read_text()
    st_ = plugin_runtime.status(data, VERSION)
    assert st_["state"] == "failed" and "reinstall the plugin" in st_["fix"]
    assert not (data / "runtime" / VERSION).exists()


def test_a_build_leaves_when_another_holds_the_lock(data):
    fd = os.open(data / "build.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert plugin_runtime.Build(ROOT, data, VERSION)() == 0
        assert not (data / "build.json").exists() and not (data / "runtime").exists()
        (data / "build.json").write_text(json.dumps({"state": "building", "started": 1.0}))
        assert plugin_runtime.status(data, VERSION)["state"] == "building"
    finally:
        os.close(fd)
    assert plugin_runtime.status(data, VERSION)["state"] == "interrupted"


def test_status_of_a_ready_and_of_a_missing_runtime(data):
    assert plugin_runtime.status(data, VERSION)["state"] == "missing"
    fake_runtime(data)
    assert plugin_runtime.status(data, VERSION)["state"] == "ready"
    assert plugin_runtime.status(data, "9.9.9")["state"] == "missing"


@pytest.mark.slow
def test_pip_that_cannot_download_is_named(data, tmp_path, monkeypatch):
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    for key, value in {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(empty), "PIP_CONFIG_FILE": os.devnull}.items():
        monkeypatch.setenv(key, value)
    assert plugin_runtime.Build(ROOT, data, VERSION)() == 1
    record = json.loads((data / "build.json").read_text())
    assert record["step"] == "pip" and "pip could not download recall's dependencies" in record["error"]
    assert "connect to the network" in record["fix"] and "PIP_INDEX_URL" in record["fix"]
    assert not (data / "src").exists() and not (data / "runtime" / VERSION).exists()


# ------------------------------------------------------------------------------ never wired twice
def enable_plugin(home: Path, scope_file: Path | None = None, on: bool = True, marketplace: str = "recall") -> Path:
    """What `claude plugin install recall@<marketplace>` writes (user scope)."""
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"])
    settings = scope_file or claude / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("enabledPlugins", {})[f"recall@{marketplace}"] = on
    settings.write_text(json.dumps(data))
    installed = claude / "plugins" / "installed_plugins.json"
    installed.parent.mkdir(parents=True, exist_ok=True)
    installed.write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {
                    f"recall@{marketplace}": [
                        {
                            "scope": "user",
                            "installPath": str(claude / "plugins" / "cache" / marketplace / "recall" / VERSION),
                            "version": VERSION,
                        }
                    ]
                },
            }
        )
    )
    return claude / "plugins" / "data" / f"recall-{marketplace}"


def test_plugin_detection_follows_claude_codes_settings(project, tmp_path):
    assert wiring.plugin(project) is None
    data = enable_plugin(tmp_path, marketplace="my-market")
    found = wiring.plugin(project)
    assert (found.id, found.scope, found.version, found.data_dir) == ("recall@my-market", "user", VERSION, data)
    enable_plugin(tmp_path, scope_file=project / ".claude" / "settings.local.json", on=False, marketplace="my-market")
    assert wiring.plugin(project) is None  # disabled for this project
    assert wiring.plugin(None) is not None


def test_setup_stands_down_while_the_plugin_is_enabled(project, tmp_path, capsys):
    enable_plugin(tmp_path)
    assert run(["setup", "--project", str(project), "--no-index"]) == 0
    out = capsys.readouterr().out
    assert "recall's Claude Code plugin (recall@recall" in out and "claude plugin uninstall recall@recall" in out
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()
    assert run(["setup", "--global", "--no-index"]) == 0
    assert "setup added none of its own" in capsys.readouterr().out
    assert "hooks" not in json.loads((Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())


def test_the_plugins_hooks_stand_down_where_setups_answer(project, claude_projects, monkeypatch):
    from indexer.ingest import index_all
    from tests.prompt.test_hook import run_hook_process
    from tests.support.factory import Session

    config.set_value("model.backend", "off")
    past = Session(cwd=str(project))
    past.user("which connection pooler for postgres?")
    past.assistant("We decided on pgbouncer in transaction pooling mode for postgres connections.")
    past.write(claude_projects)
    index_all()
    prompt = {
        "session_id": "now",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "which connection pooler did we decide on for postgres?",
    }
    as_plugin = {
        "RECALL_PLUGIN_DATA": str(project / "plugin-data"),
        "CLAUDE_PROJECT_DIR": str(project),
        "RECALL_NO_SERVICE": "1",
    }
    alone = run_hook_process(prompt, env=as_plugin)
    assert "pgbouncer" in json.loads(alone.stdout)["hookSpecificOutput"]["additionalContext"]
    st.install_files(project, mcp=False, commands=False)  # `recall setup` was there first
    assert run_hook_process(prompt, env=as_plugin).stdout == ""  # the plugin's copy stands down
    # setup's own hook still answers (in another conversation: this one had that session already)
    setups = run_hook_process(
        dict(prompt, session_id="later"), env={"RECALL_NO_SERVICE": "1", "CLAUDE_PROJECT_DIR": str(project)}
    )
    assert "pgbouncer" in setups.stdout


def test_doctor_says_which_wiring_is_active(project, tmp_path):
    from recall.cli.checks import check_wiring, doctor

    assert check_wiring(project) == ([], False)
    data = enable_plugin(tmp_path)
    checks, by_plugin = check_wiring(project)
    assert by_plugin and checks[0].warn and "not built yet" in checks[0].detail
    plugin_runtime.Build(tmp_path / "nothing-here", data, VERSION)()  # fails: no source
    checks, _ = check_wiring(project)
    assert not checks[0].ok and not checks[0].warn and "building its runtime failed" in checks[0].detail
    assert "reinstall the plugin" in checks[0].fix
    fake_runtime(data)
    checks, _ = check_wiring(project)
    assert checks[0].ok and "runtime ready" in checks[0].detail
    names = [c.name for c in doctor(project)]
    assert "wiring" in names and "hooks" not in names and "MCP server" not in names  # the plugin's own
    st.install_files(project, mcp=False, commands=False)
    checks, by_plugin = check_wiring(project)
    assert not by_plugin and checks[0].warn and "stands down" in checks[0].detail
    assert f"recall setup --uninstall --project {project}" in checks[0].fix
    (Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json").unlink()
    checks, _ = check_wiring(project)
    assert checks[0].ok and checks[0].detail.startswith("recall setup (")


def test_the_plugins_mcp_server_stands_down_where_setups_is_registered(project, monkeypatch):
    import anyio
    import mcp

    from recall.cli.commands.mcp import _stand_down
    from recall.mcp.server import standing_down_server

    monkeypatch.setenv("RECALL_PLUGIN_DATA", str(project / "plugin-data"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert _stand_down() is None
    st.install_files(project, commands=False)
    why = _stand_down()
    assert why and str(project / ".mcp.json") in why
    monkeypatch.delenv("RECALL_PLUGIN_DATA")
    assert _stand_down() is None  # setup's own server never stands down

    async def tools():
        async with mcp.Client(standing_down_server(why)) as client:
            return (await client.list_tools()).tools

    assert anyio.run(tools) == []


def test_the_service_stops_when_recall_is_uninstalled(monkeypatch, tmp_path):
    from recall.service import daemon

    assert not daemon.uninstalled()
    monkeypatch.setenv("RECALL_PLUGIN_DATA", str(tmp_path / "plugin-data"))  # the plugin's service
    assert not daemon.uninstalled()  # no installed_plugins.json to read: not a reason to stop
    enable_plugin(tmp_path)
    assert not daemon.uninstalled()
    listed = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "plugins" / "installed_plugins.json"
    listed.write_text('{"version": 2, "plu')  # caught mid-write
    assert not daemon.uninstalled()
    listed.write_text(json.dumps({"version": 2, "plugins": {"other@market": []}}))  # uninstall --keep-data
    assert daemon.uninstalled()
    monkeypatch.delenv("RECALL_PLUGIN_DATA")
    assert not daemon.uninstalled()  # a service recall setup started is not the plugin's business
    monkeypatch.setattr(sys, "executable", str(tmp_path / "deleted-venv" / "bin" / "python"))
    assert daemon.uninstalled()  # its virtualenv was deleted


def test_session_start_starts_the_service_only_when_none_answers_and_one_is_wanted(monkeypatch):
    from recall.core import service_client as client
    from recall.hooks import plugin

    started = []
    monkeypatch.setattr(plugin, "spawn_service", lambda: started.append(1))
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    assert plugin.ensure_service() is False and started == []
    monkeypatch.delenv("RECALL_NO_SERVICE")
    monkeypatch.setattr(client, "ping", lambda timeout=1.0: {"pid": 1, "version": __version__})
    assert plugin.ensure_service() is False and started == []
    monkeypatch.setattr(client, "ping", lambda timeout=1.0: None)
    assert plugin.ensure_service() is True and started == [1]


def test_a_new_runtime_replaces_the_service_of_an_older_one_and_no_other(monkeypatch, tmp_path):
    """After building version B, the service an older runtime of this plugin runs is stopped (the
    new runtime then starts its own); a service started any other way is left alone."""
    from recall.core import paths
    from recall.core.service_state import pid_alive
    from recall.setup import plugin_service as plugin

    data = tmp_path / "plugin-data"
    old_python = data / "runtime" / "0.0.1" / "bin" / "python"
    python = sys.executable
    monkeypatch.setattr(sys, "executable", str(data / "runtime" / "0.0.2" / "bin" / "python"))
    paths.home_dir()

    def service(marker: str) -> subprocess.Popen:
        proc = subprocess.Popen([python, "-c", "import time; time.sleep(60)", marker])
        (paths.recall_home() / "service.lock").write_text(f"{proc.pid}\n")
        return proc

    other = service("/usr/local/bin/recall-elsewhere")
    try:
        assert "not started by this plugin" in plugin.replace_older_service(str(data))
        assert pid_alive(other.pid)
    finally:
        other.kill()
        other.wait()
    older = service(str(old_python))
    try:
        assert "stopped the service" in plugin.replace_older_service(str(data), timeout=10)
        assert older.wait(timeout=10) is not None
    finally:
        older.kill()
        older.wait()


# ------------------------------------------------------------------------------ issue 35 (low)
def _recording_python(path: Path, calls: Path) -> Path:
    path.write_text(f'#!/bin/sh\ncase "$1" in -c) exit 0;; esac\necho "$*" >> {calls}\n')
    path.chmod(0o755)
    return path


def test_a_runtime_marked_ready_but_broken_is_built_again(data, tmp_path):
    wait = __import__("tests.support.wait", fromlist=["wait_for"]).wait_for
    calls = tmp_path / "calls"
    fake = _recording_python(tmp_path / "python3.12", calls)
    bin_dir = fake_runtime(data)
    (bin_dir / "recall").write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named recall' >&2\nexit 1\n")
    proc = launch(["hook", "session-start"], data, stdin="{}", env={"RECALL_PYTHON": str(fake)})
    assert proc.returncode == 0
    assert wait(lambda: calls.exists() and "build" in calls.read_text(), timeout=10)
    assert not (data / "runtime" / VERSION / ".ready").exists()
    calls.unlink()
    (data / "runtime" / VERSION / ".ready").write_text("{}\n")
    (bin_dir / "recall").unlink()  # no bin/recall at all
    assert not plugin_runtime.ready(data, VERSION)
    proc = launch(["hook", "session-start"], data, stdin="{}", env={"RECALL_PYTHON": str(fake)})
    assert proc.returncode == 0
    assert wait(lambda: calls.exists() and "build" in calls.read_text(), timeout=10)


def test_a_plugin_data_folder_it_cannot_write_is_said(tmp_path):
    data = tmp_path / "plugin-data"
    data.write_text("not a folder")  # (as root a read-only folder is still writable)
    proc = launch(["hook", "session-start"], data)
    assert proc.returncode == 0
    message = json.loads(proc.stdout)["systemMessage"]
    assert "cannot write its plugin data folder" in message and str(data) in message


def test_an_empty_path_entry_never_runs_a_python3_of_the_project_folder(data, tmp_path, no_python_path):
    project = tmp_path / "project"
    project.mkdir()
    ran = tmp_path / "ran"
    (project / "python3").write_text(f'#!/bin/sh\necho "$*" >> {ran}\nexit 0\n')  # records even the version check
    (project / "python3").chmod(0o755)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RECALL_PLUGIN"))}
    full.update({"CLAUDE_PLUGIN_ROOT": str(ROOT), "CLAUDE_PLUGIN_DATA": str(data), "PATH": f":{no_python_path}"})
    full.pop("RECALL_PYTHON", None)
    proc = subprocess.run(
        [str(ROOT / "hooks" / "recall"), "hook", "session-start"],
        input="{}",
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
        cwd=project,
    )
    assert proc.returncode == 0 and "no python3 3.11 or newer" in proc.stdout
    assert not ran.exists()  # not even asked its version
