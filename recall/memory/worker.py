"""The memory worker: drains the capture queue (see ``recall.memory.queue``).

Run detached by a hook when the service is down (``python -m recall.memory.worker``), or as
a thread inside the service (``recall.service.ops.memory``). Per session it coalesces the queued
triggers (the strongest event wins: session-end > pre-compact > stop) and waits for the
session to go idle before a Stop is acted on: ``memory.idle_seconds`` (default 60) without
the transcript changing. PreCompact and SessionEnd run at once. Then: extraction
(``extract.process``), consolidation when due, the briefing file, the index documents, and
folding the access log into accessCount.

The last run is summarised in ``$RECALL_HOME/memory/status.json`` for ``recall status``.
"""

from __future__ import annotations

import json
import os
import threading
import time

from recall.core import config, log, paths
from recall.core.jsonio import read_json
from recall.memory import memory_home
from recall.memory import queue as q

POLL_SECONDS = 5.0


def status_path():
    return memory_home() / "status.json"


def write_status(update: dict) -> None:
    data = read_status()
    data.update(update)
    try:
        paths.atomic_write(status_path(), json.dumps(data, ensure_ascii=False))
    except OSError:
        pass


def read_status() -> dict:
    return read_json(status_path(), {}, dict)


def idle_seconds(cfg: dict) -> float:
    from recall.core.settings import MemorySettings

    return MemorySettings.from_config(cfg).idle_seconds


def coalesce(items) -> dict[str, dict]:
    """Queued triggers per session: strongest event, latest path/cwd, their files, and the
    retry state of work that failed (most attempts, latest retry time)."""
    groups: dict[str, dict] = {}
    for path, rec in items:
        if rec is None:
            continue
        sid = str(rec["session_id"])
        g = groups.setdefault(
            sid,
            {
                "session_id": sid,
                "event": "stop",
                "transcript_path": "",
                "cwd": "",
                "time": 0.0,
                "files": [],
                "attempts": 0,
                "retry_at": 0.0,
                "error": "",
            },
        )
        try:
            if int(rec.get("attempts") or 0) >= g["attempts"]:
                g["attempts"], g["error"] = int(rec.get("attempts") or 0), str(rec.get("error") or "")
            g["retry_at"] = max(g["retry_at"], float(rec.get("retry_at") or 0.0))
        except (TypeError, ValueError):
            pass
        g["files"].append(path)
        ev = rec.get("event") if rec.get("event") in q.PRIORITY else "stop"
        if q.PRIORITY[ev] > q.PRIORITY[g["event"]]:
            g["event"] = ev
        for k in ("transcript_path", "cwd"):
            if rec.get(k):
                g[k] = str(rec[k])
        try:
            g["time"] = max(g["time"], float(rec.get("time") or 0.0))
        except (TypeError, ValueError):
            pass
    return groups


def due_at(group: dict, cfg: dict) -> float:
    """When a session's triggers should run: at once, once a Stop's session went idle, and
    not before the next try of work that failed."""
    return max(_due_at(group, cfg), float(group.get("retry_at") or 0.0))


RETRY_FIRST, RETRY_MAX = 60.0, 6 * 3600.0  # seconds to the next try of failed work, doubling
RETRY_WAIT_WITHIN = 120.0  # a worker that waits stays for retries due this soon; later ones are the next worker's


def retry_delay(attempts: int, error: str, now: float | None = None) -> float:
    """Seconds until the next try: the daily cap waits for midnight UTC, the rest back off."""
    now = time.time() if now is None else now
    if "cap" in error and "daily" in error:
        return 86400.0 - now % 86400.0 + 60.0
    return min(RETRY_MAX, RETRY_FIRST * (2 ** max(0, attempts - 1)))


