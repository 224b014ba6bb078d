"""The background service, driven as a real ``recall serve`` subprocess against transcript
files written line by line: partial lines, truncation, replacement, deletion, new project
directories and subagent files, kill -9 and restart, a rebuild after the transcripts are
gone, two services racing for the lock, SIGTERM, forget, memory documents, status, and
the unit files. Every check is a count (visible messages, commits, archived records),
never a timing."""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from indexer.archive import Archive
from recall.core import paths
from recall.core import service_client as client
from tests.support.factory import Session
from tests.support.wait import wait_for

RECALL = [sys.executable, "-m", "recall.entry"]
pytestmark = pytest.mark.slow


# helpers ----------------------------------------------------------------------------------------
def count(doctype: str = "message", **terms) -> int:
    """What a separate process sees in the index right now."""
    import tantivy

    from indexer.schema import open_index

    try:
        index = open_index(paths.index_dir())
    except FileNotFoundError:
        return 0
    schema = index.schema
    q = [(tantivy.Occur.Must, tantivy.Query.term_query(schema, "doctype", doctype, index_option="basic"))]
    for field, value in terms.items():
        q.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, field, value, index_option="basic")))
    return index.searcher().search(tantivy.Query.boolean_query(q), 1, count=True).count


def keys_matching(word: str) -> list[str]:
    from recall.search.searcher import Searcher

    return [h.uuid for h in Searcher().search(word, messages=True, limit=1000)]


def archived() -> list[str]:
    return [m.uuid for b in Archive(paths.archive_dir()).replay() for m in b]


def line_bytes(line: dict) -> bytes:
    return (json.dumps(line) + "\n").encode()


def append_line(path: Path, line: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write(line_bytes(line))


class Serve:
    """One ``recall serve`` subprocess."""

    n = 0

    def __init__(self, tmp_path: Path, *args: str) -> None:
        Serve.n += 1
        self.log_path = tmp_path / f"serve-{Serve.n}.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*RECALL, "serve", *args], stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")

    def ready(self, timeout: float = 90.0) -> "Serve":
        def up():
            if self.proc.poll() is not None:
                raise AssertionError(f"recall serve exited {self.proc.returncode}: {self.output()}")
            try:
                st = client.call("status", {}, timeout=1.0)
            except client.Unavailable:
                return None
            return st if st.get("pid") == self.pid and st.get("state") == "watching" else None

        wait_for(up, timeout, interval=0.1, what="the service to be up")
        return self

    def status(self) -> dict:
        return client.call("status", {}, timeout=5.0)

    def terminate(self, timeout: float = 60.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout)
        self.log.close()
        return rc

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(30)
        self.log.close()

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        if not self.log.closed:
            self.log.close()


