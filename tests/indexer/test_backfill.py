"""A big history on day one: the backfill reads the newest transcripts first and commits
early and as it goes (so an interruption resumes, not restarts), reads a huge file in
slices with other files' lines between, never re-reads a line still waiting for its
newline, caps what one message stores, lowers its own priority, and says how far it is
(``recall status``, the bar of ``recall index``, the line a search prints meanwhile)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from indexer import ingest, transcripts
from indexer.ingest import Indexer, Progress
from indexer.sources import claude_code
from recall.core import paths
from tests.support.factory import Session

RECALL = [sys.executable, "-m", "recall.entry"]
DAY = 86400


def sessions_by_age(root: Path, n: int, words: str = "history") -> list[tuple[Session, Path]]:
    """``n`` one-prompt sessions, the i-th modified i days ago (the first is the newest)."""
    out = []
    now = 1_790_000_000
    for i in range(n):
        s = Session(cwd=f"/home/dev/proj{i % 3}")
        s.user(f"{words} word{i}x about the migration")
        s.assistant(f"answer word{i}x")
        path = s.write(root)
        os.utime(path, (now - i * DAY, now - i * DAY))
        out.append((s, path))
    return out


def found(word: str) -> bool:
    from recall.search.searcher import Searcher

    return bool(Searcher().search(word, messages=True, limit=5))


# newest first, committed early --------------------------------------------------------------------
def test_plan_reads_the_most_recently_modified_transcripts_first(claude_projects):
    made = sessions_by_age(claude_projects, 5)
    # the oldest file is written last and has the greatest path order for no reason of its own
    with Indexer() as ix:
        _files, todo = ix.plan([claude_projects])
    assert [p for p, _ in todo] == [p for _, p in made]


def test_the_newest_session_is_searchable_before_the_backfill_ends(claude_projects):
    sessions_by_age(claude_projects, 6)
    seen = []

    def progress(p: Progress) -> None:
        if p.files_done == 1:  # another process's view, right after the first (newest) file
            seen.append(found("word0x"))
            seen.append(found("word5x"))

    with Indexer() as ix:
        summary = ix.run([claude_projects], progress=progress)
    assert seen == [True, False]
    assert summary.messages == 12 and found("word5x")


class Killed(Exception):
    """Stands for kill -9: an error that rolls back whatever was not committed yet."""


@pytest.mark.parametrize("how", ["killed", "ctrl-c"])
def test_an_interrupted_first_backfill_resumes_where_it_left_off(claude_projects, monkeypatch, how):
    """Issue 17: an interrupted first backfill restarted from zero (one commit per 100K messages,
    and Ctrl-C rolled back the rest)."""
    made = sessions_by_age(claude_projects, 6)
    if how == "killed":  # progress commits are due every few seconds; in this test, after every file
        monkeypatch.setattr(ingest, "PROGRESS_COMMIT_MIN", 0.0)
        monkeypatch.setattr(ingest, "PROGRESS_COMMIT_MAX", 0.0)
    stop = Killed if how == "killed" else KeyboardInterrupt

    def progress(p: Progress) -> None:
        if p.files_done == 4:
            raise stop

    with pytest.raises(stop):
        with Indexer() as ix:  # an error other than Ctrl-C rolls back what was not committed
            ix.run([claude_projects], progress=progress)
    with Indexer() as ix:
        _files, todo = ix.plan([claude_projects])
        assert [p for p, _ in todo] == [p for _, p in made[4:]]  # the 4 newest are done for good
        summary = ix.run([claude_projects])
    assert summary.messages == 4 and all(found(f"word{i}x") for i in range(6))


def test_progress_counts_files_messages_rate_and_time_left(claude_projects):
    sessions_by_age(claude_projects, 3)
    seen: list[dict] = []
    with Indexer() as ix:
        ix.run([claude_projects], progress=lambda p: seen.append(p.as_dict()))
    assert [d["files_done"] for d in seen] == [1, 2, 3]
    last = seen[-1]
    assert last["files_total"] == 3 and last["messages"] == 6 and last["bytes_done"] == last["bytes_total"]
    assert last["rate"] > 0 and last["eta_seconds"] == 0


# huge lines and files -------------------------------------------------------------------------------
def test_one_message_stores_at_most_message_chars(claude_projects):
    """Issue 17: a 47 MB prompt was stored whole (index, archive, memory)."""
    s = Session()
    big = "pasted log line with zebrafish\n" * 40_000  # 1.2 MB
    s.user("look at this " + big + " tail sk-ant-api03-" + "A" * 90)
    s.assistant("short answer")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    from recall.search.searcher import Searcher

    hit = Searcher().search("zebrafish", messages=True, limit=1)[0]
    assert len(hit.text) <= transcripts.MESSAGE_CHARS + 40
    assert hit.text.endswith("more characters]")
    n = len("look at this " + big) + len(" tail sk-ant-api03-" + "A" * 90) - transcripts.MESSAGE_CHARS
    assert f"…[{n} more characters]" in hit.text or "more characters]" in hit.text
    archive = b"".join(p.read_bytes() for p in paths.archive_dir().rglob("*") if p.is_file())
    assert len(archive) < 3 * transcripts.MESSAGE_CHARS and b"sk-ant-api03-AAAA" not in archive


def test_a_secret_straddling_the_cut_is_still_redacted(monkeypatch):
    from collections import Counter

    monkeypatch.setattr(transcripts, "MESSAGE_CHARS", 1000)
    key = "sk-ant-api03-" + "Zq9" * 30
    text = "x " * 480 + key + " and more text " * 2000
    line = Session().user(text)
    msg = claude_code.parse_transcript_entry(line, claude_code.FileContext(Path("/p/s.jsonl")), Counter())
    assert "sk-ant-api03-Zq9" not in msg.text and "[redacted:" in msg.text
    assert msg.text.endswith("more characters]") and len(msg.text) < 1100


def test_a_line_growing_without_a_newline_is_not_read_again(claude_projects, monkeypatch):
    """Issue 17: a 64 MB line growing without a newline was read whole on every append."""
    s = Session()
    s.user("first complete line")
    path = s.write(claude_projects)
    whole = json.dumps(s.user("growing line kingfisher " + "y" * 3_000_000)).encode()
    reads = []
    real = claude_code.read

    def counting(p, offset, *a, **kw):
        reads.append(offset)
        return real(p, offset, *a, **kw)

    monkeypatch.setattr(claude_code, "read", counting)
    with Indexer() as ix:
        with open(path, "ab") as fh:
            fh.write(whole[:1_000_000])
        assert ix.index_file(path) == 1
        for i in range(1, 3):  # appends without a newline: only the new bytes are scanned
            with open(path, "ab") as fh:
                fh.write(whole[i * 1_000_000 : (i + 1) * 1_000_000])
            assert ix.index_file(path) == 0
        assert len(reads) == 1
        with open(path, "ab") as fh:
            fh.write(whole[3_000_000:] + b"\n")
        assert ix.index_file(path) == 1 and len(reads) == 2
        ix.commit()
    assert found("kingfisher")


def test_a_huge_file_is_read_in_slices_with_other_files_between(claude_projects, monkeypatch):
    from recall.service import daemon

    monkeypatch.setattr(daemon, "READ_SLICE_BYTES", 20_000)
    big = Session(cwd="/home/dev/big")
    for i in range(300):
        big.user(f"bulk prompt {i} " + "z" * 200)
    big_path = big.write(claude_projects)
    small = Session(cwd="/home/dev/small")
    small.user("live line heron")
    small_path = small.write(claude_projects)
    svc = daemon.Service()
    svc.ix = Indexer()
    try:
        svc.mark_dirty(str(big_path))
        svc.mark_dirty(str(small_path))
        svc._drain()
        assert svc.ix.state.file(str(small_path)) is None  # not committed yet, but read:
        assert str(small_path) in svc.ix.pending_files and str(big_path) in svc.dirty
        rounds = 1
        while svc.dirty:
            svc._drain()
            rounds += 1
        svc._commit()
        assert rounds >= 3 and found("heron") and svc.indexed == 301
    finally:
        svc.ix.close()


# priority -------------------------------------------------------------------------------------------
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_the_backfill_thread_runs_at_a_lower_priority_and_others_do_not():
    from recall.core.process import lower_priority
    from recall.service.daemon import BACKFILL_NICE

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    out = {}

    def backfill_thread():
        out["done"] = lower_priority(BACKFILL_NICE)
        out["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        child = threading.Thread(
            target=lambda: out.update(child=os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        )
        child.start()
        child.join()

    t = threading.Thread(target=backfill_thread)
    t.start()
    t.join()
    assert out["nice"] == min(19, base + BACKFILL_NICE) == out["child"] == out["done"]["nice"]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base


# what the user sees ---------------------------------------------------------------------------------
PROGRESS = {
    "files_done": 1204,
    "files_total": 19900,
    "bytes_done": 420,
    "bytes_total": 1000,
    "messages": 420000,
    "rate": 11800,
    "elapsed_seconds": 35.6,
    "eta_seconds": 49.0,
}


def test_progress_texts():
    from recall.cli.output import backfill_text, catching_up_line

    assert backfill_text(PROGRESS) == "42% (1,204/19,900 files, 420,000 messages, 11,800 msg/s), about 49 s left"
    assert catching_up_line(dict(PROGRESS, eta_seconds=600)) == (
        "recall: the index is still catching up, 42% (1,204/19,900 files, 420,000 messages, 11,800 msg/s), "
        "about 10 min left: these results cover what is indexed so far (newest sessions first)."
    )
    assert backfill_text({"replayed": 5000}) == "restoring the archive (5,000 messages so far)"


def _fake_service_json(pid: int, backfill) -> None:
    paths.home_dir()
    paths.service_status_path().write_text(json.dumps({"running": True, "pid": pid, "backfill": backfill}))


def test_raw_search_answers_while_catching_up_and_says_so(claude_projects):
    s = Session()
    s.user("the retry budget for webhooks")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    env = dict(os.environ, RECALL_NO_SERVICE="1")
    _fake_service_json(os.getpid(), PROGRESS)  # a live pid whose status says: backfilling
    out = subprocess.run(
        [*RECALL, "--raw", "--limit", "5", "retry budget"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0 and "webhooks" in out.stdout
    assert out.stderr.strip().startswith("recall: the index is still catching up, 42% (1,204/19,900 files")
    _fake_service_json(os.getpid(), None)  # caught up: nothing said
    out = subprocess.run([*RECALL, "--raw", "retry budget"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and "webhooks" in out.stdout and out.stderr == ""


def test_a_dead_services_status_file_is_not_believed():
    from recall.core.service_client import catching_up

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _fake_service_json(int(proc.stdout), PROGRESS)
    assert catching_up() is None
    _fake_service_json(os.getpid(), PROGRESS)
    assert catching_up() == PROGRESS


def test_setup_leaves_the_backfill_to_the_service_once_the_newest_sessions_are_in(monkeypatch):
    """With the service up, `recall setup` returns after its first commit, not after the whole
    history: the README's question right after it finds the last session."""
    from recall.cli.commands import setup
    from recall.core import service_client as client
    from recall.setup.install import Report

    answers = iter(
        [
            {"state": "backfilling", "backfill": None, "commits": 0},
            {"state": "backfilling", "backfill": dict(PROGRESS, files_done=0), "commits": 0},
            {"state": "backfilling", "backfill": PROGRESS, "commits": 2},
        ]
    )
    monkeypatch.setattr(client, "call", lambda op, args, timeout=None: next(answers))
    report = Report()
    setup._backfill_step(report, True, service_up=True)
    assert report.changes == [
        "the service is indexing your history in the background, newest sessions first: "
        "42% (1,204/19,900 files, 420,000 messages, 11,800 msg/s), about 49 s left; your "
        "last sessions are searchable now, `recall status` shows how far it is"
    ]
    done = {
        "state": "watching",
        "backfill": None,
        "commits": 3,
        "last_backfill": {"messages": 12, "changed": 3, "files": 3, "seconds": 0.4},
    }
    monkeypatch.setattr(client, "call", lambda op, args, timeout=None: done)
    report = Report()
    setup._backfill_step(report, True, service_up=True)
    assert report.changes == ["indexed 12 messages from 3 of 3 transcript files in 0.4 s"]


