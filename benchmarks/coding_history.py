"""The coding history of issue 34: three projects of Claude Code work (``benchmarks/coding_history``:
clinicbook, a Django SaaS app; shipyard, a Go command-line tool; sightline, a machine-learning
training repo), their labelled prompts, and the writer that turns them into real Claude Code
transcripts.

Each ``<slug>.json`` holds the project's sessions and its dev (tune) prompts; ``<slug>.report.json``
holds the held-out report prompts, written by someone else so that the gate is never tuned on
them: this module loads them for the benchmark (``benchmarks.injection_sizes``), which reports
both halves. The format: ``/work/CODING_HISTORY_FORMAT.md`` as committed beside the data
(``benchmarks/coding_history/FORMAT.md`` when present).

A session becomes one transcript in Claude Code 2.1's line format, as
``shared/reference-transcripts`` shows it: a user prompt line, one assistant line per content
block (text, then each ``tool_use``; the lines of one response share ``message.id``), each tool
result as a user line with ``toolUseResult`` and ``sourceToolAssistantUUID``, the session's
``cwd``, ``gitBranch``, ``sessionId`` and timestamps a few seconds to a minute apart.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

DATA_DIR = Path(__file__).with_name("coding_history")
PROJECTS = ("clinicbook", "shipyard", "sightline")
VERSION = "2.1.197"
# the kinds of the data (question, task, paraphrase, new_task) as the benchmark names them
KIND_NAMES = {"question": "question", "task": "task", "paraphrase": "paraphrase", "new_task": "new-task"}


def session_uuid(sid: str) -> str:
    """The transcript's session id for a data session id (stable across runs)."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"recall-coding-history/{sid}"))


@dataclass
class CodingSession:
    sid: str  # the data's id ("shipyard-s04")
    project: str
    cwd: str
    start: datetime
    branch: str
    turns: list[dict]
    memories: list[dict] = field(default_factory=list)  # what the extraction model returns for it

    @property
    def end(self) -> datetime:
        """About when the session ended (its turns are seconds to a minute apart)."""
        return self.start + timedelta(minutes=len(self.turns))

    @property
    def session_id(self) -> str:
        return session_uuid(self.sid)


@dataclass
class CodingPrompt:
    pid: str
    project: str
    text: str
    kind: str  # question | task | paraphrase | new-task
    split: str  # tune (the dev half) | report (the held-out half)
    answers: frozenset  # transcript session ids that answer it
    asked_after: str  # the data id of the last session of its history


@dataclass
class CodingProject:
    slug: str
    kind: str
    cwd: str
    sessions: list[CodingSession]
    prompts: list[CodingPrompt] = field(default_factory=list)


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def available(data_dir: Path = DATA_DIR) -> list[str]:
    """The projects whose data is complete (both files present)."""
    return [p for p in PROJECTS if (data_dir / f"{p}.json").exists() and (data_dir / f"{p}.report.json").exists()]


def load(slug: str, data_dir: Path = DATA_DIR) -> CodingProject:
    """One project: its sessions, its dev prompts (``tune``) and its report prompts (``report``)."""
    data = json.loads((data_dir / f"{slug}.json").read_text(encoding="utf-8"))
    cwd = str(data["cwd"])
    sessions = [
        CodingSession(
            str(s["id"]), slug, cwd, _when(s["start"]), str(s.get("branch") or "main"), list(s.get("turns") or [])
        )
        for s in data["sessions"]
    ]
    sessions.sort(key=lambda s: s.start)
    memories = data_dir / f"{slug}.memories.json"
    if memories.exists():
        # the typed memories the extraction model returns for each session (``<slug>.memories.json``,
        # written from each session's extraction excerpt alone, as the model would)
        answers = json.loads(memories.read_text(encoding="utf-8"))
        for s in sessions:
            s.memories = [m for m in answers.get(s.sid) or [] if isinstance(m, dict) and m.get("content")]
    last = sessions[-1].sid
    known = {s.sid for s in sessions}
    proj = CodingProject(slug, str(data.get("kind") or ""), cwd, sessions)
    report = json.loads((data_dir / f"{slug}.report.json").read_text(encoding="utf-8"))
    for split, prompts in (("tune", data.get("prompts") or []), ("report", report.get("prompts") or [])):
        for p in prompts:
            after = str(p.get("asked_after") or last)
            proj.prompts.append(
                CodingPrompt(
                    str(p["id"]),
                    slug,
                    str(p["text"]),
                    KIND_NAMES.get(str(p.get("kind")), str(p.get("kind"))),
                    split,
                    frozenset(session_uuid(a) for a in p.get("answers") or [] if a in known),
                    after if after in known else last,
                )
            )
    return proj


def load_all(data_dir: Path = DATA_DIR) -> list[CodingProject]:
    projects = [load(slug, data_dir) for slug in available(data_dir)]
    add_new_tasks(projects, data_dir)
    return projects


