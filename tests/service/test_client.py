"""The socket protocol: client.call against a real SocketServer (in-process), the version
handshake, error mapping, the fallback of run_search, and the client's import weight."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

from recall.core import service_client as client
from recall.core.errors import UsageError
from recall.service import registry as ops
from recall.service.socket_server import SocketServer
from tests.support.factory import Session


@pytest.fixture
def server():
    ops.load_modules()
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def echo_ops():
    added = {}

    def register(name, fn):
        ops.OPS[name] = fn
        added[name] = fn

    register("t.echo", lambda args: {"got": args})
    register("t.usage", lambda args: (_ for _ in ()).throw(UsageError("bad --since: use 3d")))
    register("t.boom", lambda args: 1 / 0)
    register("t.slow", lambda args: time.sleep(float(args.get("s", 1))) or "late")
    yield
    for name in added:
        ops.OPS.pop(name, None)


def raw_exchange(lines: list[bytes]) -> list[dict]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(client.address())
    out = []
    f = s.makefile("rb")
    for line in lines:
        s.sendall(line)
        out.append(json.loads(f.readline()))
    s.close()
    return out


def test_no_service_is_unavailable_fast():
    t0 = time.monotonic()
    with pytest.raises(client.Unavailable):
        client.call("search", {"text": "x"})
    assert client.ping() is None
    assert time.monotonic() - t0 < 1.5


def test_a_stale_socket_file_is_unavailable(tmp_path):
    addr = client.address()
    os.makedirs(os.path.dirname(addr), exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    s.close()  # bound, never listening: what a kill -9 leaves behind
    with pytest.raises(client.Unavailable):
        client.call("ping", {})


def test_round_trip_and_errors(server, echo_ops):
    assert client.call("t.echo", {"a": [1, "é"]}) == {"got": {"a": [1, "é"]}}
    with pytest.raises(client.RemoteError) as err:
        client.call("t.usage", {})
    assert str(err.value) == "bad --since: use 3d" and err.value.exit_code == 2
    with pytest.raises(client.Unavailable) as err:
        client.call("t.boom", {})
    assert not isinstance(err.value, client.RemoteError) and "ZeroDivisionError" in str(err.value)
    with pytest.raises(client.Unavailable):
        client.call("no.such.op", {})
    info = client.ping()
    assert info["pid"] == os.getpid() and info["protocol"] == client.PROTOCOL
    assert "search" in info["ops"]


def test_timeout_is_unavailable(server, echo_ops):
    with pytest.raises(client.Unavailable):
        client.call("t.slow", {"s": 1.0}, timeout=0.2)


def test_version_handshake(server, echo_ops):
    bad = json.dumps({"v": "0:0.0.0", "op": "t.echo", "args": {}}).encode() + b"\n"
    none = json.dumps({"op": "t.echo", "args": {}}).encode() + b"\n"
    good = client.request("t.echo", {"x": 1})
    r = raw_exchange([bad])[0]
    assert r["ok"] is False and r["code"] == "version" and r["server"] == client.PROTOCOL
    assert raw_exchange([none])[0]["code"] == "version"  # the first request must carry "v"
    # after a good handshake, later requests on the connection may omit "v"
    r1, r2 = raw_exchange([good, none])
    assert r1 == {"ok": True, "result": {"got": {"x": 1}}} and r2["ok"] is True
    assert raw_exchange([b"not json\n"])[0]["code"] == "bad_request"


def test_an_old_client_protocol_makes_call_fall_back(server, echo_ops, monkeypatch):
    # this process's server and client share client.PROTOCOL: send another one by hand
    monkeypatch.setattr(
        client,
        "request",
        lambda op, args=None: (json.dumps({"v": "999:9.9.9", "op": op, "args": args or {}}) + "\n").encode(),
    )
    with pytest.raises(client.Unavailable) as err:
        client.call("t.echo", {})
    assert "restart" in str(err.value)


def test_socket_is_private(server):
    st = os.stat(client.address())
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600


def test_a_long_home_uses_a_short_socket_path(tmp_path, monkeypatch, echo_ops):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("RECALL_HOME", str(deep))
    addr = client.address()
    assert len(addr) <= 100 and addr != str(deep / "service.sock")
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    try:
        assert client.call("t.echo", {"k": 1}) == {"got": {"k": 1}}
    finally:
        srv.stop()
    assert not os.path.exists(addr)


def test_disabled_in_the_service_and_by_env(server, echo_ops, monkeypatch):
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    with pytest.raises(client.Unavailable):
        client.call("t.echo", {})
    monkeypatch.delenv("RECALL_NO_SERVICE")
    monkeypatch.setattr(client, "LOCAL_ONLY", True)
    with pytest.raises(client.Unavailable):
        client.call("t.echo", {})


def test_a_broken_op_module_is_logged_not_fatal(monkeypatch, caplog):
    monkeypatch.setattr(ops, "OP_MODULES", [*ops.OP_MODULES, "recall.no_such_module_xyz"])
    failed = ops.load_modules(logging.getLogger("test"))
    assert failed == ["recall.no_such_module_xyz"]
    assert "search" in ops.OPS and "status" in ops.OPS and "memory_docs" in ops.OPS


def test_client_imports_only_the_standard_library():
    code = (
        "import sys; import recall.core.service_client; "
        "heavy = [m for m in ('tantivy', 'typer', 'rich', 'anthropic', 'mcp', 'watchdog', 'orjson', "
        "'recall.search.searcher', 'indexer') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# search through the socket ------------------------------------------------------------------------
def test_run_search_uses_the_service_then_falls_back(claude_projects, server, monkeypatch):
    from indexer.ingest import index_all
    from recall.search import run as api

    s = Session(cwd=str(claude_projects.parent / "app"))
    s.user("the okapi deployment failed on friday")
    s.assistant("the okapi container ran out of memory")
    s.write(claude_projects)
    index_all()
    calls = []
    real = client.call

    def spy(op, args=None, timeout=2.0):
        calls.append((op, args))
        return real(op, args, timeout)

    monkeypatch.setattr(client, "call", spy)
    via_service = api.run_search("okapi", limit=5, messages=True, since="3650d")
    assert calls and calls[0][0] == "search" and isinstance(calls[0][1]["since"], float)
    assert len(via_service) == 2 and via_service[0].kind == "message"
    with pytest.raises(UsageError):  # a bad option is reported where it was typed
        api.run_search("okapi", since="yesterday-ish")
    calls.clear()
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    local = api.run_search("okapi", limit=5, messages=True, since="3650d")
    assert [h.as_json() for h in local] == [h.as_json() for h in via_service]


def test_search_op_validates(server):
    with pytest.raises(client.RemoteError):
        client.call("search", {"limit": 3})
    with pytest.raises(client.RemoteError):
        client.call("search", {"text": "x", "project": "relative/path"})
    with pytest.raises(client.RemoteError):
        client.call("search", {"text": "x", "doctypes": ["nope"]})


# trust: nothing goes to a socket another user controls -------------------------------------------
ATTACKER = 4242


def _rogue_listener(addr: str, as_uid: int | None, chown_dir: str | None = None):
    """A process that listens on ``addr`` as another user and reports what it received
    (through a pipe). Returns (pid, read end)."""
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the attacker
        try:
            os.close(r)
            os.close(ready_r)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(addr)
            os.chmod(addr, 0o777)
            if as_uid is not None:
                os.setgid(as_uid)
                os.setuid(as_uid)
            s.listen(1)
            os.write(ready_w, b"1")
            s.settimeout(10)
            conn, _ = s.accept()
            conn.settimeout(2)
            try:
                data = conn.recv(1 << 16)
            except OSError:
                data = b""
            os.write(w, data or b"<nothing>")
        finally:
            os._exit(0)
    os.close(w)
    os.close(ready_w)
    os.read(ready_r, 1)
    os.close(ready_r)
    return pid, r


def _received(pid: int, r: int) -> bytes:
    os.waitpid(pid, 0)
    data = os.read(r, 1 << 16)
    os.close(r)
    return data


@pytest.fixture
def short_base(monkeypatch):
    import tempfile

    base = tempfile.mkdtemp(prefix="rs-", dir="/tmp")
    os.chmod(base, 0o755)
    monkeypatch.setattr(client, "_short_base", lambda: base)
    yield base
    subprocess.run(["rm", "-rf", base], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as a second user")
def test_a_short_socket_dir_made_by_another_user_is_refused(tmp_path, monkeypatch, short_base):
    """Issue 17 item 3: another user made /tmp/recall-<uid> first (mode 777) and listens in it."""
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / ("d" * 60) / ("e" * 60)))
    addr = client.address()
    hijacked = client.short_socket_dir()
    os.mkdir(hijacked)
    os.chmod(hijacked, 0o777)
    os.chown(hijacked, ATTACKER, ATTACKER)
    pid, r = _rogue_listener(addr, ATTACKER)
    with pytest.raises(client.Untrusted) as err:
        client.call("hook_context", {"prompt": "my secret prompt"}, timeout=2)
    assert f"belongs to uid {ATTACKER}" in str(err.value) and "shorter path" in str(err.value)
    socket.socket(socket.AF_UNIX).connect(addr)  # let the rogue accept and report
    assert _received(pid, r) == b"<nothing>"
    # and the service refuses to listen there instead of swallowing a failed chmod
    srv = SocketServer(logging.getLogger("test"))
    with pytest.raises(client.Untrusted):
        srv.start()


def test_a_short_socket_dir_of_ours_is_made_private(tmp_path, monkeypatch, short_base, echo_ops):
    monkeypatch.setenv("RECALL_HOME", str(tmp_path / ("d" * 60) / ("e" * 60)))
    os.mkdir(client.short_socket_dir(), 0o777)
    os.chmod(client.short_socket_dir(), 0o777)
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    try:
        assert stat.S_IMODE(os.stat(client.short_socket_dir()).st_mode) == 0o700
        assert client.call("t.echo", {"k": 2}) == {"got": {"k": 2}}
    finally:
        srv.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as a second user")
def test_the_client_checks_the_servers_uid_before_sending(tmp_path):
    """The socket file and its directory are ours, but the process listening runs as another
    user: SO_PEERCRED says so and nothing is sent."""
    addr = client.address()
    os.makedirs(os.path.dirname(addr), mode=0o700, exist_ok=True)
    pid, r = _rogue_listener(addr, ATTACKER)
    with pytest.raises(client.Untrusted) as err:
        client.call("hook_context", {"prompt": "my secret prompt", "_env": {"ANTHROPIC_API_KEY": "sk-x"}})
    assert f"runs as uid {ATTACKER}" in str(err.value)
    assert _received(pid, r) == b"<nothing>"


def test_a_socket_file_of_another_user_is_refused(tmp_path):
    addr = client.address()
    os.makedirs(os.path.dirname(addr), mode=0o700, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("needs root to chown")
    pid, r = _rogue_listener(addr, None)
    os.chown(addr, ATTACKER, ATTACKER)
    with pytest.raises(client.Untrusted) as err:
        client.call("t.echo", {})
    assert f"belongs to uid {ATTACKER}" in str(err.value)
    assert _received(pid, r) == b"<nothing>"
