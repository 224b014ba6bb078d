"""What the prompt hook adds from rules: the situation from the hook's payload (the prompt,
its cwd, and the files and tools of the transcript's last turns), the rules that fire, each
once per session unless it fires on a file it has not fired on before.

Which rule fired on what in a session is kept in ``$RECALL_HOME/rules/sessions/<id>.json``
(written atomically, 0600; records older than SESSION_DAYS are swept).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import loads_object, read_json
from recall.rules.files import any_rules, project_of
from recall.rules.match import Fired, Situation, compiled_rules, fire

LAST_TURNS = 3  # user prompts back the transcript's tools and files are taken from
TAIL_BYTES = 512 * 1024  # at most this much of the transcript's end is read
SESSION_DAYS = 14
_SID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_FILE_KEYS = ("file_path", "notebook_path", "path")


def sessions_dir() -> Path:
    return paths.recall_home() / "rules" / "sessions"


def recent_activity(transcript_path: str | None, turns: int = LAST_TURNS) -> tuple[list[str], list[str]]:
    """(files, tools) of the tool calls in the last ``turns`` turns of a transcript, newest
    first; ([], []) when it cannot be read."""
    if not transcript_path or not isinstance(transcript_path, str):
        return [], []
    try:
        with open(transcript_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return [], []
    lines = data.split(b"\n")
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first one is cut
    files: list[str] = []
    tools: list[str] = []
    prompts = 0
    for raw in reversed(lines):
        if not raw.strip():
            continue
        entry = loads_object(raw)
        if entry is None:
            continue
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = msg.get("content")
        if entry.get("type") == "user" and not entry.get("isMeta"):
            if isinstance(content, str) or (
                isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "text" for b in content)
            ):
                prompts += 1
                if prompts >= turns:
                    break
            continue
        if entry.get("type") != "assistant" or not isinstance(content, list):
            continue
        for block in reversed(content):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name = block.get("name")
            if isinstance(name, str) and name and name not in tools:
                tools.append(name)
            args = block.get("input") if isinstance(block.get("input"), dict) else {}
            for key in _FILE_KEYS:
                v = args.get(key)
                if isinstance(v, str) and v and v not in files:
                    files.append(v)
    return files[:100], tools[:50]


def situation(payload: dict, project: str | None) -> Situation:
    prompt = payload.get("prompt") if isinstance(payload.get("prompt"), str) else ""
    files, tools = recent_activity(payload.get("transcript_path"))
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else ""
    roots = [r for r in (project, cwd) if r]
    return Situation.build(prompt, files, tools, roots)


def _record_path(session_id) -> Path | None:
    if isinstance(session_id, str) and _SID.match(session_id):
        return sessions_dir() / f"{session_id}.json"
    return None


def _read_record(path: Path | None) -> dict[str, list[str]]:
    if path is None:
        return {}
    data = read_json(path, {}, dict)
    return {str(k): [str(f) for f in v] for k, v in data.items() if isinstance(v, list)}


def forget_sessions(session_ids) -> None:
    """Drop the records of which rules fired in these sessions (``recall forget``)."""
    for sid in session_ids or ():
        path = _record_path(sid)
        if path is not None:
            try:
                path.unlink()
            except OSError:
                pass


def _sweep() -> None:
    cutoff = time.time() - SESSION_DAYS * 86400
    try:
        for f in sessions_dir().glob("*.json"):
            try:
                if f.stat().st_mtime < cutoff:
                    f.unlink()
            except OSError:
                continue
    except OSError:
        pass


def new_in_session(fired: list[Fired], session_id, limit: int = 5) -> list[Fired]:
    """The first ``limit`` fired rules not yet shown in this session (or shown, but now
    firing on a file they have not fired on); records them as shown."""
    path = _record_path(session_id)
    record = _read_record(path)
    fresh: list[Fired] = []
    for f in fired:
        if len(fresh) >= limit:
            break
        rid = f.rule.id
        if rid not in record:
            fresh.append(f)
            record[rid] = list(f.files)
        elif f.files and any(p not in record[rid] for p in f.files):
            fresh.append(f)
            record[rid] = list(dict.fromkeys([*record[rid], *f.files]))[-200:]
    if fresh and path is not None:
        if not path.exists():
            _sweep()
        paths.atomic_write(path, json.dumps(record))
    return fresh


def rules_for_prompt(payload: dict, max_rules: int = 5) -> list[Fired]:
    """The rules the hook injects for ``payload`` (at most ``max_rules``), recorded as shown
    in the payload's session. Raises RuleError for an unreadable rule file."""
    project = project_of(payload.get("cwd"))
    if not any_rules(project):
        return []
    rules = compiled_rules(project)
    if not rules:
        return []
    fired = fire(situation(payload, project), rules)
    if not fired:
        return []
    return new_in_session(fired, payload.get("session_id"), max(0, int(max_rules)))
