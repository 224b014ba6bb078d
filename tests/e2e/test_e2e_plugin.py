"""End to end with the real Claude Code client: recall installed as a Claude Code plugin from this
checkout (`claude plugin marketplace add <checkout>`, `claude plugin install recall@recall`).

The first session's SessionStart builds the runtime in the background (a virtualenv in the
plugin's data folder, pip-installing recall from the plugin's folder; offline here: pip gets
`PIP_NO_INDEX` and a folder of wheels repacked from this venv) while every hook stays silent;
the build starts the service, which indexes that session. The second session's question about
it gets recall's injection, the plugin's MCP tools are offered, `/recall:recall-search` prints
the hit. With `recall setup`'s hooks as well, each prompt is still injected once. `claude plugin
uninstall` leaves no hook, MCP server, command or service behind, and the history in
`$RECALL_HOME` stays."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recall.core import config, paths, service_client, wiring
from recall.search.searcher import Searcher
from tests.support.claude import claude_version, version_tuple
from tests.support.standin import is_claude_code_request, is_main_request, is_messages_request, request_text, text
from tests.support.wait import wait_for
from tests.support.wheelhouse import offline_pip_env, wheelhouse

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHECKOUT = Path(__file__).resolve().parents[2]
DECISION = (
    "We decided on pgbouncer in transaction pooling mode, because the ORM opens one "
    "connection per request and Postgres ran out of slots."
)
QUESTION = "which connection pooler did we settle on for postgres, and why?"
SYNTH_MARK = "quillfeather"
INJECTED = "UserPromptSubmit hook additional context: <recalled-context>"
BUILD_TIMEOUT = 600.0  # a loaded 2-core machine; about 20 s when idle


def synthesis_handler(req):
    if is_claude_code_request(req):
        # the main model answers from what recall injected, as a real one would: a later session
        # that asks again then finds that answer, not only an earlier "ok"
        if is_main_request(req) and SYNTH_MARK in request_text(req):
            return text("We use pgbouncer in transaction pooling mode: the ORM opens one connection per request.")
        return None
    if "pgbouncer" in request_text(req):
        return text(f"- {SYNTH_MARK}: pgbouncer in transaction pooling mode [2026-11-20 session abcdef12]")
    return text("NONE")


def main_requests(standin, since):
    return [
        r
        for r in standin.snapshot()[since:]
        if is_messages_request(r) and is_claude_code_request(r) and is_main_request(r)
    ]


def recall_requests(standin, since):
    return [r for r in standin.snapshot()[since:] if is_messages_request(r) and not is_claude_code_request(r)]


def tool_names(req) -> list[str]:
    return [t.get("name", "") for t in req.get("tools") or []]


def claude(env, *args, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(env.binary), *args],
        cwd=env.project,
        env=env.environ(),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert not check or proc.returncode == 0, f"claude {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
    return proc


def wait_until_built(data: Path, version: str) -> dict:
    deadline = time.monotonic() + BUILD_TIMEOUT
    while time.monotonic() < deadline:
        if (data / "runtime" / version / ".ready").exists():
            return json.loads((data / "runtime" / version / ".ready").read_text())
        record = data / "build.json"
        if record.exists() and json.loads(record.read_text()).get("state") == "failed":
            break
        time.sleep(1.0)
    log = (data / "build.log").read_text()[-4000:] if (data / "build.log").exists() else "(no build.log)"
    pytest.fail(
        f"the plugin's runtime was not built: {(data / 'build.json').read_text() if (data / 'build.json').exists() else ''}\n{log}"
    )


def hits(query: str) -> list:
    """Messages found in the test's index (none while the service has not created it yet)."""
    from recall.core.errors import IndexMissing

    try:
        return Searcher().search(query, messages=True)
    except IndexMissing:
        return []


def stop_service():
    """Stop whatever service runs for this test's RECALL_HOME (the plugin started it)."""
    import os
    import signal

    from recall.core.service_state import lock_holder, pid_alive

    pid = lock_holder()
    if pid:
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not pid_alive(pid), timeout=40)


