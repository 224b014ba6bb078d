"""The HTML of ``recall ui``, rendered on the server from ``recall.ui.views``. Every piece of
text that came from a transcript, a memory, a path or the user goes through ``e`` (HTML-escaped,
quotes too): the page shows ``<script>`` or ``onerror=`` as the characters they are and runs
nothing (the Content-Security-Policy of ``recall.ui.guard`` forbids inline script besides).
No inline script or style: behaviour is ``static/ui.js``, looks ``static/ui.css``.
"""

from __future__ import annotations

import html
import os
import re
import time
from urllib.parse import quote, urlencode

from recall.core.errors import RecallError
from recall.core.text import counted, one_line
from recall.memory.sessions import TOOL_LINE_CHARS

NAV = (
    ("prompts", "Prompts"),
    ("feed", "Feed"),
    ("search", "Search"),
    ("sessions", "Sessions"),
    ("memories", "Memories"),
    ("status", "Status"),
    ("charts", "Charts"),
)
SINCE = (("", "any time"), ("1d", "last day"), ("7d", "last week"), ("30d", "last 30 days"), ("90d", "last 90 days"))
KIND_LABELS = (
    ("", "everything"),
    ("message", "messages"),
    ("memory", "memories"),
    ("summary", "summaries"),
    ("team", "team"),
)


def e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def when(ts) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(ts))) if ts else ""
    except (TypeError, ValueError, OverflowError):
        return ""


def short(project: str) -> str:
    project = project or ""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (project == home or project.startswith(home + os.sep)):
        return "~" + project[len(home) :]
    return project


def page(title: str, body: str, csrf: str, active: str = "") -> str:
    on = ' class="on"'
    nav = "".join(f'<a href="/{k}"{on if k == active else ""}>{label}</a>' for k, label in NAV)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="csrf-token" content="{e(csrf)}"><title>recall · {e(title)}</title>'
        f'<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js" defer></script></head>'
        f'<body data-page="{e(active)}"><header><span class="brand">recall</span><nav>{nav}</nav>'
        f'<span id="live" class="live" title="live updates">●</span></header>'
        f'<main>{body}</main></body></html>'
    )


def shell(elsewhere: bool = False) -> str:
    """What a request with the cookie alone gets for any page: the same bytes for every page,
    nothing of the data (browsers send 127.0.0.1's cookies to every port). ``ui.js`` reads the
    page again with its key and shows it; not by itself when another site or another local port
    sent the browser here (``elsewhere``): a click on the page then does."""
    mark = "elsewhere" if elsewhere else ""
    return (
        f'<!doctype html><html lang="en" data-shell="{mark}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>recall</title>'
        '<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js" defer></script></head>'
        '<body><main><p class="dim" id="shell">Opening the page…</p><noscript><p class="problem">This page '
        "needs JavaScript: its script sends the key each read needs.</p></noscript></main></body></html>"
    )


def hop(key: str, target: str) -> str:
    """The answer to an address holding a live one-time code: the new session's key for the
    page's own storage, and where to go on (``ui.js``)."""
    return (
        f'<!doctype html><html lang="en" data-key="{e(key)}" data-next="{e(target)}"><head><meta charset="utf-8">'
        '<title>recall</title><script src="/static/ui.js" defer></script></head>'
        f'<body><p>Opening recall… (<a href="{e(target)}">go on</a>)</p></body></html>'
    )


