"""What each page of ``recall ui`` shows, as plain data read with the same functions the CLI
calls (``recall log``, ``recall search``, ``recall sessions``/``show``, ``recall memories``,
``recall status``): the same gate (exclusions, the pause, ``recall: off``, forgotten), the same
redacted archive, the same memory store. Nothing here renders; ``recall.ui.pages`` does.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime

from recall.core import paths
from recall.core.errors import UsageError

KINDS = {"": None, "message": ("message",), "memory": ("memory",), "summary": ("session",), "team": ("team",)}
SEARCH_LIMIT = 20


# prompts (recall log) ------------------------------------------------------------------------
def _num(value, default=0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def decision_path(rec: dict) -> str:
    """Which path decided what went in: the record's ``path`` (``model`` or ``raw``), else the
    outcome's (a record from before the field was written): ``InjectionRecord.decided_by``."""
    from recall.prompt.injections import InjectionRecord

    return InjectionRecord.of(rec).decided_by


def _hit(h) -> dict | None:
    """A hit as the log holds it (``recall.prompt.context._traced``): its session, score,
    confidence and, for a pick by meaning, its similarity."""
    if not isinstance(h, dict):
        return None
    conf, sim = h.get("confidence"), h.get("similarity")
    return {
        "session": str(h.get("session") or ""),
        "confidence": _num(conf, None) if conf is not None else None,
        "similarity": _num(sim, None) if sim is not None else None,
        "score": _num(h.get("score")),
    }


def _gate(rec) -> dict:
    """The gate a record's path applied (``rec``: an ``InjectionRecord``) and its best candidate."""
    value = rec.gate.get("value")
    return {
        "setting": str(rec.gate.get("setting") or ""),
        "value": _num(value, None) if value is not None else None,
        "best": rec.best,
    }


_log_lock = threading.Lock()
_log_files: dict[str, tuple] = {}  # path -> (inode, bytes read, slim records)
SLIM = ("t", "outcome", "why", "tokens", "used", "wrong", "project", "session", "way", "held_ms")
# (what counts, charts and the feed read of a record: fields of ``InjectionRecord``, and ``used``,
# the verdict a reader adds)


def _slim(rec: dict, path: str, offset: int, length: int) -> dict:
    """What the page keeps of a record between reads: the fields counts and charts need, whether
    text was injected, and where the whole line is (the Prompts page reads its newest ones
    whole again): a full log's text and hits are not held in the service's memory."""
    out = {k: rec[k] for k in SLIM if k in rec}
    out["text"] = bool(rec.get("text"))
    out["_at"] = (path, offset, length)
    return out


def _log_file(path: str) -> list[dict]:
    """One file of the injection log, parsed once: the hook only appends, so a file that grew
    is read from where the last read stopped; one replaced (rotated, rewritten by a forget or a
    mark) is read whole again."""
    from recall.core.jsonio import loads_object

    try:
        st = os.stat(path)
    except OSError:
        _log_files.pop(path, None)
        return []
    ino, done, records = _log_files.get(path, (None, 0, []))
    if ino != st.st_ino or st.st_size < done:
        done, records = 0, []
    if st.st_size > done:
        try:
            with open(path, "rb") as fh:
                fh.seek(done)
                data = fh.read(st.st_size - done)
        except OSError:
            return records
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
        records = list(records)
        pos = 0
        while pos < end:
            nl = data.index(b"\n", pos)
            line = data[pos:nl]
            rec = loads_object(line) if line.strip() else None
            if rec is not None:
                records.append(_slim(rec, path, done + pos, nl - pos))
            pos = nl + 1
        done += end
    _log_files[path] = (st.st_ino, done, records)
    return records


def log_records() -> list[dict]:
    """The injection log's records (``recall.prompt.injections.read()``), oldest first, slim
    (``_slim``), from a cache kept fresh by stat calls: the page reads the log on every prompt,
    and a full log holds thousands of records."""
    from recall.prompt import injections

    global _log_sorted
    path = str(injections.log_path())
    with _log_lock:
        older, newer = _log_file(f"{path}.1"), _log_file(path)
        stamp = (path, _log_files.get(f"{path}.1", ())[:2], _log_files.get(path, ())[:2])
        if _log_sorted[0] != stamp:
            _log_sorted = (stamp, sorted(older + newer, key=lambda r: _num(r.get("t"))))
        return _log_sorted[1]


_log_sorted: tuple = (None, [])


