"""``recall hook <name>``: the entry point Claude Code runs for every hook event.

Reads the event's JSON from stdin (every field optional, garbage tolerated; the wait is
bounded by a deadline counted from process start, so a stdin never closed cannot hang it),
calls the handler, prints its output as one JSON object (or nothing), and ALWAYS exits 0: a hook must
never block a prompt or print a traceback into a session. Problems go to the log under
``$RECALL_HOME/logs``. Imported before anything heavy (see ``recall.entry``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

_T0 = time.time()

#: hook name -> (module, function). Handlers take the payload dict and return an output dict
#: or None. Capture hooks belong to the memory feature; a missing module means "not installed".
HANDLERS: dict[str, tuple[str, str]] = {
    "user-prompt-submit": ("recall.hooks.user_prompt_submit", "handle"),
    "stop": ("recall.hooks.capture", "stop"),
    "pre-compact": ("recall.hooks.capture", "pre_compact"),
    "session-end": ("recall.hooks.capture", "session_end"),
    "session-start": ("recall.hooks.capture", "session_start"),
}

MAX_STDIN = 32 * 1024 * 1024

_emit_lock = threading.Lock()
_emitted = False
_notice: str | None = None  # said to the user once with this hook's output (``systemMessage``)
NOTICE_HOOKS = {"user-prompt-submit", "session-start"}


def process_start() -> float:
    """When this process started (epoch seconds), from /proc; else when this module loaded."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        # boot time from /proc/uptime (10 ms resolution), not /proc/stat's btime (whole
        # seconds: it put the start up to 1 s too early)
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        started = time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
        # clock-tick resolution: never later than our own first timestamp
        return min(started, _T0) if _T0 - started < 30 else _T0
    except (OSError, ValueError, IndexError):
        pass
    return _T0


#: seconds after process start by which a hook other than the prompt hook must have its
#: input (Claude Code writes the JSON at once); the prompt hook uses its own budget
STDIN_SECONDS = 10.0


def input_deadline(name: str, started: float) -> float:
    """When (epoch seconds) hook ``name`` stops waiting for its stdin: counted from process
    start, so a stdin that is never closed cannot keep the hook alive past its budget."""
    if name == "user-prompt-submit":
        try:
            from recall.prompt.settings import hook_settings

            return started + hook_settings().budget_seconds
        except Exception:  # a broken config must not hang the hook either
            pass
    return started + STDIN_SECONDS


def _read_fd(fd: int, deadline: float) -> bytes:
    """Bytes from ``fd`` until EOF, a complete JSON object, ``MAX_STDIN`` or ``deadline``."""
    import select

    chunks: list[bytes] = []
    size = 0
    while size < MAX_STDIN:
        left = deadline - time.time()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            break  # the deadline: go on with what arrived
        try:
            chunk = os.read(fd, min(1 << 16, MAX_STDIN - size))
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break  # EOF
        chunks.append(chunk)
        size += len(chunk)
        if chunk.rstrip().endswith(b"}"):
            # the whole object may be here already: do not wait for an EOF that may never come
            try:
                if isinstance(json.loads(b"".join(chunks)), dict):
                    break
            except ValueError:
                pass
    return b"".join(chunks)


def read_payload(stream=None, deadline: float | None = None) -> dict:
    """The hook JSON from stdin as a dict ({} for a terminal, empty input or garbage).

    With ``deadline`` (epoch seconds) a real stdin is read only until then, or until it
    holds one complete JSON object, whether or not the writer closes it."""
    stream = stream if stream is not None else sys.stdin
    try:
        if stream is None or stream.isatty():
            return {}
        fd = None
        if deadline is not None and os.name == "posix":
            try:
                fd = stream.fileno()
            except (OSError, ValueError, AttributeError):
                fd = None  # an in-memory stream (tests): read it whole
        if fd is not None:
            raw = _read_fd(fd, deadline)
        else:
            raw = stream.buffer.read(MAX_STDIN) if hasattr(stream, "buffer") else stream.read(MAX_STDIN)
    except (OSError, ValueError):
        return {}
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    raw = raw.strip()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def emit(output) -> bool:
    """Print ``output`` (a dict) as JSON once per process; False if something was already printed."""
    global _emitted
    with _emit_lock:
        if _emitted:
            return False
        _emitted = True
        if _notice:
            output = {**(output if isinstance(output, dict) else {}), "systemMessage": _notice}
        if isinstance(output, dict) and output:
            try:
                sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
        return True


