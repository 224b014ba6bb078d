"""The semantic channel under the audit of issue 46.

Item 3: what a forget (a session, ``--match``, ``--secret``), an exclusion, a `recall: off`
session or the re-redaction pass removes never comes back into ``vectors.db`` from the job's
queue, whatever the timing. The job is driven step by step and the forget runs between its
read of the index and its write (``Between``), the way the audit caught it mid-backlog.

Item 5: a ``vectors.db`` that cannot be opened or read is found once, set aside and rebuilt
in the background; the service's hook op answers meanwhile (words only), and `recall status`
and `recall doctor` say so.
"""

from __future__ import annotations

import logging
import os
import stat
from types import SimpleNamespace

import pytest

from indexer.ingest import Indexer, index_all
from indexer.project import canonical_project
from indexer.vectors import VectorStore, db_path, text_hash
from recall.core import paths
from recall.search import semantic
from recall.search.searcher import Searcher
from tests.prompt.test_small_history import _session, decision_history
from tests.service.test_service import run_cli, serve  # noqa: F401 - serve is a fixture


def _key(project) -> str:
    return canonical_project(str(project))


def _vectors(store, project) -> dict[str, tuple[str, str]]:
    keys, sessions, hashes, _m = store.matrix(_key(project))
    return {k: (s, h) for k, s, h in zip(keys, sessions, hashes)}


def _doc_key(hit) -> str:
    return f"{'mem' if hit.kind == 'memory' else 'm'}:{hit.uuid}"


def assert_consistent(store, project) -> dict:
    """Every vector is of a message the index still holds and may show, embedded from the
    text it holds now; every such message has one (the job caught up). The index's texts."""
    vecs = _vectors(store, project)
    hits = {_doc_key(h): h for h in Searcher().by_keys(list(vecs))}
    for key, (_sid, h) in vecs.items():
        assert key in hits, f"a vector of {key}, which the index no longer holds or shows"
        assert text_hash(hits[key].text[: semantic.EMBED_CHARS]) == h, f"{key}: embedded from another text"
    shown = Searcher().newest_messages(_key(project), semantic.MAX_PER_PROJECT)
    assert sorted(vecs) == sorted(r[0] for r in shown)
    return {k: h.text for k, h in hits.items()}


class Between:
    """The encoder the job embeds with, running ``action`` (a forget) on its ``at``-th batch:
    after the job read those messages from the index, before it writes their vectors."""

    def __init__(self, action, at: int = 2) -> None:
        from recall.search import minilm

        self.action, self.at, self.calls, self.real = action, at, 0, minilm.shared()

    def embed(self, texts):
        self.calls += 1
        if self.calls == self.at:
            self.action()
        return self.real.embed(texts)


def mid_backlog(project, action, monkeypatch, at: int = 2) -> tuple[VectorStore, list]:
    """The job's queue filled, one batch written, ``action`` run while the next is embedded,
    then the job's next slices until nothing waits. The store, and what was queued first."""
    monkeypatch.setattr(semantic, "BATCH", 2)
    store = VectorStore()
    searcher = Searcher()  # the job's reader, opened before the forget (the service's warm one)
    backlog = semantic.Backlog()
    backlog.scan(searcher, store, [_key(project)])
    queued = list(backlog.pending)
    assert len(queued) > 2 * at
    enc = Between(action, at)
    backlog.embed(store, 600, encoder=enc)
    assert enc.calls >= at
    for _ in range(5):
        semantic.embed_step(searcher, store, backlog, [_key(project)], budget=600)
        if not backlog.pending:
            break
    assert not backlog.pending
    return store, queued


def _forget(sel) -> None:
    from recall.privacy.forget import forget_everywhere

    with Indexer() as ix:
        forget_everywhere(ix, sel)


# --------------------------------------------------------------------------- item 3: forget mid-backlog
def test_a_session_forgotten_mid_backlog_gets_no_vector_back(claude_projects, project, monkeypatch):
    """The audit's case: 30/30 vectors of the forgotten session were back once the queue drained."""
    from indexer.forgetting import Selection

    decision_history(claude_projects, project)
    gone: list[str] = []

    def forget():
        _forget(Selection(sessions=gone))

    store = VectorStore()
    queue = semantic.Backlog()
    queue.scan(Searcher(), store, [_key(project)])
    # the newest session (its vectors written before the forget) and the oldest (still queued)
    gone[:] = sorted({queue.pending[0][2], queue.pending[-1][2]})
    store.close()
    store, _queued = mid_backlog(project, forget, monkeypatch)
    assert not {s for s, _h in _vectors(store, project).values()} & set(gone)
    assert_consistent(store, project)


