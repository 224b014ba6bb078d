"""The page of ``recall ui`` on a large history (issue 37): first paint, search as you type, the
service's RSS with the page open, and the prompt hook's p50 with the page open and without.

The history: ``benchmarks.generate``'s transcripts (``--messages``, 1,000,000 by default),
indexed by ``recall index``, and a full injection log (both files of its rotation, ~4 MB of
records as the hook writes them). A real ``recall serve`` runs on it; ``recall ui --no-open``
asks it for the page, which the service then serves from a thread of its own.

Measured, each next to a baseline of the same run:

* first paint of each page (Prompts, Search with a query, Sessions, a session, Status, Charts):
  ``first-contentful-paint`` in Debian's headless chromium (the same launch as the browser
  tests), medians of ``--paints`` loads; the baseline is the same page's HTML saved as a
  static file and served by the standard library's ``http.server`` from the same machine (what
  painting that document costs without recall reading anything). Without chromium, only the
  server's time to the whole document is measured (and said so);
* search as you type: every prefix (from 3 characters) of ``--queries`` queries of the
  generator's query set, as the page asks for it (``/fragment/search?q=…``: the search, the
  exchange, the stale marks, the HTML), p50/p95, alternated prefix by prefix with the baseline:
  the same search through the service's socket (op ``search``: no HTTP, no HTML);
* the service's RSS before the page was ever asked for (after the baseline searches warmed
  it) and after every page was loaded and every prefix searched, with the live stream open;
* the prompt hook (a process per prompt, as Claude Code runs it) before the page was started
  and after, with the page open on Prompts (it refreshes on every hook's injection): medians.

    python -m benchmarks.ui [--messages 1000000] [--work DIR] [--out benchmarks/ui.json]

Writes ``benchmarks/ui.json`` (read by ``sections`` for docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import http.server
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from benchmarks.harness import percentile, recall_exe, start_service, state_env, stop_service, time_process

RESULTS = Path(__file__).with_name("ui.json")
PAGES = ("/prompts", "/search?q=flaky+test", "/sessions", "SESSION", "/status", "/charts")
TARGETS = {"first_paint_ms": 300.0, "search_p95_ms": 100.0, "rss_growth_mb": 30.0}


# ---------------------------------------------------------------------------- the history
def build_history(work: Path, messages: int, seed: int) -> dict:
    """Generate and index the history (kept in ``work`` and reused when it is there)."""
    from benchmarks.generate import generate

    claude, home = work / "claude", work / "home"
    done = work / "generated.json"
    info = json.loads(done.read_text()) if done.exists() else {}
    if info.get("messages") != messages or info.get("seed") != seed:
        shutil.rmtree(claude, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        t0 = time.monotonic()
        generate(claude / "projects", messages, seed=seed)
        info = {"messages": messages, "seed": seed, "generate_s": round(time.monotonic() - t0, 1)}
        done.write_text(json.dumps(info))
    env = state_env(home, claude, service=False)
    if not (home / "index").exists() or not info.get("indexed"):
        t0 = time.monotonic()
        out = subprocess.run([*recall_exe(), "index"], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"recall index failed: {out.stderr[-2000:]}")
        info["indexed"] = True
        info["index_s"] = round(time.monotonic() - t0, 1)
        done.write_text(json.dumps(info))
    return info


def fill_injection_log(home: Path, projects: list[str], sessions: list[str], seed: int) -> int:
    """Both files of the injection log's rotation, full, as the hook writes its records."""
    from recall.prompt import injections

    rng = random.Random(seed)
    words = "queue retry webhook stripe flaky test migration schema cache token deploy refund".split()
    n = 0
    for name in ("injections.jsonl.1", "injections.jsonl"):
        lines, size, t = [], 0, time.time() - (86400 * 30 if name.endswith(".1") else 86400 * 10)
        while size < injections.MAX_BYTES - 2048:
            t += rng.uniform(20, 400)
            text = (
                "<recalled-context>\n"
                + "\n".join(
                    f"- [2026-11-{rng.randint(1, 28):02d} session {rng.choice(sessions)[:8]}] "
                    + " ".join(rng.choice(words) for _ in range(24))
                    for _ in range(5)
                )
                + "\n</recalled-context>"
            )
            outcome = rng.choice(("raw", "synthesized", "nothing", "trivial", "raw"))
            rec = {
                "t": round(min(t, time.time() - 60), 3),
                "project": rng.choice(projects),
                "session": rng.choice(sessions),
                "outcome": outcome,
                "why": "" if outcome == "synthesized" else "no backend",
                "hits": [
                    {
                        "session": rng.choice(sessions),
                        "score": round(rng.uniform(5, 60), 3),
                        "confidence": round(rng.uniform(0.3, 0.9), 3),
                    }
                    for _ in range(3)
                ]
                if outcome in ("raw", "synthesized")
                else [],
                "backend": "api" if outcome == "synthesized" else "",
                "via": "service",
                "service": "",
                "chars": len(text),
                "tokens": len(text) // 4,
                "latency_ms": round(rng.uniform(20, 900), 1),
                "text": text if outcome in ("raw", "synthesized") else "",
            }
            line = json.dumps(rec, separators=(",", ":")) + "\n"
            lines.append(line)
            size += len(line)
            n += 1
        path = home / name
        path.write_text("".join(lines))
        os.chmod(path, 0o600)
    return n