@pytest.fixture
def plugin_user(claude_env, standin, monkeypatch, request):
    """A fake user with Claude Code, offline pip (wheels of this venv), recall's state in the
    test's RECALL_HOME; memory extraction off (no workers), room for the synthesis."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_env.home / ".claude"))
    monkeypatch.delenv("RECALL_NO_SERVICE", raising=False)
    claude_env.env.update(offline_pip_env(wheelhouse()))
    # the wheels are this interpreter's (cp311...): build the runtime with it, not another python3
    claude_env.env["RECALL_PYTHON"] = sys.executable
    # -p connects MCP servers in the background by default: make the first request wait for them
    claude_env.env["MCP_CONNECTION_NONBLOCKING"] = "0"
    config.set_value("memory.enabled", False)
    config.set_value("hook.budget_seconds", 30)
    request.addfinalizer(stop_service)
    return claude_env


def test_plugin_install_first_session_builds_second_recalls_uninstall_leaves_nothing(plugin_user, standin, capsys):
    env = plugin_user
    version = json.loads((CHECKOUT / ".claude-plugin" / "plugin.json").read_text())["version"]
    data = env.home / ".claude" / "plugins" / "data" / "recall-recall"

    # the checkout is a one-plugin marketplace
    if version_tuple(claude_version()) < (2, 1, 332):
        claude(env, "plugin", "validate", "--strict", str(CHECKOUT))
    # 2.1.332's validator follows no link (.plugin/ is links) and says to validate the real files:
    # a copy with the links dereferenced, as install copies them, passes as strictly
    real = dereferenced_copy(env.home.parent / "plugin-copy")
    claude(env, "plugin", "validate", "--strict", str(real))
    claude(env, "plugin", "validate", "--strict", str(real / ".plugin"))
    claude(env, "plugin", "validate", "--strict", str(CHECKOUT / ".claude-plugin" / "plugin.json"))
    claude(env, "plugin", "marketplace", "add", str(CHECKOUT))
    claude(env, "plugin", "install", "recall@recall")
    # what Claude Code copied: the plugin's folder, never this checkout's virtualenvs (issue 36)
    cached = env.home / ".claude" / "plugins" / "cache" / "recall" / "recall" / version
    assert (cached / "hooks" / "recall").is_file() and (cached / "recall" / "entry.py").is_file()
    assert not [p.name for p in cached.iterdir() if p.name.startswith((".venv", ".mcp"))]
    found = wiring.plugin(env.project)
    assert found is not None and found.id == "recall@recall" and found.data_dir == data

    # session 1: the runtime is built in the background; every hook is silent meanwhile
    mark = len(standin.snapshot())
    standin.script(text(DECISION))
    proc = env.run("which connection pooler should we use for postgres?")
    assert proc.returncode == 0, proc.stderr
    assert DECISION in proc.stdout
    first = main_requests(standin, mark)
    assert (
        first
        and "<recalled-context>" not in request_text(first[0])
        and "hook"
        not in json.dumps(
            [
                a
                for a in env.transcript_entries()
                if a.get("type") == "attachment"
                and a["attachment"].get("type") in ("hook_success", "hook_additional_context", "hook_error")
                and a["attachment"].get("content")
            ]
        )
    )
    session1 = env.transcripts(include_subagents=False)[0].stem
    ready = wait_until_built(data, version)
    assert ready["version"] == version
    assert (data / "runtime" / version / "bin" / "recall").exists()
    cli = subprocess.run([str(data / "bin" / "recall"), "--version"], capture_output=True, text=True, timeout=60)
    assert cli.stdout.strip() == f"recall {version}"  # the plugin's command line
    # and `recall` from a new shell: the plugin's link in ~/.local/bin (issue 36)
    shell = subprocess.run(
        ["sh", "-c", "recall --version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(env.home), "PATH": f"{env.home / '.local' / 'bin'}:/usr/bin:/bin"},
    )
    assert shell.stdout.strip() == f"recall {version}", shell.stderr
    # the build started the service, which indexes session 1
    assert wait_for(
        lambda: service_client.ping(timeout=1.0),
        timeout=60,
        what=lambda: "the service; build.log ends: " + (data / "build.log").read_text()[-2000:],
    )
    assert wait_for(lambda: hits("connection pooler postgres"), timeout=60)

    from recall.cli.checks import check_wiring

    checks, by_plugin = check_wiring(env.project)
    assert by_plugin and checks[0].ok and "runtime ready" in checks[0].detail
    # doctor asks this Claude Code whether it runs the plugin's hooks and MCP server (issue 36)
    from recall.cli.checks import check_claude_loads

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(env.home))
        config.set_value("model.claude_path", str(env.binary))
        loads = check_claude_loads(env.project, True, False)
        config.unset_value("model.claude_path")
    assert (
        loads.ok and "ran recall's SessionStart and UserPromptSubmit hooks and connected its MCP server" in loads.detail
    ), loads

    # session 2: the question gets recall's injection, once; the plugin's MCP tools are offered
    standin.handler = synthesis_handler
    mark = len(standin.snapshot())
    proc = env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    ours = recall_requests(standin, mark)
    assert len(ours) == 1 and DECISION in request_text(ours[0]) and f"session {session1[:8]}]" in request_text(ours[0])
    main = main_requests(standin, mark)[0]
    sent = json.dumps(main)
    assert sent.count(INJECTED) == 1 and SYNTH_MARK in sent
    assert {"mcp__plugin_recall_recall__memory_search", "mcp__plugin_recall_recall__recall_search"} <= set(
        tool_names(main)
    ), tool_names(main)

    # /recall-search, the plugin's command (Claude Code names it /recall:recall-search)
    mark = len(standin.snapshot())
    proc = env.run("/recall:recall-search connection pooler postgres", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_requests(standin, mark)[0])
    block = sent[sent.find("<command-name>/recall:recall-search") :]
    assert "**pooler**" in block and "add nothing else" in block, block[:1500]

    # recall setup, with the plugin enabled, stands down: it writes nothing
    from recall.cli.app import run

    capsys.readouterr()
    assert run(["setup", "--project", str(env.project), "--no-index"]) == 0
    out = capsys.readouterr().out
    assert "recall's Claude Code plugin (recall@recall" in out and "setup added none of its own" in out
    assert not (env.project / ".claude" / "settings.json").exists()
    assert not (env.project / ".mcp.json").exists()

    # a user who ran setup before installing the plugin: setup's hooks answer, the plugin's
    # stand down: one injection per prompt, one synthesis, one MCP tool set
    from recall.setup import install

    install.install_files(env.project)
    assert set(wiring.setup_hooks(env.project)) == set(install.HOOK_EVENTS)
    checks, by_plugin = check_wiring(env.project)
    assert not by_plugin and checks[0].warn and "stands down" in checks[0].detail
    mark = len(standin.snapshot())
    proc = env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    assert len(recall_requests(standin, mark)) == 1
    main = main_requests(standin, mark)[0]
    assert json.dumps(main).count(INJECTED) == 1
    assert not [n for n in tool_names(main) if n.startswith("mcp__plugin_recall_recall__")]
    # and the plugin's slash commands point to setup's: one install answers everywhere (issue 36)
    mark = len(standin.snapshot())
    proc = env.run("/recall:recall-search connection pooler postgres", allowed_tools=None)
    assert proc.returncode == 0, proc.stderr
    sent = request_text(main_requests(standin, mark)[0])
    block = sent[sent.find("<command-name>/recall:recall-search") :]
    assert "the plugin's /recall:... commands stand down" in block and "**pooler**" not in block, block[:1500]
    install.uninstall_files(env.project)  # what `recall setup --uninstall` does: only setup's go
    assert wiring.setup_hooks(env.project) == {} and wiring.plugin(env.project) is not None
    assert (data / "runtime" / version / ".ready").exists()

    # uninstall: no hook, MCP server, command or service left; the history stays
    claude(env, "plugin", "uninstall", "recall@recall")
    assert wiring.plugin(env.project) is None
    assert not data.exists()  # the runtime went with the plugin's data folder
    from recall.core.service_state import lock_holder

    assert wait_for(lambda: lock_holder() is None, timeout=30, what="the plugin's service to end with its uninstall")
    assert not (env.home / ".local" / "bin" / "recall").is_symlink()  # no `recall` link left dangling
    assert hits("connection pooler postgres")  # $RECALL_HOME survives
    assert paths.archive_dir().exists()
    mark = len(standin.snapshot())
    proc = env.run(QUESTION)
    assert proc.returncode == 0, proc.stderr
    main = main_requests(standin, mark)[0]
    assert recall_requests(standin, mark) == [] and "<recalled-context>" not in json.dumps(main)
    assert not [n for n in tool_names(main) if "recall" in n]
    mark = len(standin.snapshot())
    proc = env.run("/recall:recall-search connection pooler", allowed_tools=None)
    if version_tuple(claude_version()) < (2, 1, 332):
        assert "Unknown command" in proc.stdout + proc.stderr
    else:  # 2.1.332 sends a command it does not know to the model, as the words typed
        sent = request_text(main_requests(standin, mark)[0])
        assert "/recall:recall-search connection pooler" in sent
        assert "<command-name>/recall:recall-search" not in sent and "**pooler**" not in sent
    assert "hooks" not in json.loads((env.claude_dir / "settings.json").read_text())
    assert "recall" not in (json.loads(env.claude_json.read_text()).get("mcpServers") or {})
    assert not (env.claude_dir / "commands").exists()
    assert lock_holder() is None  # nothing started the service again


def test_a_failed_build_is_said_at_the_next_session_start_and_by_doctor(claude_env, standin, monkeypatch, tmp_path):
    """pip cannot download anything (no index, an empty wheel folder): the first session's
    build fails, the next session's start says what failed and what to do in one systemMessage
    line, the prompt still goes through, and doctor names the failure and its fix."""
    env = claude_env
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(env.home / ".claude"))
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    env.env.update(offline_pip_env(empty))
    env.env["RECALL_PYTHON"] = sys.executable
    version = json.loads((CHECKOUT / ".claude-plugin" / "plugin.json").read_text())["version"]
    data = env.home / ".claude" / "plugins" / "data" / "recall-recall"
    claude(env, "plugin", "marketplace", "add", str(CHECKOUT))
    claude(env, "plugin", "install", "recall@recall")

    assert env.run("hello").returncode == 0
    record = data / "build.json"
    assert wait_for(
        lambda: record.exists() and json.loads(record.read_text())["state"] == "failed",
        timeout=BUILD_TIMEOUT,
        what=lambda: (
            "the failed build; build.log ends: "
            + ((data / "build.log").read_text()[-2000:] if (data / "build.log").exists() else "")
        ),
    )
    assert not (data / "runtime" / version / ".ready").exists()

    proc = env.run("hello again")
    assert proc.returncode == 0, proc.stderr
    said = [
        a["attachment"]["content"]
        for a in env.transcript_entries()
        if a.get("type") == "attachment" and a["attachment"].get("type") == "hook_system_message"
    ]
    assert len(said) == 1 and "\n" not in said[0], said
    assert said[0].startswith("recall: building its Python runtime failed: pip could not download")
    assert "To fix: connect to the network" in said[0] and str(data / "build.log") in said[0]

    # that session's start tried again; it fails the same way, and doctor says so
    assert wait_for(lambda: not plugin_runtime_building(data), timeout=BUILD_TIMEOUT)
    from recall.cli.checks import check_wiring

    checks, by_plugin = check_wiring(env.project)
    assert by_plugin and not checks[0].ok and "pip could not download" in checks[0].detail
    assert "connect to the network" in checks[0].fix


def plugin_runtime_building(data: Path) -> bool:
    from recall.setup import plugin_runtime

    return plugin_runtime.status(data, None)["state"] == "building"


def dereferenced_copy(where: Path) -> Path:
    """The marketplace's files with ``.plugin/``'s links replaced by what they point to."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in PLUGIN_PARTS:
        src = CHECKOUT / part
        if src.is_dir():
            shutil.copytree(src, where / part, symlinks=False, ignore=ignore)
        else:
            shutil.copy2(src, where / part)
    return where


