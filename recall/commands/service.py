"""``recall serve``, ``recall service install|uninstall|status|start|stop|restart``,
``recall status`` and ``recall forget`` (registered on ``recall.cli.app``).

The service manager: a systemd user unit on Linux, a launchd agent on macOS. Where the
manager is missing (or refuses, e.g. no user session bus), ``install`` still writes the
file and prints the one command to run. One unit per ``RECALL_HOME``: the default home is
``recall.service`` / ``dev.recall.service``; another home gets a suffix from its path.
``RECALL_SERVICE_PLATFORM=linux|darwin`` overrides the platform (to write the other kind
of file, e.g. for a dotfiles repository).

``recall index`` while the service runs asks the service to do it (op "index"), so the
one index writer stays the service: see ``index_via_service``.
"""

from __future__ import annotations

import hashlib
import json
import os
import plistlib
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from recall import paths
from recall.cli import app
from recall.errors import RecallError, UsageError

service_app = typer.Typer(
    help="Run the indexer in the background: a systemd user unit (Linux) or launchd agent (macOS).",
    no_args_is_help=True, add_completion=False, rich_markup_mode=None,
)
app.add_typer(service_app, name="service")

START_TIMEOUT = 20.0
STOP_TIMEOUT = 40.0


# ------------------------------------------------------------------------------ helpers
def _check_sources(source: List[Path]) -> list[Path]:
    out = []
    for s in source:
        p = s.expanduser()
        if not p.is_dir():
            raise UsageError(f"--source {s} is not a directory: pass a folder of Claude Code transcripts.")
        out.append(p.resolve())
    return out


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 1:
        return "just now"
    if seconds < 90:
        return f"{seconds:.0f}s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.0f}d ago"