def add_new_tasks(projects: list[CodingProject], data_dir: Path = DATA_DIR) -> int:
    """The held-out new-task prompts of ``new_tasks.report.json`` (written by someone else, in
    the report files' format: ``{"prompts": [...]}``), each asked of its ``project`` (every
    project when it names none) after the project's last session. Returns how many were added."""
    path = data_dir / "new_tasks.report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    prompts = data.get("prompts") if isinstance(data, dict) else data
    by_slug = {p.slug: p for p in projects}
    added = 0
    for i, p in enumerate(prompts if isinstance(prompts, list) else []):
        if not isinstance(p, dict):
            continue
        text = str(p.get("text") or p.get("prompt") or "").strip()
        if not text:
            continue
        slug = str(p.get("project") or "")
        for proj in [by_slug[slug]] if slug in by_slug else projects:
            proj.prompts.append(
                CodingPrompt(
                    f"{p.get('id') or f'new-task-{i}'}@{proj.slug}",
                    proj.slug,
                    text,
                    "new-task",
                    "report",
                    frozenset(),
                    proj.sessions[-1].sid,
                )
            )
            added += 1
    return added


# ------------------------------------------------------------------------------------
# transcripts


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _result_text(result) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False)


def transcript_lines(s: CodingSession) -> list[dict]:
    """The session as Claude Code's transcript lines."""
    ns = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"recall-coding-history/{s.sid}/lines")
    counter = [0]
    clock = [s.start]
    parent: list[str | None] = [None]
    lines: list[dict] = []

    def next_uuid() -> str:
        counter[0] += 1
        return str(uuidlib.uuid5(ns, str(counter[0])))

    def tick(seconds: float) -> str:
        clock[0] += timedelta(seconds=seconds)
        return _stamp(clock[0])

    def envelope(kind: str, seconds: float, **fields) -> dict:
        uid = next_uuid()
        line = {
            "parentUuid": parent[0],
            "isSidechain": False,
            "type": kind,
            **fields,
            "uuid": uid,
            "timestamp": tick(seconds),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": s.cwd,
            "sessionId": s.session_id,
            "version": VERSION,
            "gitBranch": s.branch,
        }
        parent[0] = uid
        lines.append(line)
        return line

    msg = [0]
    tool = [0]
    prompt_id = [None]

    def assistant_block(block: dict, msg_id: str, seconds: float) -> dict:
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return envelope("assistant", seconds, message=message)

    for turn in s.turns:
        if "user" in turn:
            prompt_id[0] = next_uuid()
            envelope(
                "user",
                40,
                promptId=prompt_id[0],
                message={"role": "user", "content": str(turn["user"])},
                permissionMode="default",
            )
            continue
        msg[0] += 1
        msg_id = f"msg_{s.session_id[:8]}{msg[0]:05d}"
        text = str(turn.get("assistant") or "")
        if text:
            assistant_block({"type": "text", "text": text}, msg_id, 6)
        for call in turn.get("tools") or []:
            tool[0] += 1
            tid = f"toolu_{s.session_id[:8]}{tool[0]:05d}"
            name = str(call.get("name") or "Bash")
            inp = call.get("input") if isinstance(call.get("input"), dict) else {}
            use = assistant_block({"type": "tool_use", "id": tid, "name": name, "input": inp}, msg_id, 3)
            result = _result_text(call.get("result", ""))
            error = bool(call.get("is_error"))
            if name == "Bash":
                tur = {
                    "stdout": "" if error else result,
                    "stderr": result if error else "",
                    "interrupted": False,
                    "isImage": False,
                }
            elif name in ("Write", "Edit"):
                tur = {"type": "create" if name == "Write" else "update", "filePath": str(inp.get("file_path", ""))}
            else:
                tur = {"type": "text", "content": result[:2000]}
            envelope(
                "user",
                4,
                promptId=prompt_id[0],
                message={
                    "role": "user",
                    "content": [{"tool_use_id": tid, "type": "tool_result", "content": result, "is_error": error}],
                },
                toolUseResult=tur,
                sourceToolAssistantUUID=use["uuid"],
            )
    if lines:
        last_prompt = next(
            (
                ln["message"]["content"]
                for ln in reversed(lines)
                if ln["type"] == "user" and isinstance(ln["message"]["content"], str)
            ),
            "",
        )
        lines.append(
            {"type": "last-prompt", "lastPrompt": last_prompt[:200], "leafUuid": parent[0], "sessionId": s.session_id}
        )
    return lines


def encode_cwd(cwd: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def write_session(s: CodingSession, root: Path) -> Path:
    """Write one session below ``root`` (Claude Code's ``projects`` layout); its path."""
    pdir = root / encode_cwd(s.cwd)
    pdir.mkdir(parents=True, exist_ok=True)
    path = pdir / f"{s.session_id}.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for line in transcript_lines(s):
            fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path
