"""Gemini CLI's sessions: ``<home>/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`` (``<home>``
is ``$GEMINI_CLI_HOME`` or ``~``), and ``session-*.json``, the whole-file form older versions
wrote and rewrote on every message.

``<project>`` names the project folder: a slug since Gemini CLI 0.2x (``tmp/<slug>/.project_root``
holds the folder, ``~/.gemini/projects.json`` maps folders to slugs), formerly the sha256 of the
project root's path (``getFilePathHash`` in the client's ``Storage``; the session file's
``projectHash`` is that same hash). The folder is found in that order; failing all, the
workspace folder the session's own setup message names, if its sha256 is the session's
``projectHash``. ``tmp/<project>/logs.json`` (the prompts typed, the client's ``Logger``) is read for the sessions
that have no chat (older versions recorded none); ``~/.gemini/history/<project>`` holds
checkpoints (a git shadow repository), not conversation, and is not read.

Format (Gemini CLI 0.61.0, ``packages/core/src/services/chatRecordingService.ts``, and files the
real client wrote; tests/fixtures/agents/): a first line ``{sessionId, projectHash, startTime,
lastUpdated, kind}``; then message records ``{id, timestamp, type, content, toolCalls,
thoughts}``: type "user" -> "user" (parts of text; ``functionResponse`` parts are tool results
-> "tool_result"; the client's ``<session_context>`` setup message is skipped as "system"),
"gemini" -> "assistant" (and each of ``toolCalls`` -> "tool_use"), "info"/"error"/"warning"
-> skipped; ``{"$set": {...}}`` (metadata, or ``messages``: the history set whole) and
``{"$rewindTo": id}`` -> the messages in them, or skipped. A record written again with more in
it (a reply that gained its tool calls) keeps its uuids: nothing is indexed twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

from indexer.message import Message
from indexer.sources.lines import AgentContext, clip, is_recall_tool, make, open_nofollow, read_jsonl, read_whole
from indexer.transcripts import loads, path_text

NAME = "gemini"
LABEL = "Gemini CLI"
VARIABLES = ("GEMINI_CLI_HOME",)  # what moves its folders (and HOME)
LOGS = "logs.json"  # tmp/<project>/logs.json: the prompts typed (the client's Logger)

_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*-\s*(/[^\n]+)")
_SALIENT = ("command", "file_path", "absolute_path", "path", "dir_path", "pattern", "query", "url")


def gemini_dir() -> Path:
    env = os.environ.get("GEMINI_CLI_HOME")
    return (Path(env).expanduser() if env else Path.home()) / ".gemini"


def roots() -> list[Path]:
    return [gemini_dir() / "tmp"]


def wants(name: str) -> bool:
    return (name.startswith("session-") and (name.endswith(".jsonl") or name.endswith(".json"))) or name == LOGS


def whole(name: str) -> bool:
    return name.endswith(".json")  # the older whole-file form, rewritten on every message


def context(path: Path) -> AgentContext:
    folder = path.parent if path.name == LOGS else path.parent.parent  # tmp/<project>/[chats/]<file>
    # the project when nothing names its folder: the session's own folder of Gemini's (never mixed with another)
    ctx = AgentContext(path, NAME, session_id=path.stem, project=path_text(folder))
    ctx.cwd = project_folder(
        folder
    )  # where the session ran: its project is that folder's (a worktree's is its repository's)
    ctx.hash_dir = folder.name  # type: ignore[attr-defined]
    if path.name.endswith(".jsonl"):  # a read that starts past the header still knows the session
        try:
            with open_nofollow(path) as fh:
                first = fh.readline(1 << 20)
            if first.endswith(b"\n"):
                parse(loads(first), ctx, Counter())
        except (OSError, ValueError):
            pass
    return ctx


def project_folder(folder: Path) -> str:
    """The project folder a ``tmp/<project>`` folder stands for ("" when nothing says)."""
    marker = folder / ".project_root"
    try:
        with open_nofollow(marker) as fh:
            text = fh.read(4096).decode("utf-8", "replace").strip()
        if text.startswith("/"):
            return text
    except OSError:
        pass
    try:
        with open_nofollow(gemini_dir() / "projects.json") as fh:
            registry = json.loads(fh.read(4 << 20) or b"{}")
        projects = registry.get("projects") if isinstance(registry, dict) else None
        for path, slug in (projects or {}).items():
            if slug == folder.name or hashlib.sha256(str(path).encode()).hexdigest() == folder.name:
                return str(path)
    except (OSError, ValueError, AttributeError):
        pass
    return ""


def read(path: Path, offset: int, ctx: AgentContext, stats: Counter, max_bytes: int = 8 << 20):
    if path.name == LOGS:
        return _read_logs(path, ctx, stats)
    if path.name.endswith(".json"):
        return _read_whole(path, ctx, stats)
    return read_jsonl(path, offset, ctx, stats, max_bytes, parse)


def _read_whole(path: Path, ctx: AgentContext, stats: Counter):
    """An older ``session-*.json``: one JSON document the client rewrites whole. Read whole
    each time it changes (uuids keep a re-read free of duplicates); a file caught half
    written is read again once its writer is done."""
    ctx.whole = True
    with open_nofollow(path) as fh:
        data = read_whole(fh, ctx, stats)
    if data is None:  # past the cap: skipped (named in the log) until it changes
        yield [], path.stat().st_size
        return
    try:
        obj = loads(data)
    except ValueError:
        yield [], 0  # being written: read again on its next change
        return
    out: list[Message] = []
    if isinstance(obj, dict):
        out.extend(parse({k: v for k, v in obj.items() if k != "messages"}, ctx, stats))
        for rec in obj.get("messages") or []:
            out.extend(parse(rec, ctx, stats))
    else:
        stats["unknown-type"] += 1
    yield out, len(data)


def _read_logs(path: Path, ctx: AgentContext, stats: Counter):
    """``logs.json``: ``[{sessionId, messageId, timestamp, type: "user", message}]``, rewritten
    whole. A prompt of a session whose chat is recorded is read from the chat (skipped here as
    "duplicate"); one of a session without a chat (versions before chats were recorded, a chat
    deleted) is indexed from here, the prompt alone."""
    ctx.whole = True
    with open_nofollow(path) as fh:
        data = read_whole(fh, ctx, stats)
    if data is None:  # past the cap: skipped (named in the log) until it changes
        yield [], path.stat().st_size
        return
    try:
        entries = loads(data)
    except ValueError:
        yield [], 0  # being written: read again on its next change
        return
    if not isinstance(entries, list):
        stats["unknown-type"] += 1
        yield [], len(data)
        return
    chats = path.parent / "chats"
    recorded: dict[str, bool] = {}
    out: list[Message] = []
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("sessionId"), str) or not isinstance(e.get("message"), str):
            stats["unknown-type"] += 1
            continue
        if e.get("type") != "user":
            stats["system"] += 1
            continue
        sid = e["sessionId"]
        if sid not in recorded:
            recorded[sid] = any(chats.glob(f"session-*-{sid[:8]}.json*")) if chats.is_dir() else False
        if recorded[sid]:
            stats["duplicate-block"] += 1
            continue
        ctx.session_id = sid
        m = make(
            ctx,
            stats,
            f"log\0{e.get('messageId')}\0{e.get('timestamp')}",
            "user",
            [e["message"]],
            e.get("timestamp"),
            typed=True,
        )
        if m:
            out.append(m)
    yield out, len(data)


def parse(obj, ctx: AgentContext, stats: Counter) -> list[Message]:
    if not isinstance(obj, dict):
        stats["unknown-type"] += 1
        return []
    if isinstance(obj.get("$set"), dict):
        msgs = obj["$set"].get("messages")
        if isinstance(msgs, list):
            return [m for rec in msgs for m in parse(rec, ctx, stats)]
        stats["metadata"] += 1
        return []
    if isinstance(obj.get("$rewindTo"), str):
        stats["rewind"] += 1  # what was said stays said: the index keeps it
        return []
    if isinstance(obj.get("sessionId"), str) and "type" not in obj:
        ctx.session_id = obj["sessionId"]
        h = obj.get("projectHash")
        ctx.project_hash = h if isinstance(h, str) else ""  # type: ignore[attr-defined]
        stats["session-meta"] += 1
        return []
    rid = obj.get("id")
    kind = obj.get("type")
    if not isinstance(rid, str) or not rid:
        stats["unknown-type"] += 1
        return []
    when = obj.get("timestamp")
    if kind == "user":
        return _user(rid, obj.get("content"), ctx, stats, when)
    if kind == "gemini":
        return _reply(rid, obj, ctx, stats, when)
    if kind in ("info", "error", "warning"):
        stats["system"] += 1
        return []
    stats["unknown-type"] += 1
    return []


def _parts(content) -> list:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    return content if isinstance(content, list) else []


def _user(rid: str, content, ctx: AgentContext, stats: Counter, when) -> list[Message]:
    texts: list[str] = []
    results: list[str] = []
    tools: list[str] = []
    echo = False
    for part in _parts(content):
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        fr = part.get("functionResponse")
        if isinstance(fr, dict):
            resp = fr.get("response")
            body = resp.get("output", resp.get("error", resp)) if isinstance(resp, dict) else resp
            results.append(clip(body if isinstance(body, str) else json.dumps(body), ctx.tool_result_chars))
            if isinstance(fr.get("name"), str):
                tools.append(fr["name"])
                echo = echo or is_recall_tool(fr["name"])
    out: list[Message] = []
    if texts:
        if texts[0].lstrip().startswith("<session_context>"):
            if not ctx.cwd:
                _workspace(texts[0], ctx)
            stats["system"] += 1
        else:
            m = make(ctx, stats, f"{rid}\0text", "user", texts, when, typed=True)
            if m:
                out.append(m)
    if results:
        m = make(ctx, stats, f"{rid}\0results", "tool_result", results, when, tools=tools)
        if m:
            m.echo = echo  # a result of recall's own tool: its output quoted back
            out.append(m)
    if not texts and not results:
        stats["empty"] += 1
    return out


def _workspace(text: str, ctx: AgentContext) -> None:
    """The project folder from the setup message's workspace list, when the session's hash agrees."""
    m = _WORKSPACE.search(text)
    if m:
        folder = m.group(1).strip()
        want = getattr(ctx, "project_hash", "") or getattr(ctx, "hash_dir", "")
        if hashlib.sha256(folder.encode()).hexdigest() == want:
            ctx.cwd = folder


def _reply(rid: str, obj: dict, ctx: AgentContext, stats: Counter, when) -> list[Message]:
    out: list[Message] = []
    texts = [
        p["text"]
        for p in _parts(obj.get("content"))
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    ]
    if any(t.strip() for t in texts):
        m = make(ctx, stats, f"{rid}\0text", "assistant", texts, when)
        if m:
            out.append(m)
    calls = obj.get("toolCalls")
    if isinstance(calls, list) and calls:
        described: list[str] = []
        names: list[str] = []
        files: list[str] = []
        acts: list[tuple[str, dict]] = []
        for c in calls:
            if not isinstance(c, dict):
                continue
            name = str(c.get("name") or "tool")
            names.append(name)
            d, f = _describe(name, c.get("args"))
            described.append(d)
            files.extend(f)
            if c.get("status") in (None, "success"):  # a refused or failed call wrote nothing
                acts.extend(_acts(name, c.get("args")))
        m = make(ctx, stats, f"{rid}\0calls", "tool_use", described, when, tools=names, files=files, calls=acts)
        if m:
            out.append(m)
    if not out and not (isinstance(calls, list) and calls) and not any(t.strip() for t in texts):
        stats["thinking" if obj.get("thoughts") else "empty"] += 1
    return out


_WRITES = {"write_file": "Write", "replace": "Edit", "edit": "Edit", "write_new_file": "Write"}


def _acts(name: str, args) -> list[tuple[str, dict]]:
    """A Gemini CLI tool call as Claude Code's equivalent (for what it did to the project's files)."""
    if not isinstance(args, dict):
        return []
    if name in _WRITES and isinstance(args.get("file_path") or args.get("absolute_path"), str):
        return [
            (
                _WRITES[name],
                {
                    "file_path": args.get("file_path") or args.get("absolute_path"),
                    **({"content": args["content"]} if isinstance(args.get("content"), str) else {}),
                },
            )
        ]
    if name in ("run_shell_command", "shell") and isinstance(args.get("command"), str):
        return [("Bash", {"command": args["command"]})]
    return []


def _describe(name: str, args) -> tuple[str, list[str]]:
    if not isinstance(args, dict):
        return name, []
    parts: list[str] = []
    files: list[str] = []
    for k in _SALIENT:
        v = args.get(k)
        if isinstance(v, str) and v:
            parts.append(clip(v, 2000))
            if k in ("file_path", "absolute_path", "path"):
                files.append(v)
    return (f"{name}: " + " | ".join(parts)) if parts else name, files
