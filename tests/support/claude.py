"""Drive the REAL Claude Code client (native binary) against the loopback stand-in.

Usage::

    from tests.support.claude import ClaudeEnv, require_claude
    from tests.support.standin import StandIn, text, tool_use

    def test_x(tmp_path):
        with StandIn() as api:
            env = ClaudeEnv.create(tmp_path, api.url, binary=require_claude())
            env.add_hook("UserPromptSubmit", "python -m recall.hooks.user_prompt_submit")
            api.script(tool_use("Bash", {"command": "echo hi"}), text("done"))
            proc = env.run("do it")               # claude -p "do it" --allowedTools "Bash Write"
            assert proc.returncode == 0, proc.stderr
            env.transcript_entries()              # parsed newest session transcript

API
---
``claude_binary() -> Path | None``
    ``$RECALL_CLAUDE_BIN``, else ``<cache>/node_modules/@anthropic-ai/claude-code/bin/claude.exe``
    with ``<cache>`` = ``support_cache_dir()``: ``$RECALL_TEST_CACHE`` (``.ci/run`` sets a
    temporary folder for the run) or the run's own folder under pytest's basetemp, never the
    account's home; npm-installs
    ``@anthropic-ai/claude-code@$RECALL_CLAUDE_CODE_VERSION`` (default
    ``CLAUDE_CODE_VERSION`` = 2.1.197) there when missing (~10 s, ~245 MB, under a
    file lock; a version other than the pinned one goes in ``<cache>/claude-code-<version>``,
    so one cache holds both clients ``.ci/run`` tests).  A candidate counts only if
    ``--version`` prints "<that version> (Claude Code)".  ``claude_version()`` is the
    version of the binary in use (for the few tests whose client behaves differently by
    version: ``version_tuple(claude_version()) >= (2, 1, 300)``).
    ``claude_binary_problem()`` says why it is None; ``require_claude()`` returns the
    path or ``pytest.skip``-s with that reason.
``ClaudeEnv(home, project, standin_url, binary=None, api_key=TEST_API_KEY, env={})``
    one fake user; ``ClaudeEnv.create(root, url, trust=True, **kw)`` makes
    ``root/home`` and ``root/project`` (paths are resolved).
    ``trust(project=None)`` — ``$HOME/.claude.json``: hasCompletedOnboarding, theme,
    API key pre-approved (``customApiKeyResponses.approved`` = last 20 chars),
    ``projects[<abs project>]`` hasTrustDialogAccepted/hasCompletedProjectOnboarding.
    ``-p`` does not need it (the trust dialog is skipped in print mode and project
    hooks run anyway); an interactive run under tmux does.
    ``write_settings(settings, scope="project")`` — deep merge (lists appended) into
    ``<project>/.claude/settings.json`` (``"local"``: settings.local.json, ``"user"``:
    ``$HOME/.claude/settings.json``); ``add_hook(event, command, matcher=None,
    timeout=None, scope="project")``.
    ``run(prompt, allowed_tools="Bash Write", timeout=120, extra_args=(), env=None,
    check=False) -> CompletedProcess`` — ``claude -p PROMPT --allowedTools TOOLS
    *extra_args`` in the project dir, stdin closed (a prompt starting with "-" is
    piped on stdin instead); ``last_run_seconds``.  ``environ(env)`` / ``command(...)``
    / ``popen(argv_tail)`` for other ways to run it.
    ``transcripts(include_subagents=True)`` — ``$HOME/.claude/projects/**/*.jsonl``,
    oldest first; ``transcript_entries(path=None)`` — parsed lines of one (default:
    the newest main transcript).  ``read_jsonl(path)`` tolerates half-written lines.

Environment of a run
    The caller's environment minus ``ANTHROPIC_*``, ``CLAUDE*`` (incl.
    ``CLAUDECODE``, ``CLAUDE_CONFIG_DIR``), ``OTEL_*``, ``XDG_CONFIG_HOME``..., plus
    ``HOME``, ``ANTHROPIC_BASE_URL=<stand-in>``, ``ANTHROPIC_API_KEY=test-key-not-real``
    and ``OFFLINE_ENV``: ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` (the one that
    matters: without it the client calls api.anthropic.com for bootstrap, metrics
    opt-out, MCP registry and event logging and leaves
    ``~/.claude/telemetry/1p_failed_events.*``), ``DISABLE_AUTOUPDATER=1``,
    ``DISABLE_TELEMETRY=1``, ``DISABLE_ERROR_REPORTING=1``, ``CLAUDE_CODE_MAX_RETRIES=2``
    (default 10, so a broken stand-in fails fast), ``NO_COLOR=1``.  With these, strace
    shows connections to the stand-in only.

CLI facts (2.1.197, ``claude --help``)
    We run as root: ``--dangerously-skip-permissions`` / ``--permission-mode
    bypassPermissions`` are refused ("cannot be used with root/sudo privileges")
    unless ``IS_SANDBOX=1`` is set, so tests use ``--allowedTools`` (variadic: keep the
    prompt before it; a tool not allowed is denied and the turn goes on).  Useful
    flags: ``--settings <file-or-json>`` (extra settings incl. hooks, no file needed),
    ``--setting-sources user,project,local``, ``--mcp-config <files-or-json...>`` +
    ``--strict-mcp-config``, ``--session-id <uuid>`` (fixes the transcript name),
    ``-c/--continue``, ``-r/--resume``, ``--output-format text|json|stream-json`` (+
    ``--verbose`` for stream-json), ``--input-format stream-json``,
    ``--include-hook-events``, ``--no-session-persistence`` (no transcript),
    ``--model``, ``--debug-file <path>``
    (very useful when a run misbehaves).  No ``--max-turns`` flag in this version.
    ``--bare`` and ``--safe-mode`` SKIP hooks.

Hooks (how they are fed)
    Command hooks get one JSON object on stdin, run with cwd = project:
    SessionStart ``{session_id, transcript_path, cwd, hook_event_name, source: "startup"}``;
    UserPromptSubmit ``{session_id, transcript_path, cwd, prompt_id, permission_mode,
    hook_event_name, prompt}``; PreToolUse/PostToolUse add ``tool_name, tool_input,
    tool_use_id`` (+ ``tool_response, duration_ms``); Stop ``{..., stop_hook_active,
    last_assistant_message, background_tasks, session_crons}``; SessionEnd
    ``{..., reason: "other"}``.  Order and timing in a ``-p`` run with one tool call
    (t = process start): SessionStart ~0.9 s, UserPromptSubmit ~1.1 s (before the
    first main request), PreToolUse, PostToolUse, Stop (after the final reply),
    SessionEnd; ``claude -p`` waits for Stop and SessionEnd hooks before exiting.
    UserPromptSubmit output ``{"hookSpecificOutput": {"hookEventName":
    "UserPromptSubmit", "additionalContext": X}}`` reaches the model as
    ``"UserPromptSubmit hook additional context: X"`` at the end of the ``role:
    "system"`` message ``messages[1]`` of the main request (see standin docs) and the
    transcript as an attachment line ``{"type": "attachment", "attachment": {"type":
    "hook_additional_context", "content": [X], "hookName": "UserPromptSubmit",
    "hookEvent": "UserPromptSubmit", "toolUseID": "hook-<uuid>"}}`` — no
    ``hook_success`` line in that case.  Plain (non-JSON) stdout becomes
    ``"UserPromptSubmit hook success: <stdout>"`` and a ``hook_success`` attachment
    (``content``, ``stdout``, ``stderr``, ``exitCode``, ``command``, ``durationMs``).
    SessionStart additionalContext: ``"SessionStart hook additional context: X"`` at
    the START of that system message; transcript gets both ``hook_success`` and
    ``hook_additional_context`` (hookName "SessionStart").

Transcripts
    ``$HOME/.claude/projects/<abs project path, every non-alphanumeric char -> "-">/
    <session-id>.jsonl`` (e.g. ``/tmp/x/my_proj.v2`` -> ``-tmp-x-my-proj-v2``); session
    id = ``x-claude-code-session-id`` request header = hook ``session_id``.  Subagents:
    ``<session-id>/subagents/agent-<id>.jsonl``.  Line ``type``s seen:
    ``queue-operation`` (enqueue/dequeue of the -p prompt), ``user`` (prompt: ``message.content``
    is a plain string; tool results: list of ``tool_result`` blocks + ``toolUseResult``),
    ``attachment`` (``agent_listing_delta``, ``skill_listing``, ``hook_success``,
    ``hook_additional_context``), ``assistant`` (ONE LINE PER CONTENT BLOCK, lines of one
    API message share ``message.id``; ``requestId`` = our ``request-id`` header),
    ``last-prompt``, ``ai-title`` (interactive).  Entries carry ``uuid``/``parentUuid``,
    ``sessionId``, ``cwd``, ``timestamp``, ``version``, ``gitBranch``, ``isSidechain``.
    Also written: ``$HOME/.claude.json`` (+ ``~/.claude/backups/``).

Interactive runs
    Work under tmux (``tmux new-session -d -x 150 -y 40 "cd P && env ... claude"``,
    ``send-keys``, ``capture-pane``) after ``trust()``; the prompt box was ready
    within 4 s of start, and the first prompt also triggers the session-title side call.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = [
    "CLAUDE_CODE_VERSION",
    "TEST_API_KEY",
    "ClaudeEnv",
    "OFFLINE_ENV",
    "claude_binary",
    "claude_binary_problem",
    "claude_version",
    "version_tuple",
    "wanted_version",
    "support_cache_dir",
    "require_claude",
    "read_jsonl",
    "fake_logged_out_claude",
]

#: Version installed into the test cache when no binary is there yet.  The findings
#: documented above were made with it.  Override with RECALL_CLAUDE_CODE_VERSION
#: (e.g. "latest").
CLAUDE_CODE_VERSION = "2.1.197"
PACKAGE = "@anthropic-ai/claude-code"
TEST_API_KEY = "test-key-not-real"

#: Keeps a run offline and non-interactive (see module docstring).
OFFLINE_ENV: dict[str, str] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no bootstrap/metrics/MCP-registry/event-logging calls
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "2",  # a broken stand-in fails a test in seconds, not minutes
    "NO_COLOR": "1",
}

# Variables of the calling environment that must not leak into the fake user's run
# (a developer running the tests inside Claude Code has several of them set).
_STRIP_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_BEARER_TOKEN_BEDROCK", "VERTEX_", "MCP_")

_problem: str | None = None
_memo: dict[str, Any] = {}


_run_cache: Path | None = None


def use_run_cache(folder: Path) -> None:
    """The test run's own cache folder (tests/conftest.py: under pytest's basetemp), used when
    ``$RECALL_TEST_CACHE`` is not set."""
    global _run_cache
    _run_cache = Path(folder)


def support_cache_dir() -> Path:
    """Where the test support keeps the installed Claude Code, the wheelhouse and pip's cache:
    ``$RECALL_TEST_CACHE`` (``.ci/run`` sets a temporary folder, so the client is installed
    once per run; a developer may point it at a folder that persists), else the run's own
    folder under pytest's basetemp, else (outside pytest) a fresh temporary folder. Never the
    account's home: the suite writes only under its temporary folders (issue 36)."""
    global _run_cache
    env = os.environ.get("RECALL_TEST_CACHE")
    if env:
        return Path(env).expanduser()
    if _run_cache is None:
        _run_cache = Path(tempfile.mkdtemp(prefix="recall-test-cache-"))
    return _run_cache