@pytest.fixture
def serve(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_WRITER_HEAP_MB", "48")
    started: list[Serve] = []

    def start(*args: str) -> Serve:
        s = Serve(tmp_path, *args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.cleanup()


def run_cli(*args: str, timeout: float = 300.0, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*RECALL, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env
    )


class Marker:
    """A line in a file of its own: once it is visible, everything written before is committed."""

    def __init__(self, root: Path) -> None:
        self.session = Session(cwd="/home/dev/marker")
        self.root = root
        self.n = 0

    def sync(self, timeout: float = 60.0) -> None:
        self.n += 1
        word = f"syncmarker{self.n}x"
        append_line(self.session.path(self.root), self.session.user(f"marker {word}"))
        wait_for(lambda: keys_matching(word), timeout, interval=0.05, what=f"marker {word}")


# streaming ------------------------------------------------------------------------------------------
def test_lines_partial_lines_new_dirs_and_subagents(serve, claude_projects):
    svc = serve().ready()
    marker = Marker(claude_projects)
    s = Session(cwd="/home/dev/newproject")  # its project directory appears after the service started
    path = s.path(claude_projects)
    for i in range(5):
        append_line(path, s.user(f"walrus question {i}"))
    wait_for(lambda: count(project="/home/dev/newproject") == 5, what="5 lines")

    data = line_bytes(s.assistant("the pelican answer"))
    with open(path, "ab") as fh:  # half a line: no newline yet
        fh.write(data[:25])
    marker.sync()
    assert count(project="/home/dev/newproject") == 5 and keys_matching("pelican") == []
    with open(path, "ab") as fh:
        fh.write(data[25:])
    wait_for(lambda: keys_matching("pelican"), what="the completed line")
    assert count(project="/home/dev/newproject") == 6

    sub = Session(cwd="/home/dev/newproject", session_id=s.session_id)
    sub.user("subagent: search for the flamingo config")
    sub.assistant("found the flamingo config in settings.py")
    sub.write_subagent(claude_projects, "abc123")
    wait_for(lambda: len(keys_matching("flamingo")) == 2, what="the subagent lines")
    assert count(session_id=s.session_id) == 8  # subagent lines belong to the parent session
    assert svc.status()["errors"] == []
    assert svc.terminate() == 0


def test_truncation_replacement_and_deletion_lose_and_duplicate_nothing(serve, claude_projects, tmp_path):
    svc = serve().ready()
    marker = Marker(claude_projects)
    s = Session(cwd="/home/dev/app")
    path = s.path(claude_projects)
    for i in range(5):
        append_line(path, s.user(f"original line {i} about otters"))
    wait_for(lambda: count(project="/home/dev/app") == 5)

    # truncated and rewritten in place (same inode) with other lines
    t = Session(cwd="/home/dev/app", session_id=s.session_id)
    for i in range(3):
        t.user(f"rewritten line {i} about badgers")
    path.write_text(t.text())
    wait_for(lambda: count(project="/home/dev/app") == 8, what="old 5 + new 3")

    # replaced by rename with the old lines plus two more: nothing twice
    for i in range(2):
        t.user(f"appended after replacement {i} about badgers")
    tmp = tmp_path / "replacement.jsonl"
    tmp.write_text(t.text())
    os.replace(tmp, path)
    wait_for(lambda: count(project="/home/dev/app") == 10, what="2 more")
    # the same content written again under a new inode
    tmp.write_text(t.text())
    os.replace(tmp, path)
    marker.sync()
    assert count(project="/home/dev/app") == 10
    assert len(keys_matching("badgers")) == 5 and len(keys_matching("otters")) == 5

    # deleted: everything indexed stays, across a restart too
    path.unlink()
    marker.sync()
    assert count(project="/home/dev/app") == 10
    assert svc.terminate() == 0
    serve().ready()
    marker.sync()
    assert count(project="/home/dev/app") == 10
    assert sorted(archived()).count(t.lines[0]["uuid"]) == 1
    assert len([u for u in archived() if u != "x"]) == 10 + marker.n


def test_kill_9_at_any_moment_then_restart_loses_and_duplicates_nothing(serve, claude_projects):
    rng = random.Random(7)
    serve().ready()
    sessions = [Session(cwd=f"/home/dev/p{i % 3}") for i in range(6)]
    total = 480
    written = []
    done = threading.Event()

    def writer():
        try:
            for n in range(total):
                s = sessions[n % len(sessions)]
                data = line_bytes(s.user(f"chaos line {n} keyword quokka"))
                path = s.path(claude_projects)
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "ab") as fh:
                    if n % 5 == 0:  # some lines arrive in two writes
                        fh.write(data[:17])
                        fh.flush()
                        time.sleep(0.004)
                        fh.write(data[17:])
                    else:
                        fh.write(data)
                written.append(n)
                time.sleep(0.008)
        finally:
            done.set()

    th = threading.Thread(target=writer)
    th.start()
    kills = 0
    current = None
    try:
        while not done.is_set() or kills < 3:
            time.sleep(rng.uniform(0.2, 1.0))
            victim = current
            if victim is None:
                st = client.call("status", {}, timeout=5)
                os.kill(st["pid"], signal.SIGKILL)
                wait_for(lambda: client.ping(0.3) is None, 30, interval=0.05, what="the killed service to go")
            else:
                victim.kill9()
            kills += 1
            current = serve()
            if kills % 2:  # sometimes kill it again while it is still starting / backfilling
                time.sleep(rng.uniform(0.0, 0.6))
                current.kill9()
                kills += 1
                current = serve()
            current.ready()
    finally:
        th.join()
    assert len(written) == total and kills >= 3
    wait_for(lambda: count(doctype="message") >= total, 90, interval=0.1, what=f"{total} messages")
    Marker(claude_projects).sync()
    assert count(doctype="message") == total + 1  # + the marker: none lost, none twice
    assert len(keys_matching("quokka")) == total
    uuids = archived()
    assert len(uuids) == total + 1 and len(set(uuids)) == total + 1
    assert count(doctype="session") == len(sessions) + 1
    assert current.terminate() == 0


def test_sigterm_commits_what_was_written_and_leaves_nothing_behind(serve, claude_projects):
    svc = serve().ready()
    st = svc.status()
    assert st["socket"] == client.address()
    s = Session(cwd="/home/dev/app")
    path = s.path(claude_projects)
    for i in range(40):
        append_line(path, s.user(f"last words {i} about the axolotl"))
    children = []
    for task in Path(f"/proc/{svc.pid}/task").glob("*/children"):
        children += task.read_text().split()
    assert children == []  # no child processes, ever
    assert svc.terminate() == 0  # right after the writes: the final drain + commit takes them
    assert count(project="/home/dev/app") == 40
    assert not os.path.exists(client.address())
    saved = json.loads((paths.recall_home() / "service.json").read_text())
    assert saved["running"] is False and saved["stopped"] and saved["pid"] == svc.pid
    assert "final commit done" in svc.output()


def test_two_services_racing_for_the_lock(serve, claude_projects):
    a, b = serve(), serve()
    wait_for(lambda: a.proc.poll() is not None or b.proc.poll() is not None, 60, interval=0.05, what="one to give up")
    loser, winner = (a, b) if a.proc.poll() is not None else (b, a)
    assert loser.proc.returncode == 0
    assert f"already runs for {paths.recall_home()} (pid {winner.pid})" in loser.output()
    winner.ready()
    assert client.ping()["pid"] == winner.pid
    third = run_cli("serve", timeout=60)
    assert third.returncode == 0 and f"pid {winner.pid}" in third.stderr
    assert "Traceback" not in third.stderr
    assert winner.terminate() == 0


def test_recall_serve_serves_the_page_op(serve, claude_projects):
    """The service never names the page (a floor above it): `recall serve` adds its op before
    the start, so `recall ui` finds it there, and the page's server goes with the service."""
    svc = serve().ready()
    assert "ui" in client.ping()["ops"]
    out = client.call("ui", {"port": None}, timeout=30.0)
    assert out["pid"] == svc.pid and out["url"].startswith(f"http://127.0.0.1:{out['port']}/")
    assert svc.terminate() == 0
    assert "Traceback" not in svc.output()


def test_freshness_under_steady_load_batches_commits(serve, claude_projects):
    """50 lines/s across 20 files: every line becomes visible, with far fewer commits than
    lines (the latency itself is measured in benchmarks/freshness.py)."""
    svc = serve().ready()
    sessions = [Session(cwd=f"/home/dev/load{i}") for i in range(20)]
    before = svc.status()["commits"]
    lines = 200
    t0 = time.monotonic()
    for n in range(lines):
        s = sessions[n % 20]
        append_line(s.path(claude_projects), s.user(f"load line {n} capybara"))
        delay = t0 + (n + 1) / 50.0 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    wait_for(lambda: count() >= lines, 60, interval=0.05, what="all lines")
    commits = svc.status()["commits"] - before
    assert count() == lines
    assert 1 <= commits <= lines // 3, commits
    st = svc.status()
    assert st["counts"]["messages"] == lines or st["counts"]["messages"] <= lines
    assert svc.terminate() == 0


# the archive through the service ------------------------------------------------------------------
def test_rebuild_after_the_transcripts_are_gone(serve, claude_projects):
    svc = serve().ready()
    sessions = []
    for k in range(3):
        s = Session(cwd=f"/home/dev/r{k}")
        for i in range(4):
            s.user(f"rebuild question {i} about the narwhal {k}")
            s.assistant(f"rebuild answer {i}")
        s.write(claude_projects)
        sessions.append(s)
    wait_for(lambda: count() == 24)

    # `recall index --rebuild` while the service runs: the service does it
    out = run_cli("index", "--rebuild", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["rebuilt"] == "asked for" and summary["replayed"] == 24
    assert count() == 24 and count("session") == 3
    assert svc.terminate() == 0

    for s in sessions:  # Claude Code deleted them all
        s.path(claude_projects).unlink()
    out = run_cli("index", "--rebuild")
    assert out.returncode == 0, out.stderr
    assert "Restored 24 messages from the archive" in out.stdout
    assert count() == 24 and len(keys_matching("narwhal")) == 12

    svc = serve().ready()  # a service started over the empty roots keeps everything
    assert count() == 24
    assert svc.status()["counts"]["messages"] == 24
    out = run_cli("index")
    assert out.returncode == 0 and "keeps the index current" in out.stderr
    assert svc.terminate() == 0

    # a schema upgrade: the service rebuilds on start, from the archive
    (paths.index_dir() / "recall-schema.json").write_text(json.dumps({"version": 0}))
    svc = serve().ready()
    assert svc.status()["last_backfill"]["replayed"] == 24
    assert count() == 24 and count("session") == 3
    assert svc.terminate() == 0


def test_forget_through_the_service_and_without_it(serve, claude_projects):
    svc = serve().ready()
    a = Session(cwd="/home/dev/keep")
    b = Session(cwd="/home/dev/keep")
    c = Session(cwd="/home/dev/secret")
    for s, word in ((a, "alpha"), (b, "bravo"), (c, "charlie")):
        for i in range(3):
            s.user(f"{word} line {i} dolphin")
        s.write(claude_projects)
    wait_for(lambda: count() == 9)

    out = run_cli("forget", "--session", b.session_id[:8])  # no terminal, no --yes: nothing goes
    assert out.returncode == 2 and "Nothing removed" in out.stderr and "--yes" in out.stderr
    assert count() == 9
    out = run_cli("forget", "--session", b.session_id[:8], "--yes")
    assert out.returncode == 0, out.stderr
    assert "3 messages removed from the index, 3 from the archive" in out.stdout
    assert keys_matching("bravo") == [] and count() == 6
    assert svc.terminate() == 0

    out = run_cli("forget", "--project", "/home/dev/secret", "--json", "--yes")  # no service: in-process
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["index"] == 3
    assert count() == 3 and keys_matching("charlie") == []
    assert sorted(set(archived())) == sorted(l["uuid"] for l in a.lines)

    serve().ready()  # the transcripts are still there: nothing comes back
    out = run_cli("index", "--rebuild", "--json")
    assert out.returncode == 0, out.stderr
    assert count() == 3 and keys_matching("bravo") == [] and keys_matching("charlie") == []

    bad = run_cli("forget")
    assert bad.returncode == 2 and "recall forget --session ID" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_memory_docs_go_through_the_service_and_survive_a_rebuild(serve, claude_projects):
    serve().ready()
    doc = {
        "id": "m1",
        "project": "/home/dev/app",
        "type": "decision",
        "content": "we pin tantivy to 0.27",
        "tags": ["deps", "search"],
        "updated": 1_763_000_000.0,
        "session_ids": ["s1"],
    }
    res = client.call("memory_docs", {"upsert": [doc, dict(doc, id="m2", content="temporary note")]}, timeout=30)
    assert res == {"upserted": 2, "deleted": 0}
    assert count("memory") == 2  # committed before the call returned
    assert client.call("memory_docs", {"delete": ["m2"]}, timeout=30) == {"upserted": 0, "deleted": 1}
    assert count("memory") == 1
    with pytest.raises(client.RemoteError):
        client.call("memory_docs", {"upsert": [{"content": "no id"}]}, timeout=30)
    hits = client.call("search", {"text": "tantivy", "doctypes": ["memory"]})
    assert [h["uuid"] for h in hits] == ["m1"] and hits[0]["kind"] == "memory"
    out = run_cli("index", "--rebuild", "--json")
    assert out.returncode == 0, out.stderr
    assert count("memory") == 1


# status, index, unit files --------------------------------------------------------------------------
def test_status_running_and_stopped(serve, claude_projects):
    s = Session(cwd="/home/dev/app")
    s.user("status check line")
    s.write(claude_projects)
    svc = serve().ready()
    wait_for(lambda: count() == 1)
    out = run_cli("status", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    svc_info = info["service"]
    assert svc_info["running"] and svc_info["pid"] == svc.pid and svc_info["uptime"] >= 0
    assert svc_info["roots"] == [{"path": str(claude_projects), "watched": True, "exists": True}]
    assert info["index"]["messages"] == 1 and info["index"]["files"] == 1
    assert svc_info["last_commit"] and svc_info["lag_seconds"] >= 0 and svc_info["errors"] == []
    text = run_cli("status").stdout
    assert f"Service: running (pid {svc.pid}" in text and "1 message," in text
    assert svc.terminate() == 0
    text = run_cli("status").stdout
    assert "Service: not running" in text and "1 message," in text and "recall service start" in text

    home = paths.recall_home()
    for d in (home, paths.archive_dir(), paths.log_dir(), paths.index_dir()):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    for f in (
        home / "service.json",
        home / "service.lock",
        paths.state_db_path(),
        *Archive(paths.archive_dir()).session_files(),
        paths.log_dir() / "recall.log",
    ):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_service_install_without_a_manager_and_start_stop(tmp_path, monkeypatch, claude_projects):
    env = dict(os.environ, PATH="/nonexistent", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    out = run_cli("service", "install", env=env)
    assert out.returncode == 0, out.stderr
    unit = next((tmp_path / "xdg" / "systemd" / "user").glob("recall*.service"))
    text = unit.read_text()
    assert "serve" in text and f"RECALL_HOME={paths.recall_home()}" in text
    assert f"CLAUDE_CONFIG_DIR={claude_projects.parent}" in text
    assert "systemctl --user daemon-reload && systemctl --user enable --now " + unit.name in out.stdout

    darwin = dict(env, RECALL_SERVICE_PLATFORM="darwin")
    out = run_cli("service", "install", env=darwin)
    assert out.returncode == 0 and "launchctl bootstrap gui/" in out.stdout
    import plistlib

    plist = plistlib.loads(next((Path(os.environ["HOME"]) / "Library" / "LaunchAgents").glob("*.plist")).read_bytes())
    assert plist["ProgramArguments"][-1] == "serve" and plist["EnvironmentVariables"]["RECALL_HOME"]
    assert run_cli("service", "uninstall", env=darwin).returncode == 0

    out = run_cli("service", "status", env=env)
    assert "installed" in out.stdout and "not running" in out.stdout
    try:
        out = run_cli("service", "start", env=env, timeout=120)  # no manager: detached
        assert out.returncode == 0, out.stderr
        pid = client.ping()["pid"]
        assert f"pid {pid}" in out.stdout
        again = run_cli("service", "start", env=env)
        assert f"already runs (pid {pid})" in again.stdout
        out = run_cli("service", "stop", env=env, timeout=120)
        assert out.returncode == 0 and f"Stopped the recall service (pid {pid})" in out.stdout
        assert client.ping() is None
    finally:
        info = client.ping()
        if info:
            os.kill(info["pid"], signal.SIGKILL)
    out = run_cli("service", "uninstall", env=env)
    assert out.returncode == 0 and not unit.exists()
    out = run_cli("service", "stop", env=env)
    assert "not running; nothing to stop" in out.stdout


def test_index_without_a_service_and_bad_input(claude_projects, tmp_path):
    s = Session(cwd="/home/dev/app")
    s.user("plain index line")
    s.write(claude_projects)
    out = run_cli("index", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["messages"] == 1
    bad = run_cli("serve", "--source", str(tmp_path / "missing"))
    assert bad.returncode != 0 and "is not a directory" in bad.stderr and "Traceback" not in bad.stderr


def test_memory_changes_queued_while_the_writer_was_busy_are_applied(serve, claude_projects):
    memory_index = pytest.importorskip("recall.memory.index_docs")
    doc = {
        "id": "q1",
        "project": "/home/dev/app",
        "type": "decision",
        "content": "queued while busy",
        "tags": [],
        "updated": 1_763_000_000.0,
        "session_ids": [],
    }
    paths.ensure_dir(memory_index.pending_path().parent)
    memory_index.pending_path().write_text(json.dumps({"upsert": [doc], "delete": []}) + "\n")
    serve().ready()
    wait_for(lambda: count("memory") == 1, what="the queued memory document")
    assert not memory_index.pending_path().exists()


def test_a_root_that_appears_after_the_start_is_watched(serve, tmp_path):
    root = tmp_path / "claude" / "projects"
    assert not root.exists()
    svc = serve().ready()
    assert svc.status()["roots"] == [{"path": str(root), "watched": False, "exists": False}]
    s = Session(cwd="/home/dev/late")
    s.user("the first session ever, about the lemur")
    s.write(root)  # Claude Code creates the directory with its first transcript
    wait_for(lambda: keys_matching("lemur"), what="the first transcript")
    wait_for(lambda: svc.status()["roots"][0]["watched"], what="the root to be watched")
    append_line(s.path(root), s.user("and a second line about the lemur"))
    wait_for(lambda: len(keys_matching("lemur")) == 2, what="a line appended later")
    assert svc.terminate() == 0


# issue 38: the loop's background jobs are one declared table; op modules start threads when told ---
def test_the_loop_walks_its_job_table_in_order(monkeypatch, claude_projects):
    from recall.service import daemon

    ran = []

    def job(name, every=0.0, when=True, ends=False, result=None, at_start=True):
        return daemon.Job(
            name,
            lambda s: every,
            lambda s: ran.append(name) or result,
            lambda s: when,
            at_start=at_start,
            ends_turn=ends,
        )

    jobs = (
        job("a"),
        job("not now", when=False),
        job("hourly", every=3600.0, at_start=False),
        job("b"),
        job("ends", ends=True, result=True),
        job("after"),
    )
    monkeypatch.setattr(daemon, "JOBS", jobs)
    svc = daemon.Service()
    assert svc._run_jobs() is False  # "ends" ended the turn
    assert ran == ["a", "b", "ends"]
    ran.clear()
    svc._job_last["hourly"] -= 3600.0  # an hour on: due
    svc._run_jobs()
    assert ran == ["a", "hourly", "b", "ends"]
    names = [j.name for j in daemon.JOBS]
    assert len(names) == len(set(names))


def test_op_modules_start_their_threads_only_when_the_service_starts_them(claude_projects):
    code = (
        "import threading\nfrom recall.service import registry\n"
        "class Svc:\n    stop_event = threading.Event()\n    generation = 0\n"
        "registry.set_service(Svc())\nassert not registry.load_modules()\n"
        "names = lambda: sorted(t.name for t in threading.enumerate() if t.name.startswith('recall-'))\n"
        "print(names())\nassert not registry.start_modules(registry.service())\nprint(names())\n"
        "Svc.stop_event.set()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported, started = proc.stdout.splitlines()[:2]
    assert imported == "[]"  # imported with a service set: no thread yet
    assert "recall-memory" in started
