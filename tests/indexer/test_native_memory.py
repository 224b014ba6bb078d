"""Claude Code's own memory (indexer/native_memory.py): the auto-memory MEMORY.md and topic
files and the user's CLAUDE.md files are indexed as documents of their project, re-indexed
when they change, removed when deleted; the typed-memory briefing does not repeat them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import native_memory as nm
from indexer.ingest import index_all
from recall.cli.app import run
from tests.support.factory import Session, encode_cwd

NOTE = "We deploy with make ship, never with kubectl apply by hand."


@pytest.fixture
def project(tmp_path, claude_projects):
    p = tmp_path / "work" / "shop"
    p.mkdir(parents=True)
    s = Session(cwd=str(p))
    s.user("set up the release pipeline for the shop")
    s.assistant("Done: the pipeline builds and tests on every push.")
    s.write(claude_projects)
    return p


def memory_dir(claude_projects, project):
    d = claude_projects / encode_cwd(str(project)) / "memory"
    d.mkdir(parents=True, exist_ok=True)
    return d


def raw(capsys, *query, project=None):
    args = ["--json", *query] + (["--project", str(project)] if project else [])
    assert run(args) == 0
    return json.loads(capsys.readouterr().out)["hits"]


def recall_raw(query: str) -> str:
    """`recall --raw --limit 5 QUERY` as a user types it (the console script, fast path)."""
    exe = Path(sys.executable).with_name("recall")
    proc = subprocess.run(
        [str(exe), "--raw", "--limit", "5", query],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RECALL_NO_SERVICE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def bump(path):
    """A second write within the same mtime tick must still count as a change."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_a_memory_md_note_is_found_and_leaves_when_deleted(project, claude_projects, capsys):
    mem = memory_dir(claude_projects, project)
    (mem / "MEMORY.md").write_text(f"# Project notes\n\n- {NOTE}\n- The staging database resets nightly.\n")
    index_all()
    hits = raw(capsys, "how do we deploy, make ship?", project=project)
    assert hits and hits[0]["kind"] == "memory" and "make ship" in hits[0]["text"]
    assert hits[0]["project"] == str(project)
    assert hits[0]["text"].startswith("Claude Code memory MEMORY.md: Project notes:")
    assert "never with kubectl apply by hand" in recall_raw("make ship")

    (mem / "MEMORY.md").write_text("# Project notes\n\n- The staging database resets nightly.\n")
    bump(mem / "MEMORY.md")
    index_all()
    assert not any("make ship" in h["text"] for h in raw(capsys, "make ship deploy"))
    assert "kubectl apply by hand" not in recall_raw("make ship")
    assert raw(capsys, "staging database resets nightly")

    (mem / "MEMORY.md").unlink()
    index_all()
    assert raw(capsys, "staging database resets nightly") == []
    assert json.loads(nm.registry_path().read_text())["files"] == {}


def test_topic_files_and_claude_md_are_indexed_without_recalls_own_block(project, claude_projects, capsys):
    mem = memory_dir(claude_projects, project)
    (mem / "MEMORY.md").write_text("- See billing.md for the invoice rules.\n")
    (mem / "billing.md").write_text("# Invoices\nRefunds over 500 euros need a second approval.\n")
    (project / "CLAUDE.md").write_text(
        "# Shop\nThe frontend is served by caddy on port 8443.\n\n"
        "<!-- MEMORY:START -->\n## Project memory (recall)\n- zebrafish deduplicated memory\n<!-- MEMORY:END -->\n"
    )
    index_all()
    assert "second approval" in raw(capsys, "refunds second approval")[0]["text"]
    caddy = raw(capsys, "caddy port 8443")
    assert caddy and caddy[0]["text"].startswith("CLAUDE.md: Shop:")
    assert raw(capsys, "zebrafish") == []  # recall's own block is not indexed from CLAUDE.md
    stats = index_all()
    assert not stats.errors


def test_the_memory_folder_belongs_to_the_project_its_transcripts_name(tmp_path, claude_projects, capsys):
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    sub = work / "services" / "api"
    sub.mkdir(parents=True)
    s = Session(cwd=str(sub))
    s.user("hello from a subfolder of the repository")
    s.write(claude_projects)
    mem = claude_projects / encode_cwd(str(sub)) / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("- The API gateway rate limit is 300 requests per minute.\n")
    index_all()
    hits = raw(capsys, "gateway rate limit")
    assert hits and hits[0]["project"] == str(work)  # the canonical project (the repository root)


def test_chunks_keep_headings_and_bullets():
    text = "---\nname: x\n---\n# A\n- one\n  continued\n- two\n\nplain paragraph\n# B\n1. first\n"
    assert nm.notes(text) == [("A", "one continued"), ("A", "two"), ("A", "plain paragraph"), ("B", "first")]
    assert nm.chunks(text) == ["A:\n- one continued\n- two\n- plain paragraph", "B:\n- first"]
    assert nm.without_briefing(f"keep\n{nm.BRIEFING_START}\nours\n{nm.BRIEFING_END}\nalso") == "keep\n\nalso"


def test_the_briefing_does_not_repeat_what_memory_md_says(project, claude_projects):
    from recall.memory import briefing, store

    with store.transaction(str(project)) as state:
        store.add_memory(state, "pattern", NOTE)
        store.add_memory(state, "gotcha", "Redis loses queued jobs on restart: use SQLite in WAL mode.")
    body = briefing.render_body(store.load(str(project)))
    assert "make ship" in body and "WAL mode" in body
    mem = memory_dir(claude_projects, project)
    (mem / "MEMORY.md").write_text(f"- {NOTE}\n")
    body = briefing.render_body(store.load(str(project)))
    assert "make ship" not in body and "WAL mode" in body
    # the user's part of CLAUDE.md counts too; recall's own block does not
    (mem / "MEMORY.md").unlink()
    (project / "CLAUDE.md").write_text("Redis loses queued jobs on restart: use SQLite in WAL mode.\n")
    body = briefing.render_body(store.load(str(project)))
    assert "WAL mode" not in body and "make ship" in body


def test_the_service_reindexes_a_memory_file_when_it_changes(project, claude_projects, capsys):
    from recall.service.daemon import Service

    mem = memory_dir(claude_projects, project)
    (mem / "MEMORY.md").write_text("- The cache warms up from the nightly snapshot.\n")
    svc = Service()
    svc.ix = svc._open_indexer()
    try:
        svc.backfill(svc.roots)
        assert raw(capsys, "nightly snapshot cache")
        (mem / "MEMORY.md").write_text(f"- {NOTE}\n")
        bump(mem / "MEMORY.md")
        svc.mark_native()
        assert svc.native_due is not None
        out = svc.sync_native()
        assert out == {"indexed": 1, "removed": 0, "notes": 1}
        assert raw(capsys, "nightly snapshot cache") == []
        assert "make ship" in raw(capsys, "make ship")[0]["text"]
    finally:
        svc.ix.close()