def open_file(url: str) -> str:
    """The local file ``recall ui`` opens the browser on (0600): it carries a one-time code on
    to the page, so no command line holds it."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={e(url)}">'
        f'<title>recall</title></head><body><p><a href="{e(url)}">Open recall</a></p></body></html>'
    )


def problem(text: str) -> str:
    return f'<p class="problem">{e(text)}</p>'


def refused(why: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>recall · refused</title></head>'
        f'<body><h1>Refused</h1><p>{e(why)}</p></body></html>'
    )


def _options(pairs, chosen: str) -> str:
    return "".join(
        f'<option value="{e(v)}"{" selected" if v == chosen else ""}>{e(label)}</option>' for v, label in pairs
    )


def _project_select(projects: list[str], chosen: str, blank: str | None = "every project") -> str:
    pairs = ([("", blank)] if blank is not None else []) + [(p, short(p)) for p in projects]
    return f'<select name="project" aria-label="project">{_options(pairs, chosen)}</select>'


def _marks(marks) -> str:
    if not marks:
        return ""
    items = []
    for m in marks:
        if isinstance(m, dict):
            what = m.get("state") or "changed"
            to = f" → {m['to']}" if m.get("to") else ""
            items.append(f'{e(m.get("path") or "?")} ({e(what)}{e(to)})')
        else:
            items.append(e(m))
    return f'<div class="stale">⚠ changed since: {", ".join(items)}</div>'


def session_link(sid: str, label: str | None = None) -> str:
    return f'<a class="sid" href="/sessions/{quote(sid, safe="")}">{e(label or sid[:8])}</a>'


# prompts -------------------------------------------------------------------------------------
def prompts_list(records: list[dict]) -> str:
    if not records:
        return (
            '<p class="empty">No prompts logged yet: the hook records each prompt here once it runs in Claude Code.</p>'
        )
    out = []
    for r in records:
        cls = "prompt" + (" wrong" if r["wrong"] else "") + (" silent" if not r["text"] else "")
        why = f' ({e(r["why"])})' if r["why"] else ""
        path = f'<span class="pill">path: {e(r["path"])}</span>' if r["path"] else ""
        backend = (
            f'<span class="pill">{e(r["backend"])}</span>' if r["backend"] and r["outcome"] == "synthesized" else ""
        )
        via = f'<span class="pill">via {e(r["via"])}</span>' if r["via"] else ""
        way = f'<span class="pill" title="which way the prompt took">way: {e(r["way"])}</span>' if r["way"] else ""
        held = f' · held {r["held_ms"]:.0f} ms' if isinstance(r.get("held_ms"), float) else ""
        g = r.get("gate") or {}
        gate = ""
        if isinstance(g.get("best"), float) or isinstance(g.get("value"), float):
            best = f'best {g["best"]:.2f}' if isinstance(g.get("best"), float) else "no candidate"
            under = (
                f' against {e(g["setting"] or "the gate")} {g["value"]:.2f}'
                if isinstance(g.get("value"), float)
                else ""
            )
            gate = f'<span class="dim gate">{best}{under}</span>'
        used = ""
        if r.get("injected"):  # whether the next reply used it, as `recall log` says it
            kind = {True: "yes", False: "no"}.get(r.get("used"), "unknown") if r.get("used_label") else "checking"
            used = (
                f'<div class="used u-{kind}" title="whether the next reply used it">used: '
                f'{e(r["used_label"] or "checking…")}</div>'
            )
        asked = r.get("asked")
        if asked:
            said = f'<q class="prompt-line">{e(asked)}</q>'
        elif asked is None:
            said = '<span class="dim">reading…</span>'
        else:
            said = '<span class="dim">(not in the archive yet)</span>'
        ask = "" if r.get("asked_hidden") else f'<div class="asked"><span class="role">asked</span> {said}</div>'
        head = (
            f'<div class="head"><b>#{r["n"]}</b> <time>{e(when(r["t"]))}</time> '
            f'<span class="proj">{e(short(r["project"]) or "?")}</span> '
            f'<span class="outcome o-{e(r["outcome"])}">{e(r["outcome"])}{why}</span> {way}{path}{backend}{via}'
            f' <span class="dim">{r["tokens"]} tokens · {r["latency_ms"]:.0f} ms{held}</span> {gate}'
            + (' <span class="badge">marked wrong</span>' if r["wrong"] else "")
            + "</div>"
        )
        hits = ""
        if r["hits"]:
            rows = []
            for h in r["hits"]:
                conf = f'{h["confidence"]:.2f}' if isinstance(h["confidence"], float) else "–"
                sim = f'{h["similarity"]:.2f}' if isinstance(h["similarity"], float) else "–"
                rows.append(
                    f'<tr><td>{session_link(h["session"])}</td><td class="num conf">{conf}</td>'
                    f'<td class="num">{sim}</td><td class="num">{h["score"]:.2f}</td>'
                    f'<td><button type="button" class="danger" data-action="forget-session" '
                    f'data-session="{e(h["session"])}">forget</button></td></tr>'
                )
            hits = (
                '<table class="hits"><thead><tr><th>hit</th><th>confidence</th><th>similarity</th><th>score</th>'
                f'<th></th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            )
        text = (
            (
                f'<details{" open" if r["n"] <= 3 else ""}><summary>What was injected</summary>'
                f'<pre class="injected">{e(r["text"])}</pre></details>'
            )
            if r["text"]
            else '<p class="dim">Nothing was injected.</p>'
        )
        mark = (
            f'<button type="button" data-action="wrong" data-t="{r["t"]!r}" data-session="{e(r["session"])}" '
            f'data-wrong="{0 if r["wrong"] else 1}">{"not wrong" if r["wrong"] else "mark wrong"}</button>'
            if r["text"]
            else ""
        )
        out.append(f'<article class="{cls}" data-n="{r["n"]}">{head}{ask}{used}{hits}{text}{mark}</article>')
    return "".join(out)


def prompts_page(csrf: str) -> str:
    from recall.ui import views

    # the first paint has the verdicts known for good; the fragment asked for after it, the rest
    shown = views.prompts(fresh=False)
    load = ' data-load="1"' if any((r["injected"] and not r["used_label"]) or r["asked"] is None for r in shown) else ""
    body = (
        '<h1>Prompts</h1><p class="dim">What the prompt hook put in front of Claude, newest first, as '
        '<code>recall log</code> lists it, with the prompt it ran on (its first line, from the archive) and '
        'whether the next reply used what was injected; new '
        'prompts appear here as they happen.</p>'
        f'<section id="prompts" data-fragment="/fragment/prompts" data-live="prompts"{load}>'
        f'{prompts_list(shown)}</section>'
    )
    return page("Prompts", body, csrf, "prompts")


# the feed ------------------------------------------------------------------------------------
FEED_DAYS_LABELS = (("1", "last day"), ("3", "last 3 days"), ("7", "last week"), ("30", "last 30 days"))


def _feed_query(query: dict) -> dict:
    return {"days": query.get("days") or "3", "project": query.get("project", ""), "agent": query.get("agent", "")}


def feed_list(query: dict) -> str:
    """The feed's items (``views.feed``), newest first, each opening its session."""
    from indexer.sources import LABELS
    from recall.ui import views

    q = _feed_query(query)
    try:
        items = views.feed(q["days"], q["project"], q["agent"])
    except RecallError as exc:
        return problem(str(exc))
    if not items:
        return '<p class="empty">Nothing in this time: no session, memory or injection.</p>'
    out = []
    for it in items:
        kind = it["kind"]
        bits = []
        if kind == "session":
            bits.append(f'<span class="dim">{e(it["messages"])} msgs</span>')
        elif kind == "memory":
            bits.append(f'<span class="pill mtype">{e(it["type"])}</span>')
            if not it["active"]:
                bits.append(f'<span class="badge">{e(it["status"])}</span>')
        elif kind == "injection":
            if it["way"]:
                bits.append(f'<span class="pill">way: {e(it["way"])}</span>')
            held = f' · held {it["held_ms"]:.0f} ms' if isinstance(it.get("held_ms"), float) else ""
            bits.append(f'<span class="dim">{it["tokens"]} tokens{held}</span>')
            if it["wrong"]:
                bits.append('<span class="badge">marked wrong</span>')
        agent = f'<span class="pill agent">{e(LABELS.get(it["agent"], it["agent"]))}</span>' if it["agent"] else ""
        if it["session"]:
            link = f'<a class="open" href="/sessions/{quote(it["session"], safe="")}">open session {e(it["session"][:8])}</a>'
        elif kind == "memory":
            link = f'<a class="open" href="/memories?{e(urlencode({"project": it["project"]}))}">its project\'s memories</a>'
        else:
            link = ""
        text = f'<p class="text">{e(it["text"])}</p>' if it["text"] else ""
        out.append(
            f'<article class="item k-{e(kind)}" data-kind="{e(kind)}" data-t="{it["t"]!r}" '
            f'data-session="{e(it["session"])}"><div class="head"><time>{e(when(it["t"]))}</time> '
            f'<b class="kind">{e(kind)}</b> <span class="what">{e(it["what"])}</span> '
            f'<span class="proj">{e(short(it["project"]) or "?")}</span> {agent}{" ".join(bits)} {link}</div>'
            f"{text}</article>"
        )
    more = (
        f'<p class="dim">The newest {len(items)} shown: a shorter time, a project or an agent shows the rest.</p>'
        if len(items) >= views.FEED_LIMIT
        else ""
    )
    return "".join(out) + more


