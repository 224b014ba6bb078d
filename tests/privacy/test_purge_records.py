"""Issue 46 item 6: `recall setup --uninstall --global --purge` without a terminal keeps the
records of what was forgotten, paused and excluded (and the key the forget rules need) unless
told in so many words (`--drop-records`); a new setup and its backfill then bring none of it
back, and the purge says exactly what it deleted and what it kept."""

from __future__ import annotations

import json
import stat

from indexer.archive import Archive
from indexer.forgetting import SECRET_MARK, Selection
from indexer.ingest import Indexer, index_all
from recall.core import config, paths
from recall.privacy.forget import forget_everywhere
from recall.search.searcher import Searcher
from tests.support.cli import cli
from tests.support.factory import Session
from tests.support.memory import make_project

SECRET = "hunter2-plum-ORCHID"


def texts(query: str) -> list[str]:
    return [h.text for h in Searcher().search(query, limit=50, messages=True)]


def forget(sel: Selection) -> dict:
    with Indexer() as ix:
        return forget_everywhere(ix, sel)


def _history(claude_projects, project, tmp_path):
    gone = Session(cwd=str(project))
    gone.user("the flamingo merger terms are confidential")
    gone.write(claude_projects)
    client = make_project(tmp_path / "work", "client-acme")
    excluded = Session(cwd=str(client))
    excluded.user("the acme llama contract terms")
    excluded.write(claude_projects)
    kept = Session(cwd=str(project))
    kept.user("how do I log in to the pelican admin")
    kept.assistant(f"use the door code {SECRET}; the pelican admin lives on the cormorant host")
    kept.user("and the kestrel deploy runs nightly")
    kept.write(claude_projects)
    index_all()
    assert texts("flamingo") and texts("llama") and texts("cormorant")
    forget(Selection(sessions=[gone.session_id]).check())
    forget(Selection(secret=SECRET).check())
    config.set_value("exclude", [str(client)])
    return client


def test_a_purge_without_a_terminal_keeps_the_records_and_a_new_setup_brings_nothing_back(
    claude_projects, project, tmp_path, capsys, no_service_manager
):
    _history(claude_projects, project, tmp_path)
    home = paths.recall_home()
    key = (home / "forget.key").read_bytes()
    # no terminal here: --yes confirms the purge, and says nothing of the records
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes")
    assert code == 0, err
    assert f"deleted your history, the index, the logs and the rest of the config in {home}" in out
    assert (
        f"kept in {home} only the records of forgets, 1 exclusion (archive/forgotten.json, forget.key, "
        "config.json (exclude only); no text of what they keep out), so a new `recall setup` does not bring it "
        "back: `recall setup --uninstall --global --purge --drop-records` drops them too" in out
    )
    assert f"deleted {home} (" not in out  # it did not delete the folder it kept the records in
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert left == ["archive/forgotten.json", "config.json", "forget.key"]
    assert (home / "forget.key").read_bytes() == key and stat.S_IMODE((home / "forget.key").stat().st_mode) == 0o600
    assert json.loads(paths.config_path().read_text()) == {"exclude": config.load()["exclude"]}

    code, out, err = cli(capsys, "setup", "--global", "--no-service")  # a new setup, its backfill here
    assert code == 0, err
    assert texts("flamingo") == [] and texts("llama") == []  # the forgotten session, the excluded project
    assert texts("orchid") == [] and texts("kestrel")
    archived = [m.text for batch in Archive(paths.archive_dir()).replay() for m in batch]
    assert not any("flamingo" in t or "llama" in t or SECRET in t for t in archived)
    assert f"use the door code {SECRET_MARK}; the pelican admin lives on the cormorant host" in archived


def test_only_drop_records_said_in_so_many_words_drops_them(
    claude_projects, project, tmp_path, capsys, no_service_manager
):
    _history(claude_projects, project, tmp_path)
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--drop-records")
    assert code == 2 and "so a new `recall setup` will index all of that again" in err
    assert "again with --yes" in err and paths.archive_dir().exists()
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes", "--drop-records")
    assert code == 0, err
    assert not paths.recall_home().exists()
    assert f"deleted {paths.recall_home()} (your history, the index, the config, the logs)" in out
    assert "dropped the records of forgets, 1 exclusion: a new `recall setup` indexes again" in out
    code, out, err = cli(capsys, "setup", "--global", "--no-service")
    assert code == 0, err
    assert texts("flamingo") and texts("llama")  # what the user chose to drop


def test_the_records_flags_say_what_goes_with_what(capsys):
    code, _, err = cli(capsys, "setup", "--uninstall", "--global", "--drop-records")
    assert code == 2
    assert (
        "--keep-records and --drop-records go with --purge: `recall setup --uninstall --global --purge "
        "--drop-records`." in err
    )
    code, _, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--keep-records", "--no-keep-records")
    assert code == 2 and "--keep-records and --no-keep-records exclude each other: pick one." in err


def test_the_purge_keeps_the_agents_turned_off_and_the_removed_worktrees_a_forget_needs(
    tmp_path, capsys, no_service_manager
):
    from indexer.archive import Tombstones

    Tombstones(paths.archive_dir() / "forgotten.json").add(project=str(tmp_path / "gone"))
    paths.atomic_write(
        paths.recall_home() / "worktrees.json", json.dumps({str(tmp_path / "wt"): str(tmp_path / "gone")})
    )
    config.set_value("sources", {"codex": False})
    config.set_value("search", {"limit": 7})
    (paths.recall_home() / "logs").mkdir(parents=True, exist_ok=True)
    (paths.recall_home() / "logs" / "recall.log").write_text("a log line\n")
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes")
    assert code == 0, err
    assert "only the records of forgets, the agents whose sessions are not read (codex) (" in out
    assert "worktrees.json" in out and "config.json (sources only)" in out
    home = paths.recall_home()
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert left == ["archive/forgotten.json", "config.json", "worktrees.json"]
    assert json.loads(paths.config_path().read_text()) == {"sources": {"codex": False}}