def keep_for_retry(group: dict, error: str) -> None:
    """Failed work stays queued: one trigger for the session carrying its attempts and the
    time of its next try (``recall status`` shows it); never dropped."""
    attempts = int(group.get("attempts") or 0) + 1
    q.enqueue(
        group["event"],
        group["session_id"],
        group["transcript_path"],
        group["cwd"],
        now=group["time"],
        retry={"attempts": attempts, "retry_at": time.time() + retry_delay(attempts, error), "error": error},
    )


def retrying() -> list[dict]:
    """Queued work waiting for its next try after an error: [{session_id, attempts, retry_at, error}]."""
    return [
        {"session_id": g["session_id"], "attempts": g["attempts"], "retry_at": g["retry_at"], "error": g["error"]}
        for g in coalesce(q.pending()).values()
        if g["attempts"]
    ]


def _due_at(group: dict, cfg: dict) -> float:
    if group["event"] != "stop":
        return 0.0
    idle = idle_seconds(cfg)
    if idle <= 0:
        return 0.0
    last = group["time"]
    from recall.memory.extract import find_transcript

    path = find_transcript(group["session_id"], group["transcript_path"])
    if path is not None:
        try:
            last = max(last, path.stat().st_mtime)
        except OSError:
            pass
    return last + idle


def run_session(group: dict, cfg: dict) -> dict:
    """Extract one session, consolidate if due, refresh the briefing and the index."""
    from recall.memory import briefing, consolidate, extract, index_docs, store

    logger = log.get("memory")
    report = extract.process(
        group["session_id"], group["event"], group["transcript_path"] or None, group["cwd"] or None, cfg=cfg
    )
    out = report.as_dict()
    if group["event"] == "session-end":
        out["summary"] = summarize_session(group, cfg)
    project = report.project
    if not project or not store.state_path(project).exists():
        return out
    changed, removed = set(report.changed), set(report.removed)
    try:
        state = store.load(project)
        if not report.stopped and consolidate.due(state, group["event"]):
            res = consolidate.consolidate(project, event=group["event"], cfg=cfg)
            out["consolidation"] = res.as_dict()
            changed |= res.changed
            removed |= res.removed
            changed -= removed
        if changed or removed or group["event"] == "session-end":
            briefing.write_briefing(project, cfg=cfg)
        out["index"] = index_docs.sync(project, changed, removed)
    except store.StateError as exc:
        logger.warning("memory of %s not updated: %s", project, exc)
        out["problem"] = str(exc)
    return out


def summarize_session(group: dict, cfg: dict) -> dict:
    """The session's summary, once it ended (recall.memory.summarize); never raises."""
    try:
        from recall.memory import summarize

        return summarize.summarize(group["session_id"], group["transcript_path"] or None, group["cwd"] or None, cfg=cfg)
    except Exception as exc:  # noqa: BLE001 - a summary must not stop the memory queue
        log.get("memory").exception("summary of session %s failed", group["session_id"])
        return {"status": "failed", "problem": f"{type(exc).__name__}: {exc}"}


def retry_summaries(cfg: dict) -> list[dict]:
    try:
        from recall.memory import summarize

        return summarize.retry_pending(cfg)
    except Exception:  # noqa: BLE001
        log.get("memory").exception("retrying pending session summaries failed")
        return []


def fold(cfg: dict) -> dict[str, int]:
    """Fold the access log; rewrite the briefings whose ranking it changed."""
    from recall.memory import briefing, store

    folded = store.fold_access()
    for project in folded:
        try:
            briefing.write_briefing(project, cfg=cfg)
        except (OSError, store.StateError) as exc:
            log.get("memory").warning("briefing of %s not refreshed: %s", project, exc)
    return folded


