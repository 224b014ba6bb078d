"""`recall forget` killed (a real SIGKILL of the process, ``RECALL_KILL_AT``) at every step
boundary: its intent is durable before anything is removed, nothing forgotten comes back (not
even through a rebuild that re-reads the transcripts), the re-run finishes what was started
(never "Nothing to forget" while work remains), the service finishes it as it starts, and once
done no byte of what was forgotten is left anywhere under $RECALL_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from indexer.archive import Archive
from indexer.forgetting import intents
from indexer.ingest import Indexer, index_all
from recall.core import config, paths
from recall.memory import briefing, store, summaries
from recall.prompt import injections
from recall.search.searcher import Searcher
from tests.service.test_service import count, serve  # noqa: F401 - serve is a fixture
from tests.support.factory import BASE_TIME, Session
from tests.support.memory import make_project
from tests.support.wait import wait_for

RECALL = [sys.executable, "-m", "recall.entry"]
SECRET = "hunter2-plum-ORCHID"
STEPS = [
    "intent",
    "tombstones",
    "archive",
    "index",
    "offsets",
    "memories",
    "claude_md",
    "summaries",
    "injection_log",
    "synthesis_cache",
    "team",
    "purge",
]


class History:
    """A project with what a forget must reach in every store: messages to forget and to keep,
    a memory, the CLAUDE.md block, a session summary, the injection log, the synthesis cache."""

    def __init__(self, tmp_path: Path, claude_projects: Path) -> None:
        self.project = make_project(tmp_path, "shop")
        self.mixed = Session(cwd=str(self.project), start=BASE_TIME - timedelta(days=40))
        self.mixed.user("where is the walrus billing host configured")
        self.mixed.assistant(f"the walrus billing host is in deploy/billing.yaml, password {SECRET}")
        self.mixed.user("how does the giraffe deploy script run")
        self.mixed.assistant("the giraffe deploy script runs from ci")
        self.mixed.write(claude_projects)
        self.gone = Session(cwd=str(self.project), start=BASE_TIME - timedelta(days=30))
        self.gone.user("the walrus cache warms at boot")
        self.gone.assistant("walrus warm-up runs in the init container")
        self.gone.write(claude_projects)
        self.other = Session(cwd=str(self.project))
        self.other.user("the heron queue drains nightly")
        self.other.assistant("heron drains at 02:00")
        self.other.write(claude_projects)
        index_all()
        for sid, text in (
            (self.mixed.session_id, f"The walrus billing host door opens with {SECRET}."),
            (self.gone.session_id, "The walrus cache warms at boot."),
            (self.other.session_id, "The heron queue drains nightly."),
        ):
            with store.transaction(self.project) as state:
                store.add_memory(state, "gotcha", text, session_id=sid)
        briefing.write_briefing(self.project)
        summaries.put(self.gone.session_id, str(self.project), "Goal: warm the walrus cache.")
        summaries.put(self.mixed.session_id, str(self.project), f"Goal: the walrus host ({SECRET}).")
        for sid in (self.mixed.session_id, self.gone.session_id):
            injections.append(
                {
                    "t": time.time(),
                    "project": str(self.project),
                    "session": "now",
                    "outcome": "raw",
                    "hits": [{"session": sid, "score": 1.0}],
                    "text": f"- user: the walrus billing host ({SECRET})",
                }
            )
        from recall.llm.synthesis import cache_put

        cache_put("a" * 64, f"- The walrus billing host door opens with {SECRET} [2026-10-01 session x]")
        self.messages = 10  # 4 + 2 + 2 messages, +2: the summaries' documents are memories


def hits(word: str) -> list[str]:
    return [h.text for h in Searcher().search(word, limit=50, messages=True)]


def message_uuids() -> list[str]:
    """Every message document in the index (duplicates kept)."""
    import tantivy

    s = Searcher()
    q = tantivy.Query.term_query(s.schema, "doctype", "message", index_option="basic")
    searcher = s.index.searcher()
    out = []
    for _, addr in searcher.search(q, 1000).hits:
        out.append(str(searcher.doc(addr)["key"][0]))
    return out


def home_bytes_holding(*needles: str) -> list[str]:
    """The files under $RECALL_HOME whose raw bytes hold any of ``needles`` (case-insensitive)."""
    found = []
    for path in paths.recall_home().rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            if any(n.lower().encode() in data for n in needles):
                found.append(str(path.relative_to(paths.recall_home())))
    return sorted(found)


def killed_at(step: str, *args: str) -> None:
    out = subprocess.run(
        [*RECALL, "forget", *args, "--yes"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "RECALL_KILL_AT": f"forget:{step}"},
    )
    assert out.returncode == -9, (out.returncode, out.stdout, out.stderr)


def forget_cli(capsys, *args: str) -> str:
    from recall.cli.app import run

    assert run(["forget", *args, "--yes"]) == 0
    return capsys.readouterr().out


def plain_rebuild() -> None:
    """A rebuild by a process that knows nothing of forgets under way (no privacy steps
    attached): it re-reads every transcript."""
    with Indexer(rebuild=True) as ix:
        ix.run(paths.transcript_roots())


def assert_match_forgotten(h: History) -> None:
    assert intents(paths.archive_dir()) == []
    assert hits("walrus") == []
    keys = message_uuids()
    assert len(keys) == len(set(keys)) == 4  # the giraffe pair and the heron pair, once each
    assert sorted(hits("giraffe")) == [
        "how does the giraffe deploy script run",
        "the giraffe deploy script runs from ci",
    ]
    assert len(hits("heron")) == 2
    assert not any("walrus" in m.content for m in store.load(h.project).memories)
    assert len(store.load(h.project).memories) == 1
    assert "walrus" not in (h.project / "CLAUDE.md").read_text() and "heron" in (h.project / "CLAUDE.md").read_text()
    assert summaries.get(h.gone.session_id) is None and summaries.get(h.mixed.session_id) is None
    assert home_bytes_holding("walrus", SECRET) == []


@pytest.mark.parametrize("step", STEPS)
def test_forget_match_killed_at_each_step_finishes_on_the_rerun(claude_projects, tmp_path, capsys, step):
    h = History(tmp_path, claude_projects)
    killed_at(step, "--match", "walrus")
    assert len(intents(paths.archive_dir())) == 1  # the intent outlives the kill
    if step != "intent":
        plain_rebuild()  # tombstones are down before anything was removed: nothing comes back
        assert hits("walrus") == []
        assert len(hits("giraffe")) == 2 and len(hits("heron")) == 2
    out = forget_cli(capsys, "--match", "walrus")
    assert "Finished an interrupted forget of messages containing 'walrus'" in out
    assert "Nothing to forget" not in out
    assert_match_forgotten(h)
    index_all(rebuild=True)  # the transcripts still hold everything
    assert hits("walrus") == [] and len(message_uuids()) == 4
    assert home_bytes_holding("walrus", SECRET) == []


@pytest.mark.parametrize("step", STEPS)
def test_forget_session_killed_at_each_step_finishes_on_the_rerun(claude_projects, tmp_path, capsys, step):
    h = History(tmp_path, claude_projects)
    sid = h.gone.session_id
    killed_at(step, "--session", sid[:8])
    out = forget_cli(capsys, "--session", sid[:8])
    assert "No session starts with" not in out and "Finished an interrupted forget of session" in out
    assert intents(paths.archive_dir()) == []
    assert all(sid not in json.dumps(r) for r in injections.read())
    assert summaries.get(sid) is None
    assert not any(sid in m.sessions for m in store.load(h.project).memories)
    assert "warms at boot" not in (h.project / "CLAUDE.md").read_text()
    assert hits("warm") == [] and len(message_uuids()) == 6
    plain_rebuild()
    assert hits("warm") == [] and len(message_uuids()) == 6


@pytest.mark.parametrize("step", ["tombstones", "archive", "index", "memories", "purge"])
def test_forget_secret_killed_mid_way_leaves_no_copy(claude_projects, tmp_path, capsys, step):
    h = History(tmp_path, claude_projects)
    killed_at(step, "--secret", SECRET)
    if step != "tombstones":  # from the archive step on, no store a rebuild reads holds it
        plain_rebuild()
        assert not any(SECRET in t for t in hits("walrus"))
    forget_cli(capsys, "--secret", SECRET)
    assert len(hits("walrus")) == 4 and not any(SECRET in t for t in hits("walrus"))
    assert len(message_uuids()) == 8
    assert not any(SECRET in m.content for m in store.load(h.project).memories)
    assert SECRET not in (h.project / "CLAUDE.md").read_text()
    assert home_bytes_holding(SECRET) == []


@pytest.mark.parametrize("form", [("--before", "2026-10-20"), ("--project", "shop")])
def test_before_and_project_killed_after_the_archive_finish(claude_projects, tmp_path, capsys, form):
    h = History(tmp_path, claude_projects)
    args = (form[0], str(h.project) if form[0] == "--project" else form[1])
    killed_at("archive", *args)
    plain_rebuild()
    assert hits("walrus") == [] and hits("giraffe") == []
    forget_cli(capsys, *args)
    assert intents(paths.archive_dir()) == []
    assert hits("walrus") == [] and hits("giraffe") == []
    left = 0 if form[0] == "--project" else 2
    assert len(message_uuids()) == left and len(hits("heron")) == left
    assert home_bytes_holding("walrus", "giraffe", SECRET) == []


def test_the_service_finishes_an_interrupted_forget_as_it_starts(claude_projects, tmp_path, serve):
    h = History(tmp_path, claude_projects)
    killed_at("index", "--match", "walrus")
    svc = serve().ready()
    try:
        wait_for(lambda: not intents(paths.archive_dir()), 60, interval=0.1, what="the forget to be finished")
        assert count() == 4
    finally:
        svc.terminate()
    assert_match_forgotten(h)


def test_recall_index_finishes_an_interrupted_forget_first(claude_projects, tmp_path, capsys):
    from recall.cli.app import run

    h = History(tmp_path, claude_projects)
    killed_at("memories", "--match", "walrus")
    assert run(["index"]) == 0
    assert_match_forgotten(h)


def test_doctor_reports_an_interrupted_forget_as_work_in_progress(claude_projects, tmp_path, capsys):
    from recall.cli.app import run

    History(tmp_path, claude_projects)
    killed_at("archive", "--match", "walrus")
    run(["doctor"])
    out = capsys.readouterr().out
    assert "forget" in out and "interrupted" in out and "recall forget" in out
    forget_cli(capsys, "--match", "walrus")
    run(["doctor"])
    assert "interrupted" not in capsys.readouterr().out


def test_a_forgotten_session_forgotten_again_clears_what_other_stores_kept(claude_projects, tmp_path, capsys):
    """A session forgotten by an older version that crashed after the archive and the index
    (no intent then): `--session` still finds it, by its tombstone, and runs every step."""
    h = History(tmp_path, claude_projects)
    sid = h.gone.session_id
    with Indexer() as ix:
        ix.forget_session(sid)  # the ingest side only: memories, summary, log keep it
    assert summaries.get(sid) is not None
    out = forget_cli(capsys, "--session", sid[:8])
    assert "No session starts with" not in out
    assert summaries.get(sid) is None
    assert not any(sid in m.sessions for m in store.load(h.project).memories)


def test_forget_leaves_no_deleted_document_in_the_index(claude_projects, tmp_path, capsys):
    from indexer.purge import deleted_documents

    History(tmp_path, claude_projects)
    config.set_value("hook.min_score", 0.0)
    forget_cli(capsys, "--match", "walrus")
    assert deleted_documents(paths.index_dir()) == 0
    assert home_bytes_holding("walrus", SECRET) == []
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in paths.index_dir().iterdir() if p.is_file())
    assert Archive(paths.archive_dir())  # still opens
