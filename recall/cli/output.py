"""Human output for the CLI: hits, index summaries, progress bars (rich on a terminal,
plain text otherwise)."""

from __future__ import annotations

import contextlib
import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not imported at run time: a shell search prints through here)
    from typing import Any, Callable, Iterator

from recall.core.text import counted  # noqa: F401 - re-exported: the CLI's modules import it from here

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def short_project(project: str) -> str:
    """A path with the home folder as ``~`` (``?`` for none)."""
    home = os.path.expanduser("~")
    if project.startswith(home + os.sep):
        return "~" + project[len(home) :]
    return project or "?"


def print_hits(hits, query: str, team: bool = False) -> None:
    out = sys.stdout
    if not hits and team:
        print(
            f"No team items match {query!r} here. `recall team status` shows what is shared and pulled; "
            "`recall team search` asks the server itself.",
            file=out,
        )
        return
    if not hits:
        from recall.search.run import index_lag

        print(no_matches_line(query, index_lag()), file=out)
        return
    tty = out.isatty()
    if tty:
        from rich.text import Text

        console = _console()
    for h in hits:
        date = h.timestamp.replace("T", " ")[:16] or "undated"
        if getattr(h, "kind", "") == "team":
            head = f"{date}  {short_project(h.project)}  team  by {h.author or 'a teammate'}"
        else:
            head = f"{date}  {short_project(h.project)}  {h.role}  session {h.session_id[:8]}"
            if getattr(h, "agent", None) and h.agent != "claude-code":
                from indexer.sources import LABELS  # here: a shell search with the service imports no indexer

                head += f"  ({LABELS.get(h.agent, h.agent)})"  # which agent said it
        if getattr(h, "channel", None) == "semantic":
            head += "  (found by meaning)"  # the service's semantic channel: no word of the query in it
        mark = stale_line(h)
        if tty:
            console.print(Text(head, style="dim"))
            if mark:
                console.print(Text(mark, style="yellow"))
            body = Text("  ")
            pos = 0
            for m in _BOLD.finditer(h.snippet):
                body.append(h.snippet[pos : m.start()])
                body.append(m.group(1), style="bold yellow")
                pos = m.end()
            body.append(h.snippet[pos:])
            console.print(body)
            for line in exchange_lines(h):
                console.print(Text(line, style="cyan"))
        else:
            print(head, file=out)
            if mark:
                print(mark, file=out)
            print("  " + h.snippet, file=out)
            for line in exchange_lines(h):
                print(line, file=out)
        print(file=out)


def no_matches_line(query: str, lag) -> str:
    """What a search that found nothing says: `recall index` only when the index is behind the
    transcripts (``recall.search.run.index_lag``), else other words."""
    head = f"No matches for {query!r}"
    if lag is None:
        return f"{head}. The index is up to date: try fewer or other words, or drop --since/--project."
    if lag.kind == "missing":
        return f"{head}: there is no index yet. Run `recall index` to build it."
    if lag.kind == "service":
        waiting = f", {counted(lag.files, 'transcript file')} waiting" if lag.files else ""
        return (
            f"{head} so far: the service is still indexing{waiting} (`recall status` shows how far). "
            "Try again in a moment, or with fewer or other words."
        )
    return (
        f"{head}: {counted(lag.files, 'transcript file')} not indexed yet. Run `recall index` "
        "(or `recall service start` to keep the index fresh), or try fewer or other words."
    )


def stale_line(hit) -> str:
    """``  ! (src/lib/refunds.ts changed 3 days later)``: its files that changed since, or ""."""
    marks = getattr(hit, "stale", None)
    if not marks:
        return ""
    from indexer.touches import describe
    from recall.search.stale import epoch

    return "  ! " + describe(marks, epoch(hit.timestamp))


REPLY_LINES = 8  # of a reply shown under its question (``--json`` has it whole)


def exchange_lines(hit) -> list[str]:
    """The lines under a hit's snippet: the reply a question got ("↳ ..."), or the question
    a reply answered ("↪ asked: ...")."""
    if getattr(hit, "reply", None):
        lines = hit.reply.splitlines()
        if len(lines) > REPLY_LINES:
            lines = lines[: REPLY_LINES - 1] + ["…"] + lines[-1:]
        return ["  ↳ " + line for line in lines]
    if getattr(hit, "question", None):
        return ["  ↪ asked: " + hit.question]
    return []


def print_hits_json(query: str, hits) -> None:
    """The ``--json`` output of a search (schema in docs/cli.md)."""
    import json

    print(json.dumps({"query": query, "hits": [h.as_json() for h in hits]}, ensure_ascii=False))


def reredact_line(done: dict) -> str:
    """What the re-redaction pass did (``recall index``)."""
    return (
        f"Re-redacted stored history under the current rules (version {done.get('from')} -> "
        f"{done.get('to')}): {done.get('rewritten', 0):,} of {done.get('messages', 0):,} archived messages "
        f"changed, {done.get('sessions', 0):,} sessions' facts, {done.get('memories', 0):,} memories."
    )


def semantic_rebuild_text(sem: dict) -> str:
    """The semantic channel's store being rebuilt (``recall status`` and ``recall doctor``)."""
    rebuild = sem.get("rebuilding") or {}
    aside = f"; set aside as {rebuild['aside']}" if rebuild.get("aside") else ""
    waiting = f", {int(sem['waiting']):,} waiting" if sem.get("waiting") else ""
    return (
        f"being rebuilt: vectors.db was damaged ({rebuild.get('why') or 'unreadable'}){aside}; "
        f"{counted(int(sem.get('vectors') or 0), 'message')} embedded again{waiting}; "
        "prompts find by words until it is done"
    )


