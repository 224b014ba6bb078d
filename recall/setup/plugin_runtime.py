"""The Python runtime of recall's Claude Code plugin: a virtualenv in ``${CLAUDE_PLUGIN_DATA}``
with recall installed from ``${CLAUDE_PLUGIN_ROOT}``, built with no step by hand.

The plugin's launcher (``hooks/recall``) runs ``recall`` from ``<data>/runtime/<version>`` once
that holds a ``.ready`` file. Until then every hook exits at once, and SessionStart starts this
module in the background, as a script of the user's own python3 (3.11 or newer, ``-I``: nothing
of recall is installed yet, so it imports only the standard library)::

    python3 -I recall/setup/plugin_runtime.py build --root ROOT --data DATA --version VERSION

It takes ``<data>/build.lock`` (a second session starting meanwhile finds it held and leaves),
creates the virtualenv, copies the package's source (``pyproject.toml``, ``README.md``,
``recall/``, ``indexer/``) to ``<data>/src`` and pip-installs it from there (the plugin's folder
is never written to), checks that the install imports, and writes ``.ready`` last. pip runs
with the user's own pip configuration (``pip.conf``, ``PIP_INDEX_URL``, ``PIP_FIND_LINKS``,
``PIP_NO_INDEX``...): a mirror, a proxy or an offline wheel folder work as they do for pip. A
new plugin version gets a new folder (a service running from the old one keeps running until
the new one is ready, then both go); then the runtime starts the service
(``python -m recall.setup.plugin_service after-build``), replacing one of an older plugin runtime.

What it leaves for the others to read, all in ``<data>``:

* ``build.log``        everything the build ran and printed (the one before: ``build.log.1``);
* ``build.json``       the last build: state (``building``, ``ready``, ``failed``), version,
                       step, error, fix, times (``recall doctor`` reads it: ``status()``);
* ``build.state``      one line for the launcher to print while the runtime is not ready;
* ``build-failed``     the SessionStart hook's output after a failed build: one
                       ``systemMessage`` line saying what failed and what to do;
* ``bin/recall``       the plugin's command line: a small sh script that runs the ready
                       runtime's ``recall``, or says the runtime is not built yet and what to
                       do; ``~/.local/bin/recall`` links to it (``put_command_on_path``), unless
                       a ``recall`` that is not this plugin's is there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MIN_PYTHON = (3, 11)  # tantivy 0.27's wheels; pyproject.toml's requires-python (a test keeps them equal)
SOURCE = ("pyproject.toml", "README.md", "recall", "indexer")  # what `pip install` needs of the checkout
OPTIONAL_SOURCE = ("LICENSE", "LICENSE.txt", "setup.cfg", "MANIFEST.in")
VENV_TIMEOUT = 300
PIP_TIMEOUT = 1800
CHECK_TIMEOUT = 120

#: words in pip's output that mean it could not reach an index
_NETWORK = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ConnectTimeoutError",
    "ProxyError",
    "SSLError",
    "Could not fetch URL",
    "No matching distribution found",
)


class BuildFailed(Exception):
    def __init__(self, step: str, error: str, fix: str) -> None:
        super().__init__(error)
        self.step, self.error, self.fix = step, error, fix


# ------------------------------------------------------------------------------ layout
def runtime_dir(data: Path, version: str) -> Path:
    return Path(data) / "runtime" / version


def ready(data: Path, version: str) -> bool:
    rt = runtime_dir(data, version)
    return (
        (rt / ".ready").is_file()
        and os.access(rt / "bin" / "python", os.X_OK)
        and os.access(rt / "bin" / "recall", os.X_OK)
    )


def _write(path: Path, text: str) -> None:
    """Atomically (tmp + rename), 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _lock_held(data: Path) -> bool:
    """Whether a build holds ``<data>/build.lock`` now."""
    import fcntl

    try:
        fd = os.open(Path(data) / "build.lock", os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock we took
    return False


def status(data: Path, version: str | None) -> dict:
    """The runtime of plugin ``version`` in ``data``: ``{"state": ready | building | failed |
    interrupted | missing, "runtime", "log", ...the last build's record}``."""
    data = Path(data)
    last = _read_json(data / "build.json")
    out = {**last, "log": str(data / "build.log"), "runtime": str(runtime_dir(data, version or "?"))}
    if version and ready(data, version):
        out.update(_read_json(runtime_dir(data, version) / ".ready"))
        out["state"] = "ready"
    elif last.get("state") == "building":
        out["state"] = "building" if _lock_held(data) else "interrupted"
    elif last.get("state") == "failed":
        out["state"] = "failed"
    else:
        state = (data / "build.state").read_text(encoding="utf-8").strip() if (data / "build.state").is_file() else ""
        out["state"] = "failed" if state else "missing"
        if state:
            out.setdefault("error", state.removeprefix("recall: "))
    return out


# ------------------------------------------------------------------------------ `recall` on PATH
COMMAND_MARK = "# recall's command for its Claude Code plugin"


def command_text(data: Path) -> str:
    """``<data>/bin/recall``: the ready runtime's ``recall``; until one is built, one line saying
    so and what to do (never the shell's "No such file or directory")."""
    quoted = "'" + str(data).replace("'", "'\\''") + "'"
    return f"""#!/bin/sh
{COMMAND_MARK} (written by its runtime build, recall/setup/plugin_runtime.py):
# the plugin's runtime's `recall` once it is built; until then, what to do.
data={quoted}
for rt in "$data"/runtime/*/; do
    if [ -f "$rt.ready" ] && [ -x "${{rt}}bin/recall" ]; then
        RECALL_PLUGIN_DATA=$data
        RECALL_PLUGIN_SHELL=1
        export RECALL_PLUGIN_DATA RECALL_PLUGIN_SHELL
        exec "${{rt}}bin/recall" "$@"
    fi
done
line=
[ -f "$data/build.state" ] && IFS= read -r line < "$data/build.state"
[ -n "$line" ] || line="recall: the Claude Code plugin's runtime is not built yet: start a Claude Code session (its start builds it in the background, a minute or two), then run recall again."
printf '%s\n' "$line" >&2
exit 1
"""


def bin_dir() -> Path:
    """Where a user's own commands go: ``$XDG_BIN_HOME``, else ``~/.local/bin`` (as ``recall setup``)."""
    xdg = os.environ.get("XDG_BIN_HOME")
    return Path(xdg).expanduser() if xdg else Path.home() / ".local" / "bin"


def _plugin_link(link: Path) -> bool:
    """Whether ``link`` is a link this plugin made (to some ``<plugins>/data/recall-*/bin/recall``)."""
    if not link.is_symlink():
        return False
    target = os.readlink(link)
    parts = Path(target).parts
    return (
        target.endswith(os.path.join("bin", "recall"))
        and len(parts) >= 4
        and parts[-4] == "data"
        and parts[-3].startswith("recall-")
    )


def put_command_on_path(data: Path) -> str:
    """Write ``<data>/bin/recall`` and link ``~/.local/bin/recall`` to it, unless a ``recall``
    that is not this plugin's is there (another install's, another tool's: left alone). Returns
    what it did, in one line (for the build log)."""
    data = Path(data)
    script = data / "bin" / "recall"
    script.parent.mkdir(parents=True, exist_ok=True)
    text = command_text(data)
    if script.is_symlink() or not script.is_file() or script.read_text(encoding="utf-8", errors="replace") != text:
        tmp = script.with_name(f".recall.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o755)
        os.replace(tmp, script)
    link = bin_dir() / "recall"
    if link.is_symlink() and os.readlink(link) == str(script):
        return f"{link} -> {script} (already)"
    if link.is_symlink() and _plugin_link(link) or not os.path.lexists(link):
        link.parent.mkdir(parents=True, exist_ok=True)
        tmp = link.with_name(f".recall.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(script)
        os.replace(tmp, link)
        return f"linked {link} -> {script}: `recall` works from a new shell (with {link.parent} on PATH)"
    return f"{link} is not this plugin's (another install or tool): left alone; the plugin's is {script}"


def remove_command_link(data: Path) -> bool:
    """Take ``~/.local/bin/recall`` away when it is this plugin's link to ``<data>/bin/recall``
    (the plugin was uninstalled: no link left dangling). Returns whether it did."""
    link = bin_dir() / "recall"
    try:
        if link.is_symlink() and os.readlink(link) == str(Path(data) / "bin" / "recall"):
            link.unlink()
            return True
    except OSError:
        pass
    return False


# ------------------------------------------------------------------------------ build
class Build:
    def __init__(self, root: Path, data: Path, version: str) -> None:
        self.root, self.data, self.version = Path(root), Path(data), version
        self.rt = runtime_dir(self.data, version)
        self.log_path = self.data / "build.log"
        self.log = None
        self.started = time.time()

    # the record ------------------------------------------------------------------------
    def say(self, line: str) -> None:
        if self.log is not None:
            self.log.write(f"[{time.strftime('%H:%M:%S')}] {line}\n")
            self.log.flush()

    def record(self, state: str, **extra) -> None:
        rec = {
            "state": state,
            "version": self.version,
            "pid": os.getpid(),
            "python": sys.executable,
            "started": self.started,
            **extra,
        }
        _write(self.data / "build.json", json.dumps(rec, indent=1) + "\n")

    def command(self, argv: list[str], timeout: float, cwd: Path | None, env: dict | None = None):
        """``argv`` run with no input, its output and errors as one text (for the log)."""
        return subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
            cwd=cwd,
            env=env,
        )

    def run(self, step: str, argv: list[str], timeout: float, cwd: Path | None = None) -> str:
        """Run one command, its output into the log; the output's tail, or BuildFailed."""
        self.say(f"$ {' '.join(argv)}")
        try:
            proc = self.command(argv, timeout, cwd)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout if isinstance(exc.stdout, str) else ""
            self.log.write(out)
            raise BuildFailed(
                step,
                f"{step} did not finish within {timeout:.0f} s",
                f"see {self.log_path}, then start a new session to try again",
            ) from None
        except OSError as exc:
            raise BuildFailed(
                step,
                f"could not run {argv[0]} ({exc.strerror or exc})",
                f"see {self.log_path}, then start a new session to try again",
            ) from None
        self.log.write(proc.stdout)
        self.log.flush()
        if proc.returncode != 0:
            raise self.failure(step, proc.stdout, proc.returncode)
        return proc.stdout

    def failure(self, step: str, output: str, code: int) -> BuildFailed:
        lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR:") or "Error" in ln.split(":")[0]]
        last = (errors or lines or [f"exit status {code}"])[-1].removeprefix("ERROR:").strip()[:300]
        retry = "then start a new session to try again"
        if step == "venv" and ("ensurepip" in output or "No module named venv" in output):
            minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
            return BuildFailed(
                step,
                f"{sys.executable} cannot create a virtualenv ({last})",
                f"install its venv module (e.g. `sudo apt install python{minor}-venv`), {retry}",
            )
        if step == "pip" and any(word in output for word in _NETWORK):
            return BuildFailed(
                step,
                f"pip could not download recall's dependencies ({last})",
                "connect to the network (pip uses your pip.conf, PIP_INDEX_URL and PIP_FIND_LINKS "
                f"for a mirror or a wheel folder), {retry}",
            )
        what = {"venv": "creating the virtualenv", "pip": "pip install", "check": "the installed runtime"}.get(
            step, step
        )
        return BuildFailed(step, f"{what} failed ({last})", f"see {self.log_path}, {retry}")

    # the steps -------------------------------------------------------------------------
    def stage(self) -> Path:
        """Copy what pip needs of the plugin's folder to ``<data>/src`` (the plugin folder may be
        a user's checkout, or read-only: the build never writes into it)."""
        src = self.data / "src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
        for name in SOURCE + OPTIONAL_SOURCE:
            path = self.root / name
            if path.is_dir():
                shutil.copytree(path, src / name, ignore=ignore)
            elif path.is_file():
                shutil.copy2(path, src / name)
            elif name in SOURCE:
                raise BuildFailed(
                    "source",
                    f"{path} is missing: the plugin's folder is incomplete",
                    "reinstall the plugin (`claude plugin uninstall recall@recall`, then install it again)",
                )
        return src

    def build(self) -> None:
        shutil.rmtree(self.rt, ignore_errors=True)  # what an interrupted or failed build left
        self.rt.parent.mkdir(parents=True, exist_ok=True)
        self.say(
            f"building recall {self.version}'s runtime in {self.rt} with {sys.executable} "
            f"(Python {sys.version.split()[0]}) from {self.root}"
        )
        src = self.stage()
        self.run("venv", [sys.executable, "-m", "venv", str(self.rt)], VENV_TIMEOUT)
        python = str(self.rt / "bin" / "python")
        self.run(
            "pip",
            [
                python,
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--progress-bar",
                "off",
                str(src),
            ],
            PIP_TIMEOUT,
            cwd=self.data,
        )
        self.run(
            "check",
            [
                python,
                "-c",
                "import recall.entry, recall.hooks.dispatch, indexer.ingest, tantivy; "
                "import recall; print('recall', recall.__version__)",
            ],
            CHECK_TIMEOUT,
            cwd=self.data,
        )
        if not os.access(self.rt / "bin" / "recall", os.X_OK):
            raise BuildFailed(
                "check",
                f"pip installed no {self.rt / 'bin' / 'recall'}",
                f"see {self.log_path}, then start a new session to try again",
            )
        seconds = round(time.time() - self.started, 1)
        _write(
            self.rt / ".ready",
            json.dumps(
                {
                    "version": self.version,
                    "python": sys.executable,
                    "python_version": sys.version.split()[0],
                    "built": time.time(),
                    "seconds": seconds,
                }
            )
            + "\n",
        )
        shutil.rmtree(src, ignore_errors=True)
        self.say(f"ready in {seconds} s")

    def after(self) -> None:
        """The new runtime starts the service (replacing one of an older plugin runtime); then
        older runtimes go."""
        env = {**os.environ, "RECALL_PLUGIN_DATA": str(self.data)}
        argv = [str(self.rt / "bin" / "python"), "-m", "recall.setup.plugin_service", "after-build"]
        self.say(f"$ {' '.join(argv)}")
        try:
            proc = self.command(argv, CHECK_TIMEOUT, self.data, env)
            self.log.write(proc.stdout)
        except (OSError, subprocess.SubprocessError) as exc:
            self.say(f"starting the service failed ({exc}): the next session start tries again")
        for old in (self.data / "runtime").iterdir():
            if old.name != self.version and old.is_dir():
                self.say(f"removing the runtime of version {old.name}")
                shutil.rmtree(old, ignore_errors=True)

    # the whole -------------------------------------------------------------------------
    def __call__(self) -> int:
        import fcntl

        self.data.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:  # `recall` on PATH from the first session on: the runtime's, or a line saying it is not built yet
            command = put_command_on_path(self.data)
        except OSError as exc:
            command = f"could not put `recall` on PATH: {exc}"
        lock = os.open(self.data / "build.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another session builds it
        if not ready(self.data, self.version):
            self._rotate_log()
            self.log = open(self.log_path, "a", encoding="utf-8", errors="replace")
            self.say(command)
            try:
                os.chmod(self.log_path, 0o600)
            except OSError:
                pass
            (self.data / "build-failed").unlink(missing_ok=True)  # said already, at this session's start
            _write(
                self.data / "build.state",
                f"recall: its runtime (version {self.version}) is being built in the background since "
                f"{time.strftime('%H:%M:%S')} (log: {self.log_path}); try again in a minute or two.\n",
            )
            self.record("building")
            try:
                self.build()
            except BuildFailed as exc:
                self._failed(exc)
                return 1
            except Exception as exc:  # noqa: BLE001 - whatever it is, the user gets one line
                import traceback

                self.log.write(traceback.format_exc())
                self._failed(
                    BuildFailed(
                        "build",
                        f"{type(exc).__name__}: {exc}",
                        f"see {self.log_path}, then start a new session to try again",
                    )
                )
                return 1
            self.record("ready", finished=time.time())
            (self.data / "build.state").unlink(missing_ok=True)
        else:
            self.log = open(self.log_path, "a", encoding="utf-8", errors="replace")
        self.after()
        return 0

    def _failed(self, exc: BuildFailed) -> None:
        shutil.rmtree(self.rt, ignore_errors=True)
        shutil.rmtree(self.data / "src", ignore_errors=True)
        self.say(f"FAILED at {exc.step}: {exc.error}; {exc.fix}")
        self.record("failed", finished=time.time(), step=exc.step, error=exc.error, fix=exc.fix)
        _write(self.data / "build.state", f"recall: building its runtime failed: {exc.error}; {exc.fix}.\n")
        message = (
            f"recall: building its Python runtime failed: {exc.error}. To fix: {exc.fix} (details: {self.log_path})."
        )
        _write(self.data / "build-failed", json.dumps({"systemMessage": message}, ensure_ascii=False) + "\n")

    def _rotate_log(self) -> None:
        try:
            os.replace(self.log_path, self.log_path.with_name("build.log.1"))
        except OSError:
            pass


# ------------------------------------------------------------------------------ MCP, not ready
def waiting_mcp(data: Path, version: str, stdin=None, stdout=None) -> int:
    """A stand-in MCP server (stdio, newline-delimited JSON-RPC) while the runtime is not ready:
    it connects, offers no tool, and its instructions say why. A plugin MCP server that fails to
    connect is not started again by Claude Code for 15 minutes, so failing would cost the real
    tools well after the runtime is ready; the next session gets them."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    st = status(data, version)
    if st["state"] == "failed":
        why = f"building recall's runtime failed ({st.get('error', '?')}): {st.get('fix', '')}"
    else:
        why = "recall's runtime is being built (the first session after installing or updating the plugin)"
    instructions = f"{why}. recall's tools (memory_search, memory_ask, ...) come in the next session."
    for line in stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # a notification, or a reply
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion") or "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "recall", "version": version},
                "instructions": instructions,
            }
        elif method == "tools/list":
            result = {"tools": []}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"{why}: no {method}"}}
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()
            continue
        stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plugin_runtime", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the runtime (the launcher runs this in the background)")
    b.add_argument("--root", required=True, help="the plugin's folder (${CLAUDE_PLUGIN_ROOT})")
    b.add_argument("--data", required=True, help="the plugin's data folder (${CLAUDE_PLUGIN_DATA})")
    b.add_argument("--version", required=True, help="the plugin's version (plugin.json)")
    s = sub.add_parser("status", help="print the runtime's state as JSON")
    s.add_argument("--data", required=True)
    s.add_argument("--version", default=None)
    m = sub.add_parser("mcp", help="serve an MCP server with no tools while the runtime is not ready")
    m.add_argument("--data", required=True)
    m.add_argument("--version", required=True)
    args = parser.parse_args(argv)
    if args.cmd == "status":
        print(json.dumps(status(Path(args.data), args.version), indent=1))
        return 0
    if args.cmd == "mcp":
        return waiting_mcp(Path(args.data), args.version)
    if sys.version_info < MIN_PYTHON:
        print(
            f"recall's runtime needs Python {'.'.join(map(str, MIN_PYTHON))} or newer, not {sys.version.split()[0]}",
            file=sys.stderr,
        )
        return 1
    try:
        os.setsid()  # outlive the hook that started us, and its process group
    except OSError:
        pass
    return Build(Path(args.root).resolve(), Path(args.data), args.version)()


if __name__ == "__main__":
    sys.exit(main())
