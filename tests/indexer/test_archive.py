"""The durable archive and the Indexer's use of it: de-duplication, torn writes, replay on
rebuild (sessions whose transcript is gone come back), forget, memory documents, the
writer lock."""

from __future__ import annotations

import json
import os
import stat

import pytest

from indexer.archive import Archive, project_slug, session_filename
from indexer.ingest import Indexer, index_all
from indexer.message import Message
from recall.core import paths
from recall.core.errors import IndexBusy, UsageError
from recall.search.searcher import Searcher
from tests.support.factory import Session


def msg(i: int, session: str = "s1", project: str = "/p/app", ts: float = 1_700_000_000.0) -> Message:
    return Message(
        uuid=f"u{i}",
        session_id=session,
        project=project,
        cwd=project,
        branch="main",
        role="user",
        timestamp=ts + i,
        text=f"message number {i} about zebra{i}",
    )


def count(doctype: str = "message", **terms) -> int:
    import tantivy

    s = Searcher()
    q = [(tantivy.Occur.Must, tantivy.Query.term_query(s.schema, "doctype", doctype, index_option="basic"))]
    for field, value in terms.items():
        q.append((tantivy.Occur.Must, tantivy.Query.term_query(s.schema, field, value, index_option="basic")))
    return s.index.searcher().search(tantivy.Query.boolean_query(q), 1, count=True).count


def archived_uuids(root=None) -> list[str]:
    arch = Archive(root or paths.archive_dir())
    return [m.uuid for batch in arch.replay() for m in batch]


# the archive alone ----------------------------------------------------------------------------
def test_append_dedupes_and_survives_a_new_process(tmp_path):
    arch = Archive(tmp_path / "a")
    assert arch.append([msg(1), msg(2)]) == 2
    assert arch.append([msg(2), msg(3)]) == 1
    again = Archive(tmp_path / "a")  # a restarted service: the uuids come from the file
    assert again.append([msg(1), msg(3), msg(4)]) == 1
    assert sorted(m.uuid for b in again.replay() for m in b) == ["u1", "u2", "u3", "u4"]


def test_layout_permissions_and_names(tmp_path):
    arch = Archive(tmp_path / "a")
    arch.append([msg(1, session="../../etc/passwd", project="/home/x/my proj")])
    files = arch.session_files()
    assert len(files) == 1
    f = files[0]
    assert f.parent.parent == arch.sessions_dir  # no escape from the archive
    assert f.parent.name == project_slug("/home/x/my proj")
    assert f.name == session_filename("../../etc/passwd") and "/" not in f.name
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(f.parent.stat().st_mode) == 0o700
    assert (f.parent / "project").read_text() == "/home/x/my proj"


def test_a_torn_last_line_is_skipped_and_healed(tmp_path):
    arch = Archive(tmp_path / "a")
    arch.append([msg(1), msg(2)])
    path = arch.session_files()[0]
    with open(path, "ab") as fh:  # kill -9 in the middle of a write
        fh.write(b'{"uuid": "u3", "session_id": "s1", "te')
    fresh = Archive(tmp_path / "a")
    assert [m.uuid for b in fresh.replay() for m in b] == ["u1", "u2"]
    assert fresh.append([msg(3)]) == 1
    lines = path.read_bytes().splitlines()
    assert [json.loads(l)["uuid"] for l in lines] == ["u1", "u2", "u3"]


def test_store_returns_positions_that_read_back(tmp_path):
    from indexer.archive_files import read_message

    root = tmp_path / "a"
    arch = Archive(root)
    first = arch.store([msg(1), msg(2, session="s2"), msg(3)])
    again = Archive(root).store([msg(3), msg(4), msg(4), msg(1)])  # a new process; a repeat
    assert again[0] == first[2] and again[3] == first[0] and again[1] == again[2]
    for i, pos in [(1, first[0]), (3, first[2]), (4, again[1])]:
        rec = read_message(root, "/p/app", "s1", pos, f"u{i}")
        assert rec["text"] == f"message number {i} about zebra{i}" and rec["cwd"] == "/p/app"
    assert read_message(root, "/p/app", "s2", first[1], "u2")["uuid"] == "u2"
    replayed = [(m.uuid, pos) for batch, where in Archive(root).replay_positions() for m, pos in zip(batch, where)]
    assert sorted(replayed) == sorted({("u1", first[0]), ("u2", first[1]), ("u3", first[2]), ("u4", again[1])})


