"""Browsing past sessions: ``recall sessions`` (recent sessions with their summary or first
prompt) and ``recall show SESSION`` (the summary, then the transcript as recall indexed it:
redacted, read from the archive, so it works after Claude Code deleted the transcript)."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from indexer import sources
from recall.core.errors import UsageError
from recall.core.text import one_line
from recall.memory import summaries

TOOL_LINE_CHARS = 160


def _iso(ts: float) -> str | None:
    if not ts:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def as_dict(info, summary: dict | None) -> dict:
    return {
        "session_id": info.session_id,
        "project": info.project,
        "started": _iso(info.started),
        "ended": _iso(info.ended),
        "messages": info.messages,
        "first_prompt": info.first_prompt or None,
        "summary": summary["summary"] if summary else None,
    }


def recent(project: str | None = None, since: float | None = None, limit: int = 20) -> list[dict]:
    """Recent sessions, newest first, each with its summary (None until one exists)."""
    from indexer.ledger import reader_gate
    from indexer.state import list_sessions

    gate = reader_gate().refresh()
    everyone = gate.readers_see_all()  # nothing kept from readers: no per-session check
    rows = [
        r for r in list_sessions(project=project, since=since, limit=limit + 200) if everyone or not hidden(r, gate)
    ][:limit]
    sums = summaries.get_many(r.session_id for r in rows)
    return [as_dict(r, sums.get(r.session_id)) for r in rows]


def hidden(info, gate=None) -> str | None:
    """Why a session is kept from every reader (excluded, switched off, forgotten), or None
    (``gate``: the readers' gate, refreshed already, when the caller asks about many)."""
    from indexer.ledger import reader_gate

    gate = gate if gate is not None else reader_gate().refresh()
    return gate.hides(
        info.project, info.cwd, info.session_id, info.session_id, info.ended or info.started or 0.0, "session"
    )


def resolve(ref: str):
    """The session whose id is ``ref`` or starts with it; UsageError naming the next step."""
    from indexer.state import list_sessions

    ref = (ref or "").strip()
    if not ref:
        raise UsageError("Give a session id (a unique prefix is enough): `recall sessions` lists them.")
    found = list_sessions(prefix=ref, limit=5)
    exact = [s for s in found if s.session_id == ref]
    found = [s for s in found if not hidden(s)]  # excluded, switched off, forgotten: as if not there
    exact = [s for s in exact if not hidden(s)]
    if exact:
        return exact[0]
    if not found:
        raise UsageError(
            f"No indexed session starts with {ref!r}: `recall sessions` lists them (run `recall index` if it is new)."
        )
    if len(found) > 1:
        raise UsageError(
            f"{ref!r} matches several sessions ({', '.join(s.session_id[:12] for s in found[:4])}…): "
            "give more of the id."
        )
    return found[0]


def _clock(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%H:%M") if ts else "--:--"


def _indent(text: str) -> str:
    return "\n".join("    " + ln if ln.strip() else "" for ln in text.strip().splitlines())


def render_message(m, root: str = "") -> str | None:
    """One archived message, readable: prompts and replies in full, tool calls and results as
    one line each."""
    text = m.text or ""
    if root and root != "/":
        text = text.replace(root.rstrip("/") + "/", "")
    if not text.strip():
        return None
    when = _clock(m.timestamp)
    if m.role == "tool_use":
        return "\n".join(f"{when} → {one_line(ln, TOOL_LINE_CHARS)}" for ln in text.splitlines() if ln.strip())
    if m.role == "tool_result":
        return f"{when} ← {one_line(text, TOOL_LINE_CHARS)}"
    speaker = sources.speaker(getattr(m, "agent", ""))  # whose reply: its source's (CLAUDE, CODEX...)
    label = {"user": "USER", "assistant": speaker, "summary": "SUMMARY"}.get(m.role, m.role.upper())
    return f"{when} {label}\n{_indent(text)}"


def archived_messages(session_id: str) -> list:
    from indexer.archive_files import iter_lines, session_filename
    from indexer.message import Message
    from recall.core import paths

    out = []
    for path in sorted((paths.archive_dir() / "sessions").glob(f"*/{session_filename(session_id)}")):
        for _pos, rec in iter_lines(path):
            try:
                out.append(Message.from_record(rec))
            except (TypeError, ValueError):
                continue
    out.sort(key=lambda m: m.timestamp)
    return out


def show_text(info, files: list[str] | None = None) -> str:
    """The whole of ``recall show``: a header, the summary, ``files`` (lines saying what
    became of the files it wrote), the transcript."""
    rec = summaries.get(info.session_id)
    started = _iso(info.started) or "?"
    head = [
        f"session {info.session_id}",
        f"project {info.project or '?'}",
        f"{started} → {_iso(info.ended) or '?'}, {info.messages} message{'' if info.messages == 1 else 's'}",
        "",
    ]
    if rec:
        head += ["Summary:", _indent(rec["summary"]), ""]
    else:
        head += [no_summary_line(info), ""]
    if files:
        head += ["Files it wrote, and what became of them:", *files, ""]
    body = []
    from indexer.ledger import reader_gate

    gate = reader_gate().refresh()
    for m in archived_messages(info.session_id):
        if gate.hides(m.project, m.cwd, m.session_id, m.uuid, m.timestamp):
            continue
        line = render_message(m, info.project)
        if line:
            body.append(line)
    if not body:
        body = ["(nothing archived for this session)"]
    return "\n".join(head + ["Transcript:", ""] + body) + "\n"


def show_json(info) -> dict:
    """``recall show --json``: the session as ``recall sessions --json`` gives it, plus why it has
    no summary and its transcript as recall indexed it (redacted), one object per message."""
    from recall.memory import summaries as _summaries

    rec = _summaries.get(info.session_id)
    out = as_dict(info, rec)
    out["no_summary"] = None if rec else no_summary_line(info)
    out["transcript"] = [
        {
            "uuid": getattr(m, "uuid", ""),
            "role": m.role,
            "timestamp": _iso(m.timestamp),
            "text": m.text,
            "tools": list(getattr(m, "tools", []) or []),
        }
        for m in archived_messages(info.session_id)
    ]
    return out


def installed_at() -> float | None:
    """When recall was first set up here (``setup.json``), or None."""
    from recall.core import paths
    from recall.core.jsonio import read_json

    data = read_json(paths.recall_home() / "setup.json", {}, dict)
    try:
        return float(data["installed"]) if data.get("installed") else None
    except (ValueError, TypeError):
        return None


def no_summary_line(info) -> str:
    """Why a session has no summary, and what makes one: never a promise that nothing keeps."""
    installed = installed_at()
    last = info.ended or info.started or 0.0
    pending = next((p for p in summaries.pending() if p.get("session_id") == info.session_id), None)
    if pending and pending.get("problem"):
        return (
            f"No summary yet: the last try failed ({pending['problem'][:160]}); it is tried again "
            "(`recall status` shows the model backend)."
        )
    if summaries.forgotten(info.session_id):
        return (
            "No summary: `recall forget` removed it with what was forgotten (`recall memories --backfill` "
            "writes a new one from what is left)."
        )
    if installed is None or last < installed:
        return "No summary (before recall was installed: `recall memories --backfill`)."
    return (
        "No summary yet: it is written when the session ends, with a model backend "
        "(`recall memories --backfill` makes the missing ones)."
    )


def project_root(project) -> str | None:
    if project is None:
        return None
    from indexer.project import canonical_project

    raw = os.path.abspath(os.path.expanduser(str(project)))
    if not os.path.isdir(raw):
        raise UsageError(f"--project {project} is not a directory: pass a folder of the project.")
    return canonical_project(raw)
