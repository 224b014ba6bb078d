"""Consolidation against the stand-in: keep / merge / drop with lineage, when it is due,
malformed answers, pruning."""

from __future__ import annotations

import json

import pytest

from recall.memory import consolidate, store
from tests.support.memory import is_consolidation, prompt_of, use_standin
from tests.support.standin import error, text

DAY = 86400.0


@pytest.fixture
def project(project):
    return str(project)


GOTCHAS = [
    "Redis must be running before the worker starts or jobs are silently dropped",
    "The worker drops jobs without an error when Redis is down at start",
    "CI caches node_modules by the lockfile hash; bump it after npm ci failures",
    "Timezone bugs: always store UTC in Postgres timestamptz columns",
    "Old note: use Node 16 for the build",
    "pytest -n auto breaks the sqlite fixtures; run that suite serially",
]


def seed(project, texts=GOTCHAS, mtype="gotcha", now=None):
    ids = []
    with store.transaction(project) as st:
        for i, t in enumerate(texts):
            out = store.add_memory(st, mtype, t, session_id=f"s{i}", now=now)
            assert out.action == "added"
            out.memory.access_count = i
            ids.append(out.memory.id)
    return ids


def test_keep_merge_drop_applied_with_lineage(monkeypatch, standin, project):
    use_standin(monkeypatch, standin)
    ids = seed(project)
    seed(project, ["The API is a FastAPI app", "Workers use RQ"], mtype="architecture")  # < 5: not reviewed
    answer = {
        "keep": [ids[2], ids[3], ids[5]],
        "merge": [
            {
                "ids": [ids[0], ids[1]],
                "content": "The worker silently drops jobs when Redis is not running at start: start Redis first",
                "tags": ["redis", "worker"],
            }
        ],
        "drop": [ids[4], "not-an-id"],
    }
    standin.script(text(json.dumps(answer)))
    res = consolidate.consolidate(project, force=True, now=2_000_000_000.0)
    assert res.types == ["gotcha"] and res.calls == 1
    assert res.merged == 1 and res.merged_away == 2 and res.dropped == 1
    req = standin.messages_requests()
    assert len(req) == 1 and is_consolidation(req[0])
    assert all(i in prompt_of(req[0]) for i in ids)
    st = store.load(project)
    merged = next(m for m in st.active("gotcha") if m.merged_from)
    assert merged.merged_from == [ids[0], ids[1]] and merged.origin == "consolidation"
    assert merged.access_count == 0 + 1 and merged.sessions == ["s0", "s1"] and merged.tags == ["redis", "worker"]
    for i in (0, 1):
        src = st.by_id(ids[i])
        assert src.status == "superseded" and src.superseded_by == merged.id
    assert st.by_id(ids[4]).status == "archived"
    assert {m.id for m in st.active("gotcha")} == {merged.id, ids[2], ids[3], ids[5]}
    assert st.extractions == 0 and st.last_consolidation == 2_000_000_000.0
    assert merged.id in res.changed and ids[0] in res.removed and ids[4] in res.changed  # archived: still indexed


def test_ids_not_mentioned_are_kept_and_unknown_ignored(monkeypatch, standin, project):
    use_standin(monkeypatch, standin)
    ids = seed(project)
    standin.script(text(json.dumps({"merge": [{"ids": [ids[0], "ghost"], "content": "x"}], "drop": []})))
    res = consolidate.consolidate(project, force=True)
    assert res.merged == 0 and res.dropped == 0
    assert len(store.load(project).active()) == len(ids)


def test_malformed_twice_skips_the_type(monkeypatch, standin, project, caplog):
    use_standin(monkeypatch, standin)
    seed(project)
    standin.script(text("I think you should keep them all."), text(json.dumps({"keep": "everything"})))
    res = consolidate.consolidate(project, force=True)
    assert res.skipped == ["gotcha"] and len(standin.messages_requests()) == 2
    assert len(store.load(project).active()) == len(GOTCHAS)
    assert "malformed twice" in caplog.text


def test_model_error_stops_and_keeps_the_counter(monkeypatch, standin, project):
    use_standin(monkeypatch, standin)
    seed(project)
    with store.transaction(project) as st:
        st.extractions = 4
        st.dirty = True
    standin.script(error(500, "down", should_retry=False))
    res = consolidate.consolidate(project, force=True)
    assert res.stopped.startswith("model error")
    assert store.load(project).extractions == 4 and len(store.load(project).active()) == len(GOTCHAS)


def test_only_changed_types_are_reviewed_unless_forced(monkeypatch, standin, project):
    use_standin(monkeypatch, standin)
    seed(project, now=1000.0)
    with store.transaction(project) as st:
        st.last_consolidation = 2000.0
        st.dirty = True
    res = consolidate.consolidate(project)
    assert res.types == [] and not standin.messages_requests()


def test_when_consolidation_is_due(project):
    st = store.State(project=project)
    assert not consolidate.due(st, "stop")
    st.extractions = 1
    assert consolidate.due(st, "session-end") and not consolidate.due(st, "stop")
    st.extractions = consolidate.EVERY_EXTRACTIONS
    assert consolidate.due(st, "stop")
    st.extractions = 0
    st.memories = [store.Memory(id=f"m{i}", type="context", content=f"c{i}") for i in range(81)]
    assert consolidate.due(st, "stop")


def test_faded_are_archived_and_old_ones_pruned_during_consolidation(monkeypatch, standin, project):
    use_standin(monkeypatch, standin)
    t0 = 1_800_000_000.0
    with store.transaction(project) as st:
        store.add_memory(st, "progress", "Working on the exporter", now=t0)
        old = store.add_memory(st, "gotcha", "Use the v1 endpoint", now=t0).memory
        store.retire(st, old, "archived", t0)
    res = consolidate.consolidate(project, now=t0 + 15 * DAY)
    assert res.archived_faded == 1 and res.pruned == 1 and res.calls == 0
    st = store.load(project)
    assert [m.status for m in st.memories] == ["archived"]