def redaction_status_line(p: dict) -> str:
    """The re-redaction pass under way (``recall status``)."""
    stage = p.get("stage")
    if stage == "messages":
        total = int(p.get("files_total") or 0)
        done = int(p.get("files_done") or 0)
        pct = f" ({100 * done // total}%)" if total else ""
        how = (
            f"{done:,} of {total:,} archive files{pct}, {int(p.get('messages') or 0):,} messages checked, "
            f"{int(p.get('rewritten') or 0):,} rewritten"
        )
    elif stage in ("facts", "memories"):
        how = f"archive done ({int(p.get('rewritten') or 0):,} messages rewritten); now the {stage}"
    else:
        how = "not started: the service (or `recall index`) runs it"
    return f"Redaction: re-redacting history stored under older rules ({p.get('from')} -> {p.get('to')}): {how}"


def print_index_summary(summary) -> None:
    if summary.rebuilt:
        restored = f": {counted(summary.replayed, 'message')} restored from the archive" if summary.replayed else ""
        print(f"Rebuilt the index ({summary.rebuilt}){restored}.")
    if summary.nothing_new:
        print(f"Nothing new: {summary.files} transcript files already indexed ({summary.seconds:.2f} s).")
    elif summary.replayed:
        print(
            f"Re-read {summary.changed} of {summary.files} transcript files: {summary.messages} "
            f"messages not in the archive ({summary.seconds:.2f} s in all)."
        )
    else:
        rate = summary.messages / summary.seconds if summary.seconds else 0
        print(
            f"Indexed {counted(summary.messages, 'message')} from {summary.changed} of {counted(summary.files, 'file')} "
            f"in {summary.seconds:.2f} s ({rate:,.0f} messages/s)."
        )
    from indexer.transcripts import SKIP_REASONS

    skipped = {k: v for k, v in summary.skipped.items() if k in SKIP_REASONS and v}
    if skipped:
        total = sum(skipped.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items(), key=lambda kv: -kv[1]))
        print(f"Skipped {total} lines: {parts}.")
    for err in summary.errors[:10]:
        print(f"  could not read {err}")
    bad = getattr(summary, "bad_lines", None) or []
    if bad:
        from recall.core import log

        n = len(bad)
        print(
            f"  {counted(n, 'line')} could not be read (not JSON, or past the line cap) and {'was' if n == 1 else 'were'} "
            f"skipped (all named in {log.log_file()}), first: {bad[0]}"
        )


@contextlib.contextmanager
def progress(label: str, enabled: bool = True) -> Iterator[Callable[[Any], None]]:
    """A progress bar for a backfill on a terminal (stderr): bytes read (newest files first),
    files and messages done, the rate and the time left. A no-op callback elsewhere. The
    callback takes an ``indexer.ingest.Progress`` or its ``as_dict()`` (from the service)."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda p: None
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeRemainingColumn(),
        console=_console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None, detail="")

        def update(p) -> None:
            d = p if isinstance(p, dict) else p.as_dict()  # the service's status gives the dict
            bar.update(task, completed=d["bytes_done"], total=d["bytes_total"] or None, detail=progress_detail(d))

        yield update


def progress_detail(d: dict) -> str:
    """'1,204/19,900 files, 61,000 messages, 11,800 msg/s' from a backfill progress dict."""
    return (
        f"{d.get('files_done', 0):,}/{d.get('files_total', 0):,} files, {d.get('messages', 0):,} messages, "
        f"{d.get('rate', 0):,} msg/s"
    )


def backfill_text(bf: dict) -> str:
    """'42% (1,204/19,900 files, 420,000 messages, 11,800 msg/s), about 3 min left' from the
    service's backfill progress (``recall status``, a search's catching-up line)."""
    if bf.get("bytes_total"):
        pct = 100 * bf.get("bytes_done", 0) / max(1, bf["bytes_total"])
        eta = bf.get("eta_seconds")
        left = f", about {duration(eta)} left" if eta is not None else ""
        return f"{pct:.0f}% ({progress_detail(bf)}){left}"
    if bf.get("replayed"):
        return f"restoring the archive ({bf['replayed']:,} messages so far)"
    return "starting"


def catching_up_line(bf: dict) -> str:
    """The one line a search prints (stderr) while the service is still indexing the history."""
    if bf.get("starting") and not bf.get("bytes_total") and not bf.get("replayed"):
        return (
            "recall: the service has only started indexing your history: these results cover what is indexed "
            "so far (newest sessions first); `recall status` shows how far it is."
        )
    return (
        f"recall: the index is still catching up, {backfill_text(bf)}: these results cover what is "
        "indexed so far (newest sessions first)."
    )


def note_catching_up() -> None:
    """Say on stderr that results are partial while the service backfills (nothing otherwise)."""
    from recall.core.service_client import catching_up

    bf = catching_up()
    if bf is not None and bf.get("starting"):  # its file was written before the backfill's first figures
        from recall.core import service_client as client

        try:
            live = (client.call("status", {}, timeout=1.0) or {}).get("backfill")
        except Exception:  # noqa: BLE001 - no answer: what the file says is what is known
            live = None
        bf = live if isinstance(live, dict) and live else bf
    if bf is not None:
        print(catching_up_line(bf), file=sys.stderr)


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
