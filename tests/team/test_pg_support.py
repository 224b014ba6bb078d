"""The throwaway PostgreSQL of the team tests (tests/support/postgres.py) works wherever the suite
runs (issue 36, item 9): with a PATH that lacks /usr/sbin (``runuser``, ``useradd`` are found by
absolute path, or a clear message names what is missing), and its ``kill -9`` leaves nothing of
the cluster running, so the next start never finds the old shared memory still in use."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support import postgres
from tests.support.postgres import PgServer, require_postgres

pytestmark = pytest.mark.slow


def test_the_server_starts_and_restarts_with_a_path_without_sbin(monkeypatch):
    bindir = require_postgres()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    pg = PgServer(bindir)
    try:
        with pg.admin() as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        pg.kill9()
        pg.start()
        with pg.admin() as c:
            assert c.execute("SELECT 2").fetchone() == (2,)
    finally:
        pg.close()


def test_a_missing_system_tool_is_named_with_the_next_step(monkeypatch, tmp_path):
    monkeypatch.setattr(postgres, "SYSTEM_DIRS", (str(tmp_path),))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(postgres.CI_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match="need `runuser`, which is neither on PATH nor in"):
        postgres.system_tool("runuser")
    monkeypatch.setenv(postgres.CI_VAR, "1")
    with pytest.raises(pytest.fail.Exception, match="install it"):
        postgres.system_tool("runuser")
    tool = tmp_path / "runuser"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert postgres.system_tool("runuser") == str(tool)


def test_kill9_leaves_no_process_of_the_cluster_even_when_a_client_connects_meanwhile(monkeypatch):
    """A client connecting between the listing of the server's processes and the kill (a loaded
    machine, a service reconnecting) must not leave a backend behind that holds the old shared
    memory: the restart right after would fail now and then."""
    pg = PgServer(require_postgres())
    try:
        real = postgres._children
        clients = []
        busy = threading.Event()

        def connect_and_work() -> None:
            # a busy backend does not look for its postmaster's death: as an orphan it runs on
            try:
                c = pg.admin()
                clients.append(c)
                busy.set()
                c.execute("SELECT count(*) FROM generate_series(1, 2000000000)")
            except Exception:  # noqa: BLE001 - the server is being killed: an error is fine
                pass

        def children_then_a_client(pid: int) -> list[int]:
            out = real(pid)
            threading.Thread(target=connect_and_work, daemon=True).start()
            if busy.wait(5):
                time.sleep(0.5)  # its query runs
            return out

        monkeypatch.setattr(postgres, "_children", children_then_a_client)
        pg.kill9()
        assert pg.processes() == []
        monkeypatch.setattr(postgres, "_children", real)
        pg.start()
        with pg.admin() as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        for c in clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass
    finally:
        pg.close()