def feed_page(query: dict, csrf: str) -> str:
    from indexer.sources import LABELS, NAMES
    from recall.ui import views

    q = _feed_query(query)
    agents = [("", "every agent"), *((n, LABELS.get(n, n)) for n in NAMES)]
    form = (
        f'<form id="feed-filters" class="filters" action="/feed" method="get" data-target="feed">'
        f'<select name="days" aria-label="time">{_options(FEED_DAYS_LABELS, q["days"])}</select>'
        f'{_project_select(views.projects(), q["project"])}'
        f'<select name="agent" aria-label="agent">{_options(agents, q["agent"])}</select>'
        f'<noscript><button>Show</button></noscript></form>'
    )
    qs = urlencode({k: v for k, v in q.items() if v})
    body = (
        '<h1>Feed</h1><p class="dim">Sessions, memories and injections, newest first; new ones appear here as '
        f'they happen. Each opens its session.</p>{form}'
        f'<section id="feed" data-fragment="/fragment/feed?{e(qs)}" data-live="prompts sessions">'
        f"{feed_list(q)}</section>"
    )
    return page("Feed", body, csrf, "feed")


# search --------------------------------------------------------------------------------------
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)


def snippet_html(text: str) -> str:
    """A snippet's ``**matches**`` as <mark>: escaped first, so only our own tags are tags."""
    return _BOLD.sub(r"<mark>\1</mark>", e(text))