def _whole(slim: dict) -> dict | None:
    """The whole record a slim one stands for, read again from its line (None when the file
    changed under it: the next read of the log sees the change)."""
    from recall.core.jsonio import loads_object

    path, offset, length = slim["_at"]
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            rec = loads_object(fh.read(length))
    except OSError:
        return None
    return rec if rec is not None and rec.get("t") == slim.get("t") else None


_verdicts_lock = threading.Lock()
_verdicts: dict[tuple, tuple] = {}  # (t, project, session, text) -> (used, why): final verdicts only


def judge_used(records: list[dict], fresh: bool = True, cache: dict | None = None) -> None:
    """Whether the next reply used each injected record, as ``recall log`` says it
    (``recall.prompt.used``: ``used`` True/False/None, ``used_why``), for the records on screen
    only. A final verdict (``used.final``: a yes, or a no once the reply is complete) is kept
    and never computed again; the others are computed when ``fresh`` (one read of each
    conversation's archive, ``cache``: shared with ``read_asked``), else left out (the page's
    first paint: its fragment fills them)."""
    from recall.prompt import used

    todo = []
    for rec in records:
        if not used.injected(rec):
            continue
        key = (rec.get("t"), *used.conversation(rec), hash(str(rec.get("text"))))  # (a rewritten record: anew)
        with _verdicts_lock:
            known = _verdicts.get(key)
        if known is not None:
            rec["used"], rec["used_why"] = known
        elif fresh:
            todo.append((key, rec))
    cache = cache if cache is not None else {}
    used.annotate([rec for _key, rec in todo], cache)
    for key, rec in todo:
        if used.final(rec, cache):
            with _verdicts_lock:
                _verdicts[key] = (rec["used"], rec.get("used_why"))


PROMPT_CHARS = 200  # of a prompt's first line shown
_asked_lock = threading.Lock()
# (t, cwd, session) -> (first line, its time, the archive file's inode when it was read)
_asked: dict[tuple, tuple[str, float, int]] = {}
ASKED_KEEP = 4096  # prompts' first lines kept at most (the oldest go first)


def first_line(text: str, limit: int = PROMPT_CHARS) -> str:
    """The first line of ``text`` that holds anything, on one line, cut to ``limit``."""
    from recall.core.text import one_line

    for line in (text or "").splitlines():
        if line.strip():
            return one_line(line, limit)
    return ""


def _archive_inode(cwd: str, session: str) -> int:
    """The inode of the conversation's archive file (the file ``used.read_turns`` reads), 0 when
    there is none: a rewrite (``recall forget``, a redaction) replaces the file, an append keeps it."""
    from indexer.archive_files import session_relpath
    from indexer.project import canonical_project

    try:
        return os.stat(os.path.join(paths.archive_dir(), session_relpath(canonical_project(cwd), session))).st_ino
    except OSError:
        return 0


def _known_asked(key: tuple, gate, everyone: bool) -> tuple[str, bool] | None:
    """(the first line, hidden) of a prompt found before, while its archive file is the one it
    was read from; None otherwise."""
    from indexer.project import canonical_project

    with _asked_lock:
        known = _asked.get(key)
    t, cwd, session = key
    if known is None or _archive_inode(cwd, session) != known[2]:
        return None
    if everyone or not gate.hides(canonical_project(cwd), cwd, session, "", known[1]):
        return known[0], False
    return "", True


def read_asked(records: list[dict], fresh: bool = True, cache: dict | None = None) -> None:
    """Set ``asked`` on each record: the first line of the prompt the hook ran on, read from the
    archive as ``recall stats`` reads it (``recall.prompt.used.turn_at`` of the conversation's
    turns: its user prompt nearest the record's time; the log never stores the prompt), cut to
    ``PROMPT_CHARS``. "" when the archive does not hold it (yet), or when no reader may see it
    (its session switched off by ``recall: off``, its project excluded, a pause, forgotten: then
    ``asked_hidden`` too); None when it was not read: not ``fresh`` (the page's first paint) and
    not found before. A prompt found is kept while its archive file is not rewritten, and the
    gate asked again on every read. ``cache``: each conversation's turns, read once (shared with
    ``judge_used``)."""
    from indexer.ledger import reader_gate
    from recall.prompt import used

    gate = reader_gate().refresh()
    everyone = gate.readers_see_all()
    cache = cache if cache is not None else {}
    for rec in records:
        t = rec.get("t")
        cwd, session = used.conversation(rec)
        if not isinstance(t, (int, float)) or not session or not cwd:
            rec["asked"] = ""
            continue
        key = (t, cwd, session)
        known = _known_asked(key, gate, everyone)
        if known is None and fresh:
            inode = _archive_inode(cwd, session)  # (before the read: a rewrite during it is seen next time)
            try:
                turn = used.turn_at(used.turns_for(rec, cache), float(t))
            except Exception:  # noqa: BLE001 - an unreadable archive: not known
                turn = None
            line = first_line(turn.prompt) if turn is not None else ""
            if line:
                with _asked_lock:
                    _asked[key] = (line, turn.ts, inode)
                    while len(_asked) > ASKED_KEEP:
                        _asked.pop(next(iter(_asked)))
                known = _known_asked(key, gate, everyone)
        if known is None:
            rec["asked"] = "" if fresh else None
        else:
            rec["asked"] = known[0]
            if known[1]:
                rec["asked_hidden"] = True