def test_a_position_survives_a_healed_torn_write(tmp_path):
    from indexer.archive_files import read_message

    root = tmp_path / "a"
    Archive(root).store([msg(1)])
    path = Archive(root).session_files()[0]
    with open(path, "ab") as fh:  # kill -9 in the middle of a write
        fh.write(b'{"uuid": "u2", "session_id": "s1", "te')
    (pos,) = Archive(root).store([msg(2)])
    assert read_message(root, "/p/app", "s1", pos, "u2")["text"] == "message number 2 about zebra2"


def test_a_failed_write_is_retried_whole_and_positions_stay_right(tmp_path, monkeypatch):
    import indexer.archive as archive_mod
    from indexer.archive_files import read_message

    root = tmp_path / "a"
    arch = Archive(root)
    arch.store([msg(1)])
    real_write = os.write

    def half_then_fail(fd, data):  # the disk fills in the middle of a write
        real_write(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_mod.os, "write", half_then_fail)
    with pytest.raises(OSError):
        arch.store([msg(2), msg(3)])
    monkeypatch.setattr(archive_mod.os, "write", real_write)
    positions = arch.store([msg(2), msg(3)])
    data = arch.session_files()[0].read_bytes()
    assert [json.loads(data[p : data.index(b"\n", p)])["uuid"] for p in positions] == ["u2", "u3"]
    assert read_message(root, "/p/app", "s1", positions[1], "u3")["text"] == "message number 3 about zebra3"
    assert sorted(m.uuid for b in Archive(root).replay() for m in b) == ["u1", "u2", "u3"]


def test_reading_a_message_that_is_gone_or_misplaced(tmp_path):
    from indexer.archive_files import read_message

    root = tmp_path / "a"
    arch = Archive(root)
    p1, p2 = arch.store([msg(1), msg(2)])
    assert read_message(root, "/p/app", "s1", p1, "u2")["uuid"] == "u2"  # wrong position: found by a scan
    assert read_message(root, "/p/app", "s1", 10**9, "u1")["uuid"] == "u1"  # past the end
    assert read_message(root, "/p/app", "s1", p2, "u9") is None
    assert read_message(root, "/p/app", "nope", 0, "u1") is None
    arch.forget_session("s1")
    assert read_message(root, "/p/app", "s1", p1, "u1") is None


def test_replay_streams_in_batches(tmp_path):
    arch = Archive(tmp_path / "a")
    arch.append([msg(i, session=f"s{i % 7}") for i in range(5000)])
    sizes = [len(b) for b in arch.replay(batch=1000)]
    assert sum(sizes) == 5000 and max(sizes) <= 1000


def test_uuid_cache_is_bounded(tmp_path, monkeypatch):
    import indexer.archive as archive_mod

    monkeypatch.setattr(archive_mod, "UUID_CACHE", 100)
    arch = Archive(tmp_path / "a")
    for s in range(20):
        arch.append([msg(i, session=f"s{s}") for i in range(30)])
    assert arch._cached <= 130  # evicted down to the bound (plus the file being written)
    # evicted files are re-read on demand: still no duplicates
    for s in range(20):
        assert arch.append([msg(i, session=f"s{s}") for i in range(30)]) == 0


def test_memory_log_folds_and_compacts(tmp_path):
    arch = Archive(tmp_path / "a")
    arch.log_memory(
        upserts=[{"id": "a", "project": "/p", "content": "one"}, {"id": "b", "project": "/q", "content": "two"}]
    )
    arch.log_memory(upserts=[{"id": "a", "project": "/p", "content": "one, revised"}], deletes=["mem:b"])
    docs = arch.memory_docs()
    assert list(docs) == ["mem:a"] and docs["mem:a"]["content"] == "one, revised"
    assert arch.compact_memory() == 0
    assert len(arch.memory_log.read_bytes().splitlines()) == 1


def test_forget_session_and_project_leave_tombstones(tmp_path):
    arch = Archive(tmp_path / "a")
    arch.append([msg(1, "s1", "/p/a"), msg(2, "s2", "/p/a"), msg(3, "s3", "/p/b")])
    arch.log_memory(upserts=[{"id": "m1", "project": "/p/a"}, {"id": "m2", "project": "/p/b"}])
    assert arch.forget_session("s1") == 1
    assert arch.forget_project("/p/b") == 1
    assert sorted(m.uuid for b in arch.replay() for m in b) == ["u2"]
    assert list(arch.memory_docs()) == ["mem:m1"]
    fresh = Archive(tmp_path / "a")
    assert fresh.tombstones.covers(msg(9, "s1", "/p/a"))  # old message of a forgotten session
    assert not fresh.tombstones.covers(msg(9, "s1", "/p/a", ts=4e9))  # resumed later: kept
    assert fresh.tombstones.covers(msg(9, "s9", "/p/b"))
    assert not fresh.tombstones.covers(msg(9, "s9", "/p/c"))


