"""The message every source gives: one prompt, reply, tool call, tool result or summary of a
session, redacted, as the archive keeps it (``to_record`` / ``from_record``: one line of
``archive/sessions/…/<session>.jsonl``) and the index holds it. Each source's reader makes them
(``indexer/sources/``); ``agent`` says whose session it is from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Message:
    uuid: str
    session_id: str
    project: str
    cwd: str
    branch: str
    role: str
    timestamp: float  # seconds since the epoch, UTC
    text: str
    tools: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    source: str = ""
    echo: bool = False  # it restates what recall itself recalled (see mark_echo)
    # the project files its tool calls wrote, edited, moved or deleted (indexer.touches)
    touched: list[list[str]] = field(default_factory=list)
    agent: str = "claude-code"  # which agent's session it is from (indexer.sources)

    def to_record(self) -> dict:
        return {
            "uuid": self.uuid,
            "session_id": self.session_id,
            "project": self.project,
            "cwd": self.cwd,
            "branch": self.branch,
            "role": self.role,
            "timestamp": self.timestamp,
            "text": self.text,
            "tools": self.tools,
            "files": self.files,
            "source": self.source,
            **({"echo": True} if self.echo else {}),  # left out when false: most records stay as they were
            **({"touched": self.touched} if self.touched else {}),
            **({"agent": self.agent} if self.agent != "claude-code" else {}),  # Claude Code's: as before
        }

    @classmethod
    def from_record(cls, rec: dict) -> "Message":
        return cls(
            uuid=str(rec.get("uuid") or ""),
            session_id=str(rec.get("session_id") or ""),
            project=str(rec.get("project") or ""),
            cwd=str(rec.get("cwd") or ""),
            branch=str(rec.get("branch") or ""),
            role=str(rec.get("role") or "user"),
            timestamp=float(rec.get("timestamp") or 0.0),
            text=str(rec.get("text") or ""),
            tools=list(rec.get("tools") or []),
            files=list(rec.get("files") or []),
            source=str(rec.get("source") or ""),
            echo=bool(rec.get("echo")),
            touched=_touched_of(rec),
            agent=str(rec.get("agent") or "claude-code"),
        )


def _touched_of(rec: dict) -> list:
    """A record's touches; one archived before touches were gets them from its text."""
    touched = rec.get("touched")
    if touched is None:
        if rec.get("role") != "tool_use":
            return []
        from indexer.touches import derive

        return derive(rec)
    return [list(t) for t in touched if isinstance(t, (list, tuple))] if isinstance(touched, list) else []