def prompts(limit: int = 50, fresh: bool = True) -> list[dict]:
    """The injection log newest first, numbered as ``recall log`` numbers them (1 = newest),
    each with the first line of its prompt (``read_asked``) and, for an injection, whether the
    next reply used it (``judge_used``); both read from the archive when ``fresh``."""
    from recall.prompt import used

    records = log_records()[::-1]
    whole = [(n, _whole(slim)) for n, slim in enumerate(records[:limit], 1)]
    shown = [rec for _n, rec in whole if rec is not None]
    cache: dict = {}
    judge_used(shown, fresh, cache)
    read_asked(shown, fresh, cache)
    from recall.prompt.injections import InjectionRecord

    out = []
    for n, rec in whole:
        if rec is None:
            continue
        r = InjectionRecord.of(rec)  # the line, each field of the writer's type
        out.append(
            {
                "n": n,
                "t": r.t,
                "project": r.project,
                "session": r.session,
                "asked": rec.get("asked"),
                "asked_hidden": bool(rec.get("asked_hidden")),
                "outcome": str(r.outcome or "?"),
                "why": r.why,
                "backend": r.backend,
                "via": r.via,
                "path": r.decided_by,
                "way": r.way,
                "held_ms": r.held_ms,
                "gate": _gate(r),
                "text": r.text,
                "tokens": r.tokens,
                "latency_ms": r.latency_ms,
                "hits": [x for x in (_hit(h) for h in r.hits) if x],
                "wrong": r.wrong,
                "injected": r.injected_content,
                "used": rec.get("used"),
                "used_why": str(rec.get("used_why") or ""),
                "used_label": used.label(rec) if "used" in rec else "",
            }
        )
    return out


# search --------------------------------------------------------------------------------------
_searcher_lock = threading.Lock()
_searcher = None
_searcher_at = 0.0


def _warm_searcher():
    """The service's warm searcher inside the service; else one of this process's own, reloaded
    at most once a second (typing must not reopen the index on every key)."""
    global _searcher, _searcher_at
    from recall.service import registry

    if registry.service() is not None:
        return registry.searcher()
    from recall.search.searcher import Searcher

    with _searcher_lock:
        now = time.monotonic()
        if _searcher is None or getattr(_searcher, "index_path", None) != paths.index_dir():
            _searcher = Searcher()  # (another RECALL_HOME: a process's own tests)
            _searcher_at = now
        elif now - _searcher_at > 1.0:
            _searcher.refresh()
            _searcher.gate.refresh()
            _searcher_at = now
        return _searcher


def search(
    text: str, project: str = "", since: str = "", kind: str = "", limit: int = SEARCH_LIMIT, settled: bool = True
) -> list:
    """``recall search TEXT --project P --since S`` (kind: message, memory, summary, team), hits
    with their exchange and stale marks; [] for empty text. The memories shown count as used
    once the typing ``settled`` (not for every keystroke's prefix)."""
    from recall.search.run import run_search

    text = (text or "").strip()
    if not text:
        return []
    if kind not in KINDS:
        raise UsageError(f"kind {kind!r}: use one of message, memory, summary, team.")
    return run_search(
        text,
        limit=limit,
        since=since or None,
        project=project or None,
        doctypes=KINDS[kind],
        searcher=_warm_searcher(),
        strict_project=bool(project),
        cwd=None,
        noted=settled,
    )


def shown_facts() -> list[tuple[str, str, str, float, float, int]]:
    """Every session's facts (``indexer.state.session_facts``: id, project, cwd, started, ended,
    messages), minus the sessions no reader may show: the test of
    ``recall.memory.sessions.hidden``, with the gate refreshed once, not per session."""
    from indexer.ledger import reader_gate
    from indexer.state import session_facts

    rows = session_facts()
    gate = reader_gate().refresh()
    if gate.readers_see_all():
        return rows
    return [r for r in rows if not gate.hides(r[1], r[2], r[0], r[0], r[4] or r[3] or 0.0, "session")]


