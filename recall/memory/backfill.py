"""``recall memories --backfill --since 30d``: memories and summaries for history from before
recall was installed (or from while it had no model backend).

The index holds months of sessions, but memories and summaries are only made when a session
goes idle or ends with recall's hooks in place. The backfill makes them for past sessions,
bounded and visible:

* ``plan()`` lists the sessions of the window that still need extraction (new lines past
  their extraction cursor, read from the live transcript) or a summary (from the transcript,
  or recall's archive once Claude Code deleted it), and estimates the model calls and their
  cost (at the configured model's API price) before anything is called;
* sessions still active (their transcript changed within ``memory.idle_seconds``) are left
  to the hooks, like every Stop;
* ``run()`` works newest first under the memory worker's lock (never two extractions of one
  session at once) through ``recall.memory.worker.run_session``, the very path a hook's
  trigger takes; it stops at the daily cap (``memory.daily_call_cap``, every backend's calls
  counted) or the first model failure, and says how far it got;
* it is resumable: each session's progress is its extraction cursor and its summary, so the
  same command run again skips what is done.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

from recall.core import config
from recall.core.settings import MemorySettings

SYSTEM_TOKENS = 1_500  # the extraction prompt's instructions and the existing memories shown with each chunk
EXTRACT_OUT_TOKENS = 300  # a typical answer: a few memories as JSON
SUMMARY_OUT_TOKENS = 200


@dataclass
class Item:
    session_id: str
    project: str
    ended: float
    transcript: str  # "" when Claude Code deleted it (summary from the archive only)
    extract_calls: int  # 0: nothing new to extract
    summary: bool  # a summary to write
    input_chars: int

    @property
    def calls(self) -> int:
        return self.extract_calls + (1 if self.summary else 0)


def plan(since: float, project: str | None = None, cfg: dict | None = None, now: float | None = None) -> dict:
    """What a backfill of the sessions active after ``since`` would do (no model call)."""
    from indexer.state import list_sessions
    from recall.llm.usage import calls_today as _calls_today
    from recall.memory import extract, summaries, summarize, worker

    cfg = cfg if cfg is not None else config.load()
    now = time.time() if now is None else now
    idle = worker.idle_seconds(cfg)
    items: list[Item] = []
    active = 0
    for info in list_sessions(project=project, since=since):
        sid = info.session_id
        path = extract.find_transcript(sid)
        if path is not None:
            try:
                if path.stat().st_mtime > now - idle:
                    active += 1
                    continue
            except OSError:
                path = None
        calls, chars = 0, 0
        if path is not None:
            cur = extract.load_cursor(sid)
            start = cur.offset if cur.transcript == str(path) and cur.offset <= path.stat().st_size else 0
            entries, _end, _cwd = extract.read_new(
                path, start, info.project or "", cur.private_open if start else False
            )
            if len(entries) >= extract.MIN_LINES["session-end"]:
                chars = sum(len(e.text) + 1 for e in entries)
                step = extract.CHUNK_CHARS - extract.OVERLAP_CHARS
                calls = max(1, math.ceil(max(0, chars - extract.OVERLAP_CHARS) / step))
        want_summary = summaries.get(sid) is None
        if want_summary:
            lines, _ = summarize.session_lines(sid, str(path) if path else None, info.project or None)
            want_summary = bool(lines)
            if want_summary and not chars:
                chars = min(sum(len(s) + 1 for s in lines), summarize.MAX_INPUT_CHARS)
        if calls or want_summary:
            items.append(
                Item(
                    sid,
                    info.project or "",
                    info.ended or info.started or 0.0,
                    str(path) if path else "",
                    calls,
                    want_summary,
                    chars,
                )
            )
    model = config.model(cfg)
    pin, pout = config.price_per_mtok(model)
    tokens_in = sum(it.input_chars // 4 + it.calls * SYSTEM_TOKENS for it in items)
    tokens_out = sum(it.extract_calls * EXTRACT_OUT_TOKENS + (SUMMARY_OUT_TOKENS if it.summary else 0) for it in items)
    cap = MemorySettings.from_config(cfg).daily_call_cap
    calls_today = _calls_today()
    return {
        "since": since,
        "items": items,
        "sessions": len(items),
        "calls": sum(it.calls for it in items),
        "extract_calls": sum(it.extract_calls for it in items),
        "summaries": sum(1 for it in items if it.summary),
        "active": active,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "model": model,
        "cost": round((tokens_in * pin + tokens_out * pout) / 1e6, 4),
        "daily_call_cap": cap,
        "calls_today": calls_today,
        "cap_left": None if cap is None else max(0, int(cap) - calls_today),
    }


def plan_json(p: dict) -> dict:
    return {**{k: v for k, v in p.items() if k != "items"}, "items": [asdict(it) for it in p["items"]]}


def run(p: dict, cfg: dict | None = None, on_item=None) -> dict:
    """Extract and summarize the planned sessions, newest first. ``on_item(i, item, report)``
    after each. Returns {"done", "total", "memories", "summaries", "stopped"}."""
    from recall.core.errors import RecallError
    from recall.memory import queue as q
    from recall.memory import worker

    cfg = cfg if cfg is not None else config.load()
    fd = None
    deadline = time.monotonic() + 60.0
    while fd is None:
        fd = q.try_lock()
        if fd is None:
            if time.monotonic() >= deadline:
                raise RecallError(
                    f"The memory worker (pid {q.holder() or '?'}) is busy: run the backfill again "
                    "in a minute (it resumes where it stopped)."
                )
            time.sleep(0.5)
    out = {"done": 0, "total": len(p["items"]), "memories": 0, "summaries": 0, "stopped": ""}
    try:
        for i, it in enumerate(p["items"], 1):
            group = {
                "session_id": it.session_id,
                "event": "session-end",
                "transcript_path": it.transcript,
                "cwd": it.project,
                "files": [],
            }
            rep = worker.run_session(group, cfg)
            out["memories"] += int(rep.get("added") or 0) + int(rep.get("superseded") or 0)
            summary = rep.get("summary") or {}
            if summary.get("status") == "written":
                out["summaries"] += 1
            stopped = (
                rep.get("stopped")
                or rep.get("problem")
                or (summary.get("problem") if summary.get("status") == "pending" else "")
            )
            if on_item is not None:
                on_item(i, it, rep)
            if stopped:
                out["stopped"] = stopped
                break
            out["done"] += 1
    finally:
        q.release(fd)
    return out
