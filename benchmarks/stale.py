"""Stale marks (issue 29): marks where files changed, none where they did not, and what the
hook pays for them.

The history: the pooled history of the injection benchmark (every haystack session of the
LongMemEval-S dev file, deduplicated by the dataset's session id, written as Claude Code
transcripts of ONE project with ``benchmarks.retrieval``'s writer), in a real project folder
(a git root holding the usual files: README.md, package.json, ..., untouched since), plus
fixture sessions in the same project. Each fixture topic is a decision session that writes
a file and names it, and, by kind:

  rewrite   a later session rewrites the file           -> its hits: "<file> changed"
  delete    a later session ``git rm``s it               -> "<file> deleted"
  rename    a later session ``git mv``s it               -> "<file> renamed"
  external  it was edited by hand later (mtime only)     -> "<file> changed"
  control   nothing changed                               -> no mark
  checkout  same content, a newer mtime (a checkout)     -> no mark

Asked: one prompt per topic and every dev question, through the hook's search
(``recall.prompt.candidates.find_hits``, default settings) and ``recall --raw``'s
(``Searcher.search``, 10 sessions). A hit expects exactly the marks of its session (the
decision sessions above; none for the later sessions, the controls and the pooled
history). Counted: hits that expect marks and get exactly them, and hits that expect none
but get one (spurious).

Latency, in the same run, alternated prompt by prompt (medians, so the shared machine's
noise hits both sides): the hook's pipeline in-process with ``hook.stale_marks`` on and off
(what the service does per prompt), and the hook as Claude Code runs it (a process per
prompt, ``benchmarks.hook_latency``'s clock), without and with the service.

    python -m benchmarks.stale [--runs 40] [--no-process] [--out benchmarks/stale.json]

Writes ``benchmarks/stale.json`` (read by ``sections`` for docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from benchmarks.harness import percentile
from benchmarks.retrieval import Case, Session, find_data_dir, longmemeval_haystack, recall_home, uid, write_transcripts

RESULTS = Path(__file__).with_name("stale.json")
DATA_FILE = "longmemeval_s_dev.json.gz"
FIXTURE_START = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LATER = timedelta(days=3)
UNTOUCHED = datetime(2022, 6, 1, tzinfo=timezone.utc)  # the project's other files, last changed then
KINDS = ("rewrite", "delete", "rename", "external", "control", "checkout")
EXPECT = {"rewrite": "changed", "delete": "deleted", "rename": "renamed", "external": "changed"}

# (topic words for the prompt, the file, the decision)
TOPICS = [
    ("stripe refund idempotency", "src/lib/refunds.ts", "refunds carry an idempotency key derived from the order id"),
    ("webhook signature verification", "src/api/webhooks.ts", "webhooks verify the signature on the raw body"),
    ("session cookie rotation", "src/auth/session.ts", "session cookies rotate every 24 hours"),
    ("invoice pdf rendering", "src/billing/invoice_pdf.py", "invoice PDFs render with weasyprint off the request path"),
    ("rate limiter buckets", "src/middleware/ratelimit.go", "the rate limiter uses token buckets per API key"),
    ("search index sharding", "services/search/shards.rs", "the search index is sharded by tenant id"),
    ("email bounce handling", "src/mail/bounces.ts", "hard bounces disable the address after one failure"),
    ("feature flag caching", "src/flags/cache.ts", "feature flags are cached for 30 seconds in memory"),
    ("image thumbnail pipeline", "workers/thumbs/pipeline.py", "thumbnails are generated lazily on first request"),
    ("database migration locking", "db/migrate/lock.sql", "migrations take an advisory lock before running"),
    ("csv export streaming", "src/export/csv_stream.ts", "CSV exports stream rows instead of buffering them"),
    ("oauth token refresh", "src/auth/oauth_refresh.ts", "OAuth tokens refresh five minutes before expiry"),
    ("audit log retention", "src/audit/retention.py", "audit logs are kept for 400 days then archived to S3"),
    ("websocket heartbeat", "src/realtime/heartbeat.ts", "websockets send a heartbeat every 25 seconds"),
    ("currency rounding rules", "src/money/rounding.ts", "currency amounts round half-even at the last step only"),
    ("background job retries", "src/jobs/retry_policy.rb", "background jobs retry five times with exponential backoff"),
    ("graphql query depth", "src/graphql/depth_limit.ts", "GraphQL queries are limited to depth 8"),
    ("pdf upload scanning", "src/uploads/virus_scan.py", "uploaded PDFs are scanned by clamd before storage"),
]
PROJECT_FILES = {  # the rest of the repository: never touched by a session, older than all of it
    "README.md": "# shop\n\nRun `make dev`.\n",
    "package.json": '{"name": "shop", "private": true}\n',
    "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
    "Makefile": "dev:\n\tnpm run dev\n",
    "src/index.ts": "export {}\n",
    "docs/setup.md": "# Setup\n",
    "config.yaml": "env: dev\n",
    "requirements.txt": "weasyprint\n",
}


# ------------------------------------------------------------------------------------ the history
def load_pool(path: Path, limit: int | None = None) -> tuple[list[Session], list[tuple[str, str]]]:
    """Every haystack session of the dev file (deduplicated by its id), and the questions."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    sessions: dict[str, Session] = {}
    questions = []
    for item in data[:limit] if limit else data:
        qid = str(item.get("question_id") or "")
        for sess in longmemeval_haystack(item, sessions):
            if sess.turns:
                sessions[sess.source_id] = sess
        if qid and str(item.get("question") or "").strip():
            questions.append((qid, str(item["question"])))
    return list(sessions.values()), questions


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Transcript:
    """One fixture session's lines, in the envelope ``benchmarks.retrieval`` writes."""

    def __init__(self, cwd: str, session_id: str, start: datetime) -> None:
        self.cwd, self.session_id, self.clock = cwd, session_id, start
        self.lines: list[dict] = []
        self.n = 0

    def _line(self, kind: str, message: dict) -> None:
        self.n += 1
        self.clock += timedelta(seconds=20)
        self.lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "type": kind,
                "message": message,
                "uuid": uid("fixture", self.session_id, self.n),
                "timestamp": _iso(self.clock),
                "userType": "external",
                "entrypoint": "cli",
                "cwd": self.cwd,
                "sessionId": self.session_id,
                "version": "2.1.197",
                "gitBranch": "main",
            }
        )

    def user(self, text: str) -> None:
        self._line("user", {"role": "user", "content": text})

    def assistant(self, text: str) -> None:
        self._line(
            "assistant",
            {
                "id": f"msg_{self.session_id[:8]}{self.n}",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            },
        )

    def tool(self, name: str, inp: dict) -> None:
        tid = f"toolu_{self.session_id[:8]}{self.n}"
        self._line(
            "assistant",
            {
                "id": f"msg_{self.session_id[:8]}{self.n}",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
            },
        )
        self._line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]})

    def write(self, root: Path) -> None:
        from benchmarks.retrieval import encode_cwd

        d = root / encode_cwd(self.cwd)
        d.mkdir(parents=True, exist_ok=True)
        with open(d / f"{self.session_id}.jsonl", "w", encoding="utf-8") as fh:
            for line in self.lines:
                fh.write(json.dumps(line) + "\n")


