"""A word finds the other words of its family (decide -> decision, chose -> choose), below
its own; and a search that finds nothing says `recall index` only when the index is behind
(issue 44 item 2: the README's demo query found nothing right after setup indexed it)."""

from __future__ import annotations

from datetime import datetime, timezone

from recall.cli.output import no_matches_line
from recall.search import query as q
from recall.search.run import IndexLag
from recall.search.searcher import Searcher
from tests.support.cli import cli
from tests.support.factory import Session

START = datetime(2026, 11, 1, 9, tzinfo=timezone.utc)


def pricing_session(cwd="/home/dev/shop") -> Session:
    s = Session(cwd=cwd, start=START)
    s.user("how should the orders table store prices?")
    s.assistant("Decision: we store all prices as integer cents, never floats. Floats lose cents in sums.")
    return s


def test_the_readme_demo_query_finds_the_decision(claude_projects, capsys):
    """The README's commands in their order: index, then `recall --raw --limit 5 "what did we decide"`."""
    s = pricing_session()
    s.write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    code, out, _ = cli(capsys, "--raw", "--limit", "5", "what did we decide")
    assert code == 0
    assert "**Decision**: we store all prices as integer cents, never floats" in out
    assert s.session_id[:8] in out and "No matches" not in out


def test_the_word_itself_ranks_above_its_family(claude_projects):
    exact = Session(cwd="/home/dev/shop", start=START)
    exact.user("what about the cache layer?")
    exact.assistant("We concluded the cache layer is too slow for the checkout page.")
    exact.write(claude_projects)
    family = Session(cwd="/home/dev/shop", start=START)
    family.user("and the cache layer?")
    family.assistant("Conclusion: the cache layer is too slow for the checkout page.")
    family.write(claude_projects)
    from indexer.ingest import index_all

    index_all()
    sessions = [h.session_id for h in Searcher().search("what have we concluded", limit=5)]
    assert sessions == [exact.session_id, family.session_id]
    sessions = [h.session_id for h in Searcher().search("the conclusion", limit=5)]
    assert sessions == [family.session_id, exact.session_id]
    hit = Searcher().search("what have we concluded", limit=5)[1]
    assert "**Conclusion**" in hit.snippet  # the family's word is what the snippet bolds


def test_irregular_forms_meet(claude_projects):
    s = Session(cwd="/home/dev/shop", start=START)
    s.user("pick a task runner for the emails")
    s.assistant("We chose dramatiq over celery: fewer moving parts.")
    s.write(claude_projects)
    from indexer.ingest import index_all

    index_all()
    hits = Searcher().search("which library did we choose", limit=5)
    assert [h.session_id for h in hits] == [s.session_id]
    assert "We **chose** dramatiq" in hits[0].snippet


def test_families_are_symmetric_and_each_joins_different_stems():
    assert q.variants("decid") == ("decis",)
    assert q.variants("decis") == ("decid",)
    assert set(q.variants("choos")) == {"chose", "chosen", "choic"}
    assert q.variants("stripe") == ()
    for group in q._FAMILIES_RAW.split("|"):
        stems = q.unique(t for w in group.split() for t in q.analyze(w))
        assert len(stems) == len(group.split()) and len(stems) >= 2, group  # one stem each, all different
        for s in stems:
            assert set(q.variants(s)) == set(stems) - {s}, group


def test_no_matches_says_the_index_is_up_to_date(claude_projects, capsys):
    pricing_session().write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    code, out, _ = cli(capsys, "--raw", "zeppelin")
    assert code == 0
    assert out.strip() == (
        "No matches for 'zeppelin'. The index is up to date: try fewer or other words, or drop --since/--project."
    )


def test_no_matches_says_recall_index_when_files_wait(claude_projects, capsys):
    pricing_session().write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    later = Session(cwd="/home/dev/shop", start=START)
    later.user("the zeppelin launch checklist")
    later.write(claude_projects)  # written after the index ran: waiting
    code, out, _ = cli(capsys, "--raw", "zebra")
    assert code == 0
    assert out.strip() == (
        "No matches for 'zebra': 1 transcript file not indexed yet. Run `recall index` "
        "(or `recall service start` to keep the index fresh), or try fewer or other words."
    )
    assert cli(capsys, "index")[0] == 0
    assert "The index is up to date" in cli(capsys, "--raw", "zebra")[1]


def test_no_matches_asks_the_running_service(claude_projects, capsys, monkeypatch):
    pricing_session().write(claude_projects)
    assert cli(capsys, "index")[0] == 0
    from recall.core import service_client as client

    status = {"state": "backfilling", "backfill": {"bytes_total": 10}, "backlog_files": 3}

    def call(op, args=None, timeout=2.0, credentials=False):
        if op == "status":
            return status
        raise client.Unavailable("search in-process")

    monkeypatch.setattr(client, "call", call)
    out = cli(capsys, "--raw", "zeppelin")[1]
    assert out.strip() == (
        "No matches for 'zeppelin' so far: the service is still indexing, 3 transcript files waiting "
        "(`recall status` shows how far). Try again in a moment, or with fewer or other words."
    )
    status.update(state="watching", backfill=None, backlog_files=0)
    assert "The index is up to date" in cli(capsys, "--raw", "zeppelin")[1]


def test_no_matches_without_an_index():
    assert no_matches_line("x", IndexLag("missing")) == (
        "No matches for 'x': there is no index yet. Run `recall index` to build it."
    )
    assert no_matches_line("x", IndexLag("service")) == (
        "No matches for 'x' so far: the service is still indexing (`recall status` shows how far). "
        "Try again in a moment, or with fewer or other words."
    )
