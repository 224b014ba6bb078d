"""How long matching triggered rules takes per prompt (what ``recall rules`` adds to the hook).

A project gets N rules (default 1,000) of every kind, mixed as users write them: words
(any / all), RE2 regexes, path globs, tools, and a few unconditional ones. For each of a few
hundred prompts (some mentioning paths, with a recent-turns file list and tool list) the clock
covers the whole per-prompt step: build the situation (analyzer terms, mentioned paths) and
test every rule, from the compiled set the hook keeps cached per rule file. The baseline, in
the same run and interleaved: analysing the prompt's terms alone (work the hook's search
does anyway). The first load of the file (read + compile, paid once per file change in the
service, on every prompt when the hook works in-process) is timed separately.

Usage::

    python -m benchmarks.rules                 # 1,000 rules, 400 prompts
    python -m benchmarks.rules --rules 5000 --json

Prints a markdown table (p50 / p95 in milliseconds) and writes ``benchmarks/out/rules.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.harness import percentile

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out" / "rules.json"

WORDS = (
    "migration schema index orders billing stripe webhook deploy release docker kubernetes redis "
    "cache queue worker celery auth token session login payment invoice refund email template "
    "frontend backend api endpoint graphql database postgres sqlite test fixture lint format ci "
    "pipeline terraform secret config feature flag metrics logging tracing retry timeout"
).split()
# Rules are written about a project's own vocabulary: ~1,500 distinct words, so a prompt fires a
# handful of rules, as in real use (every rule firing on every prompt would be a broken rule set).
VOCAB = list(WORDS) + [
    f"{a}{b}"
    for a in WORDS
    for b in (
        "er",
        "ing",
        "s",
        "ed",
        "ment",
        "ity",
        "ize",
        "al",
        "ism",
        "ist",
        "or",
        "ure",
        "ance",
        "ive",
        "ful",
        "less",
        "ship",
        "hood",
        "dom",
        "ward",
        "ly",
        "ish",
        "ous",
        "ant",
        "ent",
        "ic",
        "ary",
        "ify",
        "ible",
        "ion",
    )
]
FILLER = (
    "please can you look at the and fix why does this fail when we run it again after update "
    "make sure that all of them still work check what happened yesterday"
).split()
DIRS = (
    "migrations src/api src/billing web/components infra/terraform tests/integration docs scripts deploy charts"
).split()
EXTS = ("py sql ts tsx go tf yaml md sh").split()
TOOLS = ("Bash Edit Write Read Grep Glob WebFetch mcp__github__create_pr mcp__k8s__apply").split()


def make_rules(n: int, rng: random.Random) -> list[dict]:
    rules = []
    for i in range(n):
        kind = rng.random()
        text = f"Rule {i}: " + " ".join(rng.choice(VOCAB) for _ in range(12))
        if kind < 0.35:
            rules.append({"text": text, "any": " ".join(rng.sample(VOCAB, 3))})
        elif kind < 0.5:
            rules.append({"text": text, "all": " ".join(rng.sample(VOCAB, 2))})
        elif kind < 0.65:
            w = rng.choice(VOCAB)
            rules.append({"text": text, "regex": rf"(?i)\b{w}[a-z]*\s+(?:\w+\s+){{0,3}}{rng.choice(VOCAB)}"})
        elif kind < 0.85:
            d = rng.choice(DIRS)
            glob = f"{d}/**" if rng.random() < 0.6 else f"{d}/*.{rng.choice(EXTS)}"
            rule = {"text": text, "paths": [glob]}
            if rng.random() < 0.3:
                rule["any"] = rng.choice(VOCAB)
            rules.append(rule)
        elif kind < 0.98:
            rules.append({"text": text, "tools": [rng.choice(TOOLS)], "any": rng.choice(VOCAB)})
        else:
            rules.append({"text": text})
    return rules


def make_prompts(n: int, rng: random.Random, root: str) -> list[tuple[str, list[str], list[str]]]:
    out = []
    for _ in range(n):
        words = [rng.choice(VOCAB) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(rng.randint(6, 60))]
        if rng.random() < 0.4:
            words.insert(
                rng.randrange(len(words)),
                f"{rng.choice(DIRS)}/{rng.choice(WORDS)}_{rng.randint(1, 99)}.{rng.choice(EXTS)}",
            )
        files = [f"{root}/{rng.choice(DIRS)}/{rng.choice(WORDS)}.{rng.choice(EXTS)}" for _ in range(rng.randint(0, 6))]
        tools = rng.sample(TOOLS, rng.randint(0, 3))
        out.append((" ".join(words).capitalize() + "?", files, tools))
    return out


def measure(n_rules: int, n_prompts: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="recall-rules-bench-") as tmp:
        os.environ["RECALL_HOME"] = str(Path(tmp) / "home")
        project = Path(tmp) / "project"
        project.mkdir()
        from recall.rules import match, store
        from recall.search.query import analyze

        specs = make_rules(n_rules, rng)
        rules = []
        for spec in specs:  # validated like `recall rules add`, written in one go
            r = store.validate(spec)
            r.id = f"r{len(rules):08x}"
            r.created = r.updated = store.now_iso()
            r.project = str(project)
            rules.append(r)
        store._write(store.project_file(str(project)), rules)
        from recall.rules import trust

        trust.record(str(project), add=rules)  # the user's own rules (as `recall rules add` records them)
        prompts = make_prompts(n_prompts, rng, str(project))

        loads = []
        for _ in range(5):
            match._cache.clear(), match._sets.clear()  # as a fresh hook process finds them
            match._terms.cache_clear(), match._glob.cache_clear(), match._tool.cache_clear()
            t0 = time.perf_counter()
            compiled = match.compiled_rules(str(project))
            loads.append(time.perf_counter() - t0)
        match_ms, base_ms, fired = [], [], []
        for prompt, files, tools in prompts * 3:
            t0 = time.perf_counter()
            analyze(prompt)
            t1 = time.perf_counter()
            s = match.Situation.build(prompt, files, tools, [str(project)])
            hits = match.fire(s, match.compiled_rules(str(project)))
            t2 = time.perf_counter()
            base_ms.append((t1 - t0) * 1000)
            match_ms.append((t2 - t1) * 1000)
            fired.append(len(hits))
    return {
        "rules": n_rules,
        "prompts": n_prompts,
        "compiled": len(compiled),
        "match_p50_ms": round(statistics.median(match_ms), 3),
        "match_p95_ms": round(percentile(match_ms, 0.95), 3),
        "baseline_p50_ms": round(statistics.median(base_ms), 3),
        "ratio_p50": round(statistics.median(match_ms) / max(1e-9, statistics.median(base_ms)), 1),
        "load_median_ms": round(statistics.median(loads) * 1000, 1),
        "fired_median": statistics.median(fired),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rules", description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--prompts", type=int, default=400)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    res = measure(args.rules, args.prompts)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(res, indent=2) + "\n")
    if args.json:
        print(json.dumps(res))
        return 0
    print("| rules | matching p50 | matching p95 | baseline (prompt terms) p50 | ratio | first load of the file |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {res['rules']:,} | {res['match_p50_ms']} ms | {res['match_p95_ms']} ms | {res['baseline_p50_ms']} ms "
        f"| {res['ratio_p50']}× | {res['load_median_ms']} ms |"
    )
    print(f"\n{res['prompts']} prompts × 3, median {res['fired_median']} rules fired per prompt.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