_projects_cache: tuple = (None, 0.0, [])
PROJECTS_TTL = 2.0  # seconds: the filters of a page and the next keystroke's need not ask state.db again


def projects() -> list[str]:
    """Projects with sessions a reader may show, most recently active first."""
    global _projects_cache
    from indexer.ledger import reader_gate
    from indexer.state import project_activity

    gate = reader_gate().refresh()
    everyone = gate.readers_see_all()
    key = (str(paths.state_db_path()), gate.stamp())
    cached_key, at, cached = _projects_cache
    if cached_key == key and time.monotonic() - at < PROJECTS_TTL:
        return cached
    if everyone:
        out = [p for p, _last in project_activity()]
    else:
        last: dict[str, float] = {}
        for _sid, project, _cwd, started, ended, _n in shown_facts():
            if project:
                last[project] = max(last.get(project, 0.0), ended or 0.0, started or 0.0)
        out = sorted(last, key=lambda p: -last[p])
    _projects_cache = (key, time.monotonic(), out)
    return out


# sessions ------------------------------------------------------------------------------------
def sessions_by_day(project: str = "", since: str = "", limit: int = 100) -> list[tuple[str, str, list[dict]]]:
    """``recall sessions`` grouped: [(project, day, [session rows])], newest first, each row with
    its summary and the files it wrote that changed since (its stale marks)."""
    from indexer.state import SessionInfo
    from recall.memory import sessions
    from recall.search.stale import epoch, session_marks
    from recall.search.timespec import parse_since

    after = parse_since(since) if since else None
    if project and not os.path.isabs(project):
        raise UsageError("project must be an absolute path.")
    root = project or None
    rows = sessions.recent(root, after, limit)
    infos = [
        SessionInfo(r["session_id"], project=r["project"] or "", ended=epoch(r["ended"]), started=epoch(r["started"]))
        for r in rows
    ]
    marks = session_marks(infos, None)
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        r["stale"] = marks.get(r["session_id"], [])
        day = (r["ended"] or r["started"] or "????-??-??")[:10]
        groups.setdefault((r["project"] or "?", day), []).append(r)
    order = sorted(groups, key=lambda k: (k[1], k[0]), reverse=True)
    return [(p, d, groups[(p, d)]) for p, d in order]


TRANSCRIPT_PAGE = 150  # messages of a transcript per page: a long session is paged, not painted whole


def session(ref: str, start: int = 0, count: int = TRANSCRIPT_PAGE) -> dict:
    """``recall show SESSION``: its facts, summary, the files it wrote and what became of them,
    its transcript as recall indexed it (redacted; hidden messages left out; messages
    ``start`` to ``start + count`` of it, and how many there are), the resume command."""
    import shlex

    from indexer.ledger import reader_gate
    from recall.memory import sessions, summaries
    from recall.search.stale import session_files

    info = sessions.resolve(ref)
    rec = summaries.get(info.session_id)
    gate = reader_gate().refresh()
    everyone = gate.readers_see_all()  # nothing kept from readers: no per-message check
    messages = []
    for m in sessions.archived_messages(info.session_id):
        if not everyone and gate.hides(m.project, m.cwd, m.session_id, m.uuid, m.timestamp):
            continue
        if not (m.text or "").strip():
            continue
        messages.append({"uuid": m.uuid, "role": m.role, "t": m.timestamp, "text": m.text, "agent": m.agent})
    where = info.cwd or info.project
    resume = f"claude --resume {info.session_id}"
    if where:
        resume = f"cd {shlex.quote(where)} && {resume}"
    out = sessions.as_dict(info, rec)
    start = max(0, min(int(start), max(0, len(messages) - 1)))
    out.update(
        files=session_files(info, None),
        transcript=messages[start : start + count],
        start=start,
        shown=len(messages),
        resume=resume,
        no_summary=None if rec else sessions.no_summary_line(info),
    )
    return out


# memories ------------------------------------------------------------------------------------
def memory_projects() -> list[str]:
    """Projects a reader may show that have memories (``recall.memory.store.state_path``)."""
    return [p for p in projects() if has_memories(p)]


def has_memories(project: str) -> bool:
    return os.path.isabs(project) and os.path.isfile(os.path.join(project, ".memory", "state.json"))


