"""Common query terms at scale: they do not decide which documents match, and running the
phrase and proximity bonuses as their own query ranks exactly like one query with every
clause (``Searcher.build_query``)."""

from __future__ import annotations

import pytest

import recall.search.query as query
from benchmarks.generate import generate, query_set
from indexer.ingest import index_all
from recall.search.query import STOPWORDS, common_terms
from recall.search.searcher import Searcher
from tests.support.factory import Session


@pytest.fixture
def low_floor(monkeypatch):
    """What a heavy user's index does (a term in 20% of 1M messages), on a test-sized one."""
    monkeypatch.setattr(query, "COMMON_MIN_DOCS", 1)
    monkeypatch.setattr(query, "COMMON_SHARE", 0.2)


def test_common_terms_rules(low_floor):
    n = 100
    dfs = {"src": 40, "py": 30, "widget": 2, "the": 90, "ghost": 0}
    terms = list(dfs)
    assert "the" in STOPWORDS
    # common: in >= 20% of the index; stopwords never (weighted down already); absent terms ignored
    assert common_terms(dfs, terms, n) == {"src", "py"}
    # every content word common: the rarest one still decides which documents match
    assert common_terms({"src": 40, "py": 30, "the": 90}, ["src", "py", "the"], n) == {"src"}
    assert common_terms({"src": 40}, ["src"], n) == set()


def test_a_word_in_a_tenth_of_the_index_still_scores(monkeypatch):
    # the share was chosen on LoCoMo: demoting words in 10% of the index cost 1.7 points of recall@10
    monkeypatch.setattr(query, "COMMON_MIN_DOCS", 1)
    dfs = {"app": 10, "src": 25, "widget": 1}
    assert common_terms(dfs, list(dfs), 100) == {"src"}


def test_nothing_is_common_in_a_small_index():
    # below COMMON_MIN_DOCS a term's postings are cheap: the query is the same as ever
    assert common_terms({"src": 900, "widget": 1}, ["src", "widget"], 1000) == set()


def test_common_words_alone_do_not_match_and_the_exact_path_wins(claude_projects, low_floor):
    s = Session(cwd="/home/dev/shop")
    for i in range(12):  # src and py everywhere, as in a real project's tool calls
        s.assistant(f"Edited src/module_{i}/handler.py and src/module_{i}/models.py, the tests pass.")
    target = s.assistant("The crash comes from src/app/widget.py: the widget cache is never cleared.")["uuid"]
    near = s.assistant("The app now renders each widget twice.")["uuid"]
    s.write(claude_projects)
    index_all()
    hits = Searcher().search("src/app/widget.py", messages=True, limit=50)
    assert hits[0].uuid == target
    assert near in {h.uuid for h in hits}
    # documents holding only the common words (src, py) are not matches
    assert len(hits) == 2


@pytest.fixture(scope="module")
def generated_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    home = tmp_path_factory.mktemp("recall-home")
    mp = pytest.MonkeyPatch()
    mp.setenv("RECALL_HOME", str(home))
    mp.setenv("CLAUDE_CONFIG_DIR", str(root))
    try:
        generate(root / "projects", 3000, seed=7, projects=3)
        index_all()
        yield home / "index"
    finally:
        mp.undo()


def _top(searcher: Searcher, text: str, split: bool, **filters) -> list[tuple[float, tuple[int, int]]]:
    ts = searcher.index.searcher()
    built = searcher.build_query(ts, text, doctypes=("message", "session", "memory"), split=split, **filters)
    if built is None:
        return []
    return [(score, (a.segment_ord, a.doc)) for score, a in searcher.top(ts, built[0], 110)]


def _same_ranking(a, b) -> bool:
    """Equal scores (to float noise) and the same documents, up to the order of ties."""
    if len(a) != len(b) or any(abs(x[0] - y[0]) > 1e-4 * max(1.0, abs(x[0])) for x, y in zip(a, b)):
        return False
    last = a[-1][0] if a else 0.0
    # documents tied with the last one kept may differ (either is a correct top 110)
    firm = lambda hits: {d for s, d in hits if s > last + 1e-4 * max(1.0, abs(last))}  # noqa: E731
    return firm(a) == firm(b)


@pytest.mark.parametrize("floor", ["default", "low"])
def test_split_query_ranks_like_one_query(generated_index, monkeypatch, floor):
    if floor == "low":
        monkeypatch.setattr(query, "COMMON_MIN_DOCS", 1)
        monkeypatch.setattr(query, "COMMON_SHARE", 0.2)
    searcher = Searcher(generated_index)
    texts = [q["text"] for q in query_set(0) if q["kind"] != "long"]
    texts += ["what did we decide about the cache", "src/app/main.py", '"retry budget"', "logger commit"]
    checked = 0
    for text in texts:
        one, two = _top(searcher, text, split=False), _top(searcher, text, split=True)
        assert _same_ranking(one, two), text
        checked += bool(one)
    assert checked >= 20  # the corpus answers most of the queries
    project = searcher.search("src", messages=True, limit=1)[0].project
    for text in texts[:12]:
        assert _same_ranking(
            _top(searcher, text, False, project=project, exclude_session="x"),
            _top(searcher, text, True, project=project, exclude_session="x"),
        ), text


def test_an_error_in_a_parallel_query_reaches_the_caller(generated_index):
    searcher = Searcher(generated_index)
    ts = searcher.index.searcher()
    queries, _ = searcher.build_query(ts, "src/app/main.py", doctypes=("message",), split=True)
    assert len(queries) == 2  # a bonus query and the term union, run on two threads

    class Broken:
        def search(self, query, *args, **kwargs):
            if query is queries[1]:
                raise RuntimeError("segment vanished")
            return ts.search(query, *args, **kwargs)

    with pytest.raises(RuntimeError, match="segment vanished"):
        Searcher.top(Broken(), queries, 10)