def test_messages_forgotten_by_match_mid_backlog_get_no_vector_back(claude_projects, project, monkeypatch):
    from indexer.forgetting import Selection

    decision_history(claude_projects, project)
    store = VectorStore()
    queue = semantic.Backlog()
    queue.scan(Searcher(), store, [_key(project)])
    last = queue.pending[-1]  # the oldest message: still queued when the forget runs
    needle = last[5][:30]
    matched = {p[0] for p in queue.pending if needle.casefold() in p[5].casefold()}
    store.close()
    store, _queued = mid_backlog(project, lambda: _forget(Selection(match=needle)), monkeypatch)
    assert not matched & set(_vectors(store, project))
    texts = assert_consistent(store, project)
    assert not any(needle.casefold() in t.casefold() for t in texts.values())


def test_a_secret_forgotten_mid_backlog_leaves_no_vector_of_the_text_that_held_it(
    claude_projects, project, monkeypatch
):
    from indexer.forgetting import SECRET_MARK, Selection

    decision_history(claude_projects, project)
    secret = "orchid lantern 4417"
    s = _session(project, -30)  # the oldest session: queued last
    s.user(f"the staging locker opens with {secret}, keep it handy")
    s.assistant(f"Noted: {secret} opens the staging locker.")
    s.write(claude_projects)
    index_all()
    store, queued = mid_backlog(project, lambda: _forget(Selection(secret=secret)), monkeypatch)
    assert queued[-1][2] == s.session_id and secret in queued[-1][5]
    held = {p[4] for p in queued if secret in p[5]}  # the hashes of the two texts that held it
    assert len(held) == 2 and not held & {h for _s, h in _vectors(store, project).values()}
    texts = assert_consistent(store, project)
    assert sum(SECRET_MARK in t for t in texts.values()) == 2  # embedded again, from the redacted text
    assert not any(secret in t for t in texts.values())


def test_a_secret_cut_out_of_a_memory_leaves_no_vector_of_it_when_the_job_runs_between_the_forgets_steps(
    claude_projects, project, monkeypatch
):
    """The index step drops the session's vectors; the memories step rewrites the memory that
    held the secret later: a turn of the job in between embeds the memory's old text, and
    that vector goes once the memory's new text is committed."""
    from indexer.forgetting import Selection
    from recall.privacy import forget as privacy_forget
    from tests.search.test_semantic import _remember

    decision_history(claude_projects, project)
    secret = "orchid lantern 4417"
    s = _session(project, -30)
    s.user(f"the staging locker opens with {secret}, keep it handy")
    s.assistant("Noted.")
    s.write(claude_projects)
    index_all()
    m = _remember(project, f"The staging locker opens with {secret}.", s.session_id, tags=("staging",))
    store, backlog, searcher = VectorStore(), semantic.Backlog(), Searcher()
    semantic.embed_step(searcher, store, backlog, [_key(project)], budget=600)
    old = _vectors(store, project)[f"mem:{m.id}"][1]
    real = privacy_forget.remove_from_memories

    def job_then_memories(*args, **kwargs):
        backlog.scanned.clear()  # its next look at the project is due
        semantic.embed_step(searcher, store, backlog, [_key(project)], budget=600)  # the job's turn
        assert _vectors(store, project)[f"mem:{m.id}"][1] == old  # embedded again from the old text
        return real(*args, **kwargs)

    monkeypatch.setattr(privacy_forget, "remove_from_memories", job_then_memories)
    _forget(Selection(secret=secret))
    for _ in range(3):
        semantic.embed_step(searcher, store, backlog, [_key(project)], budget=600)
    assert old not in {h for _s, h in _vectors(store, project).values()}
    texts = assert_consistent(store, project)
    assert not any(secret in t for t in texts.values()) and f"mem:{m.id}" in texts


def test_a_project_excluded_mid_backlog_keeps_no_vector(claude_projects, project, monkeypatch):
    decision_history(claude_projects, project)

    def exclude():
        out = run_cli("exclude", "add", str(project))
        assert out.returncode == 0, out.stderr

    store, _queued = mid_backlog(project, exclude, monkeypatch)
    assert store.count(_key(project)) == 0
    assert store.count() == 0


