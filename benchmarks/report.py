"""The one writer of docs/benchmarks.md: the run's results (``benchmarks/run.json``, kept by
``python -m benchmarks.run --write-docs``) and every results JSON committed beside the
benchmarks, rendered into the page, with its prose read from ``benchmarks/prose/*.md``.

    python -m benchmarks.report [--run benchmarks/run.json] [--docs docs/benchmarks.md] [--check]

Writes the page again from what is committed (no benchmark runs); ``--check`` only says
whether the page is in sync (exit 1 when it is not). A benchmark's own section comes from a
``sections(res)``-style function of its module reading its JSON; this module puts them in order.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from string import Template

from benchmarks.run import RETIRED, SCALING_SIZES, rows_of, scaling_row

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DOCS = REPO / "docs" / "benchmarks.md"
RUN = HERE / "run.json"  # the figures of the last full run of benchmarks.run, kept
PROSE = HERE / "prose"


# ---------------------------------------------------------------------------- prose
def prose(name: str, **values) -> str:
    """``benchmarks/prose/<name>.md`` with its ``${placeholders}`` filled from ``values``."""
    return Template((PROSE / f"{name}.md").read_text(encoding="utf-8")).substitute(values)


def miss_reasons() -> dict[str, str]:
    """Why a target was missed, by the start of the figure's name (``prose/missed.md``: a
    ``## heading`` per figure name, its reason below)."""
    text = re.sub(r"<!--.*?-->", "", (PROSE / "missed.md").read_text(encoding="utf-8"), flags=re.S)
    out: dict[str, str] = {}
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        key, _, body = block.partition("\n")
        out[key.strip()] = " ".join(body.split())
    return out


# ---------------------------------------------------------------------------- tables
def _fmt(v, unit: str = "") -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and abs(v) < 10:
        s = f"{v:.2f}"
    elif isinstance(v, float) and abs(v) < 1000:
        s = f"{v:.1f}"
    else:
        s = f"{round(v):,}"
    return f"{s} {unit}".strip()


def table(rows: list[dict]) -> str:
    out = ["| figure | recall | baseline | recall ÷ baseline | target | |", "|---|---:|---:|---:|---|---|"]
    for r in rows:
        base = f"{_fmt(r['baseline'], r['unit'])} ({r['baseline_name']})" if r["baseline"] is not None else "—"
        out.append(f"| {r['figure']} | {_fmt(r['value'], r['unit'])} | {base} | {r['ratio']} | "
                   f"{r['target'] or '—'} | {r['status']} |")
    return "\n".join(out)