def _span(seconds: float) -> str:
    seconds = int(max(0, seconds))
    d, rem = divmod(seconds, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if d:
        return f"{d}d{h}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def live_service(timeout: float = 1.0) -> dict | None:
    """{"pid", "version", ...} of the service answering on this RECALL_HOME's socket."""
    from recall import client

    return client.ping(timeout=timeout)


def service_pid() -> int | None:
    info = live_service()
    if info and info.get("pid"):
        return int(info["pid"])
    from indexer.service import lock_holder

    return lock_holder()


# ------------------------------------------------------------------------------ recall serve
@app.command("serve", help="Run the indexer service in the foreground: watch transcripts, keep the "
                           "index current, answer searches on a local socket. Stops on Ctrl-C/SIGTERM.")
def serve_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    import logging

    from recall import log

    sources = _check_sources(source)
    logger = log.setup(stderr=True)
    if not any(isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
               for h in logger.handlers):
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(h)
    from indexer.service import Service

    Service(sources, log=logging.getLogger("recall.service")).run()


# ------------------------------------------------------------------------------ unit files
def _platform() -> str:
    forced = os.environ.get("RECALL_SERVICE_PLATFORM", "").strip().lower()
    if forced in ("linux", "darwin"):
        return forced
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "darwin"
    raise RecallError(f"`recall service` supports Linux (systemd) and macOS (launchd), not {sys.platform}: "
                      "run `recall serve` under your own supervisor instead.")


def _suffix() -> str:
    if not os.environ.get("RECALL_HOME"):
        return ""
    return "-" + hashlib.sha1(str(paths.recall_home()).encode()).hexdigest()[:8]


def unit_name() -> str:
    return f"recall{_suffix()}.service"


def launchd_label() -> str:
    return f"dev.recall.service{_suffix().replace('-', '.')}"


def unit_path(platform: str | None = None) -> Path:
    platform = platform or _platform()
    if platform == "darwin":
        return Path.home() / "Library" / "LaunchAgents" / f"{launchd_label()}.plist"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "systemd" / "user" / unit_name()


def _serve_argv(sources: list[Path]) -> list[str]:
    from recall.setup import recall_executable

    argv = [*recall_executable(), "serve"]
    for s in sources:
        argv += ["--source", str(s)]
    return argv


def _service_env() -> dict[str, str]:
    env = {"RECALL_HOME": str(paths.recall_home())}
    for var in ("CLAUDE_CONFIG_DIR", "RECALL_WRITER_HEAP_MB", "XDG_DATA_HOME"):
        if os.environ.get(var):
            env[var] = os.environ[var]
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "/._-+=:@," for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(sources: list[Path]) -> str:
    exec_start = " ".join(_systemd_quote(a) for a in _serve_argv(sources))
    env = "\n".join(f"Environment={_systemd_quote(f'{k}={v}')}" for k, v in _service_env().items())
    return f"""[Unit]
Description=recall: keeps the Claude Code memory index current ({paths.recall_home()})

[Service]
Type=simple
ExecStart={exec_start}
{env}
Restart=on-failure
RestartSec=5
KillSignal=SIGTERM
TimeoutStopSec={int(STOP_TIMEOUT)}
Nice=5

[Install]
WantedBy=default.target
"""


def launchd_plist(sources: list[Path]) -> bytes:
    logs = paths.log_dir()
    return plistlib.dumps({
        "Label": launchd_label(),
        "ProgramArguments": _serve_argv(sources),
        "EnvironmentVariables": _service_env(),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "Nice": 5,
        "StandardOutPath": str(logs / "launchd.out.log"),
        "StandardErrorPath": str(logs / "launchd.err.log"),
    })


def _run(cmd: list[str], timeout: float = 30.0) -> tuple[bool, str]:
    """Run a service-manager command: (succeeded, its last line of output)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    text = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return proc.returncode == 0, (text[-1] if text else f"exit status {proc.returncode}")


def _manager_commands(platform: str, path: Path) -> dict[str, list[list[str]]]:
    if platform == "darwin":
        domain = f"gui/{os.getuid()}"
        return {
            "tool": [["launchctl"]],
            "enable": [["launchctl", "bootstrap", domain, str(path)]],
            "disable": [["launchctl", "bootout", domain, str(path)]],
            "start": [["launchctl", "kickstart", f"{domain}/{launchd_label()}"]],
            "stop": [["launchctl", "kill", "SIGTERM", f"{domain}/{launchd_label()}"]],
        }
    name = unit_name()
    return {
        "tool": [["systemctl"]],
        "enable": [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", name]],
        "disable": [["systemctl", "--user", "disable", "--now", name], ["systemctl", "--user", "daemon-reload"]],
        "start": [["systemctl", "--user", "start", name]],
        "stop": [["systemctl", "--user", "stop", name]],
    }


def _one_line(cmds: list[list[str]]) -> str:
    return " && ".join(" ".join(shlex.quote(a) for a in c) for c in cmds)


def _manager(platform: str, verb: str) -> tuple[bool | None, str]:
    """Run the manager's commands for ``verb``: (None when the tool is missing | ok, detail)."""
    cmds = _manager_commands(platform, unit_path(platform))
    if shutil.which(cmds["tool"][0][0]) is None:
        return None, _one_line(cmds[verb])
    for cmd in cmds[verb]:
        ok, line = _run(cmd)
        if not ok:
            return False, line
    return True, ""


def _installed() -> bool:
    try:
        return unit_path().exists()
    except RecallError:
        return False


# ------------------------------------------------------------------------------ recall service ...
@service_app.command("install", help="Write the systemd user unit / launchd agent and start it.")
def install_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
    no_start: bool = typer.Option(False, "--no-start", help="Only write the file."),
) -> None:
    sources = _check_sources(source)
    platform = _platform()
    path = unit_path(platform)
    paths.ensure_dir(paths.log_dir())
    data = launchd_plist(sources) if platform == "darwin" else systemd_unit(sources)
    path.parent.mkdir(parents=True, exist_ok=True)
    paths.atomic_write(path, data, mode=0o644)
    cmds = _manager_commands(platform, path)
    if no_start:
        typer.echo(f"Wrote {path}. To start it: {_one_line(cmds['enable'])}")
        return
    if platform == "darwin" and shutil.which("launchctl"):
        _run(cmds["disable"][0])  # re-installing: unload the old definition first
    ok, detail = _manager(platform, "enable")
    if ok is None:
        typer.echo(f"Wrote {path}; {cmds['tool'][0][0]} is not available here. Run: {detail}")
    elif not ok:
        typer.echo(f"Wrote {path}, but the service manager refused ({detail}). "
                   f"Run: {_one_line(cmds['enable'])}  (or `recall service start` to run it without a manager)")
    else:
        info = _wait_until_up(START_TIMEOUT)
        state = f" (pid {info['pid']})" if info else " (still starting: `recall status` shows it)"
        typer.echo(f"Installed and started the recall service{state}: {path}")