def test_a_session_switched_off_mid_backlog_keeps_no_vector(claude_projects, project, monkeypatch):
    from recall.privacy.forget import attach

    sessions = decision_history(claude_projects, project)
    queue = semantic.Backlog()
    queue.scan(Searcher(), VectorStore(), [_key(project)])
    (s,) = [x for x in sessions.values() if x.session_id == queue.pending[-1][2]]  # the oldest: queued last

    def switch_off():
        start = len(s.lines)
        s.user("recall: off")
        s.append(claude_projects, start)
        with Indexer() as ix:
            attach(ix)
            ix.run(paths.transcript_roots())

    store, queued = mid_backlog(project, switch_off, monkeypatch)
    assert s.session_id in {p[2] for p in queued[4:]}  # queued, not yet written, when it was switched off
    assert s.session_id not in {sid for sid, _h in _vectors(store, project).values()}
    assert_consistent(store, project)


def test_the_re_redaction_pass_mid_backlog_leaves_no_vector_of_the_old_text(claude_projects, project, monkeypatch):
    from recall.privacy import redaction_pass
    from recall.privacy.forget import attach as attach_privacy
    from tests.privacy.test_reredact import SECRET, old_rules, write_history

    with old_rules(monkeypatch):
        write_history(claude_projects, project, n_sessions=2)
        index_all()

    def reredact():
        with Indexer() as ix:
            attach_privacy(ix)
            assert redaction_pass.run(ix)["rewritten"] == 4

    store, queued = mid_backlog(project, reredact, monkeypatch)
    held = {p[4] for p in queued if SECRET in p[5]}
    assert len(held) == 4
    assert not held & {h for _s, h in _vectors(store, project).values()}
    texts = assert_consistent(store, project)
    assert len(texts) == 8 and not any(SECRET in t for t in texts.values())


def test_a_memory_deleted_while_its_batch_is_embedded_gets_no_vector(claude_projects, project, monkeypatch):
    """A deleted memory's vector goes once the index no longer holds it (``Indexer.commit``):
    the job, which read it before, writes nothing of its batch."""
    from tests.search.test_semantic import _remember

    sessions = decision_history(claude_projects, project)
    m = _remember(project, "Every monetary amount is kept in integer cents.", sessions["m0"].session_id)

    def delete():
        with Indexer() as ix:
            ix.delete_keys([f"mem:{m.id}"])
            ix.commit()

    store, queued = mid_backlog(project, delete, monkeypatch, at=1)
    assert f"mem:{m.id}" in [p[0] for p in queued[:2]]  # in the batch being embedded
    assert f"mem:{m.id}" not in _vectors(store, project)
    assert_consistent(store, project)


def test_a_forget_moves_the_epoch_in_the_transaction_that_drops_the_vectors():
    """What the job holds back on: a write of a queue filled before any forget is refused."""
    import numpy as np

    store = VectorStore()
    vec = np.ones(384, np.float32) / np.sqrt(384)
    epoch = store.epoch()
    assert store.put([("m:a", "/p", "s1", 1, "h", vec)], epoch) is True
    assert store.forget(sessions=["nothing-of-it-embedded-yet"]) == 0  # the queue's messages: none written yet
    assert store.epoch() != epoch
    assert store.put([("m:b", "/p", "s1", 2, "h", vec)], epoch) is False
    assert store.matrix("/p")[0] == ["m:a"]


# --------------------------------------------------------------------------- item 5: a damaged vectors.db
def _damage(how: str) -> None:
    path = db_path()
    size = path.stat().st_size
    assert size > 3 * 4096
    if how == "garbage":  # every page after the first: the file opens, its tables cannot be read
        with open(path, "r+b") as fh:
            fh.seek(4096)
            fh.write(os.urandom(size - 4096))
    elif how == "truncated":
        with open(path, "r+b") as fh:
            fh.truncate(4096 * 2)
    else:  # not a database at all
        path.write_bytes(b"this is not a database, just some text\n" * 200)


@pytest.fixture
def history(claude_projects, project):
    return decision_history(claude_projects, project)


@pytest.fixture
def model(monkeypatch, standin, history):
    """A model backend that cites the session answering a paraphrase (the model path, which
    reads what the semantic channel brings)."""
    from recall.core import config
    from tests.search.test_semantic import _model_judge

    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    config.set_value("model.backend", "api")
    config.set_value("hook.budget_seconds", 60)
    standin.handler = _model_judge(history)
    return standin


@pytest.fixture
def embedded(history, project):
    """The decision history indexed and every message embedded, vectors.db closed (the audit's store)."""
    store = VectorStore()
    n = semantic.embed_all(Searcher(), store, [_key(project)])
    assert n == 12
    store.close()
    for suffix in ("-wal", "-shm"):
        assert not os.path.exists(str(db_path()) + suffix) or os.path.getsize(str(db_path()) + suffix) == 0
    return n