def wanted_version() -> str:
    """The Claude Code version the tests drive: ``$RECALL_CLAUDE_CODE_VERSION`` (``.ci/run``'s
    second pass sets the newest one npm serves), else the pinned ``CLAUDE_CODE_VERSION``."""
    return os.environ.get("RECALL_CLAUDE_CODE_VERSION") or CLAUDE_CODE_VERSION


def _exact(version: str) -> bool:
    return re.fullmatch(r"\d+\.\d+\.\d+", version) is not None


def version_of(binary: Path) -> str | None:
    """The version ``binary --version`` prints ("2.1.332 (Claude Code)" -> "2.1.332"), or None
    when it is not a working Claude Code (run with a throw-away HOME)."""
    with tempfile.TemporaryDirectory(prefix="recall-cc-version-") as home:
        try:
            out = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env=_base_env(Path(home)),
            )
        except (OSError, subprocess.SubprocessError):
            return None
    if out.returncode != 0 or "Claude Code" not in out.stdout:
        return None
    return out.stdout.split()[0] if out.stdout.split() else None


def _works(binary: Path) -> bool:
    """``binary --version`` answers "<version> (Claude Code)", and that version is the one asked
    for (``wanted_version()``, when it names an exact version: a cache holding 2.1.197 is no
    answer to a run that asks for 2.1.332)."""
    version = version_of(binary)
    if version is None:
        return False
    wanted = wanted_version()
    return version == wanted or not _exact(wanted)