def test_a_rebuild_replays_the_newest_sessions_first(claude_projects):
    from datetime import datetime, timedelta, timezone

    start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    order = []
    for days in (3, 30, 0, 10):  # written in no particular order
        s = Session(cwd=f"/home/dev/p{days}", start=start - timedelta(days=days))
        s.user(f"session from {days} days back")
        s.write(claude_projects)
        order.append((days, s.session_id))
    with Indexer() as ix:
        ix.run([claude_projects])
    with Indexer(rebuild=True) as ix:
        replayed = [m.session_id for batch, _ in ix.archive.replay_positions() for m in batch]
    assert replayed == [sid for _, sid in sorted(order)]


def test_the_cycle_collector_runs_rarely_during_a_backfill_and_as_before_after(claude_projects):
    """Python's cycle collector scanned the growing heap over and over during a backfill (10-20%
    of its CPU): it runs at BACKFILL_GC_THRESHOLD while one is under way, at the process's own
    thresholds before and after."""
    import gc

    before = gc.get_threshold()
    s = Session(cwd="/home/dev/app")
    s.user("index me")
    s.write(claude_projects)
    seen = []
    with Indexer() as ix:
        ix.run([claude_projects], progress=lambda p: seen.append(gc.get_threshold()))
        assert seen and all(t == ingest.BACKFILL_GC_THRESHOLD for t in seen)
        assert gc.get_threshold() == before
        ix.begin_backfill()
        ix.begin_backfill()  # nested: the first thresholds are the ones given back
        ix.end_backfill()
        ix.end_backfill()
    assert gc.get_threshold() == before