def details(res: dict) -> str:
    """Secondary tables: per query kind, process latencies, freshness, backfill."""
    parts = []
    q = res.get("queries")
    if q:
        parts += ["### Search latency by query kind (in-process, limit 10)", "",
                  f"{q['queries']} queries × {q['reps']} repetitions; index of {q['index_documents']:,} documents, "
                  f"FTS5 table of {q['fts5_rows']:,} rows. Queries answered (≥ 1 hit): recall "
                  f"{q['answered']['recall']}/{q['answered']['of']}, FTS5 {q['answered']['fts5']}/{q['answered']['of']}.",
                  "", "| kind | recall p50 ms | recall p95 ms | FTS5 p50 ms | FTS5 p95 ms |", "|---|---:|---:|---:|---:|"]
        for k, v in [("all", q), *q["by_kind"].items()]:
            parts.append(f"| {k} | {v['recall']['p50_ms']} | {v['recall']['p95_ms']} | "
                         f"{v['fts5']['p50_ms']} | {v['fts5']['p95_ms']} |")
        parts.append("")
    p = res.get("processes")
    if p:
        parts += ["### Process latency (spawn to exit, interleaved with `python -c pass`)", "",
                  f"{p['runs']} runs per mode; prompts from `hook_latency.prompts`, cwd `{p['project']}`.", "",
                  "| process | p50 ms | p95 ms | `python -c pass` p50 ms | p95 ms | note |", "|---|---:|---:|---:|---:|---|"]
        for key, label in (("hook_local", "`recall hook user-prompt-submit`, no service"),
                           ("hook_service", "`recall hook user-prompt-submit`, service")):
            h = p[key]
            parts.append(f"| {label} | {h['p50_ms']} | {h['p95_ms']} | {h['python_pass_p50_ms']} | "
                         f"{h['python_pass_p95_ms']} | injected {h['injected']}/{h['runs']} |")
        for key, label in (("cli_local", "`recall --raw --limit 5`, no service"),
                           ("cli_service", "`recall --raw --limit 5`, service")):
            c = p[key]
            parts.append(f"| {label} | {c['recall']['p50_ms']} | {c['recall']['p95_ms']} | "
                         f"{c['python_pass']['p50_ms']} | {c['python_pass']['p95_ms']} | failed {c['failed']} |")
        parts.append("")
    fr = res.get("freshness")
    if fr:
        parts += [f"### Freshness at {fr['rate']:g} lines/s across {fr['files']} files for {fr['seconds']:g} s", "",
                  f"Background corpus {fr['corpus']:,} messages; readers poll every 10 ms.", "",
                  "| system | lines | p50 ms | p95 ms | p99 ms | max ms | missing | commits |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in (fr["recall"], fr["fts5"]):
            parts.append(f"| {r['system']} | {r['lines']} | {r['p50']} | {r['p95']} | {r['p99']} | {r['max']} | "
                         f"{r['missing']} | {r.get('commits') if r.get('commits') is not None else '—'} |")
        parts.append("")
    bf = res.get("backfill")
    if bf:
        parts += ["### Backfill", "",
                  "Peak RSS counts the index pages Tantivy maps (merges read whole segments through mmap: "
                  "reclaimable page cache); the anonymous RSS is the memory the process itself holds, sampled "
                  "every 100 ms.", "",
                  "| system | messages | wall s | CPU s | messages/s | peak RSS MB | peak anonymous MB | on disk MB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for key in ("index", "serve", "fts5"):
            r = bf.get(key)
            if not r:
                continue
            disk = r.get("index_mb")
            if r.get("archive_mb") is not None:
                disk = f"{r['index_mb']} index + {r['archive_mb']} archive"
            parts.append(f"| {r['system']} | {r['messages']:,} | {r['seconds']} | {r.get('cpu_seconds', '—')} | "
                         f"{round(r['messages'] / r['seconds']) if r['seconds'] else '—':,} | {r['peak_rss_mb']} | "
                         f"{r.get('peak_anon_mb', '—')} | {disk} |")
        parts.append("")
    return "\n".join(parts)


def missed(rows: list[dict], res: dict | None = None) -> list[str]:
    """The targets this run missed, each with its figure and why (reasons written by hand,
    plus what this run measured where it explains the miss)."""
    reasons = miss_reasons()
    out = []
    for r in rows:
        if r["status"] != "MISS":
            continue
        keys = [k for k in reasons if r["figure"].startswith(k)]
        why = reasons[max(keys, key=len)] if keys else ""
        sv = (((res or {}).get("backfill") or {}).get("serve")) or {}
        if r["figure"].startswith("last 7 days searchable") and sv.get("seconds") and sv.get("week_messages"):
            rate = sv["messages"] / sv["seconds"]
            why += (f" This run: {sv['week_messages']:,} messages in the last 7 days at the backfill's average "
                    f"{rate:,.0f} messages/s are {sv['week_messages'] / rate:.1f} s of reading alone.")
        base = f" (baseline {_fmt(r['baseline'], r['unit'])}, {r['baseline_name']})" if r["baseline"] is not None else ""
        out.append(f"* **{r['figure']}**: {_fmt(r['value'], r['unit'])}{base}, target {r['target']}. {why}")
    if not out:
        return ["Every target was met in this run.", ""]
    return [*out, ""]


def shown_command(command: str) -> str:
    """The command as the docs show it: without ``--note`` (shown on its own line)."""
    words, out, skip = shlex.split(command), [], False
    for w in words:
        if skip or w.startswith("--note="):
            skip = False
            continue
        if w == "--note":
            skip = True
            continue
        out.append(w)
    return " ".join(shlex.quote(w) for w in out)


def scaling_section(res: dict) -> list[str]:
    rows = {r["messages"]: r for r in res.get("scaling") or [scaling_row(res)]}
    out = ["## What a history of your size costs", "",
           "One row per corpus size, each from its own run of `benchmarks.run` (date, commit and load "
           "below the table); backfill from scratch on an empty state directory.", "",
           "| messages | raw JSONL | backfill `recall index` | backfill `recall serve` | index | archive | "
           "search p50 / p95 | `recall serve` peak RSS in the backfill / serving |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sorted(set(SCALING_SIZES) | set(rows)):
        r = rows.get(n)
        if r is None:
            out.append(f"| {n:,} | not run yet: `python -m benchmarks.run --messages {n} --write-docs` "
                       f"| | | | | | |")
            continue
        out.append(f"| {n:,} | {_fmt(r['raw_mb'], 'MB')} | {_fmt(r['backfill_index_s'], 's')} | "
                   f"{_fmt(r['backfill_serve_s'], 's')} | {_fmt(r['index_mb'], 'MB')} | {_fmt(r['archive_mb'], 'MB')} | "
                   f"{_fmt(r['search_p50_ms'])} / {_fmt(r['search_p95_ms'], 'ms')} | "
                   f"{_fmt(r['serve_peak_rss_mb'])} / {_fmt(r['serve_rss_mb'], 'MB')} |")
    out.append("")
    for n in sorted(rows):
        r = rows[n]
        out.append(f"* {n:,}: `{shown_command(r['command'])}` at `{r['commit']}`, {r['date']} UTC, load {r['load'][0]} → "
                   f"{r['load'][1]}")
    out.append("")
    return out


def catchup_section(res: dict) -> list[str]:
    """Issue #21's measurements in detail."""
    out = []
    bf = res.get("backfill") or {}
    sv, po = bf.get("serve") or {}, bf.get("serve_path_order") or {}
    if sv.get("newest_searchable_s") is not None:
        out += ["### The first minutes: newest first", "",
                "`recall serve` started on an empty state directory over the whole corpus (its files carry "
                "their last line's time); another process polled the index every 0.2 s. Seconds from the "
                "service's start.", "",
                "| order | newest session searchable | last 7 days searchable | whole backfill | peak RSS MB |",
                "|---|---:|---:|---:|---:|"]
        for label, r in (("newest first (now)", sv), ("path order (before)", po)):
            if r:
                out.append(f"| {label} | {r.get('newest_searchable_s')} s | {r.get('week_searchable_s')} s | "
                           f"{r.get('seconds')} s | {r.get('peak_rss_mb')} |")
        out += ["", f"The last 7 days: {sv.get('week_sessions')} sessions, {sv.get('week_messages') or 0:,} "
                f"messages; the newest session {sv.get('newest_messages') or 0:,} messages.", ""]
        ot = bf.get("order_timing") or {}
        if ot.get("pairs"):
            out += ["The whole backfill's cost of the order is timed apart, without the poller (whose "
                    "queries share the two cores, and reach the newest-first run's sessions sooner): "
                    f"{len(ot['pairs'])} pairs of runs, the order within a pair alternating so that a drift "
                    "of the machine's speed hits both alike (`benchmarks.catchup.order_timing`).", "",
                    "| pair | ran first | newest first | path order | ratio |", "|---:|---|---:|---:|---:|"]
            for i, p in enumerate(ot["pairs"]):
                out.append(f"| {i + 1} | {'newest first' if i % 2 == 0 else 'path order'} | {p['newest']} s | "
                           f"{p['path']} s | {p['ratio']:.3f} |")
            out += [f"| median | | {ot['newest_median_s']} s | {ot['path_median_s']} s | "
                    f"**{ot['median_ratio']:.3f}** |", ""]
    ty = res.get("typing")
    if ty and ty.get("hook"):
        pb, pa = ty.get("progress_before") or {}, ty.get("progress_after") or {}
        idle = (res.get("processes") or {}).get("hook_service") or {}
        ended = f"{pa.get('files_done', 0):,}" if pa else "all"
        out += ["### Typing during a full backfill", "",
                f"The prompt hook ({ty['hook']['runs']} prompts) and `recall --raw` "
                f"({ty['raw']['recall']['n']} runs) while `recall serve` backfilled the corpus from scratch "
                f"(at a lower CPU and I/O priority); the backfill had read {pb.get('files_done', 0):,} of "
                f"{pb.get('files_total', 0):,} files when they started and {ended} when they ended"
                f"{'' if ty.get('still_backfilling') else ' (it finished before them)'}.", "",
                "| | p50 ms | p95 ms | `python -c pass` p50 ms | prompts injected |", "|---|---:|---:|---:|---:|",
                f"| hook, during the backfill | {ty['hook']['p50_ms']} | {ty['hook']['p95_ms']} | "
                f"{ty['hook']['python_pass_p50_ms']} | {ty['hook']['injected']}/{ty['hook']['runs']} |",
                f"| hook, idle index | {idle.get('p50_ms')} | {idle.get('p95_ms')} | "
                f"{idle.get('python_pass_p50_ms')} | {idle.get('injected')}/{idle.get('runs')} |",
                f"| `recall --raw`, during the backfill | {ty['raw']['recall']['p50_ms']} | "
                f"{ty['raw']['recall']['p95_ms']} | {ty['raw']['python_pass']['p50_ms']} | — |", ""]
        if ty.get("raw_note"):
            out += [f"What `recall --raw` printed on stderr meanwhile: `{ty['raw_note']}`", ""]
    big = res.get("big_session")
    if big and big.get("mb"):
        out += [f"### One {big['mb']:g} MB transcript", "",
                f"A {big['mb']:g} MB session file ({big['messages']:,} indexable messages, tool results of 20–60 KB) "
                f"moved into the transcript root of a running service, while 10 lines/s went to two other "
                f"files. Read and searchable in {big['ingest_seconds']} s; the service's peak RSS "
                f"{big['peak_rss_mb']} MB (anonymous {big['peak_anon_mb']} MB); the {big['lines_during']} lines "
                f"written to the other files meanwhile were searchable after p50 {big['fresh_p50']} ms, p95 "
                f"{big['fresh_p95']} ms, max {big['fresh_max']} ms ({big['missing']} missing).", ""]
    return out


def backfill_budget(res: dict) -> float:
    """CPU-seconds per 100K messages that the backfill target allows on this machine's cores
    (every core busy all the time)."""
    return res["machine"]["cores"] / RETIRED["backfill_rate"] * 1e5


def floor_fixed(ing: dict) -> float:
    """CPU-s per 100K of the backfill steps recall cannot drop, from ``benchmarks.floor``:
    reading the JSON, redaction and Tantivy's indexing."""
    return ing["read_json_cpu"] + ing["redact_cpu"] + ing["tantivy_cpu"]


def floor_section(res: dict) -> list[str]:
    """What the engine and the steps recall cannot drop leave of the two throughput targets
    (``benchmarks.floor``), from this run."""
    fl = res.get("floor")
    if not fl:
        return []
    out = ["## The floor under the retired throughput targets", "",
           "`benchmarks.floor` in the same run, in a process of its own: each step alone, so the "
           "figures say what is the engine's and what is recall's own overhead.", ""]
    ing = fl.get("ingest")
    if ing:
        budget = backfill_budget(res)
        fixed = floor_fixed(ing)
        parse = max(ing["reader_cpu"] - ing["read_json_cpu"] - ing["redact_cpu"], 0.0)
        rest = parse + ing["archive_cpu"] + ing["documents_cpu"] + ing["tantivy_feed_cpu"]
        ix = (res.get("backfill") or {}).get("index") or {}
        whole = ix["cpu_seconds"] / ix["messages"] * 1e5 if ix.get("cpu_seconds") and ix.get("messages") else None
        out += [f"**Backfill**, CPU-seconds per 100K messages, on the corpus' first {ing['messages']:,} messages "
                f"({ing['files']:,} files, {ing['lines']:,} lines). {RETIRED['backfill_rate']:,} messages/s on "
                f"{res['machine']['cores']} cores allows **{budget:.2f}** CPU-s per 100K, every core busy all the time.",
                "", "| step, run alone | CPU-s per 100K |", "|---|---:|",
                f"| reading the lines and parsing their JSON (orjson) | {ing['read_json_cpu']:.2f} |",
                f"| redaction (`indexer.redact`, over the parsed texts) | {ing['redact_cpu']:.2f} |",
                f"| Tantivy indexing: its own threads, fed prebuilt documents, committed, merges awaited "
                f"({ing['tantivy_wall']:.2f} s wall) | {ing['tantivy_cpu']:.2f} |",
                f"| **these three together** | **{fixed:.2f}** |",
                f"| left of the budget for everything else | {budget - fixed:.2f} |",
                f"| everything else today: parsing lines into messages {parse:.2f}, the archive "
                f"{ing['archive_cpu']:.2f}, building documents {ing['documents_cpu']:.2f}, feeding the writer "
                f"{ing['tantivy_feed_cpu']:.2f} | {rest:.2f} |"]
        if whole is not None:
            out.append(f"| the whole `recall index` backfill of this run (every thread, commits, merges, "
                       f"{ix['messages']:,} messages) | {whole:.2f} |")
        out.append("")
    se = fl.get("search")
    q = res.get("queries") or {}
    if se and q.get("fts5"):
        p = se["p50_ms"]
        goal = q["fts5"]["p50_ms"] / RETIRED["search_speedup"]
        out += [f"**Search**, p50 ms over the same {se['queries']} queries × {se['reps']} on the run's index "
                f"(each phase timed within one search; medians of phases do not add up exactly).", "",
                "| | p50 ms |", "|---|---:|",
                f"| {RETIRED['search_speedup']:g}× FTS5: FTS5's p50 in this run ÷ {RETIRED['search_speedup']:g} "
                f"| **{goal:.2f}** |",
                f"| the whole search | {p['total']:.2f} |",
                f"| Tantivy: the product's queries, ~110 candidates (as searched) | {p['tantivy']:.2f} |",
                f"| Tantivy: the product's queries, 10 results | {p['tantivy_k10']:.2f} |",
                f"| Tantivy: a bare union of the query's terms, 10 results (no phrase, proximity or filter) | "
                f"{p['bare_union_k10']:.2f} |",
                f"| Python: building the queries {p['build']:.2f}, ranking candidates {p['rank']:.2f}, reading "
                f"the 10 hits and their snippets {p['hits']:.2f} | {p['build'] + p['rank'] + p['hits']:.2f} |", "",
                "| kind | whole search | Tantivy as searched | Tantivy, 10 results | bare union, 10 results |",
                "|---|---:|---:|---:|---:|"]
        for kind, v in se["by_kind"].items():
            out.append(f"| {kind} | {v['total']:.2f} | {v['tantivy']:.2f} | {v['tantivy_k10']:.2f} | "
                       f"{v['bare_union_k10']:.2f} |")
        out.append("")
    return out


def retrieval_section(res: dict) -> list[str]:
    """Retrieval quality measured by this run (``part_retrieval``)."""
    ret = res.get("retrieval")
    if not ret:
        return []
    out = ["## Retrieval quality", ""]
    if "skipped" in ret:
        return [*out, f"Not measured in this run: {ret['skipped']}", ""]
    from benchmarks.retrieval import markdown_table

    q = ", ".join(f"{k} {v}" for k, v in ret["questions"].items())
    out += [f"`benchmarks.retrieval` in the same run: questions {q}; "
            f"{ret['messages_indexed']:,} messages indexed through the real indexer; "
            f"baseline: {ret['baseline']}.", "",
            markdown_table(ret["summary"]), ""]
    return out


# ---------------------------------------------------------------------------- the page
def render(res: dict) -> str:
    """docs/benchmarks.md from a run's results ``res`` and the results committed beside the
    benchmarks."""
    from benchmarks import answers_and_ranking, injection, plugin_launcher, startup, team
    from benchmarks import forget as forget_bench
    from benchmarks import stale as stale_marks

    rows = rows_of(res)
    m, c = res["machine"], res["corpus"]
    res = dict(res, command=shown_command(res["command"]))
    intro = prose("intro", command=res["command"], cpu=m["cpu"], cores=m["cores"], ram_gb=m["ram_gb"], os=m["os"],
                  python=m["python"], tantivy=m["tantivy"], commit=m["commit"], started=res["started"],
                  minutes=f"{res['seconds'] / 60:.1f}", load_start=res["load_start"], load_end=res["load_end"],
                  load_note=f"* Load: {res['note']}\n" if res.get("note") else "", messages=f"{c['messages']:,}",
                  lines=f"{c['lines']:,}", files=f"{c['files']:,}", megabytes=f"{c['bytes_on_disk'] / 1e6:,.0f}",
                  seed=res["seed"], workdir_kind=res["workdir_kind"])
    lines = [
        intro + table(rows),
        "",
        prose("targets", missed="\n".join(missed(rows, res))).rstrip("\n"),
        "",
        *scaling_section(res),
        *catchup_section(res),
        details(res),
        *floor_section(res),
        prose("profiling"),
        *retrieval_section(res),
        *answers_and_ranking.sections(res),
        *injection.sections(),
        *forget_bench.docs_sections(),
        *startup.sections(),
        *plugin_launcher.sections(res),
        *stale_marks.sections(),
        *team.sections(res),
    ]
    return "\n".join(lines).rstrip() + "\n"


def write(res: dict, docs: Path = DOCS) -> Path:
    """Render the page into ``docs``."""
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text(render(res), encoding="utf-8")
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, default=RUN, help="a run's results (default benchmarks/run.json)")
    ap.add_argument("--docs", type=Path, default=DOCS, help="the page (default docs/benchmarks.md)")
    ap.add_argument("--check", action="store_true", help="only check that the page is in sync")
    args = ap.parse_args(argv)
    try:
        res = json.loads(args.run.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {args.run} ({exc}): run `python -m benchmarks.run --write-docs` first",
              file=sys.stderr)
        return 2
    if args.check:
        current = args.docs.read_text(encoding="utf-8") if args.docs.exists() else ""
        if current != render(res):
            print(f"{args.docs} is out of sync with the results: run `python -m benchmarks.report`", file=sys.stderr)
            return 1
        print(f"{args.docs} is in sync")
        return 0
    print(f"wrote {write(res, args.docs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