def install_prefix(cache: Path | None = None) -> Path:
    """Where ``wanted_version()`` is installed: the cache itself for the pinned version (the
    layout every existing cache has), ``<cache>/claude-code-<version>`` for any other, so one
    cache holds both clients of ``.ci/run``'s two passes."""
    cache = support_cache_dir() if cache is None else cache
    wanted = wanted_version()
    return cache if wanted == CLAUDE_CODE_VERSION else cache / f"claude-code-{wanted}"


def _candidates(prefix: Path) -> list[Path]:
    nm = prefix / "node_modules" / "@anthropic-ai"
    out = [nm / "claude-code" / "bin" / "claude.exe"]
    # If the postinstall did not run (npm refusing install scripts), the wrapper's
    # bin/claude.exe is a placeholder; the platform package holds the real binary.
    out += sorted(nm.glob("claude-code-*/claude"))
    return out


def _find_in(prefix: Path) -> Path | None:
    for cand in _candidates(prefix):
        if cand.is_file() and os.access(cand, os.X_OK) and _works(cand):
            return cand
    return None


def _find(cache: Path) -> Path | None:
    """The wanted version in the cache itself (a cache a developer filled with it) or in its
    version folder (``install_prefix``)."""
    found = _find_in(cache)
    prefix = install_prefix(cache)
    if found is None and prefix != cache:
        found = _find_in(prefix)
    return found


