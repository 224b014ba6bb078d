"""Drive the REAL Codex CLI and Gemini CLI clients against a loopback stand-in of their model APIs.

Usage::

    from tests.support.agents import AgentAPI, CodexEnv, GeminiEnv, require_codex, require_gemini

    with AgentAPI() as api:
        api.script(say("We decided: advisory locks."))
        env = CodexEnv(home, project, api.url, binary=require_codex())
        proc = env.run("What did we decide?")        # codex exec PROMPT, in project
        env.sessions()                                 # $CODEX_HOME/sessions/**/rollout-*.jsonl

Install
    Both clients are npm packages (``@openai/codex`` ``CODEX_VERSION``, ``@google/gemini-cli``
    ``GEMINI_VERSION``; ``$RECALL_CODEX_VERSION`` / ``$RECALL_GEMINI_VERSION`` override),
    installed on first use into ``<test cache>/agents`` (``$RECALL_TEST_CACHE`` or
    ``~/.cache/recall-tests``, like ``tests.support.claude``) under a file lock.
    ``require_codex()`` / ``require_gemini()`` return the client or ``pytest.skip`` with the
    reason; with ``RECALL_REQUIRE_AGENTS=1`` (CI: ``.ci/run``) a missing client FAILS instead.

The stand-in (``AgentAPI``) answers, in script order (default: ``say("ok")``):
    Codex (OpenAI Responses API): ``POST /v1/responses`` as server-sent events
    (``response.created``, ``response.output_item.done`` per item, ``response.completed``);
    Codex is pointed at it with a ``model_provider`` of its own (``-c
    model_providers.standin={base_url=..., wire_api="responses", env_key=...}``), never OpenAI.
    Gemini (Generative Language API): ``POST /v1beta/models/<m>:streamGenerateContent?alt=sse``
    (and ``:generateContent``, ``:countTokens``); pointed at it by ``GOOGLE_GEMINI_BASE_URL`` with
    ``GEMINI_API_KEY`` and ``security.auth.selectedType = "gemini-api-key"``; ``-m
    gemini-2.5-flash`` skips the model router's side call.
    ``say(text)`` is a text reply; ``call(name, args)`` a tool call (Codex: a ``function_call``
    item; Gemini: a ``functionCall`` part).

What the clients write (observed with this stand-in; the parsers are indexer/sources/):
    Codex 0.169.0: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``, lines
    ``{"timestamp", "ordinal", "type", "payload"}``: ``session_meta`` (id, cwd, git, cli_version),
    ``turn_context`` (cwd), ``response_item`` (message user/assistant/developer,
    function_call, function_call_output, reasoning), ``event_msg`` (task_started, item_completed,
    token_count...), ``world_state``, ``token_usage_record``.
    Gemini 0.61.0: ``$GEMINI_CLI_HOME/.gemini/tmp/<project slug>/chats/session-<time>-<id8>.jsonl``:
    a header ``{sessionId, projectHash (sha256 of the project root), startTime, kind}``, message
    records ``{id, timestamp, type: user|gemini|info|error|warning, content, toolCalls,
    thoughts}``, ``{"$set": {...}}`` metadata updates, ``{"$rewindTo": id}``;
    ``tmp/<slug>/.project_root`` and ``projects.json`` name the project folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.claude import support_cache_dir

__all__ = [
    "CODEX_VERSION",
    "GEMINI_VERSION",
    "AgentAPI",
    "CodexEnv",
    "GeminiEnv",
    "call",
    "codex_binary",
    "gemini_script",
    "require_codex",
    "require_gemini",
    "say",
]

CODEX_VERSION = "0.169.0"
GEMINI_VERSION = "0.61.0"
TEST_KEY = "test-key-not-real"
_problems: dict[str, str] = {}
_memo: dict[str, Path | None] = {}


# installing ---------------------------------------------------------------------------------------
def _prefix() -> Path:
    return support_cache_dir() / "agents"


def _codex_candidates(prefix: Path) -> list[Path]:
    vendor = prefix / "node_modules" / "@openai"
    return (
        sorted(vendor.glob("codex-linux-*/vendor/*/bin/codex"))
        + sorted(vendor.glob("codex/vendor/*/codex/codex"))
        + [prefix / "node_modules" / ".bin" / "codex"]
    )


def _gemini_candidates(prefix: Path) -> list[Path]:
    return [prefix / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"]


def _works(kind: str, path: Path) -> bool:
    if not path.is_file():
        return False
    argv = [str(path), "--version"] if kind == "codex" else [shutil.which("node") or "node", str(path), "--version"]
    home = _prefix() / f".version-home-{kind}"
    home.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)},
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and bool(out.stdout.strip())


def _find(kind: str) -> Path | None:
    cands = _codex_candidates(_prefix()) if kind == "codex" else _gemini_candidates(_prefix())
    for c in cands:
        if _works(kind, c):
            return c
    return None


def _install(kind: str) -> str | None:
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not available to install the Codex and Gemini CLI clients"
    if kind == "codex":
        spec = f"@openai/codex@{os.environ.get('RECALL_CODEX_VERSION') or CODEX_VERSION}"
    else:
        spec = f"@google/gemini-cli@{os.environ.get('RECALL_GEMINI_VERSION') or GEMINI_VERSION}"
    prefix = _prefix()
    prefix.mkdir(parents=True, exist_ok=True)
    if not (prefix / "package.json").exists():
        (prefix / "package.json").write_text('{"name": "recall-test-agents", "private": true}\n')
    try:
        out = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", spec],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"npm install {spec} failed: {exc}"
    if out.returncode != 0:
        return f"npm install {spec} failed (rc={out.returncode}): {out.stderr.strip()[-800:]}"
    return None


def _node_problem() -> str | None:
    """Why Gemini CLI (a node script, ``engines: node >= 20``) cannot run here, or None."""
    node = shutil.which("node")
    if node is None:
        return "node is not on PATH (Gemini CLI needs node >= 20)"
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major = int(out.lstrip("v").split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return "node --version did not answer"
    return None if major >= 20 else f"node {out} is too old (Gemini CLI needs node >= 20)"


def _client(kind: str) -> Path | None:
    if kind in _memo:
        return _memo[kind]
    if kind == "gemini" and _node_problem():
        _problems[kind] = _node_problem() or ""
        _memo[kind] = None
        return None
    var = "RECALL_CODEX_BIN" if kind == "codex" else "RECALL_GEMINI_BIN"
    env = os.environ.get("RECALL_CODEX_BIN") if kind == "codex" else os.environ.get("RECALL_GEMINI_BIN")
    if env:
        path = Path(env).expanduser()
        found = path if _works(kind, path) else None
        if found is None:
            _problems[kind] = f"{var}={env} does not run"
    else:
        found = _find(kind)
        if found is None:
            import fcntl

            _prefix().mkdir(parents=True, exist_ok=True)
            with open(_prefix() / ".install.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                found = _find(kind)
                if found is None:
                    err = _install(kind)
                    found = _find(kind)
                    if found is None:
                        _problems[kind] = err or f"the {kind} client is installed but does not run here"
    _memo[kind] = found
    return found


def codex_binary() -> Path | None:
    return _client("codex")


def gemini_script() -> Path | None:
    return _client("gemini")


def _require(kind: str) -> Path:
    found = _client(kind)
    if found is None:
        import pytest

        reason = f"real {kind} client unavailable: {_problems.get(kind, 'not installed')}"
        if os.environ.get("RECALL_REQUIRE_AGENTS"):  # CI: never skip silently
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def require_codex() -> Path:
    return _require("codex")


def require_gemini() -> Path:
    return _require("gemini")


# the stand-in ---------------------------------------------------------------------------------------
def say(text: str) -> dict:
    return {"kind": "text", "text": text}


def call(name: str, args: dict) -> dict:
    return {"kind": "call", "name": name, "args": args}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class AgentAPI:
    """A loopback stand-in for the OpenAI Responses API and the Gemini API (see module doc)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self._script: list[dict] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def script(self, *replies: dict) -> "AgentAPI":
        with self._lock:
            self._script.extend(replies)
        return self

    def _next(self) -> dict:
        with self._lock:
            return self._script.pop(0) if self._script else say("ok")

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "AgentAPI":
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                api.requests.append({"_method": "GET", "_path": self.path})
                self._send(200, b'{"data": [], "models": []}')

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                body = body if isinstance(body, dict) else {}
                body["_path"], body["_method"] = self.path, "POST"
                api.requests.append(body)
                path = self.path.split("?")[0]
                if path.endswith("/responses"):
                    return self._send(200, _responses_sse(api._next()), "text/event-stream")
                if path.endswith(":countTokens"):
                    return self._send(200, b'{"totalTokens": 10}')
                if path.endswith(":streamGenerateContent"):
                    chunk = _gemini_chunk(api._next(), body)
                    return self._send(200, b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n", "text/event-stream")
                if path.endswith(":generateContent"):
                    return self._send(200, json.dumps(_gemini_chunk(api._next(), body)).encode())
                self._send(404, b'{"error": {"message": "not found"}}')

        self._server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _responses_sse(reply: dict) -> bytes:
    rid = "resp_" + uuid.uuid4().hex[:16]
    if reply["kind"] == "call":
        item = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:12],
            "name": reply["name"],
            "arguments": json.dumps(reply["args"]),
            "call_id": "call_" + uuid.uuid4().hex[:12],
        }
    else:
        item = {
            "type": "message",
            "role": "assistant",
            "id": "msg_" + uuid.uuid4().hex[:16],
            "content": [{"type": "output_text", "text": reply["text"], "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events = [
        {"type": "response.created", "response": {"id": rid}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": rid, "usage": usage}},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _gemini_chunk(reply: dict, req: dict) -> dict:
    if reply["kind"] == "call":
        parts = [{"functionCall": {"name": reply["name"], "args": reply["args"]}}]
    else:
        parts = [{"text": reply["text"]}]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    }


# the clients ----------------------------------------------------------------------------------------
def _base_env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM")}
    keep.update({"HOME": str(home), "NO_COLOR": "1"})
    return keep


class CodexEnv:
    """One fake user of the real Codex CLI: ``$HOME`` (and ``CODEX_HOME = $HOME/.codex``), a project."""

    def __init__(self, home: Path, project: Path, url: str, binary: Path) -> None:
        self.home, self.project, self.url, self.binary = Path(home), Path(project), url, Path(binary)
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)

    def environ(self) -> dict[str, str]:
        env = _base_env(self.home)
        env.update({"CODEX_HOME": str(self.codex_home), "STANDIN_KEY": TEST_KEY})
        return env

    def run(self, prompt: str, timeout: float = 120) -> subprocess.CompletedProcess:
        provider = (
            f'model_providers.standin={{name="standin",base_url="{self.url}/v1",'
            'wire_api="responses",env_key="STANDIN_KEY"}'
        )
        argv = [
            str(self.binary),
            "exec",
            "--skip-git-repo-check",
            "-c",
            "model_provider=standin",
            "-c",
            provider,
            "-m",
            "gpt-5",
            prompt,
        ]
        return subprocess.run(
            argv,
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def command(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.binary), *args],
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def sessions(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"))


class GeminiEnv:
    """One fake user of the real Gemini CLI: ``$HOME`` with ``.gemini/settings.json`` choosing the
    API-key auth, a trusted project."""

    def __init__(self, home: Path, project: Path, url: str, script: Path) -> None:
        self.home, self.project, self.url, self.script = Path(home), Path(project), url, Path(script)
        self.gemini_dir = self.home / ".gemini"
        self.gemini_dir.mkdir(parents=True, exist_ok=True)
        settings = self.gemini_dir / "settings.json"
        data = json.loads(settings.read_text()) if settings.exists() else {}
        data.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
        settings.write_text(json.dumps(data, indent=2))

    def environ(self) -> dict[str, str]:
        env = _base_env(self.home)
        env.update(
            {"GEMINI_API_KEY": TEST_KEY, "GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        )
        return env

    def run(self, prompt: str, timeout: float = 120) -> subprocess.CompletedProcess:
        argv = [shutil.which("node") or "node", str(self.script), "-m", "gemini-2.5-flash", "-p", prompt]
        return subprocess.run(
            argv,
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def command(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [shutil.which("node") or "node", str(self.script), *args],
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def sessions(self) -> list[Path]:
        return sorted((self.gemini_dir / "tmp").glob("*/chats/session-*.json*"))
