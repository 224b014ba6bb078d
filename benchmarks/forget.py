"""`recall forget --session`: what making the forgotten bytes leave the disk costs.

A generated corpus (``benchmarks.generate`` via ``benchmarks.backfill.corpus``, kept under
``--work``) is indexed once into a state directory. Each repetition works on fresh copies of
it and forgets one session (the one in the middle of the archive), alternating the two arms
in the same process:

* **baseline: forget without the purge** -- every step of ``recall.privacy.forget`` except
  ``purge`` (what forget did before: the documents deleted, their bytes left in the segments);
* **forget** -- every step, the purge included (``indexer.purge``: each segment holding a
  deleted document rewritten, state.db vacuumed).

Both report the deleted documents left in the index's segments and whether any file under
the state directory still holds the forgotten session's first prompt.

    python -m benchmarks.forget [--messages 100000] [--repeat 3] [--work /var/tmp/recall-bench]
                                [--out benchmarks/forget_results.json]
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

from benchmarks.harness import WORK

RESULTS = Path(__file__).with_name("forget_results.json")


def prepare(work: Path, messages: int, seed: int) -> tuple[Path, int]:
    from benchmarks.backfill import indexed_home
    from indexer.archive import Archive
    from recall.core import paths

    home = indexed_home(work, messages, seed, "forget")
    return home, Archive(paths.archive_dir()).count()


def _holding(root: Path, needle: bytes) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def pick_victim(files: list[Path]) -> tuple[Path, bytes]:
    """A session from the middle of the archive whose first prompt no other file holds (so a
    file found holding it after the forget holds what was forgotten)."""
    from indexer.archive_files import iter_lines

    blobs = {p: p.read_bytes() for p in files}
    for victim in files[len(files) // 2 :] + files[: len(files) // 2]:
        first = next((rec for _, rec in iter_lines(victim) if rec.get("role") == "user" and rec.get("text")), None)
        if first is None:
            continue
        needle = json.dumps(str(first["text"])[:60], ensure_ascii=False)[1:-1].encode()
        if len(needle) >= 24 and not any(needle in b for p, b in blobs.items() if p != victim):
            return victim, needle
    raise SystemExit("no session with a first prompt of its own in this corpus")


def measure(pristine: Path, run_dir: Path, purge: bool) -> dict:
    from indexer import purge as purge_mod
    from indexer.archive import Archive
    from indexer.forgetting import Selection
    from indexer.ingest import Indexer
    from indexer.purge import deleted_documents
    from recall.core import paths
    from recall.privacy.forget import forget_everywhere

    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(pristine, run_dir)
    os.environ["RECALL_HOME"] = str(run_dir)
    victim, needle = pick_victim(Archive(paths.archive_dir()).session_files())
    real = purge_mod.purge
    if not purge:
        purge_mod.purge = lambda ix: {"documents": 0}
    try:
        t0 = time.perf_counter()
        with Indexer() as ix:
            out = forget_everywhere(ix, Selection(sessions=[victim.stem]).check())
        seconds = time.perf_counter() - t0
    finally:
        purge_mod.purge = real
    res = {
        "seconds": seconds,
        "messages": out["messages"],
        "purged": out.get("purged", 0),
        "deleted_left": deleted_documents(paths.index_dir()),
        "files_holding": _holding(run_dir, needle),
    }
    shutil.rmtree(run_dir)
    return res


def sections(res: dict) -> list[str]:
    """The docs' section (``benchmarks.report`` reads it from RESULTS); prose in benchmarks/prose/forget.md."""
    from benchmarks.page import prose

    b, f = res["baseline"], res["forget"]
    table = "\n".join(
        [
            "| | median s | deleted documents left in the index | files still holding the session's text |",
            "| --- | ---: | ---: | ---: |",
            f"| baseline: forget without the purge | {b['seconds']:.2f} | {b['deleted_left']:,} | {b['files_holding']} |",
            f"| forget (purge included) | {f['seconds']:.2f} | {f['deleted_left']:,} | {f['files_holding']} |",
        ]
    )
    return [
        prose(
            "forget",
            archived=f"{res['archived']:,}",
            repeat=res["repeat"],
            table=table,
            ratio=f"{res['ratio']:.1f}",
            purged=f"{f['purged']:,}",
            us_each=f"{(f['seconds'] - b['seconds']) / max(f['purged'], 1) * 1e6:.0f}",
        )
    ]


def docs_sections() -> list[str]:
    """This benchmark's section of docs/benchmarks.md, from the committed results beside it."""
    try:
        res = json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return sections(res)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    pristine, archived = prepare(args.work, args.messages, args.seed)
    runs: dict[str, list[dict]] = {"baseline": [], "forget": []}
    for i in range(args.repeat):
        for arm in ("baseline", "forget") if i % 2 == 0 else ("forget", "baseline"):
            runs[arm].append(measure(pristine, args.work / f"forget-{args.messages}-run", arm == "forget"))
    shutil.rmtree(pristine)
    med = {arm: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for arm, rs in runs.items()}
    res = {
        "archived": archived,
        "repeat": args.repeat,
        "runs": runs,
        **med,
        "ratio": med["forget"]["seconds"] / med["baseline"]["seconds"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print("\n".join(sections(res)))
    return 0 if med["forget"]["deleted_left"] == 0 and med["forget"]["files_holding"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