# ---------------------------------------------------------------------------- HTTP
class Page:
    """One keep-alive connection to the page, with its cookie."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.port = parts.port
        self.token = parts.query.split("token=", 1)[1]
        self.cookie = f"recall_ui_{self.port}={self.token}"
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def get(self, path: str) -> tuple[float, int, bytes]:
        t0 = time.perf_counter()
        for attempt in (0, 1):
            try:
                self.conn.request("GET", path, headers={"Cookie": self.cookie})
                resp = self.conn.getresponse()
                body = resp.read()
                return time.perf_counter() - t0, resp.status, body
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt:
                    raise
        raise AssertionError("unreachable")


@contextlib.contextmanager
def live_stream(page: Page):
    """The page's live stream held open, read in a thread, as an open tab holds it."""
    conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=600)
    conn.request("GET", "/events", headers={"Cookie": page.cookie})
    resp = conn.getresponse()
    events = []
    stop = threading.Event()

    def read():
        with contextlib.suppress(Exception):
            while not stop.is_set():
                line = resp.fp.readline()
                if not line:
                    return
                if line.startswith(b"event:"):
                    events.append(line)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    try:
        yield events
    finally:
        stop.set()
        conn.close()


@contextlib.contextmanager
def static_copy(pages: dict[str, bytes], static: dict[str, bytes]):
    """The pages' HTML (and the page's script and stylesheet) served as plain files."""
    root = Path(tempfile.mkdtemp(prefix="recall-ui-static-"))
    (root / "static").mkdir()
    for name, data in static.items():
        (root / "static" / name).write_bytes(data)
    names = {}
    for i, (path, html) in enumerate(pages.items()):
        (root / f"p{i}.html").write_bytes(html)
        names[path] = f"/p{i}.html"

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv.server_address[1], names
    finally:
        srv.shutdown()
        srv.server_close()
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------- the browser
FCP_JS = "const e = performance.getEntriesByName('first-contentful-paint')[0];return e ? e.startTime : null;"


@contextlib.contextmanager
def chromium(profile: Path):
    from tests.support.ui import CHROMIUM, DRIVER, FLAGS, _found

    exe, drv = _found(CHROMIUM), _found(DRIVER)
    if not exe or not drv:
        yield None
        return
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        yield None
        return
    os.environ.setdefault("SE_OFFLINE", "true")
    opts = webdriver.ChromeOptions()
    opts.binary_location = exe
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    d = webdriver.Chrome(service=Service(executable_path=drv), options=opts)
    try:
        yield d
    finally:
        d.quit()


def first_paint(d, url: str) -> float | None:
    d.get(url)
    for _ in range(100):
        v = d.execute_script(FCP_JS)
        if v is not None:
            return float(v)
        time.sleep(0.02)
    return None