def _npm_install(prefix: Path) -> str | None:
    """Install the client into ``prefix``; return an error text or None."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not available to install @anthropic-ai/claude-code"
    version = wanted_version()
    prefix.mkdir(parents=True, exist_ok=True)
    if not (prefix / "package.json").exists():
        (prefix / "package.json").write_text('{"name": "recall-test-cache", "private": true}\n')
    cmd = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        f"{PACKAGE}@{version}",
    ]
    # npm's own cache and logs stay in the test cache too, not in ~/.npm
    env = dict(os.environ, npm_config_cache=str(prefix / ".npm-cache"), npm_config_update_notifier="false")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"npm install failed: {exc}"
    if out.returncode != 0:
        return f"npm install {PACKAGE}@{version} failed (rc={out.returncode}): {out.stderr.strip()[-800:]}"
    return None


def claude_binary() -> Path | None:
    """Path of a working Claude Code native binary, or None (see ``claude_binary_problem``).

    1. ``$RECALL_CLAUDE_BIN`` if set (used as is; None if it does not run);
    2. ``<cache>/node_modules/@anthropic-ai/claude-code/bin/claude.exe`` where
       ``<cache>`` is ``support_cache_dir()``, or the same below ``install_prefix()``
       (``<cache>/claude-code-<version>`` for a version other than the pinned one), if its
       ``--version`` is ``wanted_version()``;
    3. otherwise ``npm install @anthropic-ai/claude-code@<version>`` into ``install_prefix()``
       (under a file lock, so parallel test workers install once) and retry 2.

    The answer is memoised per process.
    """
    global _problem
    if "_cached" in _memo:
        return _memo["_cached"]
    result: Path | None = None
    env_bin = os.environ.get("RECALL_CLAUDE_BIN")
    if env_bin:
        path = Path(env_bin).expanduser()
        if path.is_file() and _works(path):
            result = path
        else:
            _problem = f"RECALL_CLAUDE_BIN={env_bin} is not a working Claude Code binary"
    else:
        cache = support_cache_dir()
        prefix = install_prefix(cache)
        result = _find(cache)
        if result is None:
            try:
                prefix.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                _problem = f"cannot create test cache {prefix}: {exc}"
            else:
                import fcntl

                with open(cache / ".install.lock", "w") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    result = _find(cache)  # another worker may have installed it meanwhile
                    if result is None:
                        err = _npm_install(prefix)
                        result = _find(cache)
                        if result is None:
                            _problem = err or (
                                f"{PACKAGE}@{wanted_version()} installed in {prefix} but no binary runs on "
                                f"{platform.system()}-{platform.machine()}"
                            )
    _memo["_cached"] = result
    return result


def claude_version() -> str | None:
    """The version of the binary the tests drive (``claude_binary()``), e.g. "2.1.332"; None
    when there is none. End-to-end tests whose client legitimately behaves differently by
    version ask this (never ``$RECALL_CLAUDE_CODE_VERSION``: ``$RECALL_CLAUDE_BIN`` may
    name any version)."""
    if "_version" not in _memo:
        binary = claude_binary()
        _memo["_version"] = version_of(binary) if binary is not None else None
    return _memo["_version"]


def version_tuple(version: str | None) -> tuple[int, ...]:
    """ "2.1.332" -> (2, 1, 332); () for None or anything else."""
    try:
        return tuple(int(p) for p in str(version).split("."))
    except ValueError:
        return ()


def claude_binary_problem() -> str | None:
    """Why ``claude_binary()`` returned None (None if it did not)."""
    return None if claude_binary() is not None else (_problem or "Claude Code binary unavailable")


def require_claude() -> Path:
    """The binary, or ``pytest.skip`` with the reason (for tests and fixtures)."""
    binary = claude_binary()
    if binary is None:
        import pytest

        reason = f"real Claude Code client unavailable: {claude_binary_problem()}"
        if os.environ.get("RECALL_REQUIRE_CLAUDE"):  # CI: an e2e test must never skip silently
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


#: The flags ``claude --help`` lists (2.1.197), for fakes that must pass recall's flag check.
HELP_FLAGS = (
    "--add-dir --agent --agents --allowed-tools --append-system-prompt --bare --continue --debug "
    "--debug-file --disallowed-tools --fallback-model --help --include-hook-events --input-format "
    "--mcp-config --model --no-session-persistence --output-format --permission-mode --print --resume "
    "--safe-mode --session-id --setting-sources --settings --strict-mcp-config --system-prompt --tools "
    "--verbose --version"
)
#: What Claude Code 2.1.197 prints for ``-p --output-format json`` when nobody is logged in (exit 1).
LOGGED_OUT_JSON = (
    '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"duration_ms":58,'
    '"duration_api_ms":0,"num_turns":1,"result":"Not logged in \u00b7 Please run /login",'
    '"stop_reason":"stop_sequence","session_id":"ceadbc3c-de7b-4f3d-8888-b275a33c8589",'
    '"total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,'
    '"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"permission_denials":[],'
    '"terminal_reason":"completed"}'
)
LOGGED_OUT_STATUS = '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}'


def fake_logged_out_claude(directory: Path) -> Path:
    """``directory/claude``: answers like Claude Code 2.1.197 with nobody logged in (checked
    against the real binary with an empty HOME): ``--version``, ``--help``, ``auth status``
    (``loggedIn: false``, exit 1), and ``-p`` ("Not logged in · Please run /login", exit 1;
    as JSON with ``--output-format json``)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    help_text = "\\n".join(f"  {f} <x>   the flag" for f in HELP_FLAGS.split())
    path.write_text(
        f"""#!/bin/sh
case "$1" in
  --version) echo '{CLAUDE_CODE_VERSION} (Claude Code)'; exit 0;;
  --help|-h) printf '{help_text}\\n'; exit 0;;
  auth) printf '%s\\n' '{LOGGED_OUT_STATUS.replace(chr(92) + "n", chr(10))}'; exit 1;;
esac
for a in "$@"; do
  if [ "$a" = json ]; then cat >/dev/null; printf '%s\\n' '{LOGGED_OUT_JSON}'; exit 1; fi
done
cat >/dev/null 2>&1
echo 'Not logged in · Please run /login'
exit 1
""",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def _base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIP_PREFIXES)}
    env["HOME"] = str(home)
    env.pop("XDG_CONFIG_HOME", None)
    return env


