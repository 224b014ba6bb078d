"""Codex CLI's sessions: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``
(``$CODEX_HOME`` defaults to ``~/.codex``), the same name plus ``.zst`` once Codex compressed
an older one (a whole-file zstd stream; the plain file wins when both exist), and
``archived_sessions/`` (where ``codex archive`` moves them).

Format (Codex CLI 0.169.0, checked against openai/codex ``codex-rs/rollout`` and files the
real client wrote; tests/fixtures/agents/): one JSON object a line, ``{"timestamp", "type",
"payload"}``:
  session_meta   the session's id, cwd and git branch (not a message)
  turn_context   the turn's cwd (not a message)
  response_item  ``message`` user -> "user" (what Codex adds itself: ``<environment_context>``,
                 AGENTS.md instructions, ... skipped as "system"), assistant -> "assistant",
                 developer -> skipped ("system"); ``function_call`` / ``custom_tool_call`` /
                 ``local_shell_call`` -> "tool_use" ("exec_command: ls"); ``*_output`` ->
                 "tool_result" (cut to ``tool_result_chars``); ``reasoning`` -> skipped
                 ("thinking")
  compacted      the summary Codex wrote when it compacted the history -> "summary"
  event_msg, world_state, token_usage_record ... the UI's copies and bookkeeping -> skipped
Older rollouts (before the payload wrapper) hold the items themselves a line, after a first
line of session facts: read the same way. Anything else is skipped and counted.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from indexer.message import Message
from indexer.sources.lines import ZST, AgentContext, clip, is_recall_tool, make, open_nofollow, read_jsonl
from indexer.transcripts import loads
from recall.core.lazy_re import lazy

NAME = "codex"
LABEL = "Codex CLI"
VARIABLES = ("CODEX_HOME",)  # what moves its folders (and HOME)

_SKIP = {"event_msg": "event", "world_state": "system", "token_usage_record": "system"}
# what Codex itself puts in a "user" message (the user's own words are in another one)
_INJECTED = lazy(
    r"^\s*(?:<environment_context>|<user_instructions>|<INSTRUCTIONS>|# AGENTS\.md instructions|"
    r"<skills_instructions>|<user_shell_command>|<turn_aborted>|<subagent_notification>)"
)
_SESSION_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(?:\.zst)?$")
_SALIENT = ("cmd", "command", "path", "file_path", "query", "pattern", "url")


def home() -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def roots() -> list[Path]:
    return [home() / "sessions", home() / "archived_sessions"]


def wants(name: str) -> bool:
    return name.startswith("rollout-") and (name.endswith(".jsonl") or name.endswith(".jsonl" + ZST))


def whole(name: str) -> bool:
    return name.endswith(ZST)  # compressed once finished: never appended to


def context(path: Path) -> AgentContext:
    m = _SESSION_ID.search(path.name)
    ctx = AgentContext(path, NAME, session_id=m.group(1) if m else path.name.split(".")[0])
    if not path.name.endswith(ZST):
        _read_meta(path, ctx)  # a read that starts past the first line still knows where it ran
    return ctx


def _read_meta(path: Path, ctx: AgentContext) -> None:
    try:
        with open_nofollow(path) as fh:
            first = fh.readline(1 << 20)
    except OSError:
        return
    if first.endswith(b"\n"):
        try:
            obj = loads(first)
        except ValueError:
            return
        if isinstance(obj, dict):
            _meta(obj.get("payload") if obj.get("type") == "session_meta" else obj, ctx)


def read(path: Path, offset: int, ctx: AgentContext, stats: Counter, max_bytes: int = 8 << 20):
    return read_jsonl(path, offset, ctx, stats, max_bytes, parse)


def _meta(p, ctx: AgentContext) -> None:
    if not isinstance(p, dict):
        return
    sid = p.get("id") or p.get("session_id")
    if isinstance(sid, str) and sid:
        ctx.session_id = sid
    cwd = p.get("cwd")
    if isinstance(cwd, str) and cwd:
        ctx.cwd = cwd
    git = p.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        ctx.branch = git["branch"]


def parse(obj, ctx: AgentContext, stats: Counter) -> list[Message]:
    if not isinstance(obj, dict):
        stats["unknown-type"] += 1
        return []
    kind = obj.get("type")
    payload = obj.get("payload")
    when = obj.get("timestamp")
    if kind == "session_meta":
        _meta(payload, ctx)
        stats["session-meta"] += 1
        return []
    if kind == "turn_context":
        if isinstance(payload, dict) and isinstance(payload.get("cwd"), str) and payload["cwd"]:
            ctx.cwd = payload["cwd"]
        stats["turn-context"] += 1
        return []
    if kind in _SKIP:
        stats[_SKIP[kind]] += 1
        return []
    if kind == "compacted":
        text = payload.get("message") if isinstance(payload, dict) else None
        m = make(ctx, stats, f"compacted\0{ctx.line}", "summary", [text], when) if isinstance(text, str) else None
        if m is None and not isinstance(text, str):
            stats["empty"] += 1
        return [m] if m else []
    if kind == "response_item":
        return _item(payload, ctx, stats, when)
    if payload is None and kind in _ITEM_TYPES:  # an older rollout: the item itself
        return _item(obj, ctx, stats, when)
    if payload is None and "id" in obj and "instructions" in obj:  # an older rollout's first line
        _meta(obj, ctx)
        stats["session-meta"] += 1
        return []
    stats["unknown-type"] += 1
    return []


_ITEM_TYPES = {
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
    "web_search_call",
}


def _item(p, ctx: AgentContext, stats: Counter, when) -> list[Message]:
    if not isinstance(p, dict):
        stats["empty"] += 1
        return []
    t = p.get("type")
    key = str(p.get("id") or p.get("call_id") or "") or f"line\0{ctx.line}"
    if t == "message":
        role = p.get("role")
        texts = [
            str(c.get("text"))
            for c in (p.get("content") or [])
            if isinstance(c, dict)
            and c.get("type") in ("input_text", "output_text", "text")
            and isinstance(c.get("text"), str)
        ]
        if role == "user":
            mine = [t for t in texts if not _INJECTED.match(t)]
            if not mine:
                stats["system" if texts else "empty"] += 1
                return []
            m = make(ctx, stats, key, "user", mine, when, typed=True)
        elif role == "assistant":
            m = make(ctx, stats, key, "assistant", texts, when)
        else:  # developer, system: the client's instructions
            stats["system"] += 1
            return []
        return [m] if m else []
    if t in ("function_call", "custom_tool_call", "local_shell_call"):
        name = str(p.get("name") or ("shell" if t == "local_shell_call" else "tool"))
        args = (
            p.get("arguments")
            if t == "function_call"
            else p.get("input")
            if t == "custom_tool_call"
            else p.get("action")
        )
        described, files, calls = _describe(name, args)
        call_id = p.get("call_id")
        if isinstance(call_id, str):
            ctx.remember_tool(call_id, name)
            if is_recall_tool(name):
                ctx.recall_calls.add(call_id)
        m = make(ctx, stats, key, "tool_use", [described], when, tools=[name], files=files, calls=calls)
        return [m] if m else []
    if t in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        if isinstance(out, dict):
            out = out.get("content") if isinstance(out.get("content"), str) else json.dumps(out)
        elif isinstance(out, list):
            out = "\n".join(str(c.get("text") or "") for c in out if isinstance(c, dict))
        if not isinstance(out, str):
            stats["empty"] += 1
            return []
        call_id = p.get("call_id")
        name = ctx.tool_names.get(call_id, "") if isinstance(call_id, str) else ""
        m = make(
            ctx,
            stats,
            f"{key}\0out",
            "tool_result",
            [clip(out, ctx.tool_result_chars)],
            when,
            tools=[name] if name else None,
        )
        if m and call_id in ctx.recall_calls:
            m.echo = True  # recall's own output, quoted back: ranked below what it came from
        return [m] if m else []
    if t == "reasoning":
        stats["thinking"] += 1
        return []
    stats["unknown-type"] += 1
    return []


_PATCH_FILE = lazy(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$(?:\n\*\*\* Move to: (.+?)\s*$)?", re.M)


def _describe(name: str, args) -> tuple[str, list[str], list[tuple[str, dict]]]:
    """A tool call as "name: salient input" (like Claude Code's), the files it names, and what it
    does to files as Claude Code's equivalent calls (a shell command; ``apply_patch``'s files)."""
    if isinstance(args, str):
        if name == "apply_patch" or args.lstrip().startswith("*** Begin Patch"):
            return _patch(name, args)
        try:
            args = json.loads(args)
        except ValueError:
            return f"{name}: {clip(args, 2000)}", [], []
    if not isinstance(args, dict):
        return name, [], []
    parts: list[str] = []
    files: list[str] = []
    calls: list[tuple[str, dict]] = []
    for k in _SALIENT:
        v = args.get(k)
        if isinstance(v, list):
            v = " ".join(map(str, v))
        if isinstance(v, str) and v:
            parts.append(clip(v, 2000))
            if k in ("path", "file_path"):
                files.append(v)
            if k in ("cmd", "command"):
                calls.append(("Bash", {"command": v}))
    if isinstance(args.get("input"), str) and "*** Begin Patch" in args["input"]:  # apply_patch as a function
        return _patch(name, args["input"])
    return (f"{name}: " + " | ".join(parts)) if parts else name, files, calls


def _patch(name: str, patch: str) -> tuple[str, list[str], list[tuple[str, dict]]]:
    """``apply_patch``: "apply_patch: add a.py, update b.py" and its files."""
    import shlex

    files: list[str] = []
    calls: list[tuple[str, dict]] = []
    said: list[str] = []
    for op, path, dest in _PATCH_FILE.findall(patch):
        files.append(path)
        said.append(f"{op.lower()} {path}" + (f" -> {dest}" if dest else ""))
        if op == "Delete":
            calls.append(("Bash", {"command": f"rm {shlex.quote(path)}"}))
        elif dest:
            calls.append(("Bash", {"command": f"mv {shlex.quote(path)} {shlex.quote(dest)}"}))
            files.append(dest)
        else:
            calls.append(("Write" if op == "Add" else "Edit", {"file_path": path}))
    return (f"{name}: " + ", ".join(said)) if said else f"{name}: {clip(patch, 2000)}", files, calls