# ---------------------------------------------------------------------------- the run
def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The process's resident memory (``VmRSS``), or its anonymous part (``RssAnon``: the heap,
    without the index's memory-mapped files, which the kernel maps in and out as it likes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def memory(pid: int) -> dict:
    return {"rss_mb": rss_mb(pid), "anon_mb": rss_mb(pid, "RssAnon")}


def hook_runs(env: dict, prompts: list[str], cwd: str, n: int, between=None) -> list[float]:
    """``n`` hook processes, a pause between two (prompts come seconds apart; the page refreshes
    after each): ``between(i)`` is called before each run (the alternation)."""
    out = []
    for i in range(n):
        if between is not None:
            between(i)
        time.sleep(0.3)
        payload = {
            "session_id": f"bench-ui-{i}",
            "transcript_path": "/nowhere.jsonl",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompts[i % len(prompts)],
        }
        wall, _cpu, _out, rc = time_process(
            [*recall_exe(), "hook", "user-prompt-submit"], env, stdin=json.dumps(payload).encode(), timeout=120
        )
        if rc == 0:
            out.append(wall)
    return out


def ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1000, 1)


def run(args) -> dict:
    from benchmarks.generate import query_set

    work = Path(args.work or tempfile.mkdtemp(prefix="recall-bench-ui-"))
    work.mkdir(parents=True, exist_ok=True)
    info = build_history(work, args.messages, args.seed)
    home, claude = work / "home", work / "claude"
    env = state_env(home, claude, service=True)
    os.environ.update({k: env[k] for k in ("RECALL_HOME", "CLAUDE_CONFIG_DIR")})
    os.environ.pop("RECALL_NO_SERVICE", None)
    from indexer.state import list_sessions
    from recall.core import service_client as client

    rows = list_sessions(limit=2000)
    projects = sorted({r.project for r in rows if r.project})
    sessions = [r.session_id for r in rows]
    records = fill_injection_log(home, projects, sessions, args.seed)
    queries = [q["text"] for q in query_set(args.seed) if len(q["text"]) >= 6][: args.queries]
    prefixes = [q[:i] for q in queries for i in range(3, len(q) + 1) if q[i - 1] != " "][: args.max_prefixes]
    hook_prompts = [f"what did we decide about {q}?" for q in queries]
    cwd = rows[0].cwd or rows[0].project

    proc = start_service(env, until="watching", log=work / "serve.log", timeout=1800)
    res: dict = {
        "when": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "messages": args.messages,
        "sessions": len(list_sessions()),
        "injection_records": records,
        "queries": len(queries),
        "prefixes": len(prefixes),
        "history": info,
    }
    started = client.call("status", {}, timeout=10).get("started")
    try:
        # warm: every baseline search once, then the service's RSS before the page exists
        for p in prefixes:
            client.call("search", {"text": p, "limit": 20}, timeout=60)
        res["before"] = memory(proc.pid)
        res["hook_before_s"] = hook_runs(env, hook_prompts, cwd, args.hook_runs)

        out = subprocess.run([*recall_exe(), "ui", "--no-open"], env=env, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise SystemExit(f"recall ui failed: {out.stderr}")
        url = out.stdout.strip()
        page = Page(url)
        sid = sessions[0]
        paths = [p if p != "SESSION" else f"/sessions/{sid}" for p in PAGES]
        with live_stream(page) as events:
            # the server's time to each whole document
            docs: dict[str, list[float]] = {p: [] for p in paths}
            html: dict[str, bytes] = {}
            for _ in range(args.paints):
                for p in paths:
                    dt, status, body = page.get(p)
                    if status != 200:
                        raise SystemExit(f"{p}: HTTP {status}")
                    docs[p].append(dt)
                    html[p] = body
            res["document_ms"] = {p: ms(percentile(v, 0.5)) for p, v in docs.items()}
            res["after_documents"] = memory(proc.pid)
            static = {n: page.get(f"/static/{n}")[2] for n in ("ui.js", "ui.css")}

            # first paint, the page and its static copy alternated
            paint: dict[str, dict] = {}
            with chromium(work / "profile") as d, static_copy(html, static) as (sport, names):
                if d is None:
                    res["first_paint"] = None
                    res["first_paint_why"] = "no chromium and chromium-driver (or selenium) on this machine"
                else:
                    d.get(url)  # the token for the cookie
                    for p in paths:
                        ui, base = [], []
                        for _ in range(args.paints):
                            ui.append(first_paint(d, f"http://127.0.0.1:{page.port}{p}"))
                            base.append(first_paint(d, f"http://127.0.0.1:{sport}{names[p]}"))
                        ui = [v for v in ui if v is not None]
                        base = [v for v in base if v is not None]
                        paint[p] = {
                            "ui_ms": round(percentile(ui, 0.5), 1) if ui else None,
                            "static_ms": round(percentile(base, 0.5), 1) if base else None,
                        }
                    res["first_paint"] = paint
                    res["after_paints"] = memory(proc.pid)
                    d.get(f"http://127.0.0.1:{page.port}/prompts")  # a tab left open on Prompts

                    # search as you type, alternated with the socket's search
                    ui_t, sock_t = [], []
                    for i, p in enumerate(prefixes):
                        order = (0, 1) if i % 2 == 0 else (1, 0)
                        for which in order:
                            if which == 0:
                                dt, status, _ = page.get(f"/fragment/search?q={quote(p)}")
                                ui_t.append(dt)
                            else:
                                t0 = time.perf_counter()
                                client.call("search", {"text": p, "limit": 20}, timeout=60)
                                sock_t.append(time.perf_counter() - t0)
                    res["search"] = {
                        "ui_p50_ms": ms(percentile(ui_t, 0.5)),
                        "ui_p95_ms": ms(percentile(ui_t, 0.95)),
                        "socket_p50_ms": ms(percentile(sock_t, 0.5)),
                        "socket_p95_ms": ms(percentile(sock_t, 0.95)),
                    }
                    res["after"] = memory(proc.pid)
                    # the hook with a tab open on Prompts, alternated with the tab on a blank page
                    opened, blank = [], []

                    def tab(i):
                        d.get(f"http://127.0.0.1:{page.port}/prompts" if i % 2 == 0 else "about:blank")

                    for i, wall in enumerate(hook_runs(env, hook_prompts, cwd, 2 * args.hook_runs, tab)):
                        (opened if i % 2 == 0 else blank).append(wall)
                    res["hook_after_s"], res["hook_blank_s"] = opened, blank
                    res["live_events"] = len(events)
            if "search" not in res:  # no browser: the searches still run
                ui_t, sock_t = [], []
                for p in prefixes:
                    dt, _s, _b = page.get(f"/fragment/search?q={quote(p)}")
                    ui_t.append(dt)
                    t0 = time.perf_counter()
                    client.call("search", {"text": p, "limit": 20}, timeout=60)
                    sock_t.append(time.perf_counter() - t0)
                res["search"] = {
                    "ui_p50_ms": ms(percentile(ui_t, 0.5)),
                    "ui_p95_ms": ms(percentile(ui_t, 0.95)),
                    "socket_p50_ms": ms(percentile(sock_t, 0.5)),
                    "socket_p95_ms": ms(percentile(sock_t, 0.95)),
                }
                res["after"] = memory(proc.pid)
                res["hook_after_s"] = hook_runs(env, hook_prompts, cwd, args.hook_runs)
        if client.call("status", {}, timeout=10).get("started") != started:
            raise SystemExit(
                "the service restarted during the run (the installed code changed under it): "
                "run the benchmark again without touching recall/ or indexer/ meanwhile"
            )
    finally:
        stop_service(proc)
    for k in ("hook_before_s", "hook_after_s", "hook_blank_s"):
        if k in res:
            v = res.pop(k)
            res[k.replace("_s", "_p50_ms")] = ms(percentile(v, 0.5))
    res["anon_growth_mb"] = round(res["after"]["anon_mb"] - res["before"]["anon_mb"], 1)
    res["rss_growth_mb"] = round(res["after"]["rss_mb"] - res["before"]["rss_mb"], 1)
    return res


# ---------------------------------------------------------------------------- docs/benchmarks.md
def sections() -> list[str]:
    """docs/benchmarks.md's section on the page (prose in benchmarks/prose/ui.md)."""
    from benchmarks.page import prose

    try:
        data = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        return [prose("ui", figures="Not measured yet.")]
    paint = data.get("first_paint") or {}
    lines = [
        "| page | first paint, recall ui | first paint, the same HTML as a static file | ratio "
        "| server's time to the document |",
        "|---|---:|---:|---:|---:|",
    ]
    worst = None
    for p, doc in data["document_ms"].items():
        f = paint.get(p) or {}
        ui, base = f.get("ui_ms"), f.get("static_ms")
        ratio = f"{ui / base:.2f}×" if ui and base else "—"
        label = "a session (`/sessions/ID`)" if p.startswith("/sessions/") else f"`{p}`"
        lines.append(
            f"| {label} | {ui if ui is not None else '—'} ms | {base if base is not None else '—'} ms "
            f"| {ratio} | {doc} ms |"
        )
        if ui is not None:
            worst = max(worst or 0.0, ui)
    s = data["search"]
    target_ok = lambda v, t: "pass" if v is not None and v <= t else "MISS"  # noqa: E731
    figures = "\n".join(
        [
            *lines,
            "",
            "| figure | recall ui | baseline | ratio | target |",
            "|---|---:|---:|---:|---:|",
            f"| first paint, slowest page | {worst} ms | | | ≤ {TARGETS['first_paint_ms']:.0f} ms "
            f"({target_ok(worst, TARGETS['first_paint_ms'])}) |",
            f"| search as you type p50 ({data['prefixes']:,} prefixes of {data['queries']} queries) | {s['ui_p50_ms']} ms "
            f"| {s['socket_p50_ms']} ms (the socket's `search` op) | {s['ui_p50_ms'] / s['socket_p50_ms']:.2f}× | |",
            f"| search as you type p95 | {s['ui_p95_ms']} ms | {s['socket_p95_ms']} ms | "
            f"{s['ui_p95_ms'] / s['socket_p95_ms']:.2f}× | ≤ {TARGETS['search_p95_ms']:.0f} ms "
            f"({target_ok(s['ui_p95_ms'], TARGETS['search_p95_ms'])}) |",
            f"| the service's anonymous RSS (its heap), page open and used | {data['after']['anon_mb']} MB "
            f"| {data['before']['anon_mb']} MB (before the page was asked for) | {data['anon_growth_mb']:+} MB "
            f"| ≤ +{TARGETS['rss_growth_mb']:.0f} MB ({target_ok(data['anon_growth_mb'], TARGETS['rss_growth_mb'])}) |",
            f"| the service's whole RSS (with the index's mapped files), page open and used | {data['after']['rss_mb']} MB "
            f"| {data['before']['rss_mb']} MB | {data['rss_growth_mb']:+} MB | |",
            f"| prompt hook p50 (a process per prompt, through the service), a tab open on Prompts "
            f"| {data['hook_after_p50_ms']} ms | {data['hook_blank_p50_ms']} ms (the tab on a blank page, alternated) "
            f"| {data['hook_after_p50_ms'] / data['hook_blank_p50_ms']:.2f}× | |",
            f"| prompt hook p50, the page's server started | {data['hook_blank_p50_ms']} ms "
            f"| {data['hook_before_p50_ms']} ms (before `recall ui`, the same service) "
            f"| {data['hook_blank_p50_ms'] / data['hook_before_p50_ms']:.2f}× | |",
        ]
    )
    why = "" if data.get("first_paint") is not None else f" First paint not measured: {data.get('first_paint_why')}."
    return [
        prose(
            "ui",
            figures=prose(
                "ui-figures",
                when=data["when"],
                machine=data["machine"],
                messages=f"{data['messages']:,}",
                sessions=f"{data['sessions']:,}",
                records=f"{data['injection_records']:,}",
                table=figures,
                why=why,
            ).rstrip("\n"),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ui", description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages in the generated history")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, help="a folder for the history (reused when it holds the same one)")
    ap.add_argument("--queries", type=int, default=25, help="queries whose prefixes are searched as typed")
    ap.add_argument("--max-prefixes", type=int, default=600)
    ap.add_argument("--paints", type=int, default=7, help="loads of each page for its first paint")
    ap.add_argument("--hook-runs", type=int, default=30, help="hook processes before and after the page")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    res = run(args)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