# the indexer and the archive -------------------------------------------------------------------
def write_sessions(root, n_sessions=3, turns=4, cwd="/home/dev/app"):
    sessions = []
    for k in range(n_sessions):
        s = Session(cwd=cwd)
        for t in range(turns):
            s.user(f"question {t} of session {k} about the giraffe webhook")
            s.assistant(f"answer {t} of session {k}: rotate the signing secret")
        s.write(root)
        sessions.append(s)
    return sessions


def test_rebuild_restores_sessions_whose_transcripts_are_gone(claude_projects):
    sessions = write_sessions(claude_projects)
    summary = index_all()
    assert summary.messages == 24
    assert count() == 24
    for s in sessions[:2]:
        s.path(claude_projects).unlink()  # Claude Code's 30-day cleanup
    summary = index_all(rebuild=True)
    assert summary.rebuilt == "asked for"
    assert summary.replayed == 24
    assert count() == 24  # no duplicates from archive + live file
    assert count("session") == 3
    assert len(archived_uuids()) == 24
    hits = Searcher().search("giraffe webhook", limit=10)
    assert {h.session_id for h in hits} == {s.session_id for s in sessions}


def test_message_text_is_read_from_the_archive_not_stored_in_the_index(claude_projects):
    import tantivy

    write_sessions(claude_projects, n_sessions=2)
    index_all()
    s = Searcher()
    ts = s.index.searcher()
    q = tantivy.Query.term_query(s.schema, "doctype", "message", index_option="basic")
    docs = [ts.doc(addr) for _, addr in ts.search(q, 100).hits]
    assert len(docs) == 16
    assert all(d.get_first("apos") is not None and d.get_first("text") is None for d in docs)
    hits = Searcher().search("giraffe webhook", limit=5, messages=True)
    assert hits and all("giraffe webhook" in h.text and h.cwd == "/home/dev/app" for h in hits)
    assert all("**giraffe**" in h.snippet for h in hits)


def test_a_hit_whose_archive_line_is_gone_has_no_text_and_no_error(claude_projects):
    import shutil

    write_sessions(claude_projects, n_sessions=1)
    index_all()
    shutil.rmtree(paths.archive_dir() / "sessions")
    hits = Searcher().search("giraffe", limit=5, messages=True)
    assert hits and all(h.text == "" and h.snippet == "" for h in hits)


def test_rebuilt_index_reads_text_at_replayed_positions(claude_projects):
    sessions = write_sessions(claude_projects, n_sessions=2)
    index_all()
    for s in sessions:
        s.path(claude_projects).unlink()
    assert index_all(rebuild=True).replayed == 16
    hits = Searcher().search("answer 3 of session 1 signing secret", limit=3, messages=True)
    assert hits[0].text == "answer 3 of session 1: rotate the signing secret"


def test_a_rebuild_does_not_index_the_live_transcripts_twice(claude_projects):
    from indexer.state import StateDB

    sessions = write_sessions(claude_projects, n_sessions=2)
    index_all()
    sessions[1].user("a question asked after the last index run, about the okapi")
    sessions[1].write(claude_projects)
    summary = index_all(rebuild=True)
    assert summary.replayed == 16 and summary.messages == 1  # only the line the archive lacked
    s = Searcher()
    assert s.index.searcher().num_docs == 17 + 2  # one document per message and per session
    assert count() == 17 and Searcher().search("okapi", messages=True)[0].text.endswith("about the okapi")
    state = StateDB(paths.state_db_path())
    try:
        assert sorted(state.session(x.session_id).messages for x in sessions) == [8, 9]  # not counted twice
    finally:
        state.close()


def test_a_schema_change_replays_the_archive(claude_projects):
    sessions = write_sessions(claude_projects, n_sessions=2)
    index_all()
    sessions[0].path(claude_projects).unlink()
    (paths.index_dir() / "recall-schema.json").write_text(json.dumps({"version": 0}))
    summary = index_all()
    assert summary.rebuilt.startswith("schema changed")
    assert count() == 16


