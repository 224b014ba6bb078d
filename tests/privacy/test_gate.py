"""Issue 28: one gate for every reader, and exclusions and tombstones that hold whatever name
a project goes by.

* item 3: the prompt hook (in-process, as the service runs it, ``hook.scope all``), the CLI,
  MCP and ``recall ask`` keep out excluded projects (by path and by a glob of working
  directories), sessions switched off and what was forgotten, the same way; ``exclude add``
  counts what it matches by working directory;
* item 7: exclusions compare what the filesystem sees: symlinks either way, a removed
  worktree, case on a case-insensitive filesystem;
* item 8: ``forget --project`` holds after the project's identity changes;
* item 11: a ``.git`` file is followed only into a repository that points back at it;
* item 12: a line with no working directory or time (a ``summary`` line) is judged by its
  session;
* and an exclusion is in force before ``exclude add`` counts the archive.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pytest

from indexer import ledger
from indexer.archive import Archive, Tombstones
from indexer.ingest import index_all
from indexer.project import canonical_project
from recall.core import config, paths
from recall.memory import store
from recall.prompt.context import build_context, service_op
from recall.search.searcher import Searcher
from tests.service.test_service import run_cli, serve  # noqa: F401 - serve is a fixture
from tests.support.factory import Session
from tests.support.memory import make_project, make_worktree


def texts(query: str, **kw) -> list[str]:
    return [h.text for h in Searcher().search(query, limit=50, messages=True, **kw)]


def injected(prompt: str, cwd, session_id: str = "current", via_service: bool = False) -> str:
    """What the prompt hook injects, worked out in-process (no service) or as the service's
    op does (``service_op``)."""
    payload = {"prompt": prompt, "cwd": str(cwd), "session_id": session_id}
    if via_service:
        out = service_op(dict(payload, _budget=30.0))
        out.pop("_trace", None)
    else:
        out = build_context(payload, time.time() + 30)
    return json.dumps(out or {})


def mcp(query: str, cwd) -> str:
    from recall.mcp.tools import memory_related, memory_search, recall_search

    return json.dumps(
        [
            recall_search(query, cwd=str(cwd), project="all", limit=20)["matches"],
            memory_search(query, cwd=str(cwd), project="all")["matches"],
            memory_related(["walrus"], cwd=str(cwd))["matches"],
        ]
    )


def ask_hits(query: str, project=None) -> str:
    from recall.cli.commands.ask import gather

    return json.dumps([h.as_json() for h in gather(query, str(project) if project else None)])


def every_reader(query: str, cwd, here) -> str:
    """What each reader returns for ``query``: the CLI search, the hook both ways, MCP, ask."""
    return " ".join(
        [
            json.dumps(texts(query)),
            injected(f"where is the {query} configured?", here),
            injected(f"where is the {query} configured?", here, via_service=True),
            mcp(query, cwd),
            ask_hits(query),
            ask_hits(query, cwd),
        ]
    )


@pytest.fixture
def scope_all():
    config.set_value("hook.synthesize", False)
    config.set_value("hook.min_score", 0.0)
    config.set_value("hook.scope", "all")


def _walrus(claude_projects, project, cwd=None) -> Session:
    s = Session(cwd=str(cwd or project))
    s.user("where is the walrus billing host configured")
    s.assistant("the walrus billing host lives in deploy/billing.yaml")
    s.write(claude_projects)
    return s


def _remember(project, session_id: str) -> None:
    from indexer.ingest import Indexer
    from recall.memory import index_docs as memory_index

    with store.transaction(project) as state:
        store.add_memory(
            state,
            "gotcha",
            "The walrus billing host lives in deploy/billing.yaml.",
            tags=["walrus"],
            session_id=session_id,
        )
    with Indexer() as ix:
        ix.upsert_memory_docs(memory_index.changes(project, [m.id for m in store.load(project).memories], [])[0])
        ix.commit()


# item 3 ----------------------------------------------------------------------------------------
def test_every_reader_keeps_an_excluded_project_out_under_hook_scope_all(tmp_path, claude_projects, scope_all):
    client = make_project(tmp_path, "client-acme")
    here = make_project(tmp_path, "mine")
    s = _walrus(claude_projects, client)
    index_all()
    _remember(client, s.session_id)
    assert "walrus" in every_reader("walrus billing host", client, here)  # reproduced: all of them see it

    config.set_value("exclude", [str(client)])
    seen = every_reader("walrus billing host", client, here)
    assert "walrus" not in seen, seen


def test_an_exclusion_glob_keeps_out_what_it_matches_by_working_directory(tmp_path, claude_projects, scope_all):
    mono = make_project(tmp_path, "mono")
    (mono / "clients" / "acme").mkdir(parents=True)
    _walrus(claude_projects, mono, cwd=mono / "clients" / "acme")
    other = Session(cwd=str(mono))
    other.user("how does the giraffe deploy script run")
    other.write(claude_projects)
    index_all()
    assert canonical_project(str(mono / "clients" / "acme")) == str(mono)

    out = run_cli("exclude", "add", str(mono / "clients") + "/*")
    assert out.returncode == 0, out.stderr
    assert "Nothing of it is indexed" not in out.stdout and "Already indexed: 2 messages in 1 session," in out.stdout
    assert "walrus" not in every_reader("walrus billing host", mono, mono)
    (listed,) = json.loads(run_cli("exclude", "list", "--json").stdout)
    assert listed["indexed"] == {} and sum(n["messages"] for n in listed["indexed_by_cwd"].values()) == 2
    assert texts("giraffe deploy")  # the rest of the repository is not excluded


def test_a_session_switched_off_is_not_injected_when_no_service_runs(tmp_path, claude_projects, scope_all):
    project = make_project(tmp_path, "shop")
    s = _walrus(claude_projects, project)
    index_all()
    assert "walrus" in injected("where is the walrus billing host configured?", project, "later")
    # `recall: off` typed in that session: the hook records it; nothing re-indexes (no service)
    assert injected("recall: off", project, s.session_id) == "{}"
    assert s.session_id in ledger.off_sessions()
    assert "walrus" not in injected("where is the walrus billing host configured?", project, "later")
    assert "walrus" not in injected("where is the walrus billing host configured?", project, "later", True)
    assert texts("walrus billing") == [] and "walrus" not in mcp("walrus billing host", project)


def test_what_a_forget_has_tombstoned_is_hidden_before_the_index_is_rid_of_it(tmp_path, claude_projects, scope_all):
    """An interrupted forget (intent written, index not yet rewritten): no reader shows it."""
    project = make_project(tmp_path, "shop")
    s = _walrus(claude_projects, project)
    kept = Session(cwd=str(project))
    kept.user("how does the giraffe deploy script run")
    kept.write(claude_projects)
    index_all()
    _remember(project, s.session_id)
    Tombstones(paths.archive_dir() / "forgotten.json").add(session=s.session_id)
    seen = every_reader("walrus billing host", project, project)
    assert "walrus" not in seen, seen
    assert texts("giraffe deploy")


# item 7 ----------------------------------------------------------------------------------------
def test_exclusions_hold_through_symlinks_either_way(tmp_path, claude_projects):
    real = make_project(tmp_path, "real-client")
    link = tmp_path / "link-client"
    link.symlink_to(real)
    # excluded by the link, sessions recorded under the real path
    config.set_value("exclude", [str(link)])
    _walrus(claude_projects, real)
    assert index_all().skipped["excluded"] == 2
    assert ledger.hook_refusal(str(real), "s1", "where is the walrus billing host?") == "excluded"
    # excluded by the real path, sessions recorded under the link
    config.set_value("exclude", [str(real)])
    _walrus(claude_projects, real, cwd=link / "src")
    assert index_all().skipped["excluded"] == 2
    assert ledger.hook_refusal(str(link), "s1", "where is the walrus billing host?") == "excluded"
    assert texts("walrus billing") == []


def test_an_excluded_repository_keeps_its_removed_worktree_out(tmp_path, claude_projects):
    repo = make_project(tmp_path, "client-acme")
    wt = make_worktree(repo, tmp_path / "acme-feature")
    out = run_cli("exclude", "add", str(repo))
    assert out.returncode == 0, out.stderr
    import shutil

    shutil.rmtree(wt)  # `git worktree remove`
    (repo / ".git" / "worktrees" / "acme-feature").joinpath("gitdir").unlink()
    (tmp_path / "acme-feature").mkdir()  # (or left empty by hand)
    _walrus(claude_projects, repo, cwd=wt)
    index_all()
    assert texts("walrus billing") == []
    assert ledger.hook_refusal(str(wt), "s1", "where is the walrus billing host?") == "excluded"


def test_exclusions_ignore_case_on_a_case_insensitive_filesystem(monkeypatch):
    import indexer.project

    monkeypatch.setattr(indexer.project, "case_insensitive", lambda path: True)
    pattern = "/Users/dev/Code/Client-Acme"
    assert ledger.excluded_by("/Users/dev/code/client-acme", "/Users/dev/code/client-acme/src", [pattern])
    assert ledger.excluded_by("/Users/dev/CODE/other", "/Users/dev/code/CLIENT-ACME/x", ["/Users/dev/code/client-*"])
    monkeypatch.setattr(indexer.project, "case_insensitive", lambda path: False)
    assert ledger.excluded_by("/Users/dev/code/client-acme", "/Users/dev/code/client-acme/src", [pattern]) is None


# item 8 ----------------------------------------------------------------------------------------
def test_a_forgotten_project_stays_forgotten_when_its_worktree_is_removed(tmp_path, claude_projects, monkeypatch):
    from recall.cli.command_utils import run_forget

    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    repo = make_project(tmp_path, "shop")
    wt = make_worktree(repo, tmp_path / "shop-feature")
    _walrus(claude_projects, repo, cwd=wt)
    index_all()
    assert texts("walrus billing")
    run_forget({"project": str(repo)})
    assert texts("walrus billing") == []
    import shutil

    shutil.rmtree(wt)
    canonical_project.cache_clear()  # (as a new process finds it)
    index_all(rebuild=True)  # re-reads the transcripts Claude Code still keeps
    assert texts("walrus billing") == []


def test_a_forgotten_project_stays_forgotten_after_a_git_init_above_it(tmp_path, claude_projects, monkeypatch):
    from recall.cli.command_utils import run_forget

    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    parent = tmp_path / "work"
    proj = make_project(parent, "notes", git=False)
    _walrus(claude_projects, proj, cwd=proj / "drafts")
    index_all()
    assert canonical_project(str(proj / "drafts")) == str(proj / "drafts")
    run_forget({"project": str(proj / "drafts")})
    (parent / ".git").mkdir()  # `git init` in the parent folder
    canonical_project.cache_clear()
    assert canonical_project(str(proj / "drafts")) == str(parent.resolve())
    index_all(rebuild=True)
    assert texts("walrus billing") == []


# item 11 ---------------------------------------------------------------------------------------
def test_a_git_file_cannot_attribute_a_folder_to_someone_elses_repository(tmp_path):
    victim = make_project(tmp_path, "victim")
    make_worktree(victim, tmp_path / "victim-wt", "feature")
    evil = tmp_path / "downloads" / "evil"
    evil.mkdir(parents=True)
    # pointing at the victim's real worktree admin folder (which points back elsewhere)
    (evil / ".git").write_text(f"gitdir: {victim}/.git/worktrees/feature\n")
    assert canonical_project(str(evil)) == str(evil)
    # a forged admin folder of its own, claiming the victim as its repository
    forged = evil / "admin"
    forged.mkdir()
    (forged / "commondir").write_text(f"{victim}/.git\n")
    (forged / "gitdir").write_text(f"{evil}/.git\n")
    (evil / ".git").write_text(f"gitdir: {forged}\n")
    canonical_project.cache_clear()
    assert canonical_project(str(evil / "src")) == str(evil)
    # the real worktree still belongs to the victim
    assert canonical_project(str(tmp_path / "victim-wt")) == str(victim)


# item 12 ---------------------------------------------------------------------------------------
def test_summary_lines_are_judged_by_their_session_for_exclusions(tmp_path, claude_projects):
    client = make_project(tmp_path, "client-acme")  # a dash: the folder name decodes to another path
    config.set_value("exclude", [str(client)])
    s = Session(cwd=str(client))
    s.summary("Walrus billing host migration for the acme client")
    s.user("where is the walrus billing host configured")
    s.write(claude_projects)
    alone = Session(cwd=str(client))
    alone.summary("Walrus invoices rework for the acme client")  # a file of nothing else
    alone.write(claude_projects)
    index_all()
    assert texts("walrus") == []
    assert not any(Archive(paths.archive_dir()).replay())


def test_summary_lines_are_judged_by_their_session_for_a_pause(tmp_path, claude_projects):
    now = time.time()
    ledger.pause(None, now=now - 600)
    project = make_project(tmp_path, "shop")
    s = Session(cwd=str(project), start=datetime.fromtimestamp(now - 300, tz=timezone.utc))
    s.summary("Walrus billing host migration")
    s.user("where is the walrus billing host configured")
    s.write(claude_projects)
    alone = Session(cwd=str(project))
    alone.summary("Walrus invoices rework")  # written now, during the pause
    alone.write(claude_projects)
    index_all()
    ledger.resume()
    assert texts("walrus") == []


# Low: an exclusion is in force before the archive is counted -----------------------------------
def test_exclude_add_saves_the_exclusion_before_it_counts_the_archive(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import recall.cli.commands.exclude as exclude
    from recall.cli.app import app

    project = make_project(tmp_path, "client")
    seen = []

    def counting(pattern):
        seen.append(list(ledger.exclusions()))
        return {}

    monkeypatch.setattr(exclude, "matching_projects", counting)
    result = CliRunner().invoke(app, ["exclude", "add", str(project)])
    assert result.exit_code == 0, result.output
    assert seen == [[str(project)]]


def test_the_running_service_answers_the_hook_through_the_same_gate(serve, tmp_path, claude_projects, scope_all):
    import subprocess
    import sys

    from tests.support.wait import wait_for

    client = make_project(tmp_path, "client-acme")
    here = make_project(tmp_path, "mine")
    _walrus(claude_projects, client)
    svc = serve().ready()
    wait_for(lambda: texts("walrus billing"), what="the walrus session indexed")

    def hook() -> str:
        out = subprocess.run(
            [sys.executable, "-m", "recall.entry", "hook", "user-prompt-submit"],
            text=True,
            capture_output=True,
            timeout=120,
            input=json.dumps(
                {"prompt": "where is the walrus billing host configured?", "cwd": str(here), "session_id": "now"}
            ),
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "walrus" in hook()
    config.set_value("exclude", [str(client)])
    assert "walrus" not in hook()
    log = [json.loads(line) for line in (paths.recall_home() / "injections.jsonl").read_text().splitlines()]
    assert log[-1]["via"] == "service", log[-1]
    assert svc.terminate() == 0


def test_a_summary_line_appended_during_a_pause_is_not_captured(tmp_path, claude_projects):
    """Issue 35 (still open from issue 28): the session's other lines came before the pause, so
    its summary line, written during it, was judged by their time and captured."""
    now = time.time()
    project = make_project(tmp_path, "shop")
    s = Session(cwd=str(project), start=datetime.fromtimestamp(now - 3600, tz=timezone.utc))
    s.user("where is the heron billing host configured")
    s.assistant("the heron billing host lives in deploy/billing.yaml")
    s.write(claude_projects)
    index_all()
    ledger.pause(None, now=now - 60)
    n = len(s.lines)
    s.summary("Walrus invoices rework, said while paused")
    s.append(claude_projects, n)
    index_all()
    ledger.resume()
    index_all()
    assert texts("walrus") == [] and len(texts("heron")) >= 1
