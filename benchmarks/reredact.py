"""Re-redaction pass: throughput (messages/s) re-redacting a stored history once.

A generated corpus (``benchmarks.generate``, kept under ``--work``) is indexed once into a
state directory; then a secret the older rules missed (a Shopify token) is written into the
last message of every ``--dirty``-th archive file, and the archive is marked as written under
redaction version 1 (as an upgraded home finds it). Each repetition works on a fresh copy of
that state directory and times, in the same process:

* **baseline: read + parse** -- reading and parsing every archived message (what a rebuild's
  replay of a current archive does before indexing): the floor of any pass over the archive;
* **pass** -- ``recall.privacy.redaction_pass.run`` on the index writer: every message through the
  current ``redact()``, the changed files rewritten and re-indexed, session facts, the memory
  log, state.db vacuumed.

    python -m benchmarks.reredact [--messages 100000] [--dirty 10] [--repeat 3]
                                  [--work /var/tmp/recall-bench] [--out benchmarks/out/reredact.json]

Prints a markdown table (medians) and writes the JSON results to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks.harness import REPO, WORK

SECRET = "shpat_" + "3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c"


def prepare(work: Path, messages: int, seed: int, dirty: int) -> tuple[Path, int, int]:
    """The pristine state directory (indexed, then made to look stored under version 1);
    (its path, archived messages, messages holding the secret)."""
    from benchmarks.backfill import indexed_home
    from indexer.archive import Archive
    from indexer.reredact_archive import state_path
    from recall.core import paths

    home = indexed_home(work, messages, seed, "reredact")
    archive = Archive(paths.archive_dir())
    planted = 0
    for i, path in enumerate(archive.session_files()):
        if i % dirty:
            continue
        lines = path.read_bytes().splitlines(keepends=True)
        if not lines:
            continue
        rec = json.loads(lines[-1])
        rec["text"] = f"{rec.get('text') or ''} (deploy token {SECRET})"
        lines[-1] = json.dumps(rec, ensure_ascii=False).encode("utf-8") + b"\n"
        path.write_bytes(b"".join(lines))  # earlier lines keep their positions
        planted += 1
    state_path(archive.root).unlink(missing_ok=True)
    return home, archive.count(), planted


def measure(pristine: Path, run_dir: Path) -> dict:
    from indexer.archive import Archive
    from indexer.archive_files import iter_lines
    from indexer.ingest import Indexer
    from indexer.message import Message
    from recall.core import paths
    from recall.privacy import redaction_pass

    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(pristine, run_dir)
    os.environ["RECALL_HOME"] = str(run_dir)
    t0 = time.perf_counter()
    n = 0
    for path in Archive(paths.archive_dir()).session_files():  # not Archive.replay: it would redact
        for _, rec in iter_lines(path):
            Message.from_record(rec)
            n += 1
    replay = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Indexer() as ix:
        done = redaction_pass.run(ix)
    seconds = time.perf_counter() - t0
    leaked = sum(SECRET.encode() in p.read_bytes() for p in Archive(paths.archive_dir()).session_files())
    shutil.rmtree(run_dir)
    return {
        "messages": n,
        "replay_seconds": replay,
        "pass_seconds": seconds,
        "rewritten": done["rewritten"],
        "files": done["files_done"],
        "leaked_files": leaked,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--dirty", type=int, default=10, help="a secret in every N-th archive file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "reredact.json")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    pristine, archived, planted = prepare(args.work, args.messages, args.seed, args.dirty)
    runs = [measure(pristine, args.work / f"reredact-{args.messages}-run") for _ in range(args.repeat)]
    shutil.rmtree(pristine)
    med = {k: statistics.median(r[k] for r in runs) for k in ("replay_seconds", "pass_seconds")}
    res = {
        "messages": archived,
        "secret_messages": planted,
        "runs": runs,
        "replay_msgs_per_s": archived / med["replay_seconds"],
        "pass_msgs_per_s": archived / med["pass_seconds"],
        "ratio": med["pass_seconds"] / med["replay_seconds"],
        "leaked_files": max(r["leaked_files"] for r in runs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(f"| {archived:,} archived messages, {planted:,} holding a secret | median s | messages/s |")
    print("| --- | ---: | ---: |")
    print(
        f"| baseline: read + parse every archived message | {med['replay_seconds']:.2f} | {res['replay_msgs_per_s']:,.0f} |"
    )
    print(f"| re-redaction pass | {med['pass_seconds']:.2f} | {res['pass_msgs_per_s']:,.0f} |")
    print(
        f"\npass / read + parse: {res['ratio']:.1f}x; messages rewritten: {runs[0]['rewritten']}; "
        f"files still holding the secret: {res['leaked_files']}"
    )
    return 0 if res["leaked_files"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