def test_an_index_older_than_the_archive_seeds_it(claude_projects):
    from indexer.ingest import discover
    from indexer.sources.claude_code import FileContext, read_lines

    write_sessions(claude_projects, n_sessions=2)
    with Indexer() as ix:  # an index of a version without the archive: text in the index
        for path in discover([claude_projects]):
            for batch, _ in read_lines(path, 0, FileContext(path), ix.stats):
                ix.add_messages(batch, archive=False)
        ix.upsert_memory_docs(
            [
                {
                    "id": "k1",
                    "project": "/home/dev/app",
                    "type": "decision",
                    "content": "use ed25519 keys",
                    "tags": ["ssh"],
                    "updated": 1.7e9,
                }
            ]
        )
    import shutil

    shutil.rmtree(paths.archive_dir())
    with Indexer():
        pass
    assert len(archived_uuids()) == 16
    assert list(Archive(paths.archive_dir()).memory_docs()) == ["mem:k1"]
    for p in claude_projects.rglob("*.jsonl"):
        p.unlink()
    index_all(rebuild=True)
    assert count() == 16 and count("memory") == 1


def test_memory_docs_upsert_delete_and_survive_rebuild(claude_projects):
    doc = {
        "id": "abc",
        "project": "/home/dev/app",
        "type": "gotcha",
        "content": "the staging db is read-only",
        "tags": ["db", "staging"],
        "updated": 1_763_000_000.0,
        "session_ids": ["s-1", "s-2"],
    }
    with Indexer() as ix:
        assert ix.upsert_memory_docs([doc, dict(doc, id="other", content="gone soon")]) == 2
    assert count("memory") == 2
    with Indexer() as ix:
        ix.upsert_memory_docs([dict(doc, content="the staging db is read-only on weekends")])
        ix.delete_keys(["mem:other"])
    assert count("memory") == 1
    index_all(rebuild=True)
    assert count("memory") == 1
    hits = Searcher().search("staging weekends", doctypes=("memory",), limit=5)
    assert len(hits) == 1 and hits[0].kind == "memory" and hits[0].session_id == "s-1"
    assert hits[0].uuid == "abc" and "weekends" in hits[0].text
    assert count("memory", mtype="gotcha", project="/home/dev/app") == 1


def test_memory_docs_are_validated():
    with Indexer() as ix:
        with pytest.raises(UsageError):
            ix.upsert_memory_docs([{"content": "no id"}])
        with pytest.raises(UsageError):
            ix.upsert_memory_docs([{"id": "x", "updated": "yesterday"}])


def test_forget_removes_from_index_and_archive_and_rebuild_keeps_it_gone(claude_projects):
    sessions = write_sessions(claude_projects, n_sessions=2)
    other = write_sessions(claude_projects, n_sessions=1, cwd="/home/dev/other")[0]
    index_all()
    with Indexer() as ix:
        ix.upsert_memory_docs([{"id": "m-other", "project": "/home/dev/other", "content": "x"}])
        res = ix.forget_session(sessions[0].session_id)
        assert res == {"session": sessions[0].session_id, "index": 8, "archive": 8}
        res = ix.forget_project("/home/dev/other")
        assert res["index"] == 8 and res["archive"] == 8
    assert count() == 8 and count("memory") == 0
    assert count(session_id=sessions[0].session_id) == 0
    index_all(rebuild=True)  # the transcripts are still there: the tombstones keep them out
    assert count() == 8
    assert count("session") == 1
    assert {m for m in archived_uuids()} == {l["uuid"] for l in sessions[1].lines}
    # a forgotten session that goes on later is indexed again, from then on
    s = sessions[0]
    start = len(s.lines)
    s.clock = s.clock.replace(year=2099)
    s.user("a new question about the giraffe")
    s.append(claude_projects, start)
    index_all()
    assert count(session_id=s.session_id) == 1
    assert other.session_id not in {m.session_id for b in Archive(paths.archive_dir()).replay() for m in b}


def test_the_writer_lock_names_the_holder():
    with Indexer():
        with pytest.raises(IndexBusy) as err:
            Indexer()
        assert f"pid {os.getpid()}" in str(err.value)
    with Indexer():  # released on close
        pass


def test_a_rebuild_waits_for_the_lock_before_dropping_anything(claude_projects):
    write_sessions(claude_projects, n_sessions=1)
    index_all()
    with Indexer():
        with pytest.raises(IndexBusy):
            Indexer(rebuild=True)
        assert count() == 8  # nothing was dropped


def test_an_interrupted_rebuild_resumes_its_replay(claude_projects):
    sessions = write_sessions(claude_projects, n_sessions=3)
    index_all()
    for s in sessions:
        s.path(claude_projects).unlink()
    ix = Indexer(rebuild=True)
    first = next(ix.archive.replay(batch=5))
    ix.add_messages(first, archive=False)
    ix.commit()
    ix.close()  # killed before the replay finished
    assert count() == 5
    with Indexer() as ix:
        assert ix.needs_replay
        assert ix.run(paths.transcript_roots()).replayed == 24
    assert count() == 24
    with Indexer() as ix:
        assert not ix.needs_replay