def memory_project(project: str) -> str:
    """``project`` when it is a folder with recall's memories and not excluded; UsageError
    otherwise (the page reads and writes no other folder: an excluded project's memories are
    neither shown nor changed, as ``recall memories`` refuses them)."""
    import shlex

    from indexer.ledger import excluded_by, exclusions

    if not has_memories(project or ""):
        raise UsageError(f"{project or 'That'} has no recall memories: pick a project from the Memories page's list.")
    pattern = excluded_by(project, project, exclusions())
    if pattern is not None:
        raise UsageError(
            f"{project} is excluded from recall: its memories are neither shown nor changed "
            f"(`recall exclude remove {shlex.quote(pattern)}` takes it back in)."
        )
    return project


def memories(project: str) -> dict:
    """``recall memories --all`` of ``project``: by type, best first, with their confidence now,
    origin, pin and stale marks; and the briefing block as it is in the file Claude Code reads."""
    from recall.memory import TYPES, store
    from recall.memory.stale import mark_text

    if not project:
        return {"project": "", "types": [], "block": None, "block_file": None}
    memory_project(project)
    store.fold_access()
    state = store.load(project)
    store.refresh_stale(project, state)
    now = time.time()
    mems = sorted(
        state.memories, key=lambda m: (TYPES.index(m.type), not m.active, not store.pinned(m), -store.rank(m, now))
    )
    by_type: dict[str, list[dict]] = {}
    for m in mems:
        by_type.setdefault(m.type, []).append(
            {
                "id": m.id,
                "type": m.type,
                "content": m.content,
                "status": m.status,
                "origin": m.origin,
                "confidence": store.effective_confidence(m, now),
                "used": m.access_count,
                "created": store.iso(m.created),
                "updated": store.iso(m.updated),
                "tags": list(m.tags),
                "sessions": list(m.sessions),
                "pinned": store.pinned(m),
                "stale": mark_text(m) if m.stale else "",
                "active": m.active,
            }
        )
    block, block_file = briefing_block(project)
    return {
        "project": project,
        "types": [(t, by_type[t]) for t in TYPES if t in by_type],
        "block": block,
        "block_file": block_file,
    }


def briefing_block(project: str) -> tuple[str | None, str | None]:
    """recall's block in the project's CLAUDE.md (or CLAUDE.local.md), byte for byte as Claude
    Code reads it; (None, the file) when the file holds none."""
    from recall.memory import briefing

    name = briefing.FILES.get(briefing.mode(), "CLAUDE.md")
    path = os.path.join(project, name)
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return None, path
    start, end = text.find(briefing.START), text.find(briefing.END)
    if start < 0 or end < start:
        return None, path
    return text[start : end + len(briefing.END)], path


# the feed ------------------------------------------------------------------------------------
FEED_DAYS = (1, 3, 7, 30)
FEED_LIMIT = 300  # items of the feed at most, the newest
_agents_lock = threading.Lock()
_agents: dict[str, str] = {}  # session id -> the agent whose session it is (it never changes)


def session_agent(session_id: str, project: str = "") -> str:
    """The agent (``indexer.sources.NAMES``) a session is of, as its archived messages say (the
    first line of its archive file; state.db does not hold it): "" when it is not archived."""
    from indexer.archive_files import iter_lines, session_filename, session_relpath
    from indexer.sources import DEFAULT

    if not session_id:
        return ""
    with _agents_lock:
        known = _agents.get(session_id)
    if known is not None:
        return known
    root = paths.archive_dir()
    files = [root / session_relpath(project, session_id)] if project else []
    if not files or not files[0].is_file():
        files = sorted((root / "sessions").glob(f"*/{session_filename(session_id)}"))
    for path in files:
        for _pos, rec in iter_lines(path):
            agent = str(rec.get("agent") or DEFAULT)
            with _agents_lock:
                _agents[session_id] = agent
            return agent
    return ""


def _feed_args(days, project: str, agent: str) -> int:
    from indexer.sources import NAMES

    try:
        days = int(days)
    except (TypeError, ValueError):
        days = 0
    if days not in FEED_DAYS:
        raise UsageError(f"days must be one of {', '.join(map(str, FEED_DAYS))}.")
    if project and not os.path.isabs(project):
        raise UsageError("project must be an absolute path.")
    if agent and agent not in NAMES:
        raise UsageError(f"agent {agent!r}: use one of {', '.join(NAMES)}.")
    return days