@pytest.fixture
def service(monkeypatch):
    """A service object whose semantic job the test runs slice by slice (no thread, no socket)."""
    from recall.core import process
    from recall.service import daemon, registry

    monkeypatch.setattr(process, "lower_priority", lambda nice: {})
    svc = daemon.Service()
    svc.ix = SimpleNamespace(has_pending=lambda: False)  # the job does not use the writer
    registry.set_service(svc)
    yield svc
    registry.set_service(None)
    semantic.attach(None)
    if svc._vectors is not None:
        svc._vectors.close()


def _service_answers(svc, monkeypatch) -> None:
    """`recall status` and `recall doctor` ask ``svc`` (in this process) for its status."""
    from recall.core import service_client as client

    def call(op, args=None, **_kw):
        if op == "status":
            return svc.status()
        raise client.Unavailable("only the status here")

    monkeypatch.setattr(client, "call", call)


def _damage_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "vectors.db is damaged" in r.getMessage()]


def _hook_op(project, prompt="what's our convention for money amounts?"):
    from recall.prompt.context import service_op
    from tests.prompt.test_small_history import payload

    return service_op(dict(payload(project, prompt), _budget=30), searcher=Searcher())


@pytest.mark.parametrize("how", ["garbage", "truncated", "not a database"])
def test_a_damaged_store_is_found_once_set_aside_and_rebuilt(
    embedded, service, project, monkeypatch, caplog, capsys, how
):
    from recall.cli import checks, everyday
    from recall.cli.output import semantic_rebuild_text
    from recall.service import daemon

    caplog.set_level(logging.INFO)
    _damage(how)
    monkeypatch.setattr(daemon, "SEMANTIC_SLICE", 0.0)  # the rebuild under way: nothing embedded yet
    service._semantic_slice()
    service._semantic_slice()
    assert len(_damage_lines(caplog)) == 1, caplog.text
    aside = list(db_path().parent.glob("vectors.db.corrupt-*"))
    assert len(aside) == 1 and stat.S_IMODE(aside[0].stat().st_mode) == 0o600
    assert semantic.attached() is None  # the hook finds by words meanwhile
    sem = service.status()["semantic"]
    assert sem["rebuilding"]["aside"] == aside[0].name and sem["waiting"] == embedded
    assert semantic_rebuild_text(sem).startswith("being rebuilt: vectors.db was damaged (")
    assert semantic_rebuild_text(sem).endswith(
        f"; set aside as {aside[0].name}; 0 messages embedded again, 12 waiting; prompts find by words until it is done"
    )
    _service_answers(service, monkeypatch)
    c = checks.check_semantic()  # `recall doctor`, asking the service
    assert not c.ok and c.warn and c.detail == "vectors.db " + semantic_rebuild_text(sem)
    everyday.status()  # `recall status`
    assert f"Semantic: {semantic_rebuild_text(sem)}\n" in capsys.readouterr().out
    out = _hook_op(project)  # through the service: it answers, without the semantic channel
    assert "semantic" not in out["_trace"]
    # the job rebuilds it from the index; then the channel is back
    monkeypatch.setattr(daemon, "SEMANTIC_SLICE", 600.0)
    service._semantic_slice()
    assert service.status()["semantic"] == {"on": True, "vectors": embedded, "waiting": 0}
    assert semantic.attached() is service._vectors and service._vectors.count() == embedded
    assert len(_damage_lines(caplog)) == 1
    assert any("vectors.db rebuilt (12 messages embedded)" in r.getMessage() for r in caplog.records)
    assert checks.check_semantic().ok
    everyday.status()
    assert f"Semantic: {embedded} messages embedded\n" in capsys.readouterr().out


def test_a_store_that_fails_to_read_under_the_hook_is_found_once_and_the_hook_still_answers(
    embedded, service, model, history, project, caplog
):
    """The audit's case: the store opened, then every read failed; every hook call to the service
    failed and fell back to the in-process search (4.8 s a prompt, raw snippets)."""
    caplog.set_level(logging.INFO)
    prices = history["prices"].session_id
    healthy = VectorStore()
    semantic.attach(healthy)
    assert [h["session"] for h in _hook_op(project)["_trace"]["semantic"]] == [prices]  # found by meaning
    healthy.close()
    store = VectorStore()  # opens: its first page is sound
    _damage("garbage")
    service._vectors, service._backlog = store, semantic.Backlog()
    semantic.attach(store)
    for _ in range(3):
        out = _hook_op(project)  # answers; does not raise (the hook would fall back in-process)
        assert "semantic" not in out["_trace"]
    assert store.damaged
    assert service.status()["semantic"]["rebuilding"]["why"] == store.damaged
    service._semantic_slice()
    service._semantic_slice()
    assert len(_damage_lines(caplog)) == 1, caplog.text
    assert service._vectors is not store and service._vectors.count() == embedded
    assert semantic.attached() is service._vectors and service.semantic_rebuild is None
    out = _hook_op(project)  # rebuilt: found by meaning again, and cited
    assert [h["session"] for h in out["_trace"]["semantic"]] == [prices]
    assert prices[:8] in out["hookSpecificOutput"]["additionalContext"]


