"""From a session transcript to typed memories.

1. A per-session cursor (``$RECALL_HOME/memory/cursors/<session>.json``: transcript path,
   byte offset, inode) says what was already read.
2. New lines go through the index's own parser (``indexer.sources.claude_code.read_lines``): the
   same redaction, the same skipping of hook-injected context, so nothing recall injected
   is ever extracted back.
3. Messages become a compact summary: ``USER: …``, ``CLAUDE: …``, ``SUMMARY: …``,
   ``TOOL [Write]: src/lib/stripe.ts`` (paths relative to the project; tool results are left
   out), chunked at ``CHUNK_CHARS`` with ``OVERLAP_CHARS`` of overlap.
4. Thresholds: a Stop needs ``MIN_LINES["stop"]`` new summary lines, a PreCompact one, a
   SessionEnd any. Below the threshold the cursor stays put so lines accumulate.
5. Each chunk goes to the model with the project's active memories; the answer (new or
   updated memories only) is validated (``recall.memory.model``), retried once when
   malformed, then skipped with a log line. A failed call (HTTP error, timeout) or the
   daily cap stops this session's run with the cursor at the last chunk done, so the next
   trigger resumes there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from recall.core import config, log, paths
from recall.core.jsonio import read_json
from recall.core.text import cut
from recall.llm import backend
from recall.llm.errors import CapReached, ModelError, NoKey
from recall.memory import memory_home, store

CHUNK_CHARS = 6000
OVERLAP_CHARS = 500
MIN_LINES = {"stop": 3, "pre-compact": 1, "session-end": 1, "manual": 1}
MESSAGE_CHARS = 1500
TOOL_CHARS = 200
EXISTING_LIMIT = 120  # active memories shown to the model with each chunk
EXTRACT_MAX_TOKENS = 2048

SYSTEM = """You maintain the long-term memory of one software project for Claude Code, an AI coding \
assistant. You read an excerpt of a coding session and write down what a future session should know \
before it starts working: durable, specific facts, not a diary.

Memory types:
- architecture: how the system is built (components, data flow, key files and what they do)
- decision: a choice that was made and why (libraries, designs, trade-offs, things ruled out)
- pattern: conventions of this codebase (naming, testing, error handling, how to run things)
- gotcha: pitfalls and surprises (bugs and their causes, flaky things, commands that fail and the fix)
- progress: what was done or is in flight, and the next step (fades after 7 days)
- context: background (goals, deadlines, people, environment; fades after 30 days)

Rules:
- Return ONLY memories that are new or that change an existing memory. Never repeat an existing \
memory unchanged. When a memory updates or contradicts an existing one, set "supersedes_content" to \
the existing memory's text.
- One self-contained sentence each (at most ~300 characters), specific: name files, functions, \
commands, versions. Write in the language of the session.
- Skip chit-chat, one-off details, anything that only mattered in the moment, and secrets.
- 1 to 4 short lowercase tags per memory (component, library or topic).
- Nothing worth keeping is a fine answer.

