"""The ``claude-code`` model backend: Haiku through the user's own Claude Code binary.

Most users log in to Claude Code with a subscription and have no API key. This backend runs

    claude -p --safe-mode --model <model> --tools "" --no-session-persistence
           --output-format json --system-prompt <system> --strict-mcp-config   (prompt on stdin)

which authenticates however Claude Code is logged in (subscription, ``apiKeyHelper``, its
own environment). ``--safe-mode`` starts it with every customization off, so neither the
user's nor the project's hooks fire (no recursion into recall's own hooks; the child also
gets ``RECALL_CHILD=1``, on which recall's hooks exit at once) and no MCP server is started;
``--no-session-persistence`` writes no transcript to index. The child gets its own process
group and is killed when its time is up.

The binary: ``model.claude_path``, else ``claude`` on the caller's ``PATH``, else
``~/.claude/local/claude`` and ``~/.local/bin/claude``. Its flags are checked once per
binary (``--help``; cached in ``$RECALL_HOME/cache/claude-code.json`` by path, size and
mtime): a version that lacks one of ``REQUIRED`` is not used, and ``find()`` says which.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass

from recall.core import caller, config, paths
from recall.core.jsonio import read_json

REQUIRED = (
    "--print",
    "--safe-mode",
    "--no-session-persistence",
    "--tools",
    "--output-format",
    "--model",
    "--system-prompt",
)
PROBE_TIMEOUT = 15.0
NOT_FOUND = "no Claude Code found (`claude` on PATH, or `recall config set model.claude_path PATH`)"
# variables of the Claude Code session the hook runs in that must not reach the child
PARENT_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_PROJECT_DIR")


@dataclass
class Found:
    path: str | None
    version: str = ""
    flags: tuple = ()
    problem: str = ""  # why it cannot be used ("" when it can)


def _candidates(cfg: dict, env: dict) -> list[str]:
    import shutil

    node = cfg.get("model") if isinstance(cfg.get("model"), dict) else {}
    configured = node.get("claude_path")
    if isinstance(configured, str) and configured.strip():
        return [os.path.expanduser(configured.strip())]
    out = []
    on_path = shutil.which("claude", path=env.get("PATH") or os.defpath)
    if on_path:
        out.append(on_path)
    home = env.get("HOME") or os.path.expanduser("~")
    out += [os.path.join(home, ".claude", "local", "claude"), os.path.join(home, ".local", "bin", "claude")]
    return out


_probed: dict[tuple, Found] = {}


def _cache_path():
    return paths.recall_home() / "cache" / "claude-code.json"


def probe(path: str) -> Found:
    """The version and flags of the binary at ``path`` (cached by path, size and mtime)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return Found(None, problem=f"Claude Code at {path} cannot be run ({exc.strerror})")
    ident = (path, st.st_size, int(st.st_mtime))
    if ident in _probed:
        return _probed[ident]
    key = f"{path}\0{st.st_size}\0{int(st.st_mtime)}"
    cached = read_json(_cache_path(), {}, dict).get(key)
    if isinstance(cached, dict):
        found = Found(
            None if cached.get("problem") else path,
            str(cached.get("version", "")),
            tuple(cached.get("flags", ())),
            str(cached.get("problem") or ""),
        )
    else:
        found = _run_probe(path)  # a binary that hangs or is not Claude Code is not probed again
        try:
            paths.ensure_dir(paths.recall_home())
            paths.atomic_write(
                _cache_path(),
                json.dumps({key: {"version": found.version, "flags": list(found.flags), "problem": found.problem}}),
            )
        except OSError:
            pass
    if found.problem:
        _probed[ident] = found
        return found
    missing = [f for f in REQUIRED if f not in found.flags]
    if missing:
        found.problem = (
            f"Claude Code {found.version or ''} at {path} lacks {', '.join(missing)}: update it "
            "(`claude update`) or give recall an API key"
        ).replace("  ", " ")
    _probed[ident] = found
    return found