def read_jsonl(path: Path) -> list[dict]:
    """Parse a JSONL file, skipping blank and (half-written) unparsable lines."""
    out: list[dict] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _merge(base: Any, extra: Any) -> Any:
    """Deep merge: dicts recursively, lists concatenated (new items not already present), else replace."""
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for k, v in extra.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(extra, list):
        return base + [x for x in extra if x not in base]
    return extra


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


@dataclass
class ClaudeEnv:
    """One fake user: a temporary HOME and a project directory, talking to ``standin_url``."""

    home: Path
    project: Path
    standin_url: str
    binary: Path | None = None
    api_key: str = TEST_API_KEY
    env: dict[str, str] = field(default_factory=dict)  # extra variables for every run
    last_run_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.home = Path(self.home).resolve()
        self.project = Path(self.project).resolve()
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)

    @classmethod
    def create(cls, root: Path, standin_url: str, *, trust: bool = True, **kw: Any) -> "ClaudeEnv":
        """``root/home`` + ``root/project`` (created), trusted by default."""
        root = Path(root)
        env = cls(home=root / "home", project=root / "project", standin_url=standin_url, **kw)
        if trust:
            env.trust()
        return env

    # ---- configuration -------------------------------------------------------------
    @property
    def claude_json(self) -> Path:
        return self.home / ".claude.json"

    @property
    def claude_dir(self) -> Path:
        """``$HOME/.claude``: settings.json, projects/ (transcripts), backups/..."""
        return self.home / ".claude"

    def trust(self, project: Path | None = None) -> None:
        """Mark onboarding done and the project trusted in ``$HOME/.claude.json``.

        ``-p`` runs skip the trust dialog anyway; this matters for interactive
        runs (tmux), which also need the API key pre-approved
        (``customApiKeyResponses.approved`` holds its last 20 characters).
        """
        proj = str(Path(project or self.project).resolve())
        data = _read_json(self.claude_json)
        data = _merge(
            data,
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "numStartups": max(1, int(data.get("numStartups") or 0)),
                "customApiKeyResponses": {"approved": [self.api_key[-20:]], "rejected": []},
                "projects": {
                    proj: {
                        "hasTrustDialogAccepted": True,
                        "hasCompletedProjectOnboarding": True,
                        "projectOnboardingSeenCount": 1,
                        "allowedTools": [],
                    }
                },
            },
        )
        _write_json(self.claude_json, data)

    def settings_path(self, scope: str = "project") -> Path:
        """project: <project>/.claude/settings.json, local: .../settings.local.json, user: ~/.claude/settings.json."""
        if scope == "project":
            return self.project / ".claude" / "settings.json"
        if scope == "local":
            return self.project / ".claude" / "settings.local.json"
        if scope == "user":
            return self.claude_dir / "settings.json"
        raise ValueError(f"unknown settings scope {scope!r}")

    def write_settings(self, settings: dict, scope: str = "project") -> Path:
        """Deep-merge ``settings`` into the settings file of ``scope`` (lists are appended to)."""
        path = self.settings_path(scope)
        _write_json(path, _merge(_read_json(path), settings))
        return path

    def add_hook(
        self, event: str, command: str, matcher: str | None = None, timeout: float | None = None, scope: str = "project"
    ) -> Path:
        """Register a ``type: command`` hook for ``event`` (UserPromptSubmit, Stop, SessionStart...)."""
        hook: dict[str, Any] = {"type": "command", "command": command}
        if timeout is not None:
            hook["timeout"] = timeout
        group: dict[str, Any] = {"hooks": [hook]}
        if matcher is not None:
            group["matcher"] = matcher
        return self.write_settings({"hooks": {event: [group]}}, scope=scope)

    # ---- running -------------------------------------------------------------------
    def environ(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a run (the caller's, minus ANTHROPIC_*/CLAUDE* leaks, plus ours)."""
        out = _base_env(self.home)
        out.update(OFFLINE_ENV)
        out["ANTHROPIC_BASE_URL"] = self.standin_url
        out["ANTHROPIC_API_KEY"] = self.api_key
        out.update(self.env)
        out.update(env or {})
        return out

    def command(
        self, prompt: str, allowed_tools: str | Sequence[str] | None = "Bash Write", extra_args: Iterable[str] = ()
    ) -> tuple[list[str], str | None]:
        """argv of a ``-p`` run and the stdin text (used when the prompt starts with '-')."""
        binary = self.binary or require_claude()
        argv = [str(binary), "-p"]
        stdin = None
        if prompt.startswith("-"):
            stdin = prompt
        else:
            argv.append(prompt)
        if allowed_tools:
            tools = allowed_tools if isinstance(allowed_tools, str) else " ".join(allowed_tools)
            argv += ["--allowedTools", tools]
        argv += list(extra_args)
        return argv, stdin

    def run(
        self,
        prompt: str,
        allowed_tools: str | Sequence[str] | None = "Bash Write",
        timeout: float = 120,
        extra_args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        check: bool = False,
    ) -> subprocess.CompletedProcess:
        """``claude -p PROMPT --allowedTools TOOLS [extra_args]`` in the project dir.

        Returns the CompletedProcess (text mode; ``stdout`` is the final answer in
        the default text output format).  ``check=True`` raises with stdout/stderr
        on a non-zero exit.  Raises ``subprocess.TimeoutExpired`` after ``timeout``.
        """
        argv, stdin = self.command(prompt, allowed_tools, extra_args)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                argv,
                cwd=self.project,
                env=self.environ(env),
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        finally:
            self.last_run_seconds = time.monotonic() - started
        if check and proc.returncode != 0:
            raise AssertionError(f"claude exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        return proc

    def popen(self, argv_tail: Sequence[str], env: Mapping[str, str] | None = None, **kw: Any) -> subprocess.Popen:
        """Start the binary with any arguments (e.g. stream-json I/O) in the project dir."""
        binary = self.binary or require_claude()
        return subprocess.Popen([str(binary), *argv_tail], cwd=self.project, env=self.environ(env), **kw)

    # ---- results -------------------------------------------------------------------
    def transcripts(self, include_subagents: bool = True) -> list[Path]:
        """``$HOME/.claude/projects/**/*.jsonl``, oldest first (subagents live in ``<session>/subagents/``)."""
        root = self.claude_dir / "projects"
        if not root.is_dir():
            return []
        paths = [p for p in root.rglob("*.jsonl") if include_subagents or "subagents" not in p.parts]
        return sorted(paths, key=lambda p: (p.stat().st_mtime, str(p)))

    def transcript_entries(self, path: Path | None = None) -> list[dict]:
        """Entries of one transcript (default: the newest main-session transcript)."""
        if path is None:
            mains = self.transcripts(include_subagents=False)
            if not mains:
                return []
            path = mains[-1]
        return read_jsonl(path)