def search_results(query: dict) -> str:
    from recall.ui import views

    q = query.get("q", "")
    if not q.strip():
        return '<p class="empty">Type to search every session, memory and summary.</p>'
    try:
        hits = views.search(
            q,
            query.get("project", ""),
            query.get("since", ""),
            query.get("kind", ""),
            settled=query.get("typing") != "1",
        )
    except RecallError as exc:
        return problem(str(exc))
    if not hits:
        return f'<p class="empty">No matches for {e(q)}.</p>'
    out = []
    for h in hits:
        conf = f"{h.confidence:.2f}" if h.confidence is not None else "–"
        ts = (h.timestamp or "")[:16].replace("T", " ")
        parts = []
        if h.question:
            parts.append(f'<div class="ex q"><span class="role">asked</span><pre>{e(h.question)}</pre></div>')
        parts.append(
            f'<div class="ex hit"><span class="role">{e(h.role or h.kind)}</span>'
            f'<pre>{e(h.text or h.snippet)}</pre></div>'
        )
        if h.reply:
            parts.append(f'<div class="ex r"><span class="role">reply</span><pre>{e(h.reply)}</pre></div>')
        link = session_link(h.session_id, "open session") if h.kind in ("message", "session") and h.session_id else ""
        if h.kind == "memory" and h.project:
            link = f'<a href="/memories?{e(urlencode({"project": h.project}))}">its project\'s memories</a>'
        author = f' · shared by {e(h.author)}' if h.author else ""
        more = (
            f'<details><summary>The exchange</summary>{"".join(parts)}</details>'
            if h.question or h.reply
            else f'<details><summary>All of it</summary>{parts[0]}</details>'
            if (h.text or "") != h.snippet
            else ""
        )
        out.append(
            f'<article class="hit k-{e(h.kind)}"><div class="head"><span class="pill">{e(h.kind)}</span> '
            f'<time>{e(ts)}</time> <span class="proj">{e(short(h.project))}</span>{author} '
            f'<span class="dim">confidence {conf}</span> {link}</div>'
            f'<p class="snippet">{snippet_html(h.snippet)}</p>{_marks(h.stale)}{more}</article>'
        )
    return "".join(out)


def search_page(query: dict, csrf: str) -> str:
    from recall.ui import views

    form = (
        f'<form id="search" class="filters" action="/search" method="get" role="search">'
        f'<input id="q" name="q" type="search" autocomplete="off" autofocus placeholder="Search your history…" '
        f'value="{e(query.get("q", ""))}">{_project_select(views.projects(), query.get("project", ""))}'
        f'<select name="since" aria-label="time">{_options(SINCE, query.get("since", ""))}</select>'
        f'<select name="kind" aria-label="kind">{_options(KIND_LABELS, query.get("kind", ""))}</select>'
        f'<noscript><button>Search</button></noscript></form>'
    )
    body = (
        f'<h1>Search</h1>{form}<section id="results" data-fragment="/fragment/search">{search_results(query)}</section>'
    )
    return page("Search", body, csrf, "search")


# sessions ------------------------------------------------------------------------------------
def _copy(text: str) -> str:
    return f'<span class="copy"><code>{e(text)}</code><button type="button" data-copy="{e(text)}">copy</button></span>'


def sessions_list(query: dict) -> str:
    from recall.ui import views

    try:
        groups = views.sessions_by_day(query.get("project", ""), query.get("since", ""))
    except RecallError as exc:
        return problem(str(exc))
    if not groups:
        return '<p class="empty">No sessions indexed yet: run <code>recall index</code>.</p>'
    out = []
    for project, day, rows in groups:
        items = []
        for r in rows:
            text = r["summary"] or r["first_prompt"] or ""
            first = text.splitlines()[0] if text else ""
            clock = (r["ended"] or r["started"] or "")[11:16]
            items.append(
                f'<li><time>{e(clock)}</time> {session_link(r["session_id"])} '
                f'<span class="dim">{r["messages"]} msgs</span> <span class="sum">{e(first)}</span>'
                f'{_marks(r["stale"])}</li>'
            )
        out.append(f'<section class="day"><h3>{e(short(project))} · {e(day)}</h3><ul>{"".join(items)}</ul></section>')
    return "".join(out)


def sessions_page(query: dict, csrf: str) -> str:
    from recall.ui import views

    form = (
        f'<form class="filters" action="/sessions" method="get">'
        f'{_project_select(views.projects(), query.get("project", ""))}'
        f'<select name="since" aria-label="time">{_options(SINCE, query.get("since", ""))}</select>'
        f'<button>Show</button></form>'
    )
    qs = urlencode({k: v for k, v in query.items() if k in ("project", "since") and v})
    body = (
        f'<h1>Sessions</h1>{form}<section id="sessions" data-fragment="/fragment/sessions?{e(qs)}" '
        f'data-live="sessions">{sessions_list(query)}</section>'
    )
    return page("Sessions", body, csrf, "sessions")