def drain(*, wait: bool = True, stop: threading.Event | None = None, cfg: dict | None = None) -> list[dict]:
    """Hold the worker lock and process the queue. With ``wait``, stay until every queued
    trigger ran (sleeping until Stop sessions go idle); without, run what is due now and
    leave the rest. Returns one report per session run; [] when another worker holds the lock."""
    fd = q.try_lock()
    if fd is None:
        return []
    logger = log.get("memory")
    reports: list[dict] = []
    try:
        while not (stop is not None and stop.is_set()):
            cfg = config.load()
            items = q.pending()
            for path, rec in items:
                if rec is None:  # unreadable trigger: drop it
                    _unlink(path)
            groups = coalesce(items)
            if not groups:
                break
            now = time.time()
            next_due = None
            ran = False
            for sid, g in groups.items():
                when = due_at(g, cfg)
                if when > now:
                    if g["attempts"] and when - now > RETRY_WAIT_WITHIN:
                        continue  # a retry hours away: the next worker's (the service's wakes every 30 s)
                    next_due = when if next_due is None else min(next_due, when)
                    continue
                failed = ""
                try:
                    rep = run_session(g, cfg)
                    reports.append(rep)
                    failed = rep.get("stopped") or rep.get("problem") or ""
                    write_status({"last_run": time.time(), "last_report": rep, "last_problem": failed})
                except BaseException as exc:  # noqa: BLE001 - one bad session must not stop the queue
                    failed = f"{type(exc).__name__}: {exc}"
                    logger.exception("memory capture of session %s failed", sid)
                    write_status({"last_run": time.time(), "last_problem": failed})
                    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: keep it, then go
                        keep_for_retry(g, failed)
                        for path in g["files"]:
                            _unlink(path)
                        raise
                if failed:  # an error (a model down, an import broken by an upgrade): tried again later
                    keep_for_retry(g, failed)
                    logger.warning("memory capture of session %s kept for another try: %s", sid, failed)
                for path in g["files"]:
                    _unlink(path)
                ran = True
            if ran:
                continue
            if not wait or next_due is None:
                break
            delay = min(max(0.05, next_due - time.time()), POLL_SECONDS)
            if stop is not None:
                stop.wait(delay)
            else:
                time.sleep(delay)
        if not (stop is not None and stop.is_set()):
            retry_summaries(cfg or config.load())
        try:
            fold(cfg or config.load())
        except Exception:  # noqa: BLE001
            logger.exception("folding memory access counts failed")
    finally:
        q.release(fd)
    return reports


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _worth_waiting(cfg: dict) -> bool:
    now = time.time()
    return any(not (g["attempts"] and due_at(g, cfg) - now > RETRY_WAIT_WITHIN) for g in coalesce(q.pending()).values())


def _any_due(cfg: dict) -> bool:
    now = time.time()
    return any(due_at(g, cfg) <= now for g in coalesce(q.pending()).values())


def has_key(cfg: dict | None = None) -> bool:
    """A model backend can run here (an API key, or Claude Code's own login)."""
    from recall.llm import backend

    return backend.available(cfg)


def run(*, wait: bool = True, stop: threading.Event | None = None) -> list[dict]:
    """Drain until the queue is empty, re-checking after each release of the lock (a hook
    may have queued a trigger while we held it and, seeing the lock taken, started nobody).

    A process without an API key (a service started where ANTHROPIC_API_KEY is not set)
    never takes the lock and leaves the queue alone: the hook, which has the key, then
    starts a detached worker that does. It still folds access counts."""
    reports: list[dict] = []
    if not has_key():
        try:
            fold(config.load())
        except Exception:  # noqa: BLE001
            log.get("memory").exception("folding memory access counts failed")
        return reports
    while True:
        reports += drain(wait=wait, stop=stop)
        if stop is not None and stop.is_set():
            break
        if not q.pending():
            break
        if not (_any_due(config.load()) if not wait else _worth_waiting(config.load())):
            break  # nothing due now (or soon, when waiting): the next worker takes the rest
        if not q.lock_free():
            break  # the worker holding it now will see the queue
    return reports


def main() -> int:
    log.setup()
    try:
        run(wait=True)
    except Exception:  # noqa: BLE001 - detached: nobody to tell but the log
        log.get("memory").exception("memory worker failed")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