PLUGIN_PARTS = (".claude-plugin", ".plugin", "hooks", "recall", "indexer", "pyproject.toml", "README.md")


def test_a_clone_used_as_the_marketplace_runs_in_place_and_breaks_when_moved(claude_env, monkeypatch, tmp_path):
    """What the README says of a clone added as the marketplace (issue 44 item 10): Claude Code
    runs the plugin's MCP server and hooks from the clone's ``.plugin`` (``claude mcp list``
    names ``<clone>/.plugin/hooks/recall``), not from its cached copy; once the clone moves the
    plugin fails to load (no hooks, no MCP server, no commands) until the marketplace is added
    again from where the clone is now."""
    env = claude_env
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(env.home / ".claude"))
    clone = tmp_path / "src" / "recall"
    clone.mkdir(parents=True)
    for part in PLUGIN_PARTS:  # the plugin's files, its links kept as links (never the venvs)
        src = CHECKOUT / part
        if src.is_dir() and not src.is_symlink():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(src, clone / part, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(src, clone / part, follow_symlinks=False)
    # the launcher notes each run of it (where it ran from, and what for)
    ran = tmp_path / "launcher-ran.txt"
    launcher = clone / "hooks" / "recall"
    shebang, rest = launcher.read_text().split("\n", 1)
    launcher.write_text(f"{shebang}\nprintf '%s\\n' \"$0 $*\" >> '{ran}'\n{rest}")
    empty = tmp_path / "no-wheels"  # the first session's runtime build fails at once, offline
    empty.mkdir()
    env.env.update(offline_pip_env(empty))
    env.env["RECALL_PYTHON"] = sys.executable
    claude(env, "plugin", "marketplace", "add", str(clone))
    claude(env, "plugin", "install", "recall@recall")
    listed = claude(env, "mcp", "list").stdout
    assert f"plugin:recall:recall: {clone}/.plugin/hooks/recall mcp" in listed, listed
    cached = env.home / ".claude" / "plugins" / "cache" / "recall" / "recall"
    assert str(cached) not in listed and any(cached.iterdir())  # the copy is there, and unused
    ran.unlink(missing_ok=True)
    assert env.run("hello").returncode == 0
    runs = ran.read_text().splitlines()  # the hooks run from the clone too
    assert any(" hook session-start" in r for r in runs) and all(
        r.startswith(f"{clone}/.plugin/hooks/recall ") for r in runs
    ), runs

    clone.rename(tmp_path / "src" / "recall-moved")
    assert "plugin:recall:recall" not in claude(env, "mcp", "list").stdout
    status = claude(env, "plugin", "list").stdout
    assert "failed to load" in status, status
    ran.unlink(missing_ok=True)
    assert env.run("hello again").returncode == 0
    assert not ran.exists()  # no hook of recall runs any more, not even the cached copy's

    # the README's way out: the marketplace added again from where the clone is now
    claude(env, "plugin", "marketplace", "remove", "recall")
    claude(env, "plugin", "marketplace", "add", str(tmp_path / "src" / "recall-moved"))
    claude(env, "plugin", "install", "recall@recall")
    listed = claude(env, "mcp", "list").stdout
    assert f"plugin:recall:recall: {tmp_path / 'src' / 'recall-moved'}/.plugin/hooks/recall mcp" in listed, listed
    readme = (CHECKOUT / "README.md").read_text()
    assert "must stay where it is" in readme and "marketplace remove recall" in readme
