"""A finished session's short summary (goal, decisions and why, files changed, outcome,
what was left open), written once when the session ends.

Same trigger and cost controls as memory extraction: the SessionEnd capture hook queues the
session, the memory worker (``recall.memory.worker.run_session``) calls ``summarize`` after
extracting it, each call counts against ``memory.daily_call_cap``, and with no model
backend nothing is called (sessions still list with their first prompt). The session is
rendered like extraction renders it (the index's parser: redacted, no injected context),
from its transcript or, once Claude Code deleted that, from recall's archive.

Resumable: a pending marker is written before the call and removed only once the summary
is stored; ``retry_pending`` (run by the worker after each drain) retries failed sessions
with a growing delay, at most MAX_ATTEMPTS times.
"""

from __future__ import annotations

import os
import time

from recall.core import config, log
from recall.core.text import cut
from recall.llm import backend
from recall.llm.errors import CapReached, ModelError, NoKey
from recall.memory import summaries

MAX_INPUT_CHARS = 24_000  # rendered session sent to the model: the start and the end kept
HEAD_CHARS = 8_000
SUMMARY_MAX_TOKENS = 500
MAX_SUMMARY_CHARS = 1_500
RETRY_SECONDS = 300.0  # first retry after a failure; doubled after each further one
MAX_ATTEMPTS = 6

SYSTEM = """You write the summary of one finished Claude Code session (an AI coding assistant \
working in a software project), for someone browsing past sessions later. Be specific: name \
files, commands, libraries and numbers. Write in the language of the session. At most 120 words, \
exactly these five lines, each starting with its label (write "none" when nothing fits):
Goal: what the user set out to do
Decided: what was decided and why
Files: the files changed or created
Outcome: what got done, what works now
Open: what was left unfinished or unresolved
No preamble, no other text."""


def ask_model(system: str, prompt: str, *, cfg: dict | None = None) -> tuple[str, str]:
    """The one place a summary calls the model: (text, model id). Raises NoKey,
    CapReached, ModelError. (A model-backend chooser routes this function.)"""
    from recall.memory.extract import memory_settings

    settings = memory_settings(cfg)
    cap = settings.daily_call_cap
    timeout = settings.timeout_seconds
    text = backend.complete(
        system,
        prompt,
        purpose="summary",
        max_tokens=SUMMARY_MAX_TOKENS,
        timeout=timeout,
        cap=int(cap) if cap is not None else None,
    )
    return text, config.model(cfg)


def _archived_lines(session_id: str, root: str, read: list | None = None) -> list[str]:
    """The session rendered from recall's archive (its transcript is gone); ``read`` gets
    the messages rendered."""
    from indexer.archive_files import iter_lines, session_filename
    from indexer.message import Message
    from recall.core import paths
    from recall.memory.extract import render

    out = []
    for path in sorted((paths.archive_dir() / "sessions").glob(f"*/{session_filename(session_id)}")):
        for _pos, rec in iter_lines(path):
            try:
                m = Message.from_record(rec)
            except (TypeError, ValueError):
                continue
            line = render(m, root or m.project)
            if line:
                out.append(line)
                if read is not None:
                    read.append(m)
    return out


def session_echo(session_id: str) -> bool:
    """Whether most of what the session's assistant said (and its tools returned) restated
    recall's own output (``echo`` in the archived records: indexer.sources.claude_code.mark_echo)."""
    from indexer.archive_files import iter_lines, session_filename
    from recall.core import paths

    echo = other = 0
    for path in (paths.archive_dir() / "sessions").glob(f"*/{session_filename(session_id)}"):
        for _pos, rec in iter_lines(path):
            if isinstance(rec, dict) and rec.get("role") in ("assistant", "tool_result"):
                if rec.get("echo"):
                    echo += 1
                else:
                    other += 1
    return echo > 0 and echo >= other