Answer with JSON only, no prose:
{"memories": [{"type": "gotcha", "content": "...", "tags": ["..."], "supersedes_content": null}]}"""


@dataclass
class Entry:
    text: str
    end: int  # byte offset just past the transcript line this entry came from
    message: object = None  # the parsed message (indexer.message.Message) it renders


def refused(session_id: str, messages=(), summary: bool = False) -> str | None:
    """Why what a worker read of ``session_id`` must not be written now (None: it may): the
    session was switched off (`recall: off`) or forgotten, its project excluded, or one of
    ``messages`` forgotten or kept out since it was read. The worker asks right before it
    writes a memory or a summary: a model call takes seconds, and the user may have said
    `recall: off` or `recall forget` meanwhile. The same check as ingest's (``admit``),
    against the gate and the tombstones as they are on disk now. ``summary``: what is written
    is a summary of the whole session, refused once any forget named the session."""
    from indexer.archive import Tombstones
    from indexer.ledger import Gate, admit

    gate = Gate().refresh()
    tombstones = Tombstones(paths.archive_dir() / "forgotten.json")
    if session_id in gate.off or session_id in tombstones.dropped:
        return "the session was switched off"
    if summary and session_id in tombstones.sessions:  # a summary speaks for all of it
        return "the session was forgotten"
    messages = [m for m in messages if m is not None]
    if messages:
        keep, _ = admit(messages, gate, tombstones)
        if len(keep) < len(messages):
            return "what it read was forgotten or excluded meanwhile"
    return None


@dataclass
class Chunk:
    text: str
    end: int  # cursor after this chunk: past every entry it holds whole


@dataclass
class Cursor:
    session_id: str
    transcript: str = ""
    offset: int = 0
    inode: int = 0
    project: str = ""
    cwd: str = ""
    updated: float = 0.0
    private_open: bool = False  # a <private> block a prompt opened is still open at offset


@dataclass
class Report:
    session_id: str
    event: str
    project: str = ""
    lines: int = 0
    chunks: int = 0
    calls_ok: int = 0
    skipped_chunks: int = 0
    added: int = 0
    superseded: int = 0
    refreshed: int = 0
    stopped: str = ""  # why the run stopped early (no key, cap, model error)
    note: str = ""  # why nothing ran (no transcript, below threshold...)
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    @property
    def extracted(self) -> bool:
        return self.calls_ok > 0

    def as_dict(self) -> dict:
        return {
            "session_id": self.session_id,
            "event": self.event,
            "project": self.project,
            "lines": self.lines,
            "chunks": self.chunks,
            "calls_ok": self.calls_ok,
            "skipped_chunks": self.skipped_chunks,
            "added": self.added,
            "superseded": self.superseded,
            "refreshed": self.refreshed,
            "stopped": self.stopped,
            "note": self.note,
        }


# cursors -------------------------------------------------------------------------------
def _safe(session_id: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", session_id or "") and session_id not in (".", ".."):
        return session_id
    return "h-" + hashlib.sha1((session_id or "").encode("utf-8", "replace")).hexdigest()[:24]


def cursor_path(session_id: str) -> Path:
    return memory_home() / "cursors" / f"{_safe(session_id)}.json"


def load_cursor(session_id: str) -> Cursor:
    d = read_json(cursor_path(session_id), {}, dict)
    try:
        return Cursor(
            session_id=session_id,
            transcript=str(d.get("transcript") or ""),
            offset=int(d.get("offset") or 0),
            inode=int(d.get("inode") or 0),
            project=str(d.get("project") or ""),
            cwd=str(d.get("cwd") or ""),
            updated=float(d.get("updated") or 0.0),
            private_open=bool(d.get("private_open")),
        )
    except (ValueError, TypeError):
        return Cursor(session_id=session_id)


def save_cursor(c: Cursor) -> None:
    c.updated = time.time()
    paths.atomic_write(
        cursor_path(c.session_id),
        json.dumps(
            {
                "session_id": c.session_id,
                "transcript": c.transcript,
                "offset": c.offset,
                "inode": c.inode,
                "private_open": c.private_open,
                "project": c.project,
                "cwd": c.cwd,
                "updated": c.updated,
            }
        ),
    )


def find_transcript(session_id: str, hint: str | None = None) -> Path | None:
    """The session's main transcript: the hook's ``transcript_path``, else a search of
    Claude Code's transcript root."""
    if hint:
        p = Path(hint).expanduser()
        if p.is_file():
            return p
    if not session_id or "/" in session_id:
        return None
    root = paths.claude_config_dir() / "projects"
    try:
        for d in root.iterdir():
            cand = d / f"{session_id}.jsonl"
            if cand.is_file():
                return cand
    except OSError:
        pass
    return None


