"""The README's two commands, in order, on a fresh HOME with a `claude` on PATH (issue 27):
the first installs recall and starts its service; the second (the test command) installs into
a venv of its own and runs the suite; afterwards the service still runs, on the code it
started with, and still captures a new session; the first command's demo query finds the decision
a session from before the install holds (issue 44). No file or folder that recall did not create
changed mode. (The uninstall side: tests/e2e/test_e2e_uninstall.py.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.support.claude import support_cache_dir
from tests.support.factory import Session
from tests.support.fakes import unreachable_service_manager

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def readme_command(marker: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(rf"<!-- {marker} -->\s*```sh\n(.+?)\n```", text, re.S).group(1).strip()


def modes(*roots: Path) -> dict[str, int]:
    out = {}
    for root in roots:
        out[str(root)] = stat.S_IMODE(os.lstat(root).st_mode)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".venv", ".venv-test", "__pycache__", ".pytest_cache")]
            for name in [*dirnames, *filenames]:
                p = os.path.join(dirpath, name)
                out[p] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


def transcript(home: Path, project: Path, text: str) -> Path:
    sid = str(uuid.uuid4())
    enc = "".join(c if c.isalnum() else "-" for c in str(project))
    path = home / ".claude" / "projects" / enc / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": str(uuid.uuid4()),
                "sessionId": sid,
                "cwd": str(project),
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "message": {"role": "user", "content": text},
            }
        )
        + "\n"
    )
    return path


def test_the_readme_commands_in_order_leave_a_working_service(tmp_path, claude_logged_out):
    clone = tmp_path / "recall"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / rel)
    home = tmp_path / "fresh-home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    os.chmod(clone, 0o755)
    nomanager = unreachable_service_manager(tmp_path / "nomanager")  # the service runs detached
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RECALL_", "ANTHROPIC_", "CLAUDE", "PYTEST", "VIRTUAL_ENV", "XDG_"))
    }
    env.update(
        HOME=str(home),
        PATH=f"{nomanager}{os.pathsep}{os.environ['PATH']}",
        PIP_CACHE_DIR=str(support_cache_dir() / "pip"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    assert shutil.which("claude", path=env["PATH"]) == str(claude_logged_out)
    # a session from before the install, whose reply holds the decision the README's demo asks for
    past = Session(cwd=str(home / "work" / "shop"))
    past.user("how should the orders table store prices?")
    past.assistant("Decision: we store all prices as integer cents, never floats. Floats lose cents in sums.")
    past.write(home / ".claude" / "projects")
    before = modes(home, clone)
    recall_bin = clone / ".venv" / "bin" / "recall"
    try:
        main = subprocess.run(
            ["bash", "-c", readme_command("main-command")],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert main.returncode == 0, main.stdout[-3000:] + main.stderr[-3000:]
        assert "changed: started the recall service without a service manager" in main.stdout
        assert f"linked {home}/.local/bin/recall -> {recall_bin}" in main.stdout
        # the demo query (`recall --raw --limit 5 "what did we decide"`) finds that decision
        assert "**Decision**: we store all prices as integer cents, never floats" in main.stdout, main.stdout[-3000:]
        assert "No matches" not in main.stdout

        def ping() -> dict | None:
            out = subprocess.run(
                [str(recall_bin), "service", "status", "--json"], env=env, capture_output=True, text=True, timeout=60
            )
            data = json.loads(out.stdout or "{}")
            return data if data.get("running") else None

        first = ping()
        assert first and first["pid"]

        # the test command, as written; PYTEST_ADDOPTS runs a small part of the suite (the whole of
        # it is what CI runs), so this stays minutes, not the suite inside the suite
        # (and the test that once depended on where the checkout lives: this clone is under a temporary folder)
        test_env = dict(
            env,
            PYTEST_ADDOPTS="-p no:cacheprovider -k 'test_path_keeps_every_tool_but_claude or "
            "test_setup_warns_when_the_install_lives_in_a_temporary_or_git_tracked_place'",
        )
        second = subprocess.run(
            ["bash", "-c", readme_command("test-command")],
            cwd=clone,
            env=test_env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert (clone / ".venv-test").is_dir()

        time.sleep(3)  # the service checks its installed code every 5 s: nothing changed for it
        after = ping()
        assert after and after["pid"] == first["pid"]
        transcript(home, home / "work" / "shop", "the kingfisher release needs a manual approval")
        deadline = time.monotonic() + 60
        found = ""
        while time.monotonic() < deadline and "kingfisher" not in found:
            found = subprocess.run(
                [str(recall_bin), "--raw", "kingfisher"], env=env, capture_output=True, text=True, timeout=60
            ).stdout
            time.sleep(0.5)
        assert "kingfisher" in found
        doctor = subprocess.run(
            [str(recall_bin), "doctor", "--project", str(clone)], env=env, capture_output=True, text=True, timeout=300
        )
        assert "ok    service: running" in doctor.stdout, doctor.stdout
        assert "FAIL  hooks" not in doctor.stdout and "FAIL  MCP" not in doctor.stdout
        # the service's lock names the pid of the process answering: the one setup started
        changed = {
            p: (oct(m), oct(os.lstat(p).st_mode & 0o777))
            for p, m in before.items()
            if os.path.lexists(p) and stat.S_IMODE(os.lstat(p).st_mode) != m
        }
        assert changed == {}
    finally:
        subprocess.run([str(recall_bin), "setup", "--uninstall", "--global"], env=env, capture_output=True, timeout=120)