def session_lines(
    session_id: str, transcript_path: str | None = None, cwd: str | None = None, read: list | None = None
) -> tuple[list[str], str]:
    """(the session's rendered lines, its project); ``read`` gets the messages rendered."""
    from indexer.project import canonical_project
    from recall.memory.extract import find_transcript, read_new

    root = canonical_project(os.path.abspath(cwd)) if cwd else ""
    path = find_transcript(session_id, transcript_path)
    if path is not None:
        entries, _end, seen_cwd = read_new(path, 0, root)
        project = root or (canonical_project(seen_cwd) if seen_cwd else "")
        if read is not None:
            read.extend(e.message for e in entries)
        return [e.text for e in entries], project
    lines = _archived_lines(session_id, root, read)
    if not root:
        from indexer.state import session_row

        row = session_row(session_id)
        root = row.get("project", "") if row else ""
    return lines, root


def build_prompt(lines: list[str]) -> str:
    text = "\n".join(lines)
    if len(text) > MAX_INPUT_CHARS:
        tail = MAX_INPUT_CHARS - HEAD_CHARS
        text = text[:HEAD_CHARS] + "\n[… the middle of the session is left out …]\n" + text[-tail:]
    return f"The session, as a transcript (USER, CLAUDE, TOOL lines):\n\n{text}\n\nWrite the summary."


def clean(reply: str) -> str:
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    text = "\n".join(lines)
    return cut(text, MAX_SUMMARY_CHARS)


def summarize(
    session_id: str,
    transcript_path: str | None = None,
    cwd: str | None = None,
    *,
    cfg: dict | None = None,
    force: bool = False,
) -> dict:
    """Summarize one session unless it has a summary. Returns {"status": "written" | "exists"
    | "empty" | "pending", ...}; never raises for a model failure (the session stays pending)."""
    cfg = cfg if cfg is not None else config.load()
    if not force and summaries.get(session_id) is not None:
        summaries.clear_pending(session_id)
        return {"status": "exists"}
    summaries.mark_pending(session_id, transcript_path or "", cwd or "")
    read: list = []
    lines, project = session_lines(session_id, transcript_path, cwd, read)
    if not lines:
        summaries.clear_pending(session_id)
        return {"status": "empty"}
    try:
        reply, model = ask_model(SYSTEM, build_prompt(lines), cfg=cfg)
    except (NoKey, CapReached, ModelError) as exc:
        rec = summaries.mark_pending(session_id, transcript_path or "", cwd or "", problem=str(exc)[:300])
        log.get("memory").warning("session %s: summary not written, will retry: %s", session_id, exc)
        return {"status": "pending", "problem": str(exc)[:300], "attempts": (rec or {}).get("attempts", 0)}
    text = clean(reply)
    if not text:
        summaries.mark_pending(session_id, transcript_path or "", cwd or "", problem="empty answer")
        return {"status": "pending", "problem": "empty answer"}
    from recall.memory.extract import refused

    why = refused(session_id, read, summary=True)  # the call took seconds: `recall: off` or a forget may have come
    if why:
        summaries.clear_pending(session_id)
        log.get("memory").info("session %s: summary not written: %s", session_id, why)
        return {"status": "refused", "problem": why}
    rec = summaries.put(session_id, project, text, model=model, messages=len(lines), echo=session_echo(session_id))
    why = refused(session_id, read, summary=True)  # a forget that began while it was written: take it back
    if why:
        summaries.remove([session_id])
        log.get("memory").info("session %s: summary taken back: %s", session_id, why)
        return {"status": "refused", "problem": why}
    log.get("memory").info("session %s: summary written (%d characters)", session_id, len(text))
    return {"status": "written", "summary": rec["summary"]}


def retry_pending(cfg: dict | None = None, now: float | None = None) -> list[dict]:
    """Summarize the sessions still pending whose retry delay has passed."""
    now = time.time() if now is None else now
    out = []
    for rec in summaries.pending():
        attempts = int(rec.get("attempts") or 0)
        if attempts >= MAX_ATTEMPTS:
            continue
        last = float(rec.get("last_attempt") or 0.0)
        if attempts and now - last < RETRY_SECONDS * (2 ** (attempts - 1)):
            continue
        res = summarize(rec["session_id"], rec.get("transcript_path") or None, rec.get("cwd") or None, cfg=cfg)
        out.append({"session_id": rec["session_id"], **res})
        if res.get("status") == "pending" and "cap" in str(res.get("problem", "")).lower():
            break  # the daily cap: the others wait for tomorrow
    return out
