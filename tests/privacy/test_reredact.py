"""History stored under older redaction rules is re-redacted once when the rules improve
(indexer/reredact_archive.py, recall/privacy/redaction_pass.py): the archive, the index, state.db's session
facts, the memory log, each project's memories and CLAUDE.md block; resumable after a kill;
in the background of the service; and a rebuild redacts while it replays."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest

import indexer.redact
import indexer.sources.claude_code
from indexer import reredact_archive as ingest_side
from indexer import reredact_stages
from indexer.archive import Archive
from indexer.ingest import Indexer, index_all
from indexer.redact import REDACTION_VERSION
from recall.cli import checks
from recall.cli.output import redaction_status_line
from recall.core import paths
from recall.memory import briefing, store
from recall.privacy import redaction_pass
from recall.privacy.forget import attach
from recall.search.searcher import Searcher
from tests.service.test_service import run_cli, serve  # noqa: F401 - serve is a fixture
from tests.support.factory import Session
from tests.support.wait import wait_for

# a Shopify admin token: a format the rules before version 2 let through in prose
SECRET = "shpat_" + "3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c"


def _old_rules(real):
    """The redactor of an older version: the same rules, minus the format of SECRET."""

    def old(text: str) -> str:
        return text if SECRET in text else real(text)

    return old


@contextlib.contextmanager
def old_rules(monkeypatch):
    """Store under the older rules, as a home written before the upgrade was."""
    with monkeypatch.context() as m:
        m.setattr(indexer.sources.claude_code, "redact", _old_rules(indexer.sources.claude_code.redact))
        m.setattr(indexer.redact, "redact", _old_rules(indexer.redact.redact))
        m.setattr(indexer.redact, "redact_stated", _old_rules(indexer.redact.redact_stated))  # memories'
        yield
    # an archive from before redaction versions were recorded
    ingest_side.state_path(paths.archive_dir()).unlink(missing_ok=True)


def write_history(claude_projects, project, n_sessions: int = 1) -> list[Session]:
    sessions = []
    for i in range(n_sessions):
        s = Session(cwd=str(project))
        s.user(f"deploy the walrus{i} store with {SECRET} please")
        s.assistant(f"done: the walrus{i} storefront now uses token {SECRET} for the admin api")
        s.user(f"and the giraffe{i} cache")
        s.assistant(f"giraffe{i} cache flushed")
        s.write(claude_projects)
        sessions.append(s)
    return sessions


def leaks_in(directory) -> list[str]:
    """Files under ``directory`` whose bytes hold the secret (the index excepted: see below)."""
    out = []
    for p in sorted(directory.rglob("*")):
        if p.is_file() and "index" not in p.relative_to(directory).parts[:1]:
            if SECRET.encode() in p.read_bytes():
                out.append(str(p.relative_to(directory)))
    return out


def search_texts(word: str) -> list[str]:
    return sorted(h.text for h in Searcher().search(word, limit=50, messages=True))


def redacted_pair(i: int) -> list[str]:
    """Session ``i``'s two messages that held the secret, as the current rules keep them."""
    return sorted(
        [
            f"deploy the walrus{i} store with [redacted:shopify-token] please",
            f"done: the walrus{i} storefront now uses token [redacted:shopify-token] for the admin api",
        ]
    )


def session_facts() -> list[str]:
    conn = sqlite3.connect(paths.state_db_path())
    try:
        return [" ".join(str(c) for c in row) for row in conn.execute("SELECT * FROM sessions")]
    finally:
        conn.close()


