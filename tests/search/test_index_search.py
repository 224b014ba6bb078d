"""Indexing transcripts and searching them: idempotence, increments, ranking, filters,
hostile queries and the CLI's JSON schema."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timedelta, timezone

import pytest

from indexer.ingest import Indexer, index_all
from recall.core import paths
from recall.search.searcher import Searcher
from tests.support.cli import cli
from tests.support.factory import Session


def webhook_session(cwd="/home/dev/shop", start=None):
    s = Session(cwd=cwd, start=start or datetime(2026, 11, 1, 9, tzinfo=timezone.utc))
    s.user("the stripe webhook keeps retrying, why?")
    s.assistant(
        "We decided to verify signatures with STRIPE_WEBHOOK_SECRET from the vault, "
        "because the old env var was rotated."
    )
    tid = s.tool_use("Edit", {"file_path": f"{cwd}/src/lib/stripe_webhook.py"})
    s.tool_result(tid, "The file has been updated.")
    return s


def test_index_then_search(claude_projects, capsys):
    s = webhook_session()
    s.write(claude_projects)
    code, out, _ = cli(capsys, "index")
    assert code == 0 and "Indexed 4 messages" in out
    code, out, _ = cli(capsys, "--raw", "--limit", "5", "webhook signatures")
    assert code == 0
    assert "**signatures**" in out and s.session_id[:8] in out


def test_second_run_does_no_work_and_says_so(claude_projects, capsys):
    webhook_session().write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    code, out, _ = cli(capsys, "index")
    assert code == 0 and out.startswith("Nothing new: 1 transcript files")


def test_indexing_the_same_lines_twice_never_duplicates(claude_projects):
    s = webhook_session()
    path = s.write(claude_projects)
    index_all()
    # a crash after the commit but before the offsets were saved: lines are read again
    paths.state_db_path().unlink()
    index_all()
    # the file replaced by an identical copy (new inode)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(path.read_bytes())
    os.replace(tmp, path)
    index_all()
    hits = Searcher().search("stripe", messages=True, limit=50)
    assert len(hits) == len({h.uuid for h in hits}) == 3
    assert Searcher().search("retrying", limit=50)[0].session_id == s.session_id


def test_incremental_append_and_truncation(claude_projects):
    s = webhook_session()
    path = s.write(claude_projects)
    first = index_all()
    assert first.messages == 4
    n = len(s.lines)
    s.user("also rotate the stripe key on staging")
    s.append(claude_projects, n)
    second = index_all()
    assert second.messages == 1 and second.changed == 1
    # truncated and rewritten shorter: re-read from the start, no duplicates
    path.write_text(s.text().splitlines(keepends=True)[0])
    index_all()
    hits = Searcher().search("stripe", messages=True, limit=50)
    assert len(hits) == len({h.uuid for h in hits}) == 4


def test_deleted_transcript_loses_nothing_already_indexed(claude_projects):
    s = webhook_session()
    path = s.write(claude_projects)
    index_all()
    path.unlink()
    index_all()
    assert Searcher().search("signatures")[0].session_id == s.session_id


def test_hits_are_grouped_by_session_unless_messages(claude_projects):
    webhook_session().write(claude_projects)
    other = Session(cwd="/home/dev/shop")
    other.user("stripe checkout page shows the wrong currency")
    other.write(claude_projects)
    index_all()
    grouped = Searcher().search("stripe", limit=10)
    assert len(grouped) == 2 and len({h.session_id for h in grouped}) == 2
    single = Searcher().search("stripe", limit=10, messages=True)
    assert len(single) >= 3


def test_code_aware_tokens(claude_projects):
    s = Session(cwd="/home/dev/app")
    s.user("rename getUserName in src/auth/session_store.py and fix config.loader.parse_env")
    s.user("日本語のテストです データベース接続")
    s.write(claude_projects)
    index_all()
    sr = Searcher()
    for q in [
        "getUserName",
        "user name",
        "session_store",
        "store",
        "session_store.py",
        "src/auth/session_store.py",
        "config.loader.parse_env",
        "loader",
        "parse_env",
    ]:
        assert sr.search(q, messages=True), q
    assert sr.search("データベース", messages=True)
    # the whole identifier outranks its scattered parts
    noise = Session(cwd="/home/dev/app")
    noise.user("the store keeps a session; see the session docs and the store docs")
    noise.write(claude_projects)
    index_all()
    top = sr.search("session_store", messages=True, limit=2)
    assert "session_store" in top[0].text


def test_stemming(claude_projects):
    s = Session()
    s.user("the migrations were failing on deploy")
    s.write(claude_projects)
    index_all()
    assert Searcher().search("migration fails", messages=True)


HOSTILE = [
    '"unbalanced quote',
    "C++",
    "AND",
    "OR NOT",
    "a:b:c",
    "field:value",
    "(((",
    ")]}",
    "*",
    "?",
    "title:\"x\" AND (y OR",
    "-",
    "+",
    "~2",
    "^3",
    "\\",
    "/regex/",
    "🎉🔥",
    "\x00",
    "'; DROP TABLE",
    "x" * 300,
    "IN [a TO b]",
    "{}",
    "<recalled-context>",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_any_text_is_a_valid_query(claude_projects, capsys, query):
    webhook_session().write(claude_projects)
    index_all()
    code, out, err = cli(capsys, "--raw", "--json", query)
    assert code == 0, err
    assert json.loads(out)["query"] == query


def test_huge_pasted_log_is_a_valid_query(claude_projects, capsys):
    webhook_session().write(claude_projects)
    index_all()
    log = "\n".join(f"2026-11-01 ERROR worker-{i} stripe webhook timeout after {i}ms at x.py:{i}" for i in range(200))
    assert len(log) > 10_000
    code, out, _ = cli(capsys, "--raw", "--json", log)
    assert code == 0 and json.loads(out)["hits"]


def test_since_project_and_messages_filters(claude_projects, capsys):
    now = datetime.now(timezone.utc)
    old = webhook_session(cwd="/home/dev/shop", start=now - timedelta(days=20))
    old.write(claude_projects)
    new = Session(cwd="/home/dev/blog", start=now - timedelta(hours=1))
    new.user("the stripe donation button on the blog")
    new.write(claude_projects)
    index_all()

    def sessions(*args):
        code, out, err = cli(capsys, "--raw", "--json", *args, "stripe")
        assert code == 0, err
        return {h["session_id"] for h in json.loads(out)["hits"]}

    assert sessions() == {old.session_id, new.session_id}
    assert sessions("--since", "3d") == {new.session_id}
    assert sessions("--since", "1w") == {new.session_id}
    assert sessions("--since", (now - timedelta(days=30)).date().isoformat()) == {old.session_id, new.session_id}
    assert sessions("--project", "/home/dev/shop") == {old.session_id}
    assert sessions("--project", "/home/dev/shop/src/lib") == {old.session_id}  # a subfolder
    code, out, _ = cli(capsys, "--raw", "--json", "--messages", "--project", "/home/dev/shop", "stripe")
    hits = json.loads(out)["hits"]
    assert len(hits) == 3 and {h["session_id"] for h in hits} == {old.session_id}


def test_json_schema(claude_projects, capsys):
    s = webhook_session()
    s.write(claude_projects)
    index_all()
    code, out, _ = cli(capsys, "--raw", "--json", "--limit", "5", "signatures")
    doc = json.loads(out)
    assert set(doc) == {"query", "hits"} and doc["query"] == "signatures"
    hit = doc["hits"][0]
    assert {"session_id", "uuid", "project", "cwd", "timestamp", "role", "text", "snippet", "score"} <= set(hit)
    assert hit["uuid"] == s.lines[1]["uuid"]  # the transcript uuid of the hit's message
    assert hit["project"] == "/home/dev/shop" and hit["cwd"] == "/home/dev/shop"
    assert hit["role"] == "assistant" and hit["timestamp"].endswith("Z")
    assert "**signatures**" in hit["snippet"] and isinstance(hit["score"], float)


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--since", "yesterday", "x"],
            "recall: --since takes a span like 2h, 3d or 1w, or a date like 2026-11-01; got 'yesterday'.\n",
        ),
        (["x"], None),
    ],
)
def test_error_messages(capsys, args, message):
    code, out, err = cli(capsys, *args)
    if message:
        assert (code, err) == (2, message)
    else:  # no index yet
        assert code == 1
        assert err == f"recall: No index at {paths.index_dir()} yet: run `recall index` to build it.\n"


def test_source_must_be_a_directory(capsys, tmp_path):
    code, _, err = cli(capsys, "index", "--source", str(tmp_path / "nope"))
    assert code == 1 and "is not a directory: pass a folder of Claude Code transcripts." in err


def test_extra_source_dirs_and_rebuild(tmp_path, capsys):
    elsewhere = tmp_path / "archive-of-transcripts"
    s = webhook_session()
    s.write(elsewhere)
    code, out, _ = cli(capsys, "index", "--source", str(elsewhere))
    assert "Indexed 4 messages" in out
    code, out, _ = cli(capsys, "index", "--rebuild", "--source", str(elsewhere))
    assert code == 0 and "Rebuilt the index (asked for)" in out


def test_state_permissions(claude_projects):
    webhook_session().write(claude_projects)
    index_all()
    home = paths.recall_home()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(paths.state_db_path().stat().st_mode) == 0o600


def test_schema_version_mismatch_rebuilds(claude_projects):
    webhook_session().write(claude_projects)
    index_all()
    (paths.index_dir() / "recall-schema.json").write_text('{"version": 0}')
    summary = index_all()
    assert summary.rebuilt.startswith("schema changed")
    assert summary.replayed == 4 and summary.messages == 0  # the live transcript held nothing more
    assert Searcher().search("signatures")


def test_summary_counts_skips(claude_projects, capsys):
    s = webhook_session()
    s.queue_operation()
    s.hook_context("<recalled-context>x</recalled-context>")
    s.write(claude_projects)
    code, out, _ = cli(capsys, "index")
    assert "Skipped 2 lines: " in out and "hook-context 1" in out and "queue-operation 1" in out


def test_index_writer_is_exclusive(claude_projects):
    from recall.core.errors import IndexBusy

    with Indexer():
        with pytest.raises(IndexBusy):
            Indexer()


def test_cli_search_finds_memories_and_transcripts_together(claude_projects, capsys):
    s = webhook_session()
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
        ix.upsert_memory_docs(
            [
                {
                    "id": "m-vault",
                    "project": "/home/dev/shop",
                    "type": "decision",
                    "content": "Stripe webhook signatures are verified with the vault secret.",
                    "tags": ["stripe", "webhooks"],
                    "updated": s.clock.timestamp(),
                    "session_ids": [s.session_id],
                }
            ]
        )
    code, out, _ = cli(capsys, "--raw", "--json", "stripe webhook signatures")
    hits = json.loads(out)["hits"]
    kinds = [h["kind"] for h in hits]
    assert "memory" in kinds and "message" in kinds
    memory = hits[kinds.index("memory")]
    assert memory["uuid"] == "m-vault" and memory["role"] == "memory"
    # --messages ranks transcript messages only
    code, out, _ = cli(capsys, "--raw", "--json", "--messages", "stripe webhook signatures")
    assert {h["kind"] for h in json.loads(out)["hits"]} == {"message"}
    # a memory shown is counted as used (folded into accessCount in batches)
    from recall.memory import access_log_path

    assert "m-vault" in access_log_path().read_text()


@pytest.mark.parametrize(
    "args,message",
    [
        (["index", "--bogus"], "recall: No such option: --bogus. Run `recall index --help` to see what it takes.\n"),
        (["service", "bogus"], "recall: No such command 'bogus'. Run `recall service --help` to see what it takes.\n"),
        (["search"], "recall: Missing argument 'QUERY...'. Run `recall search --help` to see what it takes.\n"),
        (
            ["--limit", "0", "x"],
            "recall: --limit/-n takes a number of at least 1. Run `recall search --help` to see what it takes.\n",
        ),
    ],
)
def test_bad_usage_is_one_line_naming_the_help(capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert (code, out, err) == (2, "", message)


@pytest.mark.parametrize("value, mb", [(None, 48), ("96", 96), ("8", 32), ("lots", 48)])
def test_writer_heap_setting(monkeypatch, value, mb):
    from indexer.ingest import writer_heap

    if value is None:
        monkeypatch.delenv("RECALL_WRITER_HEAP_MB", raising=False)
    else:
        monkeypatch.setenv("RECALL_WRITER_HEAP_MB", value)
    assert writer_heap() == mb * 1_000_000
