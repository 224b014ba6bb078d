"""Nothing lost under storage faults and hostile files (issue 17): a commit that fails on a
full disk marks nothing done; offsets are tied to the index they describe, so a lost index
is rebuilt from the archive by itself; a file name that is not UTF-8, a FIFO named
``*.jsonl``, a transcript rewritten in place, bad characters inside a line; failed reads
retried; private permissions; and the one-line messages that name the real cause.

Faults are injected (``Indexer._commit_writer`` raising ENOSPC, a read raising EIO);
every check is a count of what is searchable, never a timing."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from indexer.ingest import Indexer, index_all
from indexer.sources import claude_code
from indexer.state import StateDB
from recall.core import paths
from recall.core.errors import StorageError
from tests.support.factory import Session
from tests.support.wait import wait_for

RECALL = [sys.executable, "-m", "recall.entry"]


# helpers ------------------------------------------------------------------------------------
def session(word: str, n: int, cwd: str = "/home/dev/app") -> Session:
    s = Session(cwd=cwd)
    for i in range(n):
        s.user(f"{word} question number q{i}x")
    return s


def found(word: str) -> int:
    """Messages a fresh searcher finds for ``word`` (0 while there is no index, as during
    a rebuild)."""
    from recall.core.errors import IndexMissing
    from recall.search.searcher import Searcher

    try:
        return len(Searcher().search(word, messages=True, limit=1000))
    except IndexMissing:
        return 0


def indexed_messages() -> int:
    import tantivy

    from indexer.schema import open_index

    index = open_index(paths.index_dir())
    q = tantivy.Query.term_query(index.schema, "doctype", "message", index_option="basic")
    return index.searcher().search(q, 1, count=True).count


def disk_full(monkeypatch, failures: list[int]):
    """Make the index commit fail with ENOSPC while ``failures[0]`` > 0 (counted down)."""
    real = Indexer._commit_writer

    def commit(self):
        if failures[0] > 0:
            failures[0] -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self)

    monkeypatch.setattr(Indexer, "_commit_writer", commit)


class ServiceThread:
    """The service in a thread of this process, so a fault can be injected into it."""

    def __init__(self) -> None:
        from recall.service.daemon import Service

        self.svc = Service()
        self.thread = threading.Thread(target=self.svc.run, daemon=True)

    def start(self) -> "ServiceThread":
        from recall.core import service_client as client

        self.local_only = client.LOCAL_ONLY  # the service sets it for its own process
        self.thread.start()
        return self

    def __enter__(self) -> "ServiceThread":
        self.start()
        wait_for(lambda: self.svc.state == "watching" and self.svc.caught_up, what="the service to catch up")
        return self

    def __exit__(self, *exc) -> None:
        from recall.core import service_client as client

        self.svc.stop()
        self.thread.join(60)
        client.LOCAL_ONLY = self.local_only
        assert not self.thread.is_alive()


# 1. a full disk loses nothing ---------------------------------------------------------------
def test_failed_commit_marks_nothing_done_and_the_next_run_restores_it(claude_projects, monkeypatch):
    session("alphaword", 10).write(claude_projects)
    failures = [1]
    disk_full(monkeypatch, failures)
    with pytest.raises(StorageError) as err:
        index_all()
    text = str(err.value)
    assert "is full" in text and "nothing is lost" in text and "cannot read" not in text.lower()
    assert "recall index" in text
    # nothing was marked done: the next run reads the file again and finds all ten
    summary = index_all()
    assert summary.messages == 10 and not summary.nothing_new
    assert found("alphaword") == 10


def test_commit_after_a_failed_one_does_not_mark_the_lost_batch_done(claude_projects, monkeypatch):
    """The audit's case: commit 1 fails (batch A lost), commit 2 succeeds with batch B; A's
    offsets must not be saved by commit 2, and A is read again in the same process."""
    a = session("alphaword", 10).write(claude_projects)
    b = session("betaword", 5, cwd="/home/dev/other").write(claude_projects)
    failures = [1]
    disk_full(monkeypatch, failures)
    with Indexer() as ix:
        ix.index_file(a)
        with pytest.raises(StorageError):
            ix.commit()
        assert str(a) in ix.failed_files
        ix.index_file(b)
        assert ix.commit()
        assert ix.state.file(str(a)) is None  # not marked done
        assert ix.state.file(str(b)).offset == b.stat().st_size
        ix.index_file(a)  # read again from its last saved offset (none): every line
        ix.commit()
        assert not ix.failed_files
    assert found("alphaword") == 10 and found("betaword") == 5


def test_memory_documents_of_a_failed_commit_are_fed_again(claude_projects, monkeypatch):
    failures = [1]
    disk_full(monkeypatch, failures)
    with Indexer() as ix:
        ix.upsert_memory_docs(
            [{"id": "m1", "project": "/p", "type": "decision", "content": "gammaword decided", "updated": 1.0}]
        )
        with pytest.raises(StorageError):
            ix.commit()
        assert ix.commit()  # the upsert was fed to the rolled-back writer again
    from recall.search.searcher import Searcher

    assert Searcher().search("gammaword", limit=5)


def test_service_recovers_by_itself_when_space_returns(claude_projects, monkeypatch):
    monkeypatch.setattr("recall.service.daemon.RETRY_FIRST", 0.2)
    first = session("alphaword", 3).write(claude_projects)
    with ServiceThread() as st:
        assert found("alphaword") == 3
        failures = [10**6]  # the disk is full from now on
        disk_full(monkeypatch, failures)
        s = session("deltaword", 12, cwd="/home/dev/full")
        s.write(claude_projects)
        wait_for(lambda: st.svc.storage_problem, what="the failed commit to be reported")
        status = st.svc.status()
        assert "is full" in status["write_error"]
        assert any("is full" in e["message"] for e in status["errors"])
        assert not any("cannot read" in e["message"] for e in status["errors"])
        assert found("deltaword") == 0
        failures[0] = 0  # space is back: nothing else happens, the service retries by itself
        wait_for(lambda: found("deltaword") == 12, what="the lost batch to be indexed again")
        wait_for(lambda: not st.svc.storage_problem, what="the problem to clear")
        assert found("alphaword") == 3
        assert first.exists()
    with _state() as state:
        assert state.file(str(s.path(claude_projects))).offset == s.path(claude_projects).stat().st_size


def test_a_write_failing_between_two_slices_of_a_file_ends_the_backfill(claude_projects, monkeypatch):
    """A commit between two slices of a big file fails: the backfill gives up the file and
    returns (the service then waits and retries), instead of asking again and again whether
    the file it no longer reads has more left."""
    from recall.service import daemon

    monkeypatch.setattr(daemon, "READ_SLICE_BYTES", 1)  # every slice stops with more left
    session("slicedword", 6).write(claude_projects)
    real = daemon.Service._between_files
    failed = []

    def between(self):
        if not failed:  # the first commit between two slices hits a full disk
            failed.append(1)
            self._storage_failed(StorageError("The disk holding the index is full."))
        real(self)

    monkeypatch.setattr(daemon.Service, "_between_files", between)
    svc = daemon.Service()
    done = []

    def writer():  # the writer's thread, as in the service
        svc.ix = svc._open_indexer()
        try:
            svc.backfill(svc.roots)
            done.append(not svc.stop_event.is_set())  # returned by itself
        finally:
            svc.ix.close(commit=False)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    t.join(30)
    svc.stop_event.set()  # ends a backfill that did not return by itself
    t.join(30)
    assert failed and done == [True]
    assert svc.retry_at is not None and svc.state == "retrying"


def test_service_started_on_a_full_disk_waits_for_space(claude_projects, monkeypatch):
    monkeypatch.setattr("recall.service.daemon.RETRY_FIRST", 0.2)
    session("alphaword", 3).write(claude_projects)
    full = [True]
    real = Indexer._check_identity

    def check(self, existed):
        if full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, existed)

    monkeypatch.setattr(Indexer, "_check_identity", check)
    st = ServiceThread().start()
    try:
        wait_for(lambda: st.svc.storage_problem, what="the full disk to be reported")
        assert "is full" in st.svc.storage_problem and st.thread.is_alive()
        full[0] = False
        wait_for(lambda: found("alphaword") == 3, what="the backfill once space returns")
        wait_for(lambda: not st.svc.storage_problem, what="the problem to clear")
    finally:
        st.__exit__(None, None, None)


class _state:
    def __enter__(self):
        self.db = StateDB(paths.state_db_path())
        return self.db

    def __exit__(self, *exc):
        self.db.close()


# 2. a lost index is rebuilt from the archive, never silently replaced ------------------------
@pytest.mark.parametrize("loss", ["index dir", "schema file", "killed after a rebuild dropped it"])
def test_lost_index_is_rebuilt_from_the_archive(claude_projects, loss, capsys):
    import shutil

    from recall.cli.app import run

    session("alphaword", 7).write(claude_projects)
    index_all()
    assert found("alphaword") == 7
    if loss == "index dir":
        shutil.rmtree(paths.index_dir())
    elif loss == "schema file":
        (paths.index_dir() / "recall-schema.json").unlink()
    else:  # _start_over killed between forgetting the offsets and dropping the index: the
        # other order (index dropped, offsets kept) is what an older recall left behind
        shutil.rmtree(paths.index_dir())
        db = StateDB(paths.state_db_path())
        db.conn.execute("DELETE FROM meta WHERE key='index_id'")
        db.close()
    capsys.readouterr()
    assert run(["index"]) == 0
    out = capsys.readouterr().out
    assert "Nothing new" not in out
    assert "Rebuilt the index (the index was missing): 7 messages restored from the archive." in out
    assert found("alphaword") == 7
    assert run(["index"]) == 0 and "Nothing new" in capsys.readouterr().out


def test_offsets_of_another_index_are_not_trusted(claude_projects):
    session("alphaword", 4).write(claude_projects)
    index_all()
    db = StateDB(paths.state_db_path())
    db.set_meta("index_id", "someotherindex")
    db.close()
    summary = index_all()
    assert "not the one the saved offsets describe" in summary.rebuilt and summary.replayed == 4
    assert found("alphaword") == 4


def test_identity_survives_ordinary_reopens(claude_projects):
    from indexer.schema import index_id

    session("alphaword", 2).write(claude_projects)
    index_all()
    ident = index_id(paths.index_dir())
    assert ident
    summary = index_all()
    assert summary.nothing_new and not summary.rebuilt and index_id(paths.index_dir()) == ident


def test_index_from_before_identities_is_adopted_not_rebuilt(claude_projects):
    session("alphaword", 3).write(claude_projects)
    index_all()
    from indexer.schema import SCHEMA_VERSION

    (paths.index_dir() / "recall-schema.json").write_text(json.dumps({"version": SCHEMA_VERSION}))
    db = StateDB(paths.state_db_path())
    db.conn.execute("DELETE FROM meta WHERE key='index_id'")
    db.close()
    summary = index_all()
    assert summary.nothing_new and not summary.rebuilt
    assert found("alphaword") == 3


def test_doctor_fails_when_the_index_holds_fewer_messages_than_the_archive(claude_projects):
    from recall.cli.checks import check_index

    session("alphaword", 6).write(claude_projects)
    index_all()
    assert check_index().ok
    # what a lost commit leaves behind: archived, marked done, not in the index
    import tantivy

    from indexer.schema import open_index

    index = open_index(paths.index_dir())
    w = index.writer()
    w.delete_documents_by_query(tantivy.Query.term_query(index.schema, "doctype", "message", index_option="basic"))
    w.commit()
    w.wait_merging_threads()
    check = check_index()
    assert not check.ok and not check.warn
    assert "6 of the 6 archived messages are not in the index" in check.detail
    assert "recall index --rebuild" in check.fix


def test_doctor_fails_when_the_offsets_describe_another_index(claude_projects):
    from recall.cli.checks import check_index

    session("alphaword", 2).write(claude_projects)
    index_all()
    db = StateDB(paths.state_db_path())
    db.set_meta("index_id", "someotherindex")
    db.close()
    check = check_index()
    assert not check.ok and "not the index the saved offsets describe" in check.detail
    assert "recall index" in check.fix


# 5. a file name that is not UTF-8 ------------------------------------------------------------
def test_non_utf8_file_name_never_stops_the_rest(claude_projects, capsys):
    from recall.cli.app import run

    good = session("alphaword", 3)
    good.write(claude_projects)
    bad = session("betaword", 2)
    folder = os.fsencode(bad.path(claude_projects).parent)
    os.makedirs(folder, exist_ok=True)
    with open(folder + b"/\xff\xfesession.jsonl", "wb") as fh:
        fh.write(bad.text().encode())
    assert run(["index"]) == 0
    out = capsys.readouterr().out
    assert "Indexed 5 messages" in out
    assert found("alphaword") == 3 and found("betaword") == 2
    assert run(["index"]) == 0 and "Nothing new" in capsys.readouterr().out
    from recall.cli.checks import check_index

    assert check_index().ok


def test_service_starts_with_a_non_utf8_file_name(claude_projects):
    bad = session("betaword", 2)
    folder = os.fsencode(bad.path(claude_projects).parent)
    os.makedirs(folder, exist_ok=True)
    with open(folder + b"/\xffsession.jsonl", "wb") as fh:
        fh.write(bad.text().encode())
    with ServiceThread() as st:
        assert found("betaword") == 2
        session("alphaword", 2).write(claude_projects)
        wait_for(lambda: found("alphaword") == 2, what="a live file after the bad name")
        assert not st.svc.errors


# 6. a FIFO named *.jsonl -----------------------------------------------------------------------
def test_fifo_never_hangs_recall_index(claude_projects):
    session("alphaword", 2).write(claude_projects)
    fifo = claude_projects / "-home-dev-app" / "pipe.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.run([*RECALL, "index"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "pipe.jsonl: not a regular file" in proc.stdout
    assert found("alphaword") == 2
    from recall.cli.checks import check_index

    assert check_index().ok  # never "behind" for a file that is never read


def test_fifo_never_stalls_the_service_and_sigterm_stops_it(claude_projects, tmp_path):
    import signal

    from recall.core import service_client as client

    fifo = claude_projects / "-home-dev-app" / "pipe.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([*RECALL, "serve"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:

        def up():
            try:
                return client.call("status", {}, timeout=1.0).get("state") == "watching"
            except client.Unavailable:
                return False

        wait_for(up, 90, "the service to be up")
        session("alphaword", 2).write(claude_projects)
        os.utime(fifo)  # an event on the FIFO too
        wait_for(lambda: found("alphaword") == 2, 60, "a live file beside the FIFO")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        log.close()


# 8. a transcript rewritten in place ----------------------------------------------------------
def test_transcript_rewritten_in_place_is_read_again(claude_projects):
    s = Session(cwd="/home/dev/app")
    s.user("opening prompt " + "padding " * 200)  # the first kilobyte is this line
    for i in range(40):
        s.user(f"oldword number q{i}x")
    path = s.write(claude_projects)
    index_all()
    assert found("oldword") == 40
    # restored from a backup of another version: same first line, longer, same inode
    r = Session(cwd="/home/dev/app", session_id=s.session_id)
    r.lines.append(s.lines[0])
    for i in range(80):
        r.user(f"newword number q{i}x")
    inode = path.stat().st_ino
    with open(path, "r+b") as fh:
        fh.write(r.text().encode())
    assert path.stat().st_ino == inode and path.stat().st_size > len(s.text().encode())
    index_all()
    assert found("newword") == 80 and found("oldword") == 40  # nothing lost of either


def test_plain_appends_still_resume_at_the_offset(claude_projects):
    s = session("alphaword", 5)
    s.write(claude_projects)
    index_all()
    for i in range(3):
        s.user(f"betaword more q{i}x")
    s.append(claude_projects, 5)
    assert index_all().messages == 3
    assert found("betaword") == 3 and found("alphaword") == 5


# low: bad characters, skipped lines named, failed reads retried, permissions ----------------
def test_bad_characters_cost_the_character_not_the_message(claude_projects):
    s = Session(cwd="/home/dev/app")
    lines = [
        json.dumps(s.user("surrogateword keeps XSURRX going")).replace("XSURRX", "\\ud800").encode(),
        json.dumps(s.user("invalidbyteword keeps XBYTEX going")).encode().replace(b"XBYTEX", b"\xff\xfe"),
        b"\xef\xbb\xbf" + json.dumps(s.user("bomword at the start of the line")).encode(),
        json.dumps(s.user("nulword keeps XNULX going")).encode().replace(b"XNULX", b"\x00"),
    ]
    path = s.path(claude_projects)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    summary = index_all()
    assert summary.messages == 4 and not summary.skipped.get("malformed-json")
    from recall.search.searcher import Searcher

    for word in ("surrogateword", "invalidbyteword", "bomword", "nulword"):
        hits = Searcher().search(word, messages=True, limit=5)
        assert len(hits) == 1, word
        assert "\x00" not in hits[0].text and "going" in hits[0].text or word == "bomword"


def test_skipped_lines_are_named_by_file_and_line(claude_projects, capsys):
    from recall.cli.app import run
    from recall.core import log

    s = Session(cwd="/home/dev/app")
    s.user("alphaword first")
    s.raw('{"type": "user", "message": ')  # cut short
    s.user("alphaword third")
    path = s.write(claude_projects)
    assert run(["index"]) == 0
    out = capsys.readouterr().out
    assert f"{path} line 2: not JSON" in out
    assert f"skipped line 2 of {path}: not JSON" in log.log_file().read_text()
    # line numbers continue across appends
    s.raw("not json either")
    s.append(claude_projects, 3)
    index_all()
    assert f"skipped line 4 of {path}" in log.log_file().read_text()


def test_service_retries_a_file_that_failed_to_read_without_it_changing(claude_projects, monkeypatch):
    monkeypatch.setattr("recall.service.daemon.RESCAN_INTERVAL", 0.3)
    real = claude_code.read
    broken = [True]

    def read_lines(path, *args, **kw):
        if broken[0] and "-home-dev-flaky" in str(path):
            raise OSError(errno.EIO, "Input/output error")
        return real(path, *args, **kw)

    monkeypatch.setattr(claude_code, "read", read_lines)
    session("alphaword", 2).write(claude_projects)
    flaky = session("flakyword", 3, cwd="/home/dev/flaky").write(claude_projects)
    with ServiceThread() as st:
        assert found("alphaword") == 2 and found("flakyword") == 0
        messages = [e["message"] for e in st.svc.errors]
        assert any(f"cannot read {flaky}: Input/output error" in m for m in messages)
        broken[0] = False  # the file does not change: a rescan retries it anyway
        wait_for(lambda: found("flakyword") == 3, 30, "the failed file to be retried")
        assert len([m for m in messages if "flaky" in m]) == 1  # reported once, not per retry


def test_segment_files_and_rotated_logs_are_private(claude_projects):
    session("alphaword", 3).write(claude_projects)
    old = os.umask(0o022)
    try:
        index_all()
        from recall.core import log

        logger = log.get("test")
        handler = log._file_handler
        logger.info("x" * 100)
        handler.doRollover()
        logger.info("after the rollover")
    finally:
        os.umask(old)
    loose = [p for p in paths.index_dir().rglob("*") if p.is_file() and p.stat().st_mode & 0o077]
    assert not loose, loose
    logs = list(paths.log_dir().iterdir())
    assert len(logs) >= 2
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in logs), [(p, oct(p.stat().st_mode)) for p in logs]


def test_a_damaged_index_is_named_as_damaged_and_rebuilt(claude_projects, capsys):
    from recall.cli.app import run

    session("alphaword", 3).write(claude_projects)
    index_all()
    (paths.index_dir() / "meta.json").write_text("{garbage")
    capsys.readouterr()
    assert run(["--raw", "alphaword"]) != 0
    err = capsys.readouterr().err
    assert "is damaged" in err and "another version" not in err and "recall index" in err
    assert run(["index"]) == 0
    assert "damaged" in capsys.readouterr().out
    assert found("alphaword") == 3


def test_storage_error_messages(tmp_path):
    from recall.core.errors import storage_error

    full = storage_error(OSError(errno.ENOSPC, "No space left on device"), "/nonexistent/recall/index")
    assert str(full).startswith(
        "Cannot write the index: the filesystem at / is full (holding /nonexistent/recall/index"
    )
    assert str(full).endswith(
        "nothing is lost: what was not saved is read again once space returns "
        "(the service retries by itself, or run `recall index`)."
    )
    tantivy_full = storage_error(ValueError("IoError { kind: StorageFull, ... }"), "/x", "the archive")
    assert "Cannot write the archive: the filesystem at / is full" in str(tantivy_full)
    ro = storage_error(OSError(errno.EROFS, "Read-only file system"), tmp_path)
    assert str(ro) == (
        f"Cannot write the index at {tmp_path} (Read-only file system): check that the filesystem "
        "is mounted and writable; nothing is lost: what was not saved is read again (the "
        "service retries by itself, or run `recall index`)."
    )
    gone = storage_error(OSError(errno.ENOENT, "No such file or directory"), tmp_path / "index")
    assert str(gone) == (
        f"Cannot write the index at {tmp_path / 'index'}: it was deleted. Nothing is lost: recall "
        "rebuilds it from the archive and reads again what was not saved (the service by "
        "itself, or run `recall index`)."
    )


def test_a_killed_writer_on_a_full_filesystem_is_named_as_full(tmp_path, monkeypatch):
    """Tantivy's writer thread can die on a full disk without saying ENOSPC: the free space
    of the filesystem names the cause then (the real-tmpfs test met both wordings)."""
    import os
    from types import SimpleNamespace

    from recall.core.errors import storage_error

    killed = ValueError("An error occurred in a thread: 'An index writer was killed.'")
    monkeypatch.setattr(os, "statvfs", lambda p: SimpleNamespace(f_bavail=10, f_frsize=4096, f_blocks=10_000))
    assert "is full (holding" in str(storage_error(killed, tmp_path / "index"))
    monkeypatch.setattr(os, "statvfs", lambda p: SimpleNamespace(f_bavail=9_000, f_frsize=4096, f_blocks=10_000))
    assert "check that the filesystem is mounted and writable" in str(storage_error(killed, tmp_path))


def test_service_rebuilds_an_index_deleted_under_it(claude_projects, monkeypatch):
    import shutil

    monkeypatch.setattr("recall.service.daemon.HEARTBEAT_INTERVAL", 0.3)
    session("alphaword", 5).write(claude_projects)
    with ServiceThread() as st:
        assert found("alphaword") == 5
        shutil.rmtree(paths.index_dir())
        wait_for(lambda: found("alphaword") == 5, 60, "the index to be rebuilt from the archive")
        session("betaword", 3, cwd="/home/dev/after").write(claude_projects)
        wait_for(lambda: found("betaword") == 3, 60, "new lines after the rebuild")
        assert any("was deleted" in e["message"] for e in st.svc.errors)


def _can_unshare() -> bool:
    import shutil

    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs root and unshare -m (a private tmpfs)")
def test_a_real_full_tmpfs_loses_nothing(claude_projects, tmp_path):
    """The audit's reproduction: RECALL_HOME on a small tmpfs (in a private mount namespace)
    filled up; `recall index` fails naming the full filesystem, and once space is freed the
    next run indexes every message."""
    for k in range(20):
        s = Session(cwd=f"/home/dev/p{k % 3}")
        for i in range(100):
            s.user(f"fullword message {k}-{i} " + "filler text " * 10)
        s.write(claude_projects)
    home = os.environ["RECALL_HOME"]
    script = f"""