def feed(days: int = 3, project: str = "", agent: str = "", now: float | None = None, limit: int = FEED_LIMIT):
    """What happened over the last ``days`` days, newest first, each item opening its session:
    sessions (``recall sessions``: when each started, or went on when it started before; its
    summary or first prompt), typed memories (``recall memories``: created or updated), and
    injections (``recall log``: the outcome, the way, the hold). Of one ``project`` (a project
    as ``projects()`` names it) and one ``agent`` (a source: claude-code, codex, gemini) when
    given; through the readers' gate, as the pages they come from. UsageError for a bad filter."""
    from indexer.ledger import reader_gate
    from indexer.project import canonical_project
    from indexer.sources import DEFAULT
    from recall.memory import sessions as session_store
    from recall.memory import store
    from recall.search.stale import epoch

    days = _feed_args(days, project, agent)
    now = time.time() if now is None else now
    after = now - days * 86400
    items: list[dict] = []
    for r in session_store.recent(project or None, after, limit):
        started, ended = epoch(r["started"]), epoch(r["ended"])
        who = session_agent(r["session_id"], r["project"] or "") or DEFAULT
        if agent and who != agent:
            continue
        text = r["summary"] or r["first_prompt"] or ""
        went_on = started < after
        items.append(
            {
                "kind": "session",
                "t": ended if went_on else (started or ended),
                "what": "went on" if went_on else "started",
                "project": r["project"] or "",
                "session": r["session_id"],
                "agent": who,
                "text": first_line(text),
                "summary": bool(r["summary"]),
                "messages": r["messages"],
            }
        )
    for p in memory_projects():
        if project and p != project:
            continue
        try:
            state = store.load(p)
        except store.StateError:
            continue
        for m in state.memories:
            updated = bool(m.updated and m.created and m.updated - m.created > 1.0)
            t = m.updated if updated else (m.created or m.updated)
            if not t or t < after:
                continue
            sid = m.sessions[0] if m.sessions else ""
            who = session_agent(sid, p) if sid else ""
            if agent and who != agent:
                continue
            items.append(
                {
                    "kind": "memory",
                    "t": t,
                    "what": "updated" if updated else "created",
                    "project": p,
                    "session": sid,
                    "agent": who,
                    "text": first_line(m.content),
                    "type": m.type,
                    "id": m.id,
                    "status": m.status,
                    "active": m.active,
                }
            )
    if not agent or agent == DEFAULT:  # the prompt hook is Claude Code's
        gate = reader_gate().refresh()
        everyone = gate.readers_see_all()
        roots: dict[str, str] = {}
        for slim in reversed(log_records()):
            t = _num(slim.get("t"))
            if t < after:
                break
            if slim.get("outcome") not in ("raw", "synthesized") or not slim.get("text"):
                continue
            cwd, sid = str(slim.get("project") or ""), str(slim.get("session") or "")
            if cwd not in roots:
                roots[cwd] = canonical_project(cwd) if cwd else ""
            root = roots[cwd]
            if project and root != project:
                continue
            if not everyone and gate.hides(root, cwd, sid, sid, t, "session"):
                continue
            held = slim.get("held_ms")
            asked = _known_asked((slim.get("t"), cwd, sid), gate, everyone)  # as the Prompts page read it
            items.append(
                {
                    "kind": "injection",
                    "t": t,
                    "what": str(slim.get("outcome")),
                    "project": root or cwd,
                    "session": sid,
                    "agent": DEFAULT,
                    "text": asked[0] if asked else "",
                    "way": slim.get("way") if isinstance(slim.get("way"), str) else "",
                    "held_ms": _num(held, None) if held is not None else None,
                    "tokens": int(_num(slim.get("tokens"))),
                    "wrong": bool(slim.get("wrong")),
                }
            )
    items.sort(key=lambda x: -x["t"])
    return items[:limit]


# status --------------------------------------------------------------------------------------
def service_status() -> dict:
    """The service as ``recall status`` sees it: its own live status when this runs inside it,
    else what it answers on its socket, else its last status file."""
    from recall.core import service_client as client
    from recall.core.service_state import read_status
    from recall.service import registry

    svc = registry.service()
    if svc is not None:
        return {**svc.status(), "running": True, "here": True}
    try:
        return {**client.call("status", {}, timeout=1.5), "running": True}
    except client.Unavailable:
        saved = read_status() or {}
        return {**saved, "running": False}


def hook_backends() -> dict:
    """``backend.describe()`` for the calls the hooks make: with the last hook's credentials when
    one reached this service in the last day (the page is served by the service, whose own
    environment is not Claude Code's), else this process's, said in ``whose`` (issue 44)."""
    from recall.core import caller
    from recall.llm import backend

    last = caller.remembered()
    out = backend.describe(env=last) if last is not None else backend.describe()
    out["whose"] = (
        "with the last hook's credentials"
        if last is not None
        else "in the service's own environment (no hook reached it in the last day)"
    )
    return out