_FILE_STATE = {"unchanged": "unchanged", "changed": "changed since", "deleted": "deleted", "renamed": "renamed"}


def session_page(ref: str, csrf: str, query: dict | None = None) -> str:
    from recall.ui import views

    try:
        start = int((query or {}).get("from") or 0)
    except ValueError:
        start = 0
    s = views.session(ref, start)
    head = (
        f'<h1>Session {e(s["session_id"])}</h1><p><span class="proj">{e(short(s["project"] or "?"))}</span> '
        f'<span class="dim">{e(s["started"])} → {e(s["ended"])}, {e(s["messages"])} messages</span></p>'
        f'<p>Resume it: {_copy(s["resume"])}</p>'
        f'<p><button type="button" class="danger" data-action="forget-session" data-session="{e(s["session_id"])}" '
        f'data-then="/sessions">forget this session</button></p>'
    )
    summary = (
        f'<h2>Summary</h2><pre class="summary">{e(s["summary"])}</pre>'
        if s["summary"]
        else f'<p class="dim">{e(s["no_summary"])}</p>'
    )
    files = ""
    if s["files"]:
        rows = []
        for f in s["files"]:
            what = _FILE_STATE.get(f.get("state"), f.get("state") or "")
            if f.get("to"):
                what += f" → {f['to']}"
            commits = f.get("commits") or []
            extra = (
                f'{counted(len(commits), "commit")} since by {", ".join(sorted({c.get("author", "?") for c in commits}))}'
                if commits
                else ""
            )
            rows.append(
                f'<tr><td><code>{e(f.get("path"))}</code></td><td>{e(f.get("op"))}</td>'
                f'<td class="st-{e(f.get("state"))}">{e(what)}</td><td>{e((f.get("since") or "")[:10])}</td>'
                f'<td>{e(extra)}</td></tr>'
            )
        files = (
            '<h2>Files it wrote, and what became of them</h2><table class="files"><thead><tr><th>file</th>'
            f'<th>op</th><th>now</th><th>since</th><th>git</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
    from indexer.sources import speaker

    msgs = []
    for m in s["transcript"]:
        label = {
            "user": "USER",
            "assistant": speaker(m.get("agent")),  # whose reply: its source's (CLAUDE, CODEX...), as `recall show`
            "tool_use": "→ tool",
            "tool_result": "← result",
            "summary": "SUMMARY",
        }.get(m["role"], m["role"])
        text = m["text"]
        if m["role"] in ("tool_use", "tool_result"):  # one line each, as `recall show` prints them
            text = one_line(text, TOOL_LINE_CHARS)
        msgs.append(
            f'<div class="msg role-{e(m["role"])}" id="m-{e(m["uuid"])}"><div class="mhead">'
            f'<time>{e(when(m["t"]))}</time> <b>{e(label)}</b></div><pre>{e(text)}</pre></div>'
        )
    transcript = "".join(msgs) or '<p class="dim">(nothing archived for this session)</p>'
    pager = ""
    if s["shown"] > views.TRANSCRIPT_PAGE:
        base = f'/sessions/{quote(s["session_id"], safe="")}?from='
        first, last = s["start"] + 1, s["start"] + len(s["transcript"])
        prev = f'<a href="{base}{max(0, s["start"] - views.TRANSCRIPT_PAGE)}">← earlier</a> ' if s["start"] > 0 else ""
        nxt = f' <a href="{base}{last}">later →</a>' if last < s["shown"] else ""
        pager = f'<p class="pager">{prev}messages {first}–{last} of {s["shown"]}{nxt}</p>'
    body = f'{head}{summary}{files}<h2>Transcript</h2>{pager}<section id="transcript">{transcript}</section>{pager}'
    return page(f"session {s['session_id'][:8]}", body, csrf, "sessions")


# memories ------------------------------------------------------------------------------------
def memories_page(query: dict, csrf: str) -> str:
    from recall.ui import views

    projects = views.memory_projects()
    chosen = query.get("project") or (projects[0] if projects else "")
    data = views.memories(chosen)
    form = (
        (
            f'<form class="filters" action="/memories" method="get">'
            f'{_project_select(projects if chosen in projects or not chosen else [chosen, *projects], chosen, None)}'
            f'<button>Show</button></form>'
        )
        if chosen
        else ""
    )
    if not data["types"]:
        listing = (
            f'<p class="empty">No memories{" for " + e(short(chosen)) if chosen else ""} yet. They are '
            'extracted when a session goes idle or ends (with a model backend); past sessions: '
            '<code>recall memories --backfill</code>.</p>'
        )
    else:
        parts = []
        for mtype, mems in data["types"]:
            rows = []
            for m in mems:
                cls = "mem" + ("" if m["active"] else " retired") + (" pinned" if m["pinned"] else "")
                status = "" if m["active"] else f' <span class="badge">{e(m["status"])}</span>'
                pin = (
                    f'<button type="button" data-action="mem-pin" data-id="{e(m["id"])}" '
                    f'data-pinned="{0 if m["pinned"] else 1}">{"unpin" if m["pinned"] else "pin"}</button>'
                )
                rows.append(
                    f'<li class="{cls}" data-id="{e(m["id"])}"><div class="head"><code>{e(m["id"])}</code> '
                    f'<span class="dim">confidence {m["confidence"]:.2f} · used {m["used"]} · {e(m["origin"])} · '
                    f'{e((m["updated"] or "")[:10])}</span>{" 📌" if m["pinned"] else ""}{status}</div>'
                    f'<p class="content">{e(m["content"])}</p>'
                    + (f'<div class="stale">⚠ {e(m["stale"])}</div>' if m["stale"] else "")
                    + f'<div class="acts">{pin}<button type="button" data-action="mem-edit-open">edit</button>'
                    f'<button type="button" class="danger" data-action="mem-forget" data-id="{e(m["id"])}">forget'
                    f'</button></div><form class="edit" hidden data-id="{e(m["id"])}"><textarea name="content" '
                    f'rows="3">{e(m["content"])}</textarea><button type="submit">save</button></form></li>'
                )
            parts.append(f'<section class="mtype"><h2>{e(mtype)}</h2><ul>{"".join(rows)}</ul></section>')
        listing = "".join(parts)
    if data["block"] is not None:
        block = (
            f'<h2>The block in {e(short(data["block_file"]))}</h2><p class="dim">Exactly as Claude Code reads '
            f'it at the start of every session.</p><pre id="block">{e(data["block"])}</pre>'
        )
    elif chosen:
        block = f'<p class="dim">{e(short(data["block_file"] or ""))} holds no recall block yet.</p>'
    else:
        block = ""
    body = f'<h1>Memories</h1>{form}<section id="memories" data-project="{e(chosen)}">{listing}</section>{block}'
    return page("Memories", body, csrf, "memories")


# status --------------------------------------------------------------------------------------
def _span(seconds) -> str:
    try:
        s = int(float(seconds))
    except (TypeError, ValueError):
        return "?"
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{d}d{h}h" if d else f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def _row(label: str, value: str) -> str:
    return f"<tr><th>{e(label)}</th><td>{value}</td></tr>"


def status_fragment() -> str:
    from recall.ui import views

    st = views.status()
    svc = st["service"]
    rows = []
    if svc.get("running"):
        bits = [
            f"pid {svc.get('pid')}",
            f"up {_span(svc.get('uptime'))}" if svc.get("uptime") is not None else "",
            e(svc.get("state") or ""),
            f"{svc['rss_mb']:.0f} MB" if svc.get("rss_mb") else "",
        ]
        rows.append(_row("Service", "running (" + ", ".join(b for b in bits if b) + ")"))
    else:
        rows.append(_row("Service", "not running: <code>recall service start</code> starts it"))
    bf = svc.get("backfill")
    if isinstance(bf, dict) and bf.get("files_total"):
        done, total = bf.get("files_done", 0), bf.get("files_total", 0)
        pct = 100.0 * (bf.get("bytes_done", 0) / bf["bytes_total"]) if bf.get("bytes_total") else 100.0 * done / total
        rows.append(
            _row(
                "Backfill",
                f'<progress id="backfill" max="100" value="{pct:.0f}"></progress> '
                f'{done:,}/{total:,} files, {bf.get("messages", 0):,} messages'
                + (f', ~{_span(bf["eta_seconds"])} left' if bf.get("eta_seconds") else ""),
            )
        )
    elif isinstance(bf, dict) and bf.get("replayed"):
        rows.append(_row("Rebuild", f'{bf["replayed"]:,} messages replayed from the archive'))
    counts = svc.get("counts") or {}
    if counts:
        typed = st.get("typed_memories")  # what `recall memories` lists, not the index's memory documents
        memories = typed["memories"] if isinstance(typed, dict) else None
        rows.append(
            _row(
                "Index",
                f'{counts.get("messages", 0):,} messages, {counts.get("sessions", 0):,} sessions'
                + (f", {counted(memories, 'memory')}" if memories is not None else "")
                + f'; lag {svc.get("lag_seconds", 0)} s',
            )
        )
    if svc.get("redaction"):
        rows.append(_row("Redaction", e(svc["redaction"])))
    cap = st["capture"]
    if cap["paused"]:
        rows.append(_row("Capture", "paused (nothing is captured or injected; <code>recall resume</code> ends it)"))
    else:
        extra = []
        if cap["excluded"]:
            extra.append(counted(len(cap["excluded"]), "exclusion"))
        if cap["sessions_off"]:
            extra.append(f'{counted(cap["sessions_off"], "session")} switched off by <code>recall: off</code>')
        rows.append(_row("Capture", "on" + (f" ({'; '.join(extra)})" if extra else "")))
    b = st["backends"]
    from recall.llm.backend import used_text

    used = st.get("used") or []
    rows.append(
        _row(
            "Model backend",
            f'model.backend = {e(b.get("setting"))}: {e(b.get("backend"))} ({e(b.get("why"))}), '
            f'{e(b.get("whose") or "in the service")}'
            + ("; today: " + e("; ".join(used_text(u) for u in used)) if used else "; no model call succeeded today"),
        )
    )
    u = st["usage"] or {}
    rows.append(
        _row(
            "Spend",
            f'{u.get("today_calls", 0):,} calls today (${u.get("today_cost", 0.0):.2f}), '
            f'{u.get("calls", 0):,} in all (${u.get("cost", 0.0):.2f})',
        )
    )
    p = st["prompts_today"]
    o = p.get("outcomes") or {}
    rows.append(
        _row(
            "Prompts, 24 h",
            f'{p.get("prompts", 0)}: {o.get("synthesized", 0)} synthesized, '
            f'{o.get("raw", 0)} raw, {o.get("nothing", 0)} nothing found, '
            f'{o.get("trivial", 0)} trivial; ~{p.get("injected_tokens", 0):,} tokens',
        )
    )
    mem = st.get("memory") or {}
    if mem.get("problem"):
        rows.append(_row("Memory", e(mem["problem"])))
    else:
        rows.append(
            _row(
                "Memory",
                f'extraction {"on" if mem.get("enabled") else "off"}; '
                f'{counted(mem.get("queued", 0), "session")} queued'
                + (f'; last problem: {e(mem["last_problem"])}' if mem.get("last_problem") else ""),
            )
        )
    team = st.get("team")
    if team is None:
        rows.append(_row("Team", "not joined (<code>recall team join</code>)"))
    elif team.get("problem"):
        rows.append(_row("Team", e(team["problem"])))
    else:
        counts = ", ".join(f"{e(k)} {v}" for k, v in (team.get("counts") or {}).items())
        synced = "; ".join(f"last {k} {e(when(team[f'last_{k}']))}" for k in ("push", "pull") if team.get(f"last_{k}"))
        rows.append(
            _row(
                "Team",
                f'{e(team["server"])} as {e(team["role"])}; '
                f'{e(counted(team.get("shares", 0), "shared project"))}; {counts}'
                + (f"; {synced}" if synced else "; not synced yet"),
            )
        )
    errors = svc.get("errors") or []
    errs = "".join(
        f"<li>{e(when(x.get('time')))}: {e(x.get('message'))}</li>" for x in errors[-5:] if isinstance(x, dict)
    )
    return f'<table class="status">{"".join(rows)}</table>' + (
        f'<h2>Recent service errors</h2><ul class="errors">{errs}</ul>' if errs else ""
    )


DOCTOR_WHERE = (
    "Checked in the service's environment, not your shell's: the checks that depend on your shell "
    "(the <code>recall</code> on your PATH, the API key and model backend it would use, a run of the "
    "hook and of Claude Code) are left out: <code>recall doctor</code> in a terminal runs them."
)


def doctor_fragment(d: dict | None = None) -> str:
    from recall.ui import views

    d = d if d is not None else views.doctor()
    if d.get("error"):
        return problem(d["error"])
    checked = f" (checked {e(when(d['checked']))})" if d.get("checked") else ""
    where = f'<p class="dim">{DOCTOR_WHERE}{checked}</p>'
    checks = d.get("checks") or []
    bad = [c for c in checks if isinstance(c, dict) and not c.get("ok")]
    if not bad:
        return '<p class="ok">No problems: every check of <code>recall doctor</code> run here passed.</p>' + where
    items = "".join(
        f'<li class="{"warn" if c.get("warn") else "fail"}"><b>{"warn" if c.get("warn") else "FAIL"}'
        f'</b> {e(c.get("name"))}: {e(c.get("detail"))}'
        + (f'<br><span class="dim">fix: {e(c.get("fix"))}</span>' if c.get("fix") else "")
        + "</li>"
        for c in bad
    )
    return f'<ul class="doctor">{items}</ul>' + where


def status_page(csrf: str) -> str:
    from recall.ui import views

    had = views.doctor(wait=False)  # the last result at once (a stale one is run again meanwhile)
    doctor = (
        f'<section id="doctor" data-fragment="/fragment/doctor">{doctor_fragment(had)}</section>'
        if had
        else '<section id="doctor" data-fragment="/fragment/doctor" data-load="1"><p class="dim">checking…</p>'
        "</section>"
    )
    body = (
        '<h1>Status</h1><section id="status" data-fragment="/fragment/status" data-live="status">'
        f"{status_fragment()}</section><h2>Problems <code>recall doctor</code> reports</h2>{doctor}"
    )
    return page("Status", body, csrf, "status")


# charts --------------------------------------------------------------------------------------
def charts_page(csrf: str) -> str:
    from recall.ui import charts, views

    data = views.charts()
    days = data["days"]
    per = data["per_day"]
    prompts = [per[d]["prompts"] for d in days]
    injected = [per[d]["injected"] for d in days]
    searched = [per[d]["prompts"] - per[d]["trivial"] for d in days]
    silent = [per[d]["silent"] / n if n else None for d, n in zip(days, searched)]
    series = {"prompts": prompts, "injected": injected}
    body = (
        '<h1>Charts</h1><p class="dim">The last 30 days.</p>'
        '<h2>Prompts and injections per day</h2>'
        + charts.bars(days, series)
        + '<h2>Silent share (prompts, trivial ones aside, that got nothing)</h2>'
        + charts.line(days, {"silent": silent}, percent=True, dots=True)
        + '<h2>Used and silent share per week, as <code>recall stats</code> counts them</h2>'
        '<section id="weekly" data-fragment="/fragment/weekly" data-load="1"><p class="dim">reading the '
        'replies…</p></section>'
        + '<h2>Memories by type</h2>'
        + charts.line(days, data["memories"])
        + '<h2>History size (messages indexed)</h2><section id="history" data-fragment="/fragment/history" '
        'data-load="1"><p class="dim">counting…</p></section>'
    )
    return page("Charts", body, csrf, "charts")


def _share(v) -> str:
    return f"{v:.0%}" if isinstance(v, (int, float)) else "–"


def weekly_fragment() -> str:
    """``recall stats`` on the page (``recall.prompt.stats.weekly``): per week, prompts,
    injections, the share of injections the next reply used, the share left silent."""
    from recall.ui import charts, views

    rows = views.weekly()
    if not rows:
        return '<p class="empty">No prompts logged in these weeks.</p>'
    weeks = [r["week"] for r in reversed(rows)]  # oldest first, as the other charts run
    by = {r["week"]: r for r in rows}
    chart = charts.line(
        weeks,
        {"used share": [by[w]["used_share"] for w in weeks], "silent share": [by[w]["silent_share"] for w in weeks]},
        percent=True,
        dots=True,
    )
    trs = "".join(
        f'<tr><td>{e(r["week"])}</td><td class="num">{r["prompts"]}</td>'
        f'<td class="num">{r["injections"]}</td><td class="num">{_share(r["used_share"])}</td>'
        f'<td class="num">{_share(r["silent_share"])}</td><td class="num">{r["unknown"]}</td></tr>'
        for r in rows
    )
    return (
        f'{chart}<table class="weekly"><thead><tr><th>week of</th><th>prompts</th><th>injected</th>'
        f'<th>used</th><th>silent</th><th>not known yet</th></tr></thead><tbody>{trs}</tbody></table>'
        '<p class="dim">used: the share of injections (whose reply is indexed) that the next reply used; '
        'silent: the share of prompts, trivial ones aside, that got nothing.</p>'
    )


def history_fragment() -> str:
    from recall.ui import charts, views

    data = views.history()
    return charts.line(data["days"], {"messages": data["history"]})


# routing -------------------------------------------------------------------------------------
def route(path: str, query: dict, csrf: str) -> str | None:
    if path == "/prompts":
        return prompts_page(csrf)
    if path == "/feed":
        return feed_page(query, csrf)
    if path == "/search":
        return search_page(query, csrf)
    if path == "/sessions":
        return sessions_page(query, csrf)
    if path.startswith("/sessions/") and len(path) > len("/sessions/"):
        from urllib.parse import unquote

        return session_page(unquote(path[len("/sessions/") :]), csrf, query)
    if path == "/memories":
        return memories_page(query, csrf)
    if path == "/status":
        return status_page(csrf)
    if path == "/charts":
        return charts_page(csrf)
    return None


def fragment(name: str, query: dict) -> str:
    from recall.ui import views

    if name == "prompts":
        return prompts_list(views.prompts())
    if name == "feed":
        return feed_list(query)
    if name == "search":
        return search_results(query)
    if name == "sessions":
        return sessions_list(query)
    if name == "status":
        return status_fragment()
    if name == "doctor":
        return doctor_fragment()
    if name == "history":
        return history_fragment()
    if name == "weekly":
        return weekly_fragment()
    return problem(f"No fragment {name}.")
