"""Helpers for the memory tests: projects, Claude Code-shaped transcripts, scripted answers."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

EXTRACTION_MARK = "You maintain the long-term memory"
CONSOLIDATION_MARK = "You curate the long-term memory"


def make_project(root: Path, name: str = "proj", git: bool = True) -> Path:
    p = root / name
    p.mkdir(parents=True, exist_ok=True)
    if git:
        (p / ".git" / "info").mkdir(parents=True, exist_ok=True)
    return p.resolve()


def make_worktree(main: Path, wt: Path, name: str | None = None) -> Path:
    """A linked worktree of the repository ``main`` at ``wt``, laid out as ``git worktree add``
    does: ``wt/.git`` names ``main/.git/worktrees/<name>``, whose ``commondir`` leads back to
    ``main/.git`` and whose ``gitdir`` points back at ``wt/.git``."""
    name = name or wt.name
    admin = main / ".git" / "worktrees" / name
    admin.mkdir(parents=True, exist_ok=True)
    (admin / "commondir").write_text("../..\n")
    (admin / "gitdir").write_text(f"{wt / '.git'}\n")
    (admin / "HEAD").write_text("ref: refs/heads/" + name + "\n")
    wt.mkdir(parents=True, exist_ok=True)
    (wt / ".git").write_text(f"gitdir: {admin}\n")
    return wt


class Transcript:
    """Appends Claude Code-shaped JSONL lines to ``<claude>/projects/<enc>/<session>.jsonl``."""

    def __init__(self, claude_projects: Path, project: Path, session_id: str | None = None) -> None:
        self.session_id = session_id or str(uuid.uuid4())
        self.project = project
        enc = "".join(c if c.isalnum() else "-" for c in str(project))
        self.path = claude_projects / enc / f"{self.session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        self.n = 0

    def _write(self, obj: dict) -> None:
        base = {
            "uuid": str(uuid.uuid4()),
            "sessionId": self.session_id,
            "cwd": str(self.project),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "gitBranch": "main",
        }
        base.update(obj)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(base, ensure_ascii=False) + "\n")
        self.n += 1

    def user(self, text: str) -> "Transcript":
        self._write({"type": "user", "message": {"role": "user", "content": text}})
        return self

    def assistant(self, text: str) -> "Transcript":
        self._write(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:8]}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                },
            }
        )
        return self

    def tool(self, name: str, **inp) -> "Transcript":
        tid = f"toolu_{uuid.uuid4().hex[:8]}"
        self._write(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:8]}",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                },
            }
        )
        self._write(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tid, "content": "TOOL RESULT BODY " * 20}],
                },
            }
        )
        return self

    def hook_context(self, text: str) -> "Transcript":
        self._write(
            {
                "type": "attachment",
                "attachment": {"type": "hook_additional_context", "content": [text], "hookName": "UserPromptSubmit"},
            }
        )
        return self

    def payload(self, **extra) -> dict:
        d = {"session_id": self.session_id, "transcript_path": str(self.path), "cwd": str(self.project)}
        d.update(extra)
        return d


def extraction(*memories: dict) -> str:
    return json.dumps(
        {
            "memories": [
                {
                    "type": m.get("type", "gotcha"),
                    "content": m["content"],
                    "tags": m.get("tags", []),
                    "supersedes_content": m.get("supersedes_content"),
                }
                for m in memories
            ]
        },
        ensure_ascii=False,
    )


def system_of(req: dict) -> str:
    s = req.get("system")
    if isinstance(s, list):
        return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return s or ""


def is_extraction(req: dict) -> bool:
    return EXTRACTION_MARK in system_of(req)


def is_consolidation(req: dict) -> bool:
    return CONSOLIDATION_MARK in system_of(req)


def prompt_of(req: dict) -> str:
    msgs = req.get("messages") or []
    if not msgs:
        return ""
    c = msgs[-1].get("content")
    if isinstance(c, list):
        return "\n".join(b.get("text", "") for b in c if isinstance(b, dict))
    return c or ""


def use_standin(monkeypatch, standin, **memory_cfg) -> None:
    """Point recall's model client at the stand-in with a fake key; memory settings for tests."""
    from recall.core import config
    from recall.llm import messages_api

    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    messages_api._clients.clear()
    cfg = {"memory": {"idle_seconds": 0, "timeout_seconds": 5}}
    cfg["memory"].update(memory_cfg)
    config.save(cfg)


def state_json(project: Path) -> dict:
    try:
        return json.loads((project / ".memory" / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def active(project: Path) -> list[dict]:
    return [m for m in state_json(project).get("memories", []) if m.get("status") == "active"]


def env_without_service() -> dict:
    env = dict(os.environ)
    env["RECALL_NO_SERVICE"] = "1"
    return env