def status() -> dict:
    from indexer.ledger import current_pause, exclusions, off_sessions, read_controls
    from recall.llm import backend
    from recall.llm.usage import usage_summary
    from recall.memory.status import memory_status, typed_memories
    from recall.prompt import injections

    controls = read_controls()
    pause = current_pause(controls)
    usage = usage_summary()
    out = {
        "service": service_status(),
        "home": str(paths.recall_home()),
        "capture": {
            "paused": pause is not None,
            "until": pause["until"] if pause else None,
            "excluded": exclusions(),
            "sessions_off": len(off_sessions(controls)),
        },
        "prompts_today": injections.day_summary(records=log_records()),
        "usage": usage,
        "backends": hook_backends(),
        "used": backend.used_today(usage),  # the backends today's calls really went to
    }
    try:
        out["memory"] = memory_status(cwd="/")
        mem_backend = out["backends"]["features"]["memory"]["backend"]
        worked = any(u["callers"].get("memory") for u in out["used"])
        if out["memory"].get("configured") and (mem_backend != "off" or worked):
            out["memory"]["enabled"] = True  # extraction runs with the hooks' credentials, not the service's
    except Exception as exc:  # noqa: BLE001 - one part of the page, never the whole
        out["memory"] = {"problem": f"{type(exc).__name__}: {exc}"}
    try:
        out["typed_memories"] = typed_memories()  # what `recall memories` lists, not index documents
    except Exception:  # noqa: BLE001
        out["typed_memories"] = None
    out["team"] = team_status()
    return out


def team_status() -> dict | None:
    try:
        from recall.team import local

        join = local.joined()
        if join is None:
            return None
        out = {"server": join.server, "role": join.role}
        with local.TeamDB() as db:  # what `recall team status` reads here, without asking the server
            out["counts"] = db.counts()
            out["shares"] = len(db.shares())
            out["last_push"] = float(db.get("last_push", "0")) or None
            out["last_pull"] = float(db.get("last_pull", "0")) or None
        return out
    except Exception as exc:  # noqa: BLE001
        return {"problem": f"{type(exc).__name__}: {exc}"}


_doctor_lock = threading.Lock()  # guards _doctor
_doctor_running = threading.Lock()  # held while a `recall doctor` child runs
_doctor: dict = {}


def _run_doctor() -> dict:
    """``recall doctor --json --no-shell-checks`` in a child process (the service never imports
    the command line): the checks whose answer depends on the environment they run in are left
    out, since this one is the service's, not the user's shell's (issue 44)."""
    import json
    import subprocess
    import sys

    started = time.time()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "recall", "doctor", "--json", "--no-shell-checks"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            cwd=os.path.expanduser("~"),
        )
        checks = json.loads(proc.stdout or "[]")
        checks = [c for c in checks if isinstance(c, dict) and not c.get("shell")] if isinstance(checks, list) else []
        return {"checks": checks, "error": "", "checked": started}
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return {"checks": [], "error": f"`recall doctor` did not run: {exc}", "checked": started}


def _refresh_doctor() -> None:
    with _doctor_running:
        result = _run_doctor()
        with _doctor_lock:
            _doctor.update(result, at=time.monotonic())


def _refresh_doctor_later() -> None:
    if _doctor_running.locked():
        return  # one is under way
    threading.Thread(target=_refresh_doctor, name="recall-ui-doctor", daemon=True).start()


def doctor(max_age: float = 60.0, wait: bool = True) -> dict:
    """The problems ``recall doctor`` reports (``_run_doctor``), never older than ``max_age``
    without a new run under way: a result already had is answered at once (a stale one while
    the next run goes on in the background), so the page does not wait on the checks. With
    nothing had yet: ``wait`` runs them now (or waits for the run under way); without it, {}
    and the run starts in the background."""
    with _doctor_lock:
        had = dict(_doctor)
    if had.get("at"):
        if time.monotonic() - had["at"] >= max_age:
            _refresh_doctor_later()
        return had
    if not wait:
        _refresh_doctor_later()
        return {}
    if _doctor_running.locked():
        with _doctor_running:  # the run under way: its result
            pass
    else:
        _refresh_doctor()
    with _doctor_lock:
        return dict(_doctor)


# charts --------------------------------------------------------------------------------------
def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