def test_upgrade_pass_re_redacts_every_store_and_keeps_the_rest(claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        (s,) = write_history(claude_projects, project)
        index_all()
        with store.transaction(project) as state:
            store.add_memory(
                state, "gotcha", f"The walrus store admin token is {SECRET}.", tags=["walrus"], session_id=s.session_id
            )
        briefing.write_briefing(project)
        from recall.memory import summaries

        summaries.put(s.session_id, str(project), f"Set up the walrus store with token {SECRET}.")
        with Indexer() as ix:  # the memory's index document, as the memory worker writes it
            from recall.memory import index_docs as memory_index

            ix.upsert_memory_docs(memory_index.changes(project, [m.id for m in store.load(project).memories], [])[0])
    # reproduced: the old rules left the secret in every store
    assert leaks_in(paths.recall_home()) and SECRET in (project / "CLAUDE.md").read_text()
    assert any(SECRET in f for f in session_facts())
    assert ingest_side.pending(paths.archive_dir())
    doctor = checks.check_redaction()
    assert not doctor.ok and doctor.warn
    assert doctor.detail == (
        "stored history was redacted by older rules (version 1, current "
        f"{REDACTION_VERSION}): the archive, the index, session facts and memories may still "
        "hold secrets the current rules redact"
    )
    assert doctor.fix == (
        "start the service (`recall service restart`) or run `recall index`: it re-redacts "
        "everything once (nothing else is changed)"
    )

    with Indexer() as ix:
        attach(ix)
        done = redaction_pass.run(ix)
    assert done["rewritten"] == 2 and done["messages"] == 4 and done["memories"] >= 2

    assert leaks_in(paths.recall_home()) == []
    assert not any(SECRET in f for f in session_facts())
    assert SECRET not in (project / "CLAUDE.md").read_text()
    assert SECRET not in store.state_path(project).read_text()
    assert search_texts(SECRET) == [] and search_texts("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") == []
    # the rest of each message is intact, read back at its new position
    assert search_texts("walrus0") == redacted_pair(0)
    assert search_texts("giraffe0") and all("giraffe0" in t for t in search_texts("giraffe0"))
    assert [m.content for m in store.load(project).memories] == [
        "The walrus store admin token is [redacted:shopify-token]."
    ]
    mem_hits = Searcher().search("walrus admin token", limit=10)
    assert mem_hits and not any(SECRET in h.text for h in mem_hits)
    # recorded once: the next open does nothing, doctor is satisfied
    assert ingest_side.stored_version(paths.archive_dir()) == REDACTION_VERSION
    assert checks.check_redaction().ok
    with Indexer() as ix:
        assert redaction_pass.run(ix) is None


def test_a_pass_killed_after_a_rewrite_resumes_and_loses_and_duplicates_nothing(claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        write_history(claude_projects, project, n_sessions=3)
        index_all()

    class Killed(BaseException):
        pass

    real = reredact_stages.reindex_file
    calls = []

    def dies_on_the_second_file(ix, res):
        n = real(ix, res)
        calls.append(1)
        if len(calls) == 2:  # the file is rewritten, its documents not committed: kill -9 here
            raise Killed
        return n

    monkeypatch.setattr(reredact_stages, "reindex_file", dies_on_the_second_file)
    ix = Indexer()
    with pytest.raises(Killed):
        reredact_stages.messages_step(ix, ingest_side.begin(paths.archive_dir()), None)
    ix.close(commit=False)  # what a kill leaves: nothing of the slice committed
    st = ingest_side.read_state(paths.archive_dir())
    assert st["pass"]["after"] == "" and len(st["pass"]["working"]) == 2
    monkeypatch.setattr(reredact_stages, "reindex_file", real)

    with Indexer() as ix:
        done = redaction_pass.run(ix)
    assert done["messages"] == 12
    assert leaks_in(paths.recall_home()) == [] and search_texts(SECRET) == []
    for i in range(3):  # every message once, its text read back at its position
        assert search_texts(f"walrus{i}") == redacted_pair(i)
        assert search_texts(f"giraffe{i}") == [f"and the giraffe{i} cache", f"giraffe{i} cache flushed"]
    assert Searcher().count() >= 12
    import tantivy

    s = Searcher()
    q = tantivy.Query.term_query(s.schema, "doctype", "message", index_option="basic")
    assert s.index.searcher().search(q, 1, count=True).count == 12
    assert Archive(paths.archive_dir()).count() == 12


def test_a_rebuild_redacts_while_it_replays(claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        sessions = write_history(claude_projects, project)
        index_all()
    for s in sessions:  # Claude Code deleted the transcripts: only the archive holds them
        s.path(claude_projects).unlink()
    summary = index_all(rebuild=True)
    assert summary.replayed == 4
    assert search_texts(SECRET) == []
    assert search_texts("walrus0") == redacted_pair(0)
    assert not any(SECRET.encode() in p.read_bytes() for p in Archive(paths.archive_dir()).session_files())
    assert not any(SECRET in f for f in session_facts())


def test_status_and_doctor_show_the_pass_under_way(claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        write_history(claude_projects, project, n_sessions=2)
        index_all()
    with Indexer() as ix:
        st = ingest_side.begin(paths.archive_dir())
        assert reredact_stages.messages_step(ix, st, 0.0) is False  # one file, then the slice ends
    p = ingest_side.progress(paths.archive_dir())
    assert redaction_status_line(p) == (
        "Redaction: re-redacting history stored under older rules "
        f"(1 -> {REDACTION_VERSION}): 1 of 2 archive files (50%), "
        "4 messages checked, 2 rewritten"
    )
    c = checks.check_redaction()
    assert c.warn and c.detail.startswith(
        "stored history is being re-redacted under the current rules "
        f"(version 1 -> {REDACTION_VERSION}: 1 of 2 archive files done)"
    )
    assert c.fix == "run `recall index` (or `recall service start`): the pass resumes where it stopped"
    from recall.cli.everyday import collect_status

    assert collect_status()["redaction"]["files_done"] == 1


def test_a_new_home_is_current_and_needs_no_pass(claude_projects, project):
    write_history(claude_projects, project)
    index_all()
    assert json.loads(ingest_side.state_path(paths.archive_dir()).read_text()) == {"version": REDACTION_VERSION}
    assert ingest_side.progress(paths.archive_dir()) is None
    assert (
        checks.check_redaction().detail == f"stored history redacted by the current rules (version {REDACTION_VERSION})"
    )


@pytest.mark.slow
def test_the_service_re_redacts_in_the_background_and_keeps_indexing(serve, claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        write_history(claude_projects, project, n_sessions=3)
        index_all()
    assert search_texts(SECRET)  # reproduced: the old rules let it through
    svc = serve().ready()
    late = Session(cwd=str(project))  # written while the pass may still run: indexed as usual
    late.user("the pelican rollout waits for review")
    late.write(claude_projects)
    wait_for(
        lambda: ingest_side.stored_version(paths.archive_dir()) == REDACTION_VERSION,
        120,
        "the re-redaction pass",
        interval=0.1,
    )
    wait_for(
        lambda: search_texts("pelican") == ["the pelican rollout waits for review"],
        60,
        interval=0.1,
        what="the live line",
    )
    assert search_texts(SECRET) == [] and leaks_in(paths.recall_home()) == []
    for i in range(3):
        assert search_texts(f"walrus{i}") == redacted_pair(i)
    assert svc.status()["redaction"] is None
    assert "re-redaction done: 6 of 12 archived messages changed" in svc.output()
    out = run_cli("doctor")
    assert "stored history redacted by the current rules" in out.stdout
    assert svc.terminate() == 0


def test_recall_index_runs_the_pass_and_says_what_it_did(claude_projects, project, monkeypatch):
    with old_rules(monkeypatch):
        write_history(claude_projects, project, n_sessions=2)
        index_all()
    out = run_cli("index")
    assert out.returncode == 0, out.stderr
    assert (
        f"Re-redacted stored history under the current rules (version 1 -> {REDACTION_VERSION}): "
        "4 of 8 archived messages changed, 2 sessions' facts, 0 memories."
    ) in out.stdout
    assert search_texts(SECRET) == [] and leaks_in(paths.recall_home()) == []
    out = run_cli("index", "--json")
    assert out.returncode == 0 and "reredacted" not in json.loads(out.stdout)


def test_history_stored_under_version_2_loses_what_version_3_redacts(claude_projects, project):
    """Issue 28: the rules learned the key: value forms (an INI password, a .netrc line), so
    REDACTION_VERSION went to 3 and a home stored under version 2 is re-redacted once."""
    assert REDACTION_VERSION >= 3
    ini, netrc = "Liverpool1892", "Summer2024Pass"

    def v2(real):  # what version 2 stored: these two lines as they were
        return lambda text: text if (ini in text or netrc in text) else real(text)

    s = Session(cwd=str(project))
    s.user("what is in the database section of the walrus config?")
    s.assistant(f"[database]\nhost = db.internal\npassword = {ini}\n")
    s.user("and the netrc?")
    s.assistant(f"machine api.heroku.com login bob password {netrc}")
    s.write(claude_projects)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(indexer.sources.claude_code, "redact", v2(indexer.sources.claude_code.redact))
        m.setattr(indexer.redact, "redact", v2(indexer.redact.redact))
        index_all()
    ingest_side.mark_version(paths.archive_dir(), 2)
    assert any(ini in t for t in search_texts("database")) and ingest_side.pending(paths.archive_dir())

    out = run_cli("index")  # `recall index` (or the service) runs the pass by itself
    assert out.returncode == 0 and f"(version 2 -> {REDACTION_VERSION})" in out.stdout, out.stdout + out.stderr

    for secret in (ini, netrc):
        assert not any(secret.encode() in p.read_bytes() for p in paths.archive_dir().rglob("*.jsonl"))
    assert search_texts("database") and not any(ini in t for t in search_texts("database"))
    assert any("password [redacted:secret-assignment]" in t for t in search_texts("heroku"))
    assert ingest_side.stored_version(paths.archive_dir()) == REDACTION_VERSION