def test_doctor_says_a_damaged_store_waits_for_the_service(embedded, project):
    from recall.cli import checks

    _damage("not a database")
    c = checks.check_semantic(service_status={})
    assert not c.ok and c.warn
    assert c.detail == (
        "vectors.db is damaged (file is not a database): the service sets it aside and rebuilds it when it "
        "starts; prompts find by words until then"
    )
    assert c.fix == "start the service (`recall service start`)"


def test_a_forget_removes_a_damaged_store_it_cannot_read_and_every_copy_set_aside(embedded, project):
    """A forget cannot take its rows out of a damaged file: the file goes whole (the service
    rebuilds it), and so does a copy set aside earlier (it holds the forgotten vectors too)."""
    from indexer import vectors
    from indexer.forgetting import Selection

    old = VectorStore()
    sid = old.matrix(_key(project))[1][0]
    old.close()
    (db_path().parent / "vectors.db.corrupt-20260101T000000").write_bytes(db_path().read_bytes())
    _damage("garbage")
    _forget(Selection(sessions=[sid]))
    assert not db_path().exists()
    assert not list(db_path().parent.glob("vectors.db.corrupt-*"))
    vectors.forget_vectors(sessions=["another"])  # nothing left to do: no failure


def test_a_store_a_forget_removed_under_the_service_is_rebuilt(embedded, service, project, caplog):
    """A forget in the service that could not read vectors.db deletes it while the job has it
    open: the job's next turn opens a new one and rebuilds it (one line in the log)."""
    from indexer import vectors

    caplog.set_level(logging.INFO)
    service._semantic_slice()
    opened = service._vectors
    assert semantic.attached() is opened and opened.count() == embedded
    vectors.remove()
    service._semantic_slice()
    assert service._vectors is not opened and service._vectors.count() == embedded
    lines = [r.getMessage() for r in caplog.records if "vectors.db was removed" in r.getMessage()]
    assert lines == [
        "semantic channel: vectors.db was removed while the service had it open; rebuilding it in the background"
    ]
    assert semantic.attached() is service._vectors


@pytest.mark.slow
def test_through_the_running_service_a_damaged_store_costs_no_prompt_its_speed(
    serve, claude_projects, project, standin, monkeypatch
):
    """The audit's case end to end: a service started on a damaged vectors.db answers the real
    hook itself (no in-process fallback), sets the file aside once, rebuilds it, and the
    paraphrase is found by meaning again."""
    from recall.core import config
    from recall.core import service_client as client
    from recall.prompt import injections
    from tests.prompt.test_small_history import PARAPHRASES, hook
    from tests.search.test_semantic import _model_judge
    from tests.support.wait import wait_for

    sessions = decision_history(claude_projects, project)
    store = VectorStore()
    assert semantic.embed_all(Searcher(), store, [_key(project)]) == 12
    store.close()
    _damage("garbage")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    config.set_value("model.backend", "api")
    config.set_value("hook.budget_seconds", 60)
    standin.handler = _model_judge(sessions)
    svc = serve().ready()
    text = hook(project, PARAPHRASES["timezone"][0])
    rec = injections.read()[-1]
    assert rec.get("via") == "service", rec  # not the in-process fallback
    del text

    def rebuilt():
        sem = client.call("status", {}, timeout=5.0).get("semantic") or {}
        return sem if sem.get("on") and not sem.get("rebuilding") and sem.get("vectors") == 12 else None

    wait_for(rebuilt, 120, interval=0.5, what="the service to rebuild vectors.db")
    text = hook(project, PARAPHRASES["prices"][0])
    assert sessions["prices"].session_id[:8] in text
    rec = injections.read()[-1]
    assert rec.get("via") == "service" and rec["path"] == "model"
    log = (paths.recall_home() / "logs" / "recall.log").read_text()
    assert log.count("vectors.db is damaged") == 1, log
    assert len(list(db_path().parent.glob("vectors.db.corrupt-*"))) == 1
    out = run_cli("status")
    assert "Semantic: 12 messages embedded" in out.stdout, out.stdout
    assert svc.terminate() == 0