@service_app.command("uninstall", help="Stop the service and remove its unit / agent file.")
def uninstall_cmd() -> None:
    platform = _platform()
    path = unit_path(platform)
    if not path.exists():
        typer.echo(f"No service installed ({path} does not exist); nothing to do.")
        return
    ok, detail = _manager(platform, "disable")
    path.unlink()
    if platform == "linux" and shutil.which("systemctl"):
        _run(["systemctl", "--user", "daemon-reload"])
    pid = service_pid()
    if pid is not None:
        _terminate(pid)
    note = "" if ok else (f" The service manager did not answer ({detail})." if ok is False else "")
    typer.echo(f"Removed {path}; the service is stopped.{note}")


def _wait_until_up(timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = live_service(timeout=0.5)
        if info:
            return info
        time.sleep(0.2)
    return None


def _terminate(pid: int, timeout: float = STOP_TIMEOUT) -> bool:
    from indexer.service import pid_alive

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    except PermissionError:
        raise RecallError(f"Not allowed to stop pid {pid}: stop it as the user that started it.") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


def start_service(sources: list[Path] = ()) -> tuple[str, int | None]:
    """Start the service (through the manager when installed, else detached). Returns
    (what happened, pid)."""
    info = live_service()
    if info:
        return f"The recall service already runs (pid {info.get('pid')}).", info.get("pid")
    how = "detached"
    if _installed():
        ok, _ = _manager(_platform(), "start")
        how = "manager" if ok else how
    if how == "detached":
        log_path = paths.log_dir()
        paths.ensure_dir(log_path)
        with open(os.devnull, "rb") as devnull_in, open(os.devnull, "wb") as devnull_out:
            subprocess.Popen(_serve_argv(list(sources)), stdin=devnull_in, stdout=devnull_out,
                             stderr=devnull_out, start_new_session=True, close_fds=True,
                             env={**os.environ, "RECALL_HOME": str(paths.recall_home())})
    info = _wait_until_up(START_TIMEOUT)
    if not info:
        from recall import log

        raise RecallError(f"The service did not come up within {START_TIMEOUT:.0f} s: "
                          f"see {log.log_file()} (or run `recall serve` to watch it start).")
    return f"Started the recall service (pid {info.get('pid')}).", info.get("pid")


@service_app.command("start", help="Start the service (via systemd/launchd when installed, else detached).")
def start_cmd(
    source: List[Path] = typer.Option([], "--source", help="Another transcript root to watch (repeatable)."),
) -> None:
    msg, _ = start_service(_check_sources(source))
    typer.echo(msg)


def stop_service() -> str:
    pid = service_pid()
    if pid is None:
        return "The recall service is not running; nothing to stop."
    if _installed():
        _manager(_platform(), "stop")
    if _terminate(pid):
        return f"Stopped the recall service (pid {pid})."
    raise RecallError(f"The service (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s: "
                      f"`kill -9 {pid}` is safe (nothing indexed is lost).")


@service_app.command("stop", help="Stop the service (a final commit first).")
def stop_cmd() -> None:
    typer.echo(stop_service())


@service_app.command("restart", help="Stop the service, then start it (e.g. after an upgrade).")
def restart_cmd() -> None:
    stop_service()
    msg, _ = start_service()
    typer.echo(msg)


@service_app.command("status", help="Whether the service is installed and running.")
def service_status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    platform = _platform()
    path = unit_path(platform)
    info = collect_status()
    manager_state = None
    if path.exists() and platform == "linux" and shutil.which("systemctl"):
        _, manager_state = _run(["systemctl", "--user", "is-active", unit_name()], timeout=10)
    out = {"installed": path.exists(), "unit": str(path), "manager_state": manager_state,
           "running": info["service"]["running"], "pid": info["service"].get("pid")}
    if as_json:
        typer.echo(json.dumps(out))
        return
    inst = f"installed ({path})" if out["installed"] else f"not installed (`recall service install` writes {path})"
    typer.echo(f"Unit:    {inst}" + (f"; systemd says: {manager_state}" if manager_state else ""))
    _print_service_line(info)


# ------------------------------------------------------------------------------ recall status
def collect_status() -> dict:
    """Everything ``recall status`` shows, as a dict."""
    from recall import client

    live = None
    try:
        live = client.call("status", {}, timeout=1.5)
    except client.Unavailable:
        live = None
    from indexer.service import lock_holder, read_status

    saved = read_status() or {}
    out: dict = {"home": str(paths.recall_home())}
    if live:
        svc = dict(live)
        svc["running"] = True
    else:
        pid = lock_holder()
        svc = {k: saved.get(k) for k in ("pid", "started", "stopped", "roots", "errors", "last_commit",
                                          "commits", "version", "state")}
        svc["running"] = False
        if pid is not None and saved.get("pid") == pid and saved.get("running"):
            svc["running"] = True
            svc["answering"] = False
        for r in svc.get("roots") or []:
            r["watched"] = bool(svc["running"] and r.get("watched"))
    out["service"] = svc
    counts = dict((live or {}).get("counts") or {})
    if not live:
        counts.update(_index_counts())
    out["index"] = counts
    out["index"]["path"] = str(paths.index_dir())
    out["archive"] = _archive_stats()
    if not svc.get("roots"):
        out["service"]["roots"] = [{"path": str(r), "watched": False, "exists": r.is_dir()}
                                   for r in paths.transcript_roots()]
    try:
        from recall import llm

        out["model_usage"] = llm.usage_summary()
    except Exception:
        pass
    return out


def _index_counts() -> dict:
    out: dict = {}
    try:
        import tantivy

        from recall.search import Searcher

        s = Searcher()
        searcher = s.index.searcher()
        for dt, name in (("message", "messages"), ("session", "sessions_indexed"), ("memory", "memories")):
            q = tantivy.Query.term_query(s.schema, "doctype", dt, index_option="basic")
            out[name] = searcher.search(q, 1, count=True).count
    except RecallError as exc:
        out["problem"] = str(exc)
    except Exception as exc:
        out["problem"] = f"cannot open the index ({type(exc).__name__}: {exc})"
    db = paths.state_db_path()
    if db.exists():
        import sqlite3

        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                out["files"] = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
                out["sessions"] = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    try:
        out["last_commit"] = (paths.index_dir() / "meta.json").stat().st_mtime
    except OSError:
        pass
    return out


def _archive_stats() -> dict:
    root = paths.archive_dir() / "sessions"
    n = size = 0
    if root.is_dir():
        for p in root.glob("*/*.jsonl"):
            try:
                size += p.stat().st_size
                n += 1
            except OSError:
                pass
    return {"path": str(paths.archive_dir()), "sessions": n, "bytes": size}


def _print_service_line(info: dict) -> None:
    svc = info["service"]
    now = time.time()
    if svc.get("running"):
        bits = [f"pid {svc.get('pid')}"]
        if svc.get("uptime") is not None:
            bits.append(f"up {_span(svc['uptime'])}")
        if svc.get("state"):
            bits.append(svc["state"])
        if svc.get("rss_mb"):
            bits.append(f"{svc['rss_mb']:.0f} MB")
        if svc.get("answering") is False:
            bits.append("not answering on its socket")
        typer.echo(f"Service: running ({', '.join(bits)})")
    else:
        last = ""
        if svc.get("pid") and svc.get("stopped"):
            last = f" (last: pid {svc['pid']}, stopped {_ago(now - svc['stopped'])})"
        elif svc.get("pid"):
            last = f" (last: pid {svc['pid']}, ended without a clean stop)"
        typer.echo(f"Service: not running{last}; `recall service start` starts it")


@app.command("status", help="Service state (pid, uptime, lag), roots watched, what is indexed, recent errors.")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    from recall.memory.status import memory_status, status_lines

    info = collect_status()
    info["memory"] = memory_status()
    if as_json:
        typer.echo(json.dumps(info, default=str))
        return
    now = time.time()
    svc = info["service"]
    _print_service_line(info)
    roots = svc.get("roots") or []
    for i, r in enumerate(roots):
        state = "watched" if r.get("watched") else ("missing" if not r.get("exists", True) else "not watched")
        typer.echo(f"{'Roots:' if i == 0 else '':8} {_short(r['path'])} ({state})")
    idx = info["index"]
    if idx.get("problem"):
        typer.echo(f"Index:   {idx['problem']}")
    else:
        parts = [f"{idx.get('messages', 0):,} messages", f"{idx.get('sessions_indexed', idx.get('sessions', 0)):,} sessions"]
        if idx.get("memories"):
            parts.append(f"{idx['memories']:,} memories")
        if idx.get("files") is not None:
            parts.append(f"from {idx['files']:,} transcript files")
        typer.echo(f"Index:   {', '.join(parts)}")
    last = svc.get("last_commit") or idx.get("last_commit")
    line = f"Last commit: {_ago(now - last)}" if last else "Last commit: never"
    if svc.get("running") and "lag_seconds" in svc:
        line += f"; lag {svc['lag_seconds']:.1f} s, {svc.get('backlog_files', 0)} files waiting"
    if svc.get("backfill"):
        bf = svc["backfill"]
        if bf.get("bytes_total"):
            line += f"; backfilling {100 * bf.get('bytes_done', 0) / max(1, bf['bytes_total']):.0f}%"
        elif bf.get("replayed"):
            line += f"; replaying the archive ({bf['replayed']:,} messages)"
    typer.echo(line)
    arch = info["archive"]
    typer.echo(f"Archive: {arch['sessions']:,} sessions, {arch['bytes'] / 1e6:.1f} MB ({_short(arch['path'])})")
    usage = info.get("model_usage")
    if usage and usage.get("calls"):
        typer.echo(f"Model:   {usage['today_calls']} calls today (${usage['today_cost']:.2f}), "
                   f"{usage['calls']} in all (${usage['cost']:.2f})")
    for line in status_lines():
        typer.echo(line)
    errors = svc.get("errors") or []
    if errors:
        typer.echo("Recent errors:")
        for e in errors[-5:]:
            typer.echo(f"  {_ago(now - e.get('time', now))}: {e.get('message')}")


# ------------------------------------------------------------------------------ recall forget
@app.command("forget", help="Delete a session or a whole project from the index and the archive "
                            "(Claude Code's own transcript files are left alone).")
def forget_cmd(
    session: Optional[str] = typer.Option(None, "--session", help="The session id to forget."),
    project: Optional[Path] = typer.Option(None, "--project", help="The project (a path inside it) to forget."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    from recall import client

    if (session is None) == (project is None):
        raise UsageError("Say what to forget: `recall forget --session ID` or `recall forget --project PATH`.")
    args: dict = {}
    if session is not None:
        session = session.strip()
        if not session or len(session) > 200 or any(c in session for c in "/\\\0\n"):
            raise UsageError(f"{session!r} is not a session id: copy one from `recall --json QUERY` output.")
        args["session"] = session
    else:
        from recall.api import resolve_project

        args["project"] = resolve_project(project)
    try:
        result = client.call("forget", args, timeout=300.0)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        from indexer.ingest import Indexer
        from indexer.service import forget

        with Indexer() as ix:
            result = forget(ix, args.get("session"), args.get("project"))
    if as_json:
        typer.echo(json.dumps(result))
        return
    what = f"session {args['session']}" if session is not None else f"project {_short(args['project'])}"
    if not result.get("index") and not result.get("archive"):
        typer.echo(f"Nothing indexed for {what}; recall will not index its past messages from now on.")
        return
    typer.echo(f"Forgot {what}: {result.get('index', 0):,} messages removed from the index, "
               f"{result.get('archive', 0):,} from the archive. Claude Code's own transcript files were "
               "not touched.")


# ------------------------------------------------------------------------------ recall index
def index_via_service(sources: list[Path], rebuild: bool, quiet: bool = False):
    """``recall index`` while the service runs: the service does it (it holds the only
    index writer). Returns the Summary, or None when no service answers."""
    from indexer.ingest import Summary
    from recall import client

    info = live_service()
    if not info:
        return None
    if not quiet:
        verb = "rebuilding the index" if rebuild else "indexing"
        typer.echo(f"The recall service (pid {info.get('pid')}) keeps the index current; it is {verb} now…",
                   err=True)
    try:
        result = client.call("index", {"sources": [str(Path(s).expanduser().resolve()) for s in sources],
                                       "rebuild": rebuild}, timeout=24 * 3600.0)
    except client.RemoteError as exc:
        raise RecallError(str(exc)) from None
    except client.Unavailable:
        return None
    return Summary.from_dict(result)
