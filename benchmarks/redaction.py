"""Redaction quality: what leaks, per form, and what ordinary text is changed.

Three corpora, all deterministic (``tests/support/secrets_corpus.py``):

* **leaks** -- ``key_values()``: every ``key: value`` form of issue 28 (YAML, INI, TOML,
  tfvars, .netrc, .pgpass, a Kubernetes Secret, registry logins, wrapped values, keys by
  name, the command-line and header forms), 40 values each, half random 16-24 characters,
  half as people choose passwords (``Summer2024Pass``); a value leaks when a piece of it (5
  characters) survives that the text around it does not explain;
* **false positives, written** -- ``ordinary()``: code, configuration, commands, logs and prose
  that name secrets without holding one, plus the benign and false-positive lists of the
  tests: a string is a false positive when ``redact`` changes it;
* **false positives, held out** -- every line of Python's standard library and of the
  installed packages (tests left out) that says secret, token, password, key, auth, login
  or machine: real code nobody wrote for this, none of it a secret. Counted as lines changed.

    python -m benchmarks.redaction [--against f920def] [--speed 20000] [--out benchmarks/redaction.json]

``--against REV`` also scores the rules of ``indexer/redact.py`` at a git revision (read with
``git show``), so a change is measured before and after in one run. ``--speed N`` (with
``--against``) also times ``redact()`` of both on the N messages of a generated corpus
(``benchmarks.generate``, seed 0): CPU time per message, medians of 11 alternating runs.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HELD_OUT_WORDS = re.compile(
    r"(?i)secret|token|passw|pwd|api.?key|private.?key|credential|auth|_key|Key\b"
    r"|login|machine"
)


def _rules_at(rev: str):
    """``indexer/redact.py`` as it was at ``rev``, loaded as a module of its own."""
    src = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:indexer/redact.py"], check=True, capture_output=True, text=True
    ).stdout
    tmp = Path(tempfile.mkdtemp(prefix="recall-redact-")) / "redact_at.py"
    tmp.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"redact_at_{rev}", tmp)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def held_out_lines() -> list[str]:
    """Distinct lines of the standard library and the installed packages that name a secret."""
    roots = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]]
    out, seen = [], set()
    for root in roots:
        for f in sorted(glob.glob(f"{root}/**/*.py", recursive=True)):
            if "/test" in f or "redact" in f:
                continue
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        line = line.rstrip("\n")
                        if len(line) < 400 and HELD_OUT_WORDS.search(line) and line not in seen:
                            seen.add(line)
                            out.append(line)
            except OSError:
                continue
    return out


def score(redact, held_out: list[str]) -> dict:
    from tests.support.secrets_corpus import key_values, leaked, ordinary

    forms: dict[str, dict] = {}
    for form, style, secret, text in key_values():
        f = forms.setdefault(form, {"values": 0, "leaked": 0, "leaked_human": 0})
        f["values"] += 1
        if leaked(secret, text, redact(text)):
            f["leaked"] += 1
            f["leaked_human"] += style == "human"
    plain = ordinary()
    changed = [t for t in plain if redact(t) != t]
    held = sum(1 for line in held_out if redact(line) != line)
    return {
        "forms": forms,
        "leaked": sum(f["leaked"] for f in forms.values()),
        "values": sum(f["values"] for f in forms.values()),
        "ordinary": len(plain),
        "false_positives": len(changed),
        "false_positive_examples": changed[:20],
        "held_out_lines": len(held_out),
        "held_out_changed": held,
    }


def speed(n: int, rules: dict) -> dict:
    """CPU microseconds per message of each ``redact`` in ``rules`` on a generated corpus of
    ``n`` messages: medians of 11 runs, alternating which goes first."""
    import statistics
    import time

    from benchmarks.generate import generate, iter_messages

    root = Path(tempfile.mkdtemp(prefix="recall-redact-speed-"))
    generate(root, n, seed=0)
    texts = [m["content"] for m in iter_messages(root) if m.get("content")]
    runs: dict[str, list[float]] = {name: [] for name in rules}
    names = list(rules)
    for r in range(11):
        for name in names if r % 2 == 0 else names[::-1]:
            t0 = time.process_time()
            for t in texts:
                rules[name](t)
            runs[name].append((time.process_time() - t0) / len(texts) * 1e6)
    return {"messages": len(texts), **{name: round(statistics.median(v), 2) for name, v in runs.items()}}


def table(results: dict[str, dict]) -> str:
    names = list(results)
    first = results[names[0]]
    lines = [
        "| form | " + " | ".join(f"leaked ({n})" for n in names) + " |",
        "| --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for form in first["forms"]:
        cells = [f"{r['forms'][form]['leaked']}/{r['forms'][form]['values']}" for r in results.values()]
        lines.append(f"| {form} | " + " | ".join(cells) + " |")
    lines.append("| **all forms** | " + " | ".join(f"**{r['leaked']}/{r['values']}**" for r in results.values()) + " |")
    lines.append(
        "| ordinary strings changed (written corpus) | "
        + " | ".join(f"{r['false_positives']}/{r['ordinary']}" for r in results.values())
        + " |"
    )
    lines.append(
        "| held-out code lines changed (stdlib + packages) | "
        + " | ".join(f"{r['held_out_changed']}/{r['held_out_lines']}" for r in results.values())
        + " |"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="also score indexer/redact.py at this git revision (e.g. f920def)")
    ap.add_argument(
        "--speed", type=int, default=0, metavar="N", help="with --against: also time both on N generated messages"
    )
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from indexer.redact import REDACTION_VERSION, redact

    held = held_out_lines()
    results = {}
    current = f"current (v{REDACTION_VERSION})"
    old = _rules_at(args.against).redact if args.against else None
    if args.against:
        results[args.against] = score(old, held)
    results[current] = score(redact, held)
    print(table(results))
    if args.against and args.speed:
        timing = speed(args.speed, {args.against: old, current: redact})
        results["speed_us_per_message"] = timing
        print(
            f"\nredact() CPU per message, {timing['messages']:,} generated messages (medians of 11): "
            f"{args.against} {timing[args.against]} us, {current} {timing[current]} us "
            f"({timing[current] / timing[args.against]:.2f}x)"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