set -u
mkdir -p {home} && mount -t tmpfs -o size=8m tmpfs {home} || exit 97
avail=$(df -k --output=avail {home} | tail -1)
head -c $(( (avail - 300) * 1024 )) /dev/zero > {home}/filler
{sys.executable} -m recall.entry index; echo "RC1=$?"
rm {home}/filler
{sys.executable} -m recall.entry index; echo "RC2=$?"
{sys.executable} -c "
import tantivy
from indexer.schema import open_index
from recall.core import paths
ix = open_index(paths.index_dir())
q = tantivy.Query.term_query(ix.schema, 'doctype', 'message', index_option='basic')
print('INDEXED', ix.searcher().search(q, 1, count=True).count)"
"""
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    out = proc.stdout + proc.stderr
    if proc.returncode == 97:
        pytest.skip("cannot mount a tmpfs here")
    assert "RC1=1" in out and "is full" in out and "cannot read" not in out.lower(), out
    assert "RC2=0" in out and "INDEXED 2000" in out, out


def test_recall_index_through_a_service_that_cannot_write_says_so(claude_projects, monkeypatch, capsys):
    from recall.cli.app import run

    monkeypatch.setattr("recall.service.daemon.RETRY_FIRST", 30.0)  # stays in the failed state
    session("alphaword", 2).write(claude_projects)
    with ServiceThread() as st:
        from recall.core import service_client as client

        client.LOCAL_ONLY = st.local_only  # this test is the CLI, a client of the service
        disk_full(monkeypatch, [10**6])
        session("deltaword", 2, cwd="/home/dev/full").write(claude_projects)
        wait_for(lambda: st.svc.storage_problem, what="the failed commit")
        capsys.readouterr()
        assert run(["index"]) == 1
        err = capsys.readouterr().err
        assert "is full" in err and "Nothing new" not in err


def test_lost_writer_and_damaged_index_messages(tmp_path):
    from recall.search.searcher import Searcher, SearchIndexError

    ix = Indexer.__new__(Indexer)
    ix.index_path = tmp_path / "index"
    assert str(ix._no_writer()) == (
        f"The index writer at {tmp_path / 'index'} was lost to a failed write: nothing "
        "is lost; restart the service (`recall service restart`) or run `recall index` "
        "again."
    )
    session_dir = tmp_path / "idx"
    from indexer.schema import open_index

    open_index(session_dir, create=True)
    (session_dir / "meta.json").write_text("{garbage")
    with pytest.raises(SearchIndexError) as err:
        Searcher(session_dir)
    text = str(err.value)
    assert text.startswith(f"The index at {session_dir} is damaged (Data corrupted: ")
    assert text.endswith("): run `recall index` to rebuild it from the archive (nothing is lost).")


def test_doctor_counts_a_message_archived_under_two_projects_once(claude_projects):
    """A message whose project changed between two reads is archived twice, indexed once:
    not a gap."""
    from indexer.archive import Archive
    from indexer.message import Message
    from recall.cli.checks import check_index

    session("alphaword", 3).write(claude_projects)
    index_all()
    archive = Archive(paths.archive_dir())
    first = next(iter(archive.replay()))[0]
    moved = Message.from_record(dict(first.to_record(), project="/home/dev/now-a-repo"))
    archive.append([moved])
    assert archive.count() == 4 and archive.distinct_messages() == 3
    assert check_index().ok, check_index()