# rendering -------------------------------------------------------------------------------
def render(m, root: str = "") -> str | None:
    """One parsed message as summary line(s), or None for what the summary leaves out."""
    text = m.text or ""
    if root and root != "/":
        text = text.replace(root.rstrip("/") + "/", "")
    text = text.strip()
    if not text:
        return None
    if m.role == "user":
        return "USER: " + cut(text.strip(), MESSAGE_CHARS)
    if m.role == "assistant":
        return "CLAUDE: " + cut(text.strip(), MESSAGE_CHARS)
    if m.role == "summary":
        return "SUMMARY: " + cut(text.strip(), MESSAGE_CHARS)
    if m.role == "tool_use":
        out = []
        for line in text.split("\n"):
            name, sep, rest = line.partition(": ")
            if sep and name in m.tools:
                out.append(f"TOOL [{name}]: {cut(rest.strip(), TOOL_CHARS)}")
            elif line.strip() in m.tools:
                out.append(f"TOOL [{line.strip()}]")
        if not out:
            out = [f"TOOL [{m.tools[0] if m.tools else 'tool'}]: {cut(text.strip(), TOOL_CHARS)}"]
        return "\n".join(out)
    return None  # tool results: too long, and what matters shows up in Claude's reply


def read_new(
    path: Path, offset: int, root_hint: str = "", private_open: bool = False, carry: dict[int, bool] | None = None
) -> tuple[list[Entry], int, str]:
    """Summary entries of the lines after ``offset``; (entries, new offset, a cwd seen).
    ``private_open``: a ``<private>`` block was open at ``offset``; ``carry`` is filled with
    whether one is open after each line (by its end offset), for the cursor."""
    from indexer import sources
    from indexer.archive import Tombstones
    from indexer.ledger import Gate, admit

    src = sources.source_of(path)  # Claude Code's transcript, or another agent's session (indexer.sources)
    ctx = src.context(path)
    ctx.private_open = private_open
    entries: list[Entry] = []
    end = offset
    cwd = ""
    root = root_hint
    gate, tombstones = Gate(), Tombstones(paths.archive_dir() / "forgotten.json")
    for batch, pos in src.read(path, offset, ctx, Counter(), max_bytes=1):
        if carry is not None:
            carry[pos] = ctx.private_open
        keep, _ = admit(batch, gate, tombstones)  # excluded, paused, switched off, forgotten: no memories
        for m in (batch[i] for i in keep):
            if not cwd and m.cwd:
                cwd = m.cwd
                if not root:
                    root = m.project or m.cwd
            text = render(m, root)
            if text:
                entries.append(Entry(text, pos, m))
        end = pos
    return entries, end, cwd


