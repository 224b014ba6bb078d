"""Build Claude Code transcript lines in tests (the real envelope, every line kind).

s = Session(cwd="/home/dev/app")
s.user("why is the webhook retrying?")
tid = s.tool_use("Bash", {"command": "pytest -x"})
s.tool_result(tid, "1 failed")
s.assistant("The signature check uses the wrong secret.")
path = s.write(claude_projects)
"""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

BASE_TIME = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


def encode_cwd(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


class Session:
    def __init__(
        self,
        cwd: str = "/home/dev/app",
        session_id: str | None = None,
        start: datetime = BASE_TIME,
        branch: str = "main",
        version: str = "2.1.197",
    ) -> None:
        self.cwd = cwd
        self.session_id = session_id or str(uuidlib.uuid4())
        self.clock = start
        self.branch = branch
        self.version = version
        self.lines: list[dict | str] = []
        self.parent: str | None = None
        self._msg = 0
        self._tool = 0

    # envelope --------------------------------------------------------------------------
    def _tick(self) -> str:
        self.clock += timedelta(seconds=7)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _envelope(self, kind: str, **fields) -> dict:
        uid = fields.pop("uuid", None) or str(uuidlib.uuid4())
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uid,
            "timestamp": self._tick(),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        line.update(fields)
        self.parent = uid
        self.lines.append(line)
        return line

    # indexable -------------------------------------------------------------------------
    def user(self, content, **fields) -> dict:
        return self._envelope("user", message={"role": "user", "content": content}, **fields)

    def assistant(self, text: str, msg_id: str | None = None, **fields) -> dict:
        return self._assistant_block({"type": "text", "text": text}, msg_id, **fields)

    def _assistant_block(self, block: dict, msg_id: str | None, **fields) -> dict:
        if msg_id is None:
            self._msg += 1
            msg_id = f"msg_{self._msg:06d}"
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return self._envelope("assistant", message=message, **fields)

    def tool_use(self, name: str, input: dict, msg_id: str | None = None) -> str:
        self._tool += 1
        tid = f"toolu_{self._tool:06d}"
        self._assistant_block({"type": "tool_use", "id": tid, "name": name, "input": input}, msg_id)
        return tid

    def thinking(self, text: str, msg_id: str | None = None) -> dict:
        return self._assistant_block({"type": "thinking", "thinking": text, "signature": "sig"}, msg_id)

    def tool_result(self, tool_id: str, content, is_error: bool = False, **fields) -> dict:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}
        return self._envelope("user", message={"role": "user", "content": [block]}, **fields)

    def compact_summary(self, text: str) -> dict:
        return self.user(text, isCompactSummary=True)

    def summary(self, text: str) -> dict:
        line = {"type": "summary", "summary": text, "leafUuid": self.parent}
        self.lines.append(line)
        return line

    # skipped ---------------------------------------------------------------------------
    def meta(self, text: str) -> dict:
        return self.user(text, isMeta=True)

    def command(self, name: str = "/clear") -> dict:
        return self.user(f"<command-name>{name}</command-name>\n<command-message>{name[1:]}</command-message>")

    def local_stdout(self, text: str) -> dict:
        return self.user(f"<local-command-stdout>{text}</local-command-stdout>")

    def interrupted(self) -> dict:
        return self.user([{"type": "text", "text": "[Request interrupted by user]"}])

    def attachment(self, att_type: str, **att) -> dict:
        return self._envelope("attachment", attachment={"type": att_type, **att})

    def hook_context(self, content: str) -> dict:
        return self.attachment("hook_additional_context", content=[content], hookName="UserPromptSubmit")

    def queue_operation(self, content: str = "queued prompt") -> dict:
        line = {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": self._tick(),
            "sessionId": self.session_id,
            "content": content,
        }
        self.lines.append(line)
        return line

    def bookkeeping(self, kind: str) -> dict:
        """file-history-snapshot, progress, last-prompt, permission-mode, system..."""
        line = {"type": kind, "uuid": str(uuidlib.uuid4()), "timestamp": self._tick(), "sessionId": self.session_id}
        self.lines.append(line)
        return line

    def raw(self, text: str) -> None:
        """A raw line as written (malformed JSON, say)."""
        self.lines.append(text)

    # output ----------------------------------------------------------------------------
    def text(self) -> str:
        return "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in self.lines)

    def path(self, root: Path) -> Path:
        return root / encode_cwd(self.cwd) / f"{self.session_id}.jsonl"

    def write(self, root: Path) -> Path:
        path = self.path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.text(), encoding="utf-8")
        return path

    def append(self, root: Path, start: int) -> Path:
        """Append lines[start:] to the file (what Claude Code does as a session goes on)."""
        path = self.path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            for l in self.lines[start:]:
                fh.write((l if isinstance(l, str) else json.dumps(l)) + "\n")
        return path

    def write_subagent(self, root: Path, agent_id: str = "a1b2c3") -> Path:
        path = root / encode_cwd(self.cwd) / self.session_id / "subagents" / f"agent-{agent_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        for l in self.lines:
            if isinstance(l, dict):
                l["isSidechain"] = True
                l["agentId"] = agent_id
        path.write_text(self.text(), encoding="utf-8")
        return path