def emit_async(timeout_ms: int) -> None:
    """Claude Code's async marker as this hook's first stdout line: the prompt goes on at once,
    and the JSON ``emit`` prints when the hook ends reaches the model's next request of the turn
    (``recall.prompt.ways``). Printed at most once, before any output."""
    with _emit_lock:
        if _emitted:
            return
        try:
            sys.stdout.write(json.dumps({"async": True, "asyncTimeout": int(timeout_ms)}) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass


def _say_config_problem() -> None:
    """A config file that does not parse: the next prompt's output says so, once per problem
    (the hooks keep using the last good settings meanwhile: ``recall.core.config``)."""
    global _notice
    try:
        from recall.core import config, paths

        config.load()
        problem = config.problem()
        marker = paths.recall_home() / "config.problem-said"
        if problem is None:
            if marker.exists():
                marker.unlink()
            return
        try:
            said = marker.read_text(encoding="utf-8")
        except (OSError, ValueError):
            said = ""
        if said != problem:
            paths.atomic_write(marker, problem)
            _notice = f"recall: {problem}"
    except Exception:  # noqa: BLE001 - never in the prompt's way
        _log_exception("config notice")


def _log_exception(name: str) -> None:
    try:
        from recall.core import log

        log.get("hook").exception("hook %s failed", name)
    except Exception:
        pass


def resolve(name: str):
    """The handler for ``name``, or None (unknown name, or its module is not installed)."""
    entry = HANDLERS.get(name)
    if entry is None:
        return None
    module_name, func = entry
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name in (module_name, module_name.rsplit(".", 1)[0]):
            return None
        raise
    return getattr(module, func, None)


def run_hook(name: str, args: list[str] | None = None) -> int:
    """Run hook ``name``; always returns 0."""
    probe = os.environ.get("RECALL_DOCTOR_PROBE")
    if probe:  # `recall doctor` checks that Claude Code runs this hook: say so, and do nothing else
        try:
            with open(probe, "a", encoding="utf-8") as fh:
                fh.write(name + "\n")
        except OSError:
            pass
        return 0
    if os.environ.get("RECALL_CHILD"):
        return 0  # a headless Claude Code that recall itself started (recall.llm.claude_code)
    try:
        if name not in HANDLERS:
            sys.stderr.write(
                f"recall: unknown hook {name!r} (known: {', '.join(HANDLERS)}); "
                "run `recall setup` to rewrite the hook entries.\n"
            )
            return 0
        payload = read_payload(deadline=input_deadline(name, process_start()))
        if os.environ.get("RECALL_PLUGIN_DATA"):  # run by recall's Claude Code plugin (hooks/recall)
            from recall.hooks import plugin

            if plugin.stands_down(name, payload):
                return 0  # `recall setup` wired this event: its hook answers, not a second one
            if name == "session-start":
                plugin.ensure_service()
        handler = resolve(name)
        if handler is None:
            return 0
        if name in NOTICE_HOOKS:
            _say_config_problem()
        out = handler(payload)
        emit(out)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails its caller
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        _log_exception(name)
    if name in FAST_EXIT and sys.argv[1:3] == ["hook", name]:
        _exit_now()
    return 0


def stop_children() -> None:
    """Kill a headless Claude Code this hook started and no longer waits for."""
    context = sys.modules.get("recall.prompt.context")
    if context is not None:
        context.stop_children()


#: Hooks whose process ends right after its output (Claude Code waits for the exit, and
#: tearing down an interpreter that loaded the index takes longer than the search did).
FAST_EXIT = {"user-prompt-submit"}


def _exit_now() -> None:
    stop_children()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    logging = sys.modules.get("logging")
    if logging is not None:
        try:
            logging.shutdown()  # records are written one by one; this closes the files cleanly
        except Exception:
            pass
    os._exit(0)