def chunk(
    entries: list[Entry], start_offset: int, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS
) -> list[Chunk]:
    """Split the summary into windows of at most ``size`` characters (cut at a line end when
    one is in the second half), each starting ``overlap`` characters before the last one ended."""
    if not entries:
        return []
    text = ""
    bounds: list[tuple[int, int]] = []  # (char end, byte offset) per entry
    for e in entries:
        if text:
            text += "\n"
        text += e.text
        bounds.append((len(text), e.end))
    out: list[Chunk] = []
    start, n = 0, len(text)
    while start < n:
        end = min(start + size, n)
        if end < n:
            at = text.rfind("\n", start + size // 2, end)
            if at > start:
                end = at
        cursor = start_offset
        for char_end, byte_end in bounds:
            if char_end <= end:
                cursor = byte_end
            else:
                break
        out.append(Chunk(text[start:end], cursor))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        nl = text.find("\n", nxt, end)
        start = nl + 1 if nl != -1 else nxt
    if out:
        out[-1].end = entries[-1].end
    return out


# the model -----------------------------------------------------------------------------
def memory_settings(cfg: dict | None = None):
    """The ``memory`` section as a ``MemorySettings`` (``recall.core.settings``)."""
    from recall.core.settings import MemorySettings

    return MemorySettings.from_config(cfg or config.load())


def build_prompt(existing: list[store.Memory], text: str, part: int, parts: int) -> str:
    lines = ["EXISTING MEMORIES (do not repeat these; supersede them when they change):"]
    if existing:
        lines += [f"- [{m.type}] {m.content}" for m in existing]
    else:
        lines.append("(none yet)")
    label = f" (part {part} of {parts})" if parts > 1 else ""
    lines += ["", f"SESSION EXCERPT{label}:", text, "", "Answer with the JSON object only."]
    return "\n".join(lines)


def ask_model(existing: list[store.Memory], text: str, *, part: int = 1, parts: int = 1, cfg: dict | None = None):
    """One chunk -> validated memories. Malformed answers are retried once, then raise
    ``model.BadAnswer``; NoKey / CapReached / ModelError pass through."""
    from recall.memory.model import BadAnswer, parse_extraction

    settings = memory_settings(cfg)
    timeout = settings.timeout_seconds
    cap = settings.daily_call_cap
    prompt = build_prompt(existing, text, part, parts)
    problem = None
    for attempt in (1, 2):
        reply = backend.complete(
            SYSTEM,
            prompt,
            purpose="extraction",
            max_tokens=EXTRACT_MAX_TOKENS,
            timeout=timeout,
            cap=int(cap) if cap is not None else None,
        )
        try:
            return parse_extraction(reply).memories
        except BadAnswer as exc:
            problem = exc
            log.get("memory").warning("extraction answer malformed (attempt %d): %s", attempt, exc)
    raise BadAnswer(str(problem))


def _existing(project: str, now: float) -> list[store.Memory]:
    try:
        state = store.load(project)
    except store.StateError:
        return []
    mems = sorted(state.active(), key=lambda m: store.rank(m, now), reverse=True)
    return mems[:EXISTING_LIMIT]


# one session -----------------------------------------------------------------------------
def process(
    session_id: str,
    event: str,
    transcript_path: str | None = None,
    cwd: str | None = None,
    *,
    cfg: dict | None = None,
    now: float | None = None,
) -> Report:
    """Extract the new part of one session's transcript into its project's state.json."""
    cfg = cfg or config.load()
    report = Report(session_id=session_id, event=event)
    logger = log.get("memory")
    found = _new_entries(session_id, transcript_path, cwd, report)
    if found is None:
        return report
    cur, entries, carry = found
    if not _worth_a_call(cur.project, event, len(entries), cfg, report, logger):
        return report
    _extract_chunks(cur, entries, carry, report, cfg, (lambda: now) if now is not None else time.time, logger)
    logger.info(
        "session %s (%s): %d lines, %d chunks, %d calls, +%d new, %d superseded, %d refreshed%s",
        session_id,
        event,
        report.lines,
        report.chunks,
        report.calls_ok,
        report.added,
        report.superseded,
        report.refreshed,
        f", stopped: {report.stopped}" if report.stopped else "",
    )
    return report


def _new_entries(session_id: str, transcript_path: str | None, cwd: str | None, report: Report):
    """The session's cursor (its project set), the transcript entries after it and the private
    marks at their ends, or None with ``report.note`` saying why there is nothing to extract."""
    from indexer.project import canonical_project

    path = find_transcript(session_id, transcript_path)
    if path is None:
        report.note = "no transcript"
        return None
    cur = load_cursor(session_id)
    try:
        st = path.stat()
    except OSError:
        report.note = "no transcript"
        return None
    if cur.transcript != str(path) or cur.inode != st.st_ino or st.st_size < cur.offset:
        cur = Cursor(session_id=session_id, transcript=str(path), inode=st.st_ino, cwd=cur.cwd, project=cur.project)
    root_hint = canonical_project(os.path.abspath(cwd)) if cwd else cur.project
    carry: dict[int, bool] = {}
    entries, end, seen_cwd = read_new(path, cur.offset, root_hint, cur.private_open, carry)
    project = root_hint or (canonical_project(seen_cwd) if seen_cwd else "")
    report.project, report.lines = project, len(entries)
    if not project:
        report.note = "no project (no cwd in the hook or the transcript)"
        return None
    cur.project, cur.cwd = project, cwd or seen_cwd or cur.cwd
    if not entries:
        if end != cur.offset:
            cur.offset, cur.private_open = end, carry.get(end, cur.private_open)  # only lines the summary leaves out
            save_cursor(cur)
        report.note = "nothing new"
        return None
    return cur, entries, carry


def _worth_a_call(project: str, event: str, lines: int, cfg: dict, report: Report, logger) -> bool:
    """Enough new lines for this event, a model backend, and a state.json we can write to (no
    model call wasted on it); else why not, in ``report``."""
    if lines < MIN_LINES.get(event, 1):
        report.note = f"{lines} new lines, {event} needs {MIN_LINES.get(event, 1)}"
        return False
    from recall.llm import backend

    if not backend.available(cfg):
        report.stopped = "no key"
        return False
    try:
        store.load(project)
    except store.StateError as exc:
        logger.warning("session %s: not extracted: %s", report.session_id, exc)
        report.stopped = str(exc)
        return False
    return True


def _extract_chunks(cur: Cursor, entries: list, carry: dict, report: Report, cfg: dict, now_fn, logger) -> None:
    """Ask the model about each chunk of the new entries and store its answer, the cursor saved
    after each; stops at the first model failure or refusal (``report.stopped``)."""
    from recall.memory.model import BadAnswer

    session_id, project = cur.session_id, cur.project
    chunks = chunk(entries, cur.offset)
    report.chunks = len(chunks)
    for i, ch in enumerate(chunks, 1):
        existing = _existing(project, now_fn())
        try:
            items = ask_model(existing, ch.text, part=i, parts=len(chunks), cfg=cfg)
        except BadAnswer as exc:
            logger.warning(
                "session %s: chunk %d/%d skipped, the model's answer was malformed twice (%s)",
                session_id,
                i,
                len(chunks),
                exc,
            )
            report.skipped_chunks += 1
            cur.offset, cur.private_open = ch.end, carry.get(ch.end, cur.private_open)
            save_cursor(cur)
            continue
        except NoKey:
            report.stopped = "no key"
            break
        except CapReached as exc:
            logger.warning("session %s: extraction stopped: %s", session_id, exc)
            report.stopped = "daily cap reached"
            break
        except ModelError as exc:
            logger.warning(
                "session %s: extraction stopped at chunk %d/%d, will resume there: %s", session_id, i, len(chunks), exc
            )
            report.stopped = f"model error: {exc}"
            break
        report.calls_ok += 1
        why = _store_items(
            project, session_id, items, [e.message for e in entries if e.end <= ch.end], now_fn(), report
        )
        if why:
            logger.info("session %s: extraction not written: %s", session_id, why)
            report.stopped = why
            break
        cur.offset, cur.private_open = ch.end, carry.get(ch.end, cur.private_open)
        save_cursor(cur)


def _store_items(project: str, session_id: str, items: list, read: list, t: float, report: Report) -> str:
    """Add the model's items to the project's state (counted in ``report``); "" when done, or
    why not (a forget of what was ``read``, checked under the lock `recall forget` takes too)."""
    with store.transaction(project) as state:
        why = refused(session_id, read)
        if why:
            return why
        for item in items:
            out = store.add_memory(
                state,
                item.type,
                item.content,
                item.tags,
                session_id=session_id,
                supersedes_content=item.supersedes_content,
                now=t,
            )
            if out.action in ("added", "superseded", "refreshed"):
                setattr(report, out.action, getattr(report, out.action) + 1)
        state.extractions += 1
        state.last_extraction = t
        state.dirty = True
        report.changed |= state.changed
        report.removed |= state.removed
    report.changed -= report.removed
    return ""
