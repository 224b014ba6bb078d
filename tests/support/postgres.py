"""A real, throwaway PostgreSQL for the team tests and benchmarks.

``PgServer`` runs Debian's (or any) ``initdb`` and ``pg_ctl`` in a temporary folder, listening
only on a unix socket there, with password (SCRAM) authentication. ``initdb`` refuses to
run as root: as root (CI) the server runs as the ``postgres`` user the Debian package
creates (through ``runuser``), or as a system user made for it; otherwise as whoever runs
the suite.

``require_postgres()`` is what a test calls: the binaries, or a skip that says why. In CI
(``RECALL_REQUIRE_POSTGRES=1``, set by ``.ci/run``, which installs the package) a missing
server is a failure instead.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ADMIN = "recall_admin"
ADMIN_PASSWORD = "admin-pw-not-a-secret"
CI_VAR = "RECALL_REQUIRE_POSTGRES"
FALLBACK_USER = "recall-pgtest"


def bindir() -> str | None:
    """Where initdb and pg_ctl are: PATH, ``pg_config --bindir``, or /usr/lib/postgresql/*/bin."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(initdb))
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            candidates.append(
                subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10).stdout.strip()
            )
        except (OSError, subprocess.SubprocessError):
            pass

    def version(path: str) -> float:
        try:
            return float(Path(path).parent.name)
        except ValueError:
            return 0.0

    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
    for d in candidates:
        if d and os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            return d
    return None


#: Where system tools live when the PATH leaves them out (a PATH without /usr/sbin is common).
SYSTEM_DIRS = ("/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/local/bin")


def system_tool(name: str) -> str:
    """The absolute path of a system tool (``runuser``, ``useradd``): PATH first, then the usual
    system folders; a clear failure naming what is missing when it is nowhere."""
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SYSTEM_DIRS))
    if found:
        return found
    message = (
        f"the team tests run PostgreSQL as a system user when run as root and need `{name}`, which is "
        f"neither on PATH nor in {', '.join(SYSTEM_DIRS)}: install it (Debian: util-linux, passwd) "
        "or run the suite as a regular user"
    )
    if os.environ.get(CI_VAR) == "1":
        pytest.fail(message)
    pytest.skip(message)


def require_postgres() -> str:
    d = bindir()
    if d is not None:
        return d
    if os.environ.get(CI_VAR) == "1":
        pytest.fail(
            f"{CI_VAR}=1 but no PostgreSQL server binaries (initdb, pg_ctl) were found: "
            ".ci/run installs Debian's postgresql package (apt-get install -y postgresql)."
        )
    pytest.skip(
        "no PostgreSQL server binaries (initdb, pg_ctl): `apt-get install postgresql` to run the team "
        f"tests ({CI_VAR}=1 makes this a failure, as in CI)"
    )


def _server_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", FALLBACK_USER):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(
        [system_tool("useradd"), "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", FALLBACK_USER],
        check=True,
        capture_output=True,
    )
    return FALLBACK_USER


class PgServer:
    """One PostgreSQL cluster in a temporary folder; ``url(role, db)`` connects to it."""

    def __init__(self, bin_dir: str | None = None) -> None:
        self.bin = bin_dir or require_postgres()
        self.user = _server_user()
        self._runuser = system_tool("runuser") if self.user is not None else ""
        self.dir = Path(tempfile.mkdtemp(prefix="recall-pg-", dir="/tmp"))  # short: a socket path is <108 bytes
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = 5432
        os.chmod(self.dir, 0o755)
        if self.user is not None:
            shutil.chown(self.dir, self.user, self.user)
        pwfile = self.dir / "pw"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        if self.user is not None:
            shutil.chown(pwfile, self.user, self.user)
        self._run(
            [
                os.path.join(self.bin, "initdb"),
                "-D",
                str(self.data),
                "-U",
                ADMIN,
                f"--pwfile={pwfile}",
                "--auth-local=scram-sha-256",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ]
        )
        pwfile.unlink()
        self.start()

    # running things as the server's user --------------------------------------------------------
    def _cmd(self, argv: list[str]) -> list[str]:
        return argv if self.user is None else [self._runuser, "-u", self.user, "--", *argv]

    def _run(self, argv: list[str], timeout: float = 120.0) -> str:
        proc = subprocess.run(self._cmd(argv), capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv[:2])} failed ({proc.returncode}): {proc.stderr[-2000:]}\n{self.server_log()[-2000:]}"
            )
        return proc.stdout

    def server_log(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def start(self) -> None:
        opts = (
            f"-k {self.dir} -c listen_addresses='' -p {self.port} -c fsync=off -c full_page_writes=off "
            "-c max_connections=60 -c shared_buffers=32MB"
        )
        self._run(
            [
                os.path.join(self.bin, "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                opts,
                "-l",
                str(self.log),
                "-w",
                "-t",
                "60",
                "start",
            ]
        )

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                self._cmd([os.path.join(self.bin, "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
                timeout=60,
            )

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill9(self) -> None:
        """``kill -9`` the server: the postmaster and every backend of it, at once."""
        pid = self.postmaster_pid()
        if pid is None:
            return
        # Stopped first, the postmaster forks nothing more (a backend for a new connection, an
        # autovacuum worker) between the listing of its children and the kill: a child that
        # outlived it would keep the old shared memory attached, and the next start would refuse
        # ("pre-existing shared memory block is still in use") -- on a loaded machine, now and then.
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            return
        victims = [pid] + _children(pid)
        for p in victims[1:]:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in victims):
            time.sleep(0.05)
        # and whatever of this cluster still runs (a process works in the data folder): gone too
        while time.monotonic() < deadline:
            strays = self.processes()
            if not strays:
                break
            for p in strays:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        # A container's pid 1 may never reap the dead postmaster: its zombie keeps the pid
        # "running" for postgres's own check. What an init system would do: the stale lock goes.
        if not _alive(pid):
            for stale in (self.data / "postmaster.pid", self.dir / f".s.PGSQL.{self.port}.lock"):
                try:
                    stale.unlink()
                except FileNotFoundError:
                    pass

    def processes(self) -> list[int]:
        """Live processes of this cluster: every postgres process works in its data folder."""
        out = []
        data = os.path.realpath(self.data)
        for entry in glob.glob("/proc/[0-9]*/cwd"):
            try:
                if os.readlink(entry) == data:
                    pid = int(entry.split("/")[2])
                    if _alive(pid):
                        out.append(pid)
            except (OSError, ValueError):
                continue
        return out

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    # connecting -----------------------------------------------------------------------------------
    def url(self, role: str = ADMIN, db: str = "postgres") -> str:
        return f"postgresql://{role}@/{db}?host={self.dir}&port={self.port}"

    def admin(self, db: str = "postgres"):
        import psycopg

        return psycopg.connect(self.url(ADMIN, db), password=ADMIN_PASSWORD, autocommit=True)

    def create_database(self, name: str) -> str:
        with self.admin() as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return name

    def create_role(self, name: str, password: str) -> None:
        from psycopg import sql

        with self.admin() as c:
            c.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name), sql.Literal(password)))

    def pgpass_line(self, role: str, password: str) -> str:
        return f"*:*:*:{role}:{password}\n"


def _children(pid: int) -> list[int]:
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat, "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(stat.split("/")[2]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False