def _put(path: Path, content: str, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    os.utime(path, (when.timestamp(), when.timestamp()))


def fixtures(project: Path, root: Path) -> tuple[list[dict], dict[str, set]]:
    """Write the fixture sessions and the files as they are now; (topics, {session: expected
    marks as (path, state)})."""
    out, expected = [], {}
    for i, (words, path, decision) in enumerate(TOPICS):
        kind = KINDS[i % len(KINDS)]
        start = FIXTURE_START + timedelta(days=4 * i)
        dec = Transcript(str(project), uid("fixture-decision", i), start)
        dec.user(f"how should we handle {words}?")
        content = f"// {words}\nexport const rule = {json.dumps(decision)}\n" + "".join(
            f"export const step{k} = {k}\n" for k in range(12)
        )
        dec.tool("Write", {"file_path": str(project / path), "content": content})
        dec.assistant(f"We decided that {decision}; it lives in {path}, and the tests cover it.")
        dec.write(root)
        written = dec.clock
        later = Transcript(str(project), uid("fixture-later", i), start + LATER)
        new_path = path.rsplit(".", 1)[0] + "_v2." + path.rsplit(".", 1)[1]
        if kind == "rewrite":
            later.user(f"rework the {words} from scratch")
            later.tool("Write", {"file_path": str(project / path), "content": f"// {words}, reworked\nexport {{}}\n"})
            later.assistant(f"Reworked the {words}.")
            _put(project / path, f"// {words}, reworked\nexport {{}}\n", later.clock)
        elif kind == "delete":
            later.user(f"drop the old {words} code")
            later.tool("Bash", {"command": f"git rm {path}", "description": "remove it"})
            later.assistant(f"Removed the {words} module: it moved into the platform service.")
        elif kind == "rename":
            later.user(f"rename the {words} module")
            later.tool("Bash", {"command": f"git mv {path} {new_path}", "description": "rename"})
            later.assistant(f"Renamed the {words} module.")
            _put(project / new_path, content, later.clock)
        elif kind == "external":
            _put(project / path, content + "export const patched = true\n" * 10, start + LATER)
        elif kind == "control":
            _put(project / path, content, written)
        else:  # checkout: the same bytes, a newer time
            _put(project / path, content, datetime.now(timezone.utc) - timedelta(hours=1))
        if later.lines:
            later.write(root)
        expected[dec.session_id] = {(path, EXPECT[kind])} if kind in EXPECT else set()
        expected[later.session_id] = set()
        out.append({"topic": words, "path": path, "kind": kind, "prompt": f"how do we handle {words}, and why?"})
    return out, expected


def build(workdir: Path, questions_limit: int | None) -> dict:
    """The project folder, the transcripts and the index (into the current RECALL_HOME)."""
    data = find_data_dir()
    if data is None or not (data / DATA_FILE).exists():
        raise SystemExit(f"{DATA_FILE} not found: set RECALL_BENCH_DATA to the folder holding it")
    project = workdir / "pool"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    for rel, text in PROJECT_FILES.items():
        _put(project / rel, text, UNTOUCHED)
    root = workdir / "claude" / "projects"
    sessions, questions = load_pool(data / DATA_FILE, questions_limit)
    lines = write_transcripts([Case("pool", "pool", str(project), sessions, [])], root)
    topics, expected = fixtures(project, root)
    from indexer.ingest import Indexer

    t0 = time.perf_counter()
    with Indexer() as ix:
        summary = ix.run([root])
    return {
        "project": project,
        "root": root,
        "topics": topics,
        "expected": expected,
        "questions": questions,
        "pool_sessions": len(sessions),
        "pool_lines": lines,
        "messages": summary.messages,
        "index_seconds": round(time.perf_counter() - t0, 1),
    }


# ------------------------------------------------------------------------------------ marks
def account(hits: list, expected: dict[str, set], tally: dict, examples: list) -> None:
    for h in hits:
        want = expected.get(h.session_id, set())
        got = {(m["path"], m["state"]) for m in h.stale}
        if want:
            tally["expect"] += 1
            tally["exact"] += got == want
            tally["missed"] += not (want <= got)
        else:
            tally["clean"] += 1
            if got:
                tally["spurious"] += 1
                if len(examples) < 10:
                    examples.append({"session": h.session_id[:8], "marks": sorted(got), "text": h.text[:120]})


def marks(built: dict) -> dict:
    from recall.prompt.candidates import find_hits
    from recall.prompt.settings import hook_settings
    from recall.search.searcher import Searcher
    from recall.search.stale import mark_hits

    project = str(built["project"])
    searcher = Searcher()
    hook = hook_settings()
    prompts = [("fixture", t["prompt"]) for t in built["topics"]] + [("pool", q) for _qid, q in built["questions"]]
    result = {}
    for path in ("hook", "raw"):
        tally = {"prompts": 0, "hits": 0, "expect": 0, "exact": 0, "missed": 0, "clean": 0, "spurious": 0}
        by_kind = {"fixture": dict(tally), "pool": dict(tally)}
        examples: list = []
        for kind, prompt in prompts:
            if path == "hook":
                hits = find_hits(prompt, project, "bench-now", hook, searcher)
            else:
                hits = searcher.search(prompt, limit=10, project=project)
            mark_hits(hits, project)
            t = by_kind[kind]
            t["prompts"] += 1
            t["hits"] += len(hits)
            account(hits, built["expected"], t, examples)
        result[path] = {"by_prompts": by_kind, "spurious_examples": examples}
    return result


# ------------------------------------------------------------------------------------ latency
def _row(label: str, on: list[float], off: list[float], extra: dict | None = None) -> dict:
    diffs = [a - b for a, b in zip(on, off)]
    row = {
        "mode": label,
        "runs": len(on),
        "off_p50_ms": round(percentile(off, 0.5) * 1000, 2),
        "off_p95_ms": round(percentile(off, 0.95) * 1000, 2),
        "on_p50_ms": round(percentile(on, 0.5) * 1000, 2),
        "on_p95_ms": round(percentile(on, 0.95) * 1000, 2),
        "added_p50_ms": round((percentile(on, 0.5) - percentile(off, 0.5)) * 1000, 2),
        "added_p95_ms": round((percentile(on, 0.95) - percentile(off, 0.95)) * 1000, 2),
        "paired_diff_median_ms": round(statistics.median(diffs) * 1000, 2) if diffs else None,
    }
    row.update(extra or {})
    return row


def prompts_for_latency(built: dict, n: int) -> list[str]:
    """Half the fixture prompts (their hits carry marks), half dev questions (mostly none)."""
    fx = [t["prompt"] for t in built["topics"]]
    qs = [q for _qid, q in built["questions"]]
    out = []
    while len(out) < n:
        out.append(fx[len(out) // 2 % len(fx)] if len(out) % 2 == 0 else qs[len(out) // 2 % len(qs)])
    return out


def in_process(built: dict, texts: list[str], rounds: int = 3) -> dict:
    """The hook's pipeline in a warm process (the service's work per prompt), marks on / off
    alternated per prompt; and ``mark_hits`` alone on the hits kept."""
    from recall.core import config
    from recall.prompt import context as rc
    from recall.prompt.candidates import find_hits, shared_searcher
    from recall.prompt.settings import hook_settings
    from recall.search.stale import mark_hits

    project = str(built["project"])
    searcher = shared_searcher()
    cfg_on = config.load()
    cfg_on.setdefault("hook", {})["stale_marks"] = True
    cfg_off = json.loads(json.dumps(cfg_on))
    cfg_off["hook"]["stale_marks"] = False
    on, off, alone, marked = [], [], [], 0
    for r in range(rounds):
        for i, text in enumerate(texts):
            payload = {"prompt": text, "cwd": project, "session_id": f"bench-{r}-{i}"}
            order = ((cfg_on, on), (cfg_off, off)) if (i + r) % 2 == 0 else ((cfg_off, off), (cfg_on, on))
            for cfg, sink in order:
                t0 = time.perf_counter()
                rc.build_context(payload, time.time() + 30, cfg=cfg, searcher=searcher)
                sink.append(time.perf_counter() - t0)
            hits = find_hits(text, project, "bench", hook_settings(cfg_off), searcher)
            for h in hits:
                h.stale = []
            t0 = time.perf_counter()
            mark_hits(hits, project)
            alone.append(time.perf_counter() - t0)
            marked += sum(bool(h.stale) for h in hits)
    row = _row("pipeline in a warm process (the service's work)", on, off)
    row.update(
        {
            "mark_hits_p50_ms": round(percentile(alone, 0.5) * 1000, 3),
            "mark_hits_p95_ms": round(percentile(alone, 0.95) * 1000, 3),
            "marked_hits": marked,
        }
    )
    return row


def processes(built: dict, texts: list[str], service: bool) -> dict:
    """The hook as Claude Code runs it (a process per prompt), marks on / off alternated."""
    from benchmarks.harness import recall_exe, start_service, stop_service, time_process
    from benchmarks.hook_latency import bench_env
    from recall.core import config, paths

    home = paths.recall_home()
    claude_dir = home / "claude-bench" / ".claude"
    claude_dir.mkdir(parents=True, exist_ok=True)
    env = bench_env(home, claude_dir)
    if not service:
        env["RECALL_NO_SERVICE"] = "1"
    argv = [*recall_exe(), "hook", "user-prompt-submit"]
    project = str(built["project"])

    def setting(on: bool) -> None:
        config.save({"hook": {"stale_marks": on}})

    proc = start_service(env) if service else None
    on, off, on_cpu, off_cpu = [], [], [], []
    try:
        for i, text in enumerate([*texts[:3], *texts]):
            payload = json.dumps(
                {
                    "session_id": f"bench-{i}",
                    "transcript_path": "",
                    "cwd": project,
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": text,
                }
            ).encode()
            order = (True, False) if i % 2 == 0 else (False, True)
            for flag in order:
                setting(flag)
                wall, cpu, _out, _ = time_process(argv, env, payload)
                if i >= 3:
                    (on if flag else off).append(wall)
                    (on_cpu if flag else off_cpu).append(cpu)
    finally:
        if proc is not None:
            stop_service(proc)
        config.save({})
    label = "hook process, service" if service else "hook process, no service"
    return _row(
        label,
        on,
        off,
        {
            "on_cpu_p50_ms": round(percentile(on_cpu, 0.5) * 1000, 1),
            "off_cpu_p50_ms": round(percentile(off_cpu, 0.5) * 1000, 1),
        },
    )


# ------------------------------------------------------------------------------------ run
def run(runs: int = 40, with_processes: bool = True, questions: int | None = None, workdir: Path | None = None) -> dict:
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="recall-stale-bench-")
        workdir = Path(tmp.name)
    try:
        with recall_home(workdir / "home"):
            os.environ["RECALL_NO_SERVICE"] = "1"
            built = build(workdir, questions)
            res = {
                "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "cpus": os.cpu_count(),
                "pool_sessions": built["pool_sessions"],
                "messages": built["messages"],
                "fixture_topics": len(built["topics"]),
                "kinds": {k: sum(t["kind"] == k for t in built["topics"]) for k in KINDS},
                "dev_questions": len(built["questions"]),
                "index_seconds": built["index_seconds"],
            }
            res["marks"] = marks(built)
            texts = prompts_for_latency(built, runs)
            res["latency"] = [in_process(built, texts)]
            if with_processes:
                res["latency"].append(processes(built, texts, service=False))
                os.environ.pop("RECALL_NO_SERVICE", None)
                res["latency"].append(processes(built, texts, service=True))
            res["load_average"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
            return res
    finally:
        os.environ.pop("RECALL_NO_SERVICE", None)
        if tmp is not None:
            tmp.cleanup()


def markdown(res: dict) -> str:
    lines = [
        "| path | prompts | hits | hits expecting marks | marked exactly as expected | "
        "hits expecting none | spurious marks |",
        "|---|---|---|---|---|---|---|",
    ]
    for path, label in (("hook", "prompt hook"), ("raw", "`recall --raw` (10 sessions)")):
        for kind, what in (("fixture", "fixture topics"), ("pool", "dev questions (pooled history)")):
            t = res["marks"][path]["by_prompts"][kind]
            lines.append(
                f"| {label}: {what} | {t['prompts']} | {t['hits']} | {t['expect']} | {t['exact']} | "
                f"{t['clean']} | {t['spurious']} |"
            )
    lines += [
        "",
        "| hook latency | runs | without marks p50 / p95 ms | with marks p50 / p95 ms | "
        "added p50 / p95 ms | median paired difference ms | process CPU p50 ms without / with |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["latency"]:
        cpu = f"{r['off_cpu_p50_ms']} / {r['on_cpu_p50_ms']}" if "on_cpu_p50_ms" in r else "-"
        lines.append(
            f"| {r['mode']} | {r['runs']} | {r['off_p50_ms']} / {r['off_p95_ms']} | "
            f"{r['on_p50_ms']} / {r['on_p95_ms']} | {r['added_p50_ms']} / {r['added_p95_ms']} | "
            f"{r['paired_diff_median_ms']} | {cpu} |"
        )
    return "\n".join(lines)


def sections(res: dict | None = None) -> list[str]:
    """docs/benchmarks.md's section, from the committed ``benchmarks/stale.json`` (prose in
    benchmarks/prose/stale.md)."""
    from benchmarks.page import prose

    if res is None or "marks" not in res:
        try:
            res = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
    ip = res["latency"][0]
    return [
        prose(
            "stale",
            pool_sessions=f"{res['pool_sessions']:,}",
            fixture_topics=res["fixture_topics"],
            dev_questions=res["dev_questions"],
            table=markdown(res),
            mark_p50=ip["mark_hits_p50_ms"],
            mark_p95=ip["mark_hits_p95_ms"],
            when=res["when"],
            cpus=res["cpus"],
            load=res.get("load_average"),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.stale", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="prompts per latency mode")
    ap.add_argument("--questions", type=int, help="only the first N dev questions' haystacks (a smoke run)")
    ap.add_argument("--no-process", action="store_true", help="skip the hook-process latency modes")
    ap.add_argument("--workdir", type=Path, help="build here and keep it (default: a temporary folder)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    res = run(args.runs, not args.no_process, args.questions, args.workdir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(markdown(res))
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
