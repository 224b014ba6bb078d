"""The model path's own figures (issue 47): what the synthesis model would answer to each request
the prompt hook sends on the coding dev history, scored against the labels.

No Anthropic API is reachable here, so the replies come from a reader who sees only the requests
(``../shared/notes/measuring.md``): ``benchmarks.injection_sizes --records R --requests DIR``
records, for this tree and for main in the same run, whether the hook would ask the model and
the exact request (system and user text) by its hash. Then:

* ``pack``: the report half's requests that have no reply yet, of every code base mixed,
  shuffled, each under a random id (``<id>.txt``: the system prompt, then the user text), in
  batches of ``--batch``; the map from id to hash is written beside the pack folder, never in it.
  The reader answers each file as the model would, following the request's own system prompt
  (exactly ``NONE``, or the cited briefing), into ``<id>.reply.txt`` next to it; they never see
  the prompts' kinds, the labels or this code.
* ``take``: the replies of a pack folded into ``benchmarks/model_replies.json`` (hash -> reply):
  the fixtures, committed, so a rerun scores the same requests again.
* ``score``: every record of the report half: a prompt the hook does not send is silent; a
  reply of NONE is silent; any other reply is injected and is *useful* when it cites an
  answering session (``[date session 3c4e0949]``). A request without a reply is counted as
  lacking, never guessed. Figures per code base and size: useful, false share, new tasks
  silent, paraphrases useful, and how many replies are lacking (``--write-json``).

    python -m benchmarks.model_path pack --records R --requests DIR --out PACK [--batch 60]
    python -m benchmarks.model_path take --pack PACK
    python -m benchmarks.model_path score --records R [--write-json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

REPLIES = Path(__file__).with_name("model_replies.json")
RESULTS = Path(__file__).with_name("model_path.json")
ANSWERABLE = ("question", "task", "paraphrase", "answerable")
_CITED = re.compile(r"session ([0-9a-f]{8})\]")


def load_replies(path: Path = REPLIES) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


NEW_TASKS = 40  # of the held-out new-task prompts read (a random draw, the same for every code base)
SEED = 47


def _report(records: list[dict], new_tasks: int | None = NEW_TASKS) -> list[dict]:
    """The coding report half's records with the model pass; of the new-task prompts only a
    random ``new_tasks`` of the distinct ones (every project's asking of each), the same draw
    for every code base and size (the readers' time is what bounds this benchmark)."""
    recs = [r for r in records if r.get("split") == "report" and r.get("corpus") == "coding" and "asked" in r]
    if new_tasks:
        distinct = sorted({r["pid"].split("@")[0] for r in recs if r["kind"] == "new-task"})
        drawn = set(random.Random(SEED).sample(distinct, min(new_tasks, len(distinct))))
        recs = [r for r in recs if r["kind"] != "new-task" or r["pid"].split("@")[0] in drawn]
    return recs


def pack(records: list[dict], requests: Path, out: Path, batch: int, seed: int = 47) -> int:
    """Write the report half's requests that lack a reply; how many."""
    have = load_replies()
    wanted = sorted({r["request"] for r in _report(records) if r.get("request") and r["request"] not in have})
    rng = random.Random(seed)
    rng.shuffle(wanted)
    out.mkdir(parents=True, exist_ok=True)
    ids: dict[str, str] = {}
    for i, key in enumerate(wanted):
        req = json.loads((requests / f"{key}.json").read_text(encoding="utf-8"))
        rid = f"{rng.getrandbits(48):012x}"
        folder = out / f"batch-{i // batch + 1:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"{rid}.txt").write_text(
            f"=== SYSTEM ===\n{req['system']}\n\n=== USER ===\n{req['user']}\n", encoding="utf-8"
        )
        ids[rid] = key
    Path(f"{out}.map.json").write_text(json.dumps(ids, indent=0), encoding="utf-8")
    return len(wanted)


def take(out: Path) -> tuple[int, int]:
    """Fold a pack's replies into the fixtures; (taken, still without a reply)."""
    ids = json.loads(Path(f"{out}.map.json").read_text(encoding="utf-8"))
    replies = load_replies()
    taken = missing = 0
    for path in sorted(out.glob("batch-*/*.txt")):
        if path.name.endswith(".reply.txt"):
            continue
        rid = path.stem
        answer = path.with_name(f"{rid}.reply.txt")
        if not answer.exists():
            missing += 1
            continue
        replies[ids[rid]] = answer.read_text(encoding="utf-8").strip()
        taken += 1
    REPLIES.write_text(json.dumps(dict(sorted(replies.items())), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    return taken, missing


def judged(r: dict, replies: dict[str, str]) -> str:
    """One prompt on the model path: ``silent``, ``useful``, ``false`` (injected, citing no
    answering session) or ``lacking`` (the reader has not answered its request yet)."""
    if not r["asked"]:
        return "silent"
    reply = replies.get(r.get("request") or "")
    if reply is None:
        return "lacking"
    if reply.strip().strip(".").upper() == "NONE" or not reply.strip():
        return "silent"
    by_prefix = {sid[:8]: sid for sid in r.get("read") or []}
    cited = {by_prefix[p] for p in _CITED.findall(reply) if p in by_prefix}
    return "useful" if cited & set(r.get("evidence") or []) else "false"


def share(xs) -> float | None:
    xs = list(xs)
    return round(sum(1 for x in xs if x) / len(xs), 4) if xs else None


def figures(records: list[dict], replies: dict[str, str]) -> dict:
    """Per code base and size: the model path's figures from the replies."""
    out: dict = {}
    groups: dict = {}
    for r in _report(records):
        groups.setdefault((r["code"], r["size"]), []).append(r)
    for (code, size), recs in sorted(groups.items()):
        verdicts = [(r, judged(r, replies)) for r in recs]
        known = [(r, v) for r, v in verdicts if v != "lacking"]
        ans = [v for r, v in known if r["kind"] in ANSWERABLE]
        para = [v for r, v in known if r["kind"] == "paraphrase"]
        new = [v for r, v in known if r["kind"] == "new-task"]
        injected = [v for _r, v in known if v in ("useful", "false")]
        out.setdefault(code, {})[size] = {
            "prompts": len(recs),
            "asked": sum(1 for r in recs if r["asked"]),
            "lacking": sum(1 for _r, v in verdicts if v == "lacking"),
            "useful": share(v == "useful" for v in ans),
            "false_share": share(v == "false" for v in injected),
            "silent_new_task": share(v == "silent" for v in new),
            "useful_paraphrase": share(v == "useful" for v in para),
            "asked_new_task": share(r["asked"] for r in recs if r["kind"] == "new-task"),
            "read_recall": share(r.get("read_has_evidence") for r in recs if r["kind"] in ANSWERABLE),
        }
    return out


RAW_KEYS = (
    "useful",
    "false_share",
    "silent_new_task",
    "R@5",
    "R@5_service",
    "R@5_paraphrase",
    "R@5_service_paraphrase",
    "MRR",
    "MRR_service",
    "waits",
    "waits_new_task",
)


def raw_figures(sizes: dict) -> dict:
    """Of the same run's ``injection_sizes`` output: the raw path's figures and `recall --raw`'s
    ranking without and with the service (words and meaning fused), per size and code base,
    report half."""
    out: dict = {}
    for size, codes in (sizes.get("table", {}).get("coding") or {}).items():
        for code in ("ours", "main"):
            rep = (codes.get(code) or {}).get("report") or {}
            out.setdefault(code, {})[size] = {k: rep.get(k) for k in RAW_KEYS}
    return out


# ------------------------------------------------------------------------------------
# docs/benchmarks.md


def sections(results: dict | None = None) -> list[str]:
    """This benchmark's section of docs/benchmarks.md (``benchmarks.report``), from ``results``
    or the committed ``benchmarks/model_path.json``; prose in benchmarks/prose/model_path.md."""
    from benchmarks.page import prose, rows

    if results is None:
        try:
            results = json.loads(RESULTS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []

    def f(x):
        return "–" if x is None else f"{x:.2f}"

    body = []
    for code in ("ours", "main"):
        for size, t in (results.get("table", {}).get(code) or {}).items():
            who = "this tree" if code == "ours" else f"main {results.get('main', '')}"
            body.append(
                f"| {who} | {size} | {t['prompts']} | {t['asked']} | {f(t['read_recall'])} | {f(t['useful'])} "
                f"| {f(t['false_share'])} | {f(t['silent_new_task'])} | {f(t['useful_paraphrase'])} "
                f"| {f(t['asked_new_task'])} | {t['lacking']} |"
            )
    table = rows(
        "| code base | history | prompts | model asked | answer in the request | useful | false share "
        "| new tasks silent | paraphrases | new tasks asked | replies lacking |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        body,
    )
    body = []
    for code in ("ours", "main"):
        for size, t in (results.get("raw", {}).get(code) or {}).items():
            who = "this tree" if code == "ours" else f"main {results.get('main', '')}"
            body.append(
                f"| {who} | {size} | {f(t['useful'])} | {f(t['false_share'])} | {f(t['silent_new_task'])} "
                f"| {f(t['R@5'])} → {f(t['R@5_service'])} | {f(t['R@5_paraphrase'])} → {f(t['R@5_service_paraphrase'])} "
                f"| {f(t['MRR'])} → {f(t['MRR_service'])} | {f(t['waits'])} | {f(t['waits_new_task'])} |"
            )
    raw = rows(
        "| code base | history | raw useful | raw false share | raw new tasks silent | `--raw` R@5 (words → with the service) "
        "| paraphrases R@5 | MRR | prompts that wait | new tasks that wait |",
        "|---|---|---|---|---|---|---|---|---|---|",
        body,
    )
    return [
        prose(
            "model_path",
            table=table,
            raw=raw,
            new_tasks=results.get("new_tasks", NEW_TASKS),
            commit=results.get("commit", ""),
            main=results.get("main", ""),
        )
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.model_path")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--records", type=Path, required=True)
    p.add_argument("--requests", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--batch", type=int, default=60)
    t = sub.add_parser("take")
    t.add_argument("--pack", type=Path, required=True)
    s = sub.add_parser("score")
    s.add_argument("--records", type=Path, required=True)
    s.add_argument("--main", default="325fc0b")
    s.add_argument("--commit", default="")
    s.add_argument(
        "--sizes", type=Path, default=None, help="the same run's injection_sizes output (its raw-path figures)"
    )
    s.add_argument("--write-json", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "pack":
        n = pack(json.loads(args.records.read_text(encoding="utf-8")), args.requests, args.out, args.batch)
        print(f"{n} requests without a reply written to {args.out} (map: {args.out}.map.json)")
        return 0
    if args.cmd == "take":
        taken, missing = take(args.pack)
        print(f"{taken} replies taken into {REPLIES.name}; {missing} requests still without one")
        return 0
    records = json.loads(args.records.read_text(encoding="utf-8"))
    table = figures(records, load_replies())
    print(json.dumps(table, indent=1))
    out = {"main": args.main, "commit": args.commit, "new_tasks": NEW_TASKS, "table": table}
    if args.sizes:
        out["raw"] = raw_figures(json.loads(args.sizes.read_text(encoding="utf-8")))
    if args.write_json:
        RESULTS.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
