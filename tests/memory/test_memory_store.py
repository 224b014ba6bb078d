"""state.json: tokens, dedup, supersede, lineage, decay, pruning, locking, access counts."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat

import pytest

from recall.memory import note_access, store

DAY = 86400.0
T0 = 1_790_000_000.0


@pytest.fixture
def project(project):
    return str(project)


def add(project, mtype, content, now=T0, **kw):
    with store.transaction(project) as st:
        return store.add_memory(st, mtype, content, now=now, **kw)


# tokens ------------------------------------------------------------------------------------
def test_tokens_keep_identifiers_and_cjk_and_drop_stop_words():
    toks = store.tokens("The getUserName() helper in src/auth_utils.py is used by the API")
    assert {"get", "user", "name", "auth", "util", "py", "api", "helper"} <= toks
    assert not toks & {"the", "in", "is", "by"}
    cjk = store.tokens("数据库连接池在高并发时耗尽")
    assert {"数据", "据库", "连接", "接池"} <= cjk  # CJK words as bigrams (the seed's [a-z0-9] tokenizer kept nothing)
    assert store.tokens("日本語のテスト") and store.tokens("한국어 문장")


def test_jaccard():
    a, b = frozenset("abcd"), frozenset("abce")
    assert store.jaccard(a, b) == pytest.approx(3 / 5)
    assert store.jaccard(a, frozenset()) == 0.0


# dedup / supersede -----------------------------------------------------------------------------
def test_near_duplicate_supersedes_within_type(project):
    first = add(
        project,
        "gotcha",
        "Stripe webhooks need the raw request body; express.json() breaks signature verification",
        tags=["stripe"],
        session_id="s1",
    )
    second = add(
        project,
        "gotcha",
        "Stripe webhook signature verification breaks when express.json() parses the body; use the raw body",
        tags=["webhooks"],
        session_id="s2",
        now=T0 + 60,
    )
    assert first.action == "added" and second.action == "superseded"
    st = store.load(project)
    old, new = st.by_id(first.memory.id), st.by_id(second.memory.id)
    assert old.status == "superseded" and old.superseded_by == new.id and old.retired == T0 + 60
    assert new.supersedes == old.id and new.active
    assert new.sessions == ["s1", "s2"]  # lineage of sources
    assert set(new.tags) == {"stripe", "webhooks"}
    assert [m.id for m in st.active()] == [new.id]


def test_same_words_other_type_is_not_a_duplicate(project):
    add(project, "gotcha", "Stripe webhooks need the raw request body for signature verification")
    out = add(project, "decision", "Stripe webhooks need the raw request body for signature verification")
    assert out.action == "added"
    assert len(store.load(project).active()) == 2


def test_dissimilar_memories_are_both_kept(project):
    add(project, "pattern", "Tests use pytest fixtures in tests/conftest.py for temporary homes")
    out = add(project, "pattern", "API handlers return errors as RFC 7807 problem+json documents")
    assert out.action == "added"
    assert len(store.load(project).active("pattern")) == 2


def test_identical_memory_is_refreshed_not_duplicated(project):
    a = add(project, "progress", "Migrated the billing module to the new ORM", now=T0)
    b = add(project, "progress", "migrated the billing module to the new ORM ", now=T0 + 3 * DAY, session_id="s9")
    assert b.action == "refreshed" and b.memory.id == a.memory.id
    st = store.load(project)
    assert len(st.memories) == 1 and st.memories[0].updated == T0 + 3 * DAY
    assert "s9" in st.memories[0].sessions


def test_supersedes_content_matches_across_types_above_half(project):
    old = add(project, "context", "The team deploys to Heroku every Friday afternoon")
    new = add(
        project,
        "decision",
        "Deploys moved from Heroku to Fly.io; deploy on demand",
        supersedes_content="team deploys to Heroku every Friday",
    )
    assert new.action == "superseded" and new.replaced.id == old.memory.id
    unrelated = add(
        project,
        "decision",
        "Use Postgres 16 for the main database",
        supersedes_content="something nobody ever said about kubernetes",
    )
    assert unrelated.action == "added"


def test_cjk_memories_dedup_by_characters(project):
    a = add(project, "gotcha", "数据库连接池在高并发时会耗尽，需要把最大连接数调到五十")
    b = add(project, "gotcha", "高并发时数据库连接池会耗尽，需要把最大连接数调到五十以上")
    assert b.action == "superseded" and b.replaced.id == a.memory.id
    c = add(project, "gotcha", "前端构建使用 Vite，不要再用 webpack 配置")
    assert c.action == "added"
    st = store.load(project)
    assert sorted(m.content for m in st.active()) == sorted([b.memory.content, c.memory.content])
    raw = (store.state_path(project)).read_text(encoding="utf-8")
    assert "数据库连接池" in raw  # written as UTF-8 text, not \u escapes


def test_secrets_are_redacted_and_content_cleaned(project):
    out = add(project, "context", "  The staging key is sk-ant-api03-" + "A" * 90 + "\n\n and   rotates monthly ")
    assert "sk-ant-api03" not in out.memory.content
    assert "  " not in out.memory.content and "\n" not in out.memory.content


def test_bad_type_is_one_clear_line(project):
    with pytest.raises(store.StateError, match="not a memory type: use one of architecture"):
        add(project, "todo", "x")


# decay -----------------------------------------------------------------------------------------
def test_decay_over_simulated_days(project):
    p = add(project, "progress", "Half-way through the auth rewrite", now=T0).memory
    c = add(project, "context", "Launch is planned for March", now=T0).memory
    a = add(project, "architecture", "The API is a FastAPI app in api/main.py", now=T0).memory
    ec = store.effective_confidence
    assert ec(p, T0) == pytest.approx(1.0)
    assert ec(p, T0 + 3.5 * DAY) == pytest.approx(0.5)
    assert ec(p, T0 + 5 * DAY) < store.BRIEFING_FLOOR < ec(p, T0 + 4 * DAY)
    assert ec(p, T0 + 8 * DAY) == 0.0
    assert ec(c, T0 + 15 * DAY) == pytest.approx(0.5)
    assert ec(c, T0 + 30 * DAY) == 0.0
    assert ec(a, T0 + 3650 * DAY) == 1.0
    # ranking: confidence x (1 + accessCount / 10)
    a.access_count = 10
    assert store.rank(a, T0) == pytest.approx(2.0)


def test_faded_memories_are_archived_then_pruned(project):
    add(project, "progress", "Working on the CSV export", now=T0)
    keep = add(project, "decision", "CSV export streams rows instead of buffering", now=T0).memory
    with store.transaction(project) as st:
        assert store.archive_faded(st, T0 + 6 * DAY) == []  # faded below 0.3 but not to zero
        gone = store.archive_faded(st, T0 + 7 * DAY)
    assert [m.content for m in gone] == ["Working on the CSV export"]
    st = store.load(project)
    assert [m.status for m in st.memories if m.type == "progress"] == ["archived"]
    with store.transaction(project) as st:
        assert store.prune(st, T0 + 20 * DAY) == []  # archived 13 days ago
        pruned = store.prune(st, T0 + 21.1 * DAY)
    assert len(pruned) == 1 and [m.id for m in store.load(project).memories] == [keep.id]


# the file ----------------------------------------------------------------------------------------
def test_state_file_is_private_atomic_and_schema_versioned(project):
    add(project, "pattern", "Commit messages use the imperative mood")
    path = store.state_path(project)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["schema"] == store.SCHEMA_VERSION and data["project"] == project
    m = data["memories"][0]
    assert set(m) >= {
        "id",
        "type",
        "content",
        "tags",
        "created",
        "updated",
        "confidence",
        "accessCount",
        "status",
        "supersedes",
        "mergedFrom",
        "sessions",
    }
    assert not [n for n in os.listdir(path.parent) if n.endswith(".tmp")]
    # machine-local state stays out of git without touching the user's .gitignore
    with open(os.path.join(project, ".git", "info", "exclude")) as fh:
        assert "/.memory/" in fh.read().splitlines()


def test_unknown_keys_and_unreadable_entries_survive_a_rewrite(project):
    path = store.state_path(project)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "schema": 1,
                "note": "mine",
                "memories": [
                    {"id": "keep1", "type": "gotcha", "content": "x y z", "custom": 7},
                    {"id": "broken", "type": "nonsense"},
                    "garbage",
                ],
            }
        )
    )
    add(project, "gotcha", "A completely different fact about caching layers")
    data = json.loads(path.read_text())
    assert data["note"] == "mine"
    assert {"id": "broken", "type": "nonsense"} in data["memories"] and "garbage" in data["memories"]
    assert next(m for m in data["memories"] if isinstance(m, dict) and m.get("id") == "keep1")["custom"] == 7


def test_corrupt_state_is_a_clear_error_and_left_alone(project):
    path = store.state_path(project)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(store.StateError, match="is not valid JSON .*move it aside"):
        add(project, "gotcha", "anything")
    assert path.read_text() == "{not json"


def test_newer_schema_is_refused(project):
    path = store.state_path(project)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"schema": 99, "memories": []}))
    with pytest.raises(store.StateError, match="newer recall"):
        store.load(project)


def _racer(project: str, n: int, tag: str, home: str) -> None:
    os.environ["RECALL_HOME"] = home
    for i in range(n):
        with store.transaction(project) as st:
            store.add_memory(st, "context", f"{tag} fact number {i} about subsystem {tag}{i} zone{i}{tag}")


def test_two_writers_racing_on_the_lock_lose_nothing(project, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_racer, args=(project, 15, tag, str(tmp_path / "rh"))) for tag in ("alpha", "omega")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    st = store.load(project)
    assert len(st.memories) == 30 and len({m.id for m in st.memories}) == 30


def test_find_by_prefix(project):
    m = add(project, "gotcha", "Redis must run before the worker starts").memory
    st = store.load(project)
    assert st.find(m.id[:6]).id == m.id
    with pytest.raises(store.StateError, match="recall memories"):
        st.find("nope")


def test_forget_removes_and_unlinks_lineage(project):
    a = add(project, "gotcha", "Stripe webhooks need the raw request body for signature verification").memory
    b = add(project, "gotcha", "Stripe webhook signature verification needs the raw request body always").memory
    with store.transaction(project) as st:
        store.forget(st, a.id)
    assert a.id in st.removed  # its index document goes too
    st = store.load(project)
    assert st.by_id(a.id) is None and st.by_id(b.id).supersedes is None


# access counts -----------------------------------------------------------------------------------
def test_access_hits_are_batched_and_folded(project):
    from recall.search.hit import Hit

    m = add(project, "decision", "We picked tantivy over SQLite FTS5 for speed").memory
    before = store.state_path(project).stat().st_mtime_ns
    hit = Hit(
        session_id="",
        uuid=m.id,
        project=project,
        cwd="",
        timestamp="",
        role="memory",
        text="",
        snippet="",
        score=1.0,
        kind="memory",
    )
    msg = Hit(
        session_id="s",
        uuid="u",
        project=project,
        cwd="",
        timestamp="",
        role="user",
        text="",
        snippet="",
        score=1.0,
        kind="message",
    )
    assert note_access([hit, hit, msg]) == 2
    assert note_access([{"kind": "memory", "id": m.id, "project": project}, (project, "unknown-id")]) == 2
    # noting a hit does not touch state.json
    assert store.state_path(project).stat().st_mtime_ns == before
    assert store.fold_access() == {project: 3}
    assert store.load(project).by_id(m.id).access_count == 3
    assert store.fold_access() == {}  # the log was consumed