def charts(days: int = 30) -> dict:
    """Per day: prompts, injections, the prompts that got nothing (``silent``) and the trivial
    ones the hook does not search for (``trivial``: the silent share is of the others, as
    ``recall stats`` counts it); memories by type over time (how many existed at each day's
    end). The history's size is ``history``; the used share is ``weekly``."""
    import bisect

    from recall.memory import TYPES, store

    now = time.time()
    day_list = [_day(now - 86400 * i) for i in range(days - 1, -1, -1)]
    starts = [time.mktime(time.strptime(d, "%Y-%m-%d")) for d in day_list]  # local midnights

    def day_of(t: float) -> str | None:
        i = bisect.bisect_right(starts, t) - 1
        return day_list[i] if 0 <= i and t < now + 86400 else None

    per_day = {d: {"prompts": 0, "injected": 0, "silent": 0, "trivial": 0} for d in day_list}
    for rec in log_records():
        t = _num(rec.get("t"))
        d = per_day.get(day_of(t)) if t else None
        if d is None:
            continue
        d["prompts"] += 1
        if rec.get("outcome") in ("raw", "synthesized") and rec.get("text"):
            d["injected"] += 1
        elif rec.get("outcome") == "trivial":
            d["trivial"] += 1
        else:
            d["silent"] += 1
    created: dict[str, list[float]] = {t: [] for t in TYPES}
    for p in memory_projects():
        try:
            state = store.load(p)
        except store.StateError:
            continue
        for m in state.memories:
            if m.active and m.created:
                created[m.type].append(m.created)
    ends = starts[1:] + [float("inf")]
    mem_series = {t: [sum(1 for c in created[t] if c < end) for end in ends] for t in TYPES}
    return {"days": day_list, "per_day": per_day, "memories": mem_series}


_weekly_lock = threading.Lock()
_weekly: tuple = (None, 0.0, [])  # (the log's stamp, when, weeks)
WEEKLY_TTL = 60.0  # seconds: a reply indexed since turns "not known yet" into a verdict


def weekly(weeks: int = 5) -> list[dict]:
    """``recall stats`` without its searcher (``recall.prompt.stats.weekly``): per week, newest
    first, prompts, injections, the used share and the silent share. It reads the archive of
    every conversation in those weeks, so the Charts page asks for it after its first paint;
    kept until the log changes, a minute at most. Only the records of those weeks are read
    whole, and only what the verdicts need of them is held while they are counted."""
    from recall.prompt.stats import weekly as per_week

    global _weekly
    slims = log_records()  # (brings the log's stamp up to date)
    with _weekly_lock:
        stamp = (_log_sorted[0], weeks)
        if _weekly[0] != stamp or time.monotonic() - _weekly[1] > WEEKLY_TTL:
            after = time.time() - (weeks + 1) * 7 * 86400  # more than the weeks asked for: stats cuts them
            records = []
            for slim in slims:
                rec = _whole(slim) if _num(slim.get("t")) >= after else None
                if rec is not None:
                    records.append({k: rec[k] for k in WEEKLY_FIELDS if k in rec})
            _weekly = (stamp, time.monotonic(), per_week(records, weeks))
        return _weekly[2]


WEEKLY_FIELDS = ("t", "outcome", "project", "session", "text", "injected", "hits")


def history(days: int = 30) -> dict:
    """The history's size (messages indexed, cumulative) at the end of each of the last ``days``
    days: a scan of every session's facts, so the Charts page loads it after its first paint."""
    import bisect

    now = time.time()
    day_list = [_day(now - 86400 * i) for i in range(days - 1, -1, -1)]
    starts = [time.mktime(time.strptime(d, "%Y-%m-%d")) for d in day_list]
    msgs_by_day: dict[str, int] = {}
    before = 0
    for _sid, _project, _cwd, started, ended, messages in shown_facts():
        t = started or ended or now
        if t < starts[0]:
            before += messages
        else:
            d = day_list[max(0, bisect.bisect_right(starts, t) - 1)]
            msgs_by_day[d] = msgs_by_day.get(d, 0) + messages
    out, total = [], before
    for d in day_list:
        total += msgs_by_day.get(d, 0)
        out.append(total)
    return {"days": day_list, "history": out}


# live events ---------------------------------------------------------------------------------
def _stat(path) -> tuple:
    try:
        st = os.stat(path)
        return (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        return ()


def change_marks() -> dict:
    """What the live events watch, as cheap stat calls: the injection log (prompts), state.db's
    write-ahead log and file (sessions, index progress), the service's status file (progress)."""
    from recall.core.service_state import status_path
    from recall.prompt import injections

    db = paths.state_db_path()
    return {
        "prompts": _stat(injections.log_path()),
        "sessions": (_stat(db), _stat(f"{db}-wal")),
        "status": _stat(status_path()),
    }