def _run_probe(path: str) -> Found:
    import re

    env = _child_env(caller.current())
    try:
        version = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        helptext = subprocess.run(
            [path, "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Found(None, problem=f"Claude Code at {path} cannot be run ({type(exc).__name__})")
    if "Claude Code" not in version.stdout:
        return Found(None, problem=f"{path} is not Claude Code (its --version says {version.stdout.strip()[:60]!r})")
    flags = tuple(sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", helptext.stdout))))
    return Found(path, version.stdout.strip().split()[0] if version.stdout.strip() else "", flags)


def find(cfg: dict | None = None, env: dict | None = None) -> Found:
    """The usable Claude Code binary, or ``Found(None, problem=...)`` saying why there is none."""
    cfg = cfg if cfg is not None else config.load()
    env = env if env is not None else caller.current()
    problem = ""
    for path in _candidates(cfg, env):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        found = probe(path)
        if not found.problem:
            return found
        problem = problem or found.problem
    return Found(None, problem=problem or NOT_FOUND)


def login_status(path: str | None = None, timeout: float = PROBE_TIMEOUT) -> tuple[bool | None, str]:
    """Whether the Claude Code at ``path`` is logged in, from ``claude auth status`` in the
    caller's environment: (True | False | None when it cannot tell, what it said)."""
    path = path or find().path
    if not path:
        return None, NOT_FOUND
    try:
        proc = subprocess.run(
            [path, "auth", "status"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_child_env(caller.current()),
            stdin=subprocess.DEVNULL,
            cwd=str(paths.home_dir()),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"`claude auth status` did not answer ({type(exc).__name__})"
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        last = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()[-1]
        return None, f"`claude auth status` said {last[:120]!r}"
    if not isinstance(data, dict) or not isinstance(data.get("loggedIn"), bool):
        return None, "`claude auth status` gave no loggedIn field"
    how = data.get("authMethod") or data.get("apiKeySource") or ""
    if data["loggedIn"]:
        return True, f"`claude auth status`: logged in{f' with {how}' if how and how != 'none' else ''}"
    return False, "`claude auth status`: loggedIn false"


def _child_env(env: dict) -> dict:
    out = {k: v for k, v in env.items() if k not in PARENT_VARS}
    out["RECALL_CHILD"] = "1"
    out.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    out.setdefault("DISABLE_AUTOUPDATER", "1")
    return out


def command(path: str, system: str, model: str, flags: tuple = ()) -> list[str]:
    argv = [
        path,
        "-p",
        "--safe-mode",
        "--model",
        model,
        "--tools",
        "",
        "--no-session-persistence",
        "--output-format",
        "json",
        "--system-prompt",
        system,
    ]
    if "--strict-mcp-config" in flags:
        argv.append("--strict-mcp-config")  # no --mcp-config: no MCP server at all
    return argv


def complete(
    system: str, prompt: str, *, purpose: str, timeout: float = 60.0, model: str | None = None, path: str | None = None
) -> str:
    """One headless Claude Code call (prompt on stdin, never on the command line); returns the
    text. Raises ModelError (NoKey when no usable binary is found)."""
    from recall.llm.errors import ModelError, NoKey, scrub
    from recall.llm.usage import record_usage

    found = probe(path) if path else find()
    if found.path is None or found.problem:
        raise NoKey(f"Model calls are off: {found.problem}.")
    model_id = model or config.model()
    env = _child_env(caller.current())
    cwd = str(paths.home_dir())  # not a project: no project settings, CLAUDE.md or hooks
    try:
        proc = subprocess.Popen(
            command(found.path, system, model_id, found.flags),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise ModelError(f"Claude Code at {found.path} could not start ({exc.strerror})") from None
    _live.add(proc)
    try:
        out, err = proc.communicate(prompt.encode("utf-8"), timeout=max(0.5, timeout))
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise ModelError(f"Claude Code did not answer within {timeout:g} s (stopped)") from None
    except BaseException:
        _kill(proc)
        raise
    finally:
        _live.discard(proc)
    try:
        reply = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        last = (err.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"Claude Code exited {proc.returncode} without an answer: {last[:200]}") from None
    if not isinstance(reply, dict):
        raise ModelError("Claude Code sent an unreadable answer")
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    models = reply.get("modelUsage") if isinstance(reply.get("modelUsage"), dict) else {}
    used_model = next(iter(models), model_id)
    tokens_in = sum(
        int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    text = reply.get("result") if isinstance(reply.get("result"), str) else ""
    failed = bool(reply.get("is_error") or reply.get("subtype") not in (None, "success"))
    said = scrub(" ".join(text.split())[:200] or str(reply.get("subtype")))
    record_usage(
        used_model,
        tokens_in,
        int(usage.get("output_tokens") or 0),
        purpose,
        backend="claude-code",
        error=said if failed else "",
    )
    if failed:
        raise ModelError(f"Claude Code answered with an error: {said}")
    if not text.strip():
        raise ModelError("Claude Code returned no text")
    return text


_live: set = set()


def kill_all() -> None:
    """Stop every child still running (a hook that ends at its deadline calls this: no
    headless Claude Code outlives the prompt it was started for)."""
    for proc in list(_live):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
