"""The service's pass over Claude Code's memory files (``Service.sync_native``, issue 44 item 4):
it re-indexes a file only when its notes changed, and a pass that changed nothing logs
nothing. The service logged "Claude Code memory files: 1 re-indexed, 0 removed" every 30 s
for the CLAUDE.md whose briefing block recall itself rewrites."""

from __future__ import annotations

import json
import logging
import os

import pytest

from recall.cli.app import run
from tests.support.factory import Session, encode_cwd

USER_NOTE = "The frontend is served by caddy on port 8443."


@pytest.fixture
def project(tmp_path, claude_projects):
    p = tmp_path / "work" / "shop"
    p.mkdir(parents=True)
    s = Session(cwd=str(p))
    s.user("set up the release pipeline for the shop")
    s.assistant("Done: the pipeline builds and tests on every push.")
    s.write(claude_projects)
    (p / "CLAUDE.md").write_text(f"# Shop\n{USER_NOTE}\n")
    mem = claude_projects / encode_cwd(str(p)) / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("- The cache warms up from the nightly snapshot.\n")
    return p


@pytest.fixture
def service(project):
    from recall.service.daemon import Service

    svc = Service(log=logging.getLogger("recall.service.test-native"))
    svc.ix = svc._open_indexer()
    try:
        svc.backfill(svc.roots)
        yield svc
    finally:
        svc.ix.close()


def _hits(capsys, query: str) -> list[dict]:
    assert run(["--json", query]) == 0
    return json.loads(capsys.readouterr().out)["hits"]


def _later(path) -> None:
    """A write a second later (the same tick would not move the mtime)."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "recall.service.test-native"]


def test_a_second_pass_does_nothing_and_logs_nothing(service, caplog):
    caplog.set_level(logging.INFO, logger="recall.service.test-native")
    service.sync_native()  # whatever the backfill left
    caplog.clear()
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    assert _lines(caplog) == []


def test_recalls_own_briefing_block_and_a_touch_re_index_nothing(service, project, caplog, capsys):
    from recall.memory import briefing, store

    service.sync_native()
    caplog.set_level(logging.INFO, logger="recall.service.test-native")
    caplog.clear()
    with store.transaction(str(project)) as state:
        store.add_memory(state, "gotcha", "Redis loses queued jobs on restart: use SQLite in WAL mode.")
    assert briefing.write_briefing(str(project)) == project / "CLAUDE.md"  # recall rewrites its block
    assert briefing.START in (project / "CLAUDE.md").read_text()
    _later(project / "CLAUDE.md")
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    os.utime(project / "CLAUDE.md")  # touched: same notes
    _later(project / "CLAUDE.md")
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    assert _lines(caplog) == []
    assert _hits(capsys, "caddy port 8443")  # the user's note is still found

    text = (project / "CLAUDE.md").read_text().replace(USER_NOTE, "The frontend is served by nginx on port 9443.")
    (project / "CLAUDE.md").write_text(text)  # the user's own part changed: re-indexed, said once
    _later(project / "CLAUDE.md")
    assert service.sync_native() == {"indexed": 1, "removed": 0, "notes": 1}
    assert _lines(caplog) == ["Claude Code memory files: 1 file re-indexed"]
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    assert _lines(caplog) == ["Claude Code memory files: 1 file re-indexed"]
    assert "nginx" in _hits(capsys, "nginx port 9443")[0]["text"]
    assert not any("caddy" in h["text"] for h in _hits(capsys, "caddy port 8443"))


def test_a_deleted_file_is_said_once(service, project, claude_projects, caplog):
    service.sync_native()
    caplog.set_level(logging.INFO, logger="recall.service.test-native")
    caplog.clear()
    (claude_projects / encode_cwd(str(project)) / "memory" / "MEMORY.md").unlink()
    assert service.sync_native() == {"indexed": 0, "removed": 1, "notes": 0}
    assert service.sync_native() == {"indexed": 0, "removed": 0, "notes": 0}
    assert _lines(caplog) == ["Claude Code memory files: 1 file removed"]
