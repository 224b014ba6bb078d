"""Where recall keeps its state, and how it writes it.

One environment variable, ``RECALL_HOME``, relocates everything: the index, offsets,
the archive, logs, the config file and the service's socket. The default is
``$XDG_DATA_HOME/recall`` (``~/.local/share/recall``). Directories are created 0700
and files written atomically (tmp + rename) with 0600 permissions.
"""

from __future__ import annotations

import os
from pathlib import Path


def recall_home() -> Path:
    env = os.environ.get("RECALL_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "recall"


def ensure_dir(path: Path) -> Path:
    """``path`` as a directory: created 0700 when missing. An existing one is tightened to 0700
    only inside ``$RECALL_HOME`` (recall's own): recall never changes the mode of a folder it
    did not create (``$HOME``, a project, ``~/.claude``)."""
    try:
        path.mkdir(parents=True, mode=0o700)
        created = True
    except FileExistsError:
        created = False
    if created or _inside_recall_home(path):
        try:
            os.chmod(path, 0o700)
        except OSError:
            pass
    return path


def _inside_recall_home(path: Path) -> bool:
    home = os.path.abspath(recall_home())
    here = os.path.abspath(path)
    return here == home or here.startswith(home.rstrip(os.sep) + os.sep)


def home_dir() -> Path:
    return ensure_dir(recall_home())


def index_dir() -> Path:
    return recall_home() / "index"


def state_db_path() -> Path:
    return recall_home() / "state.db"


def archive_dir() -> Path:
    return recall_home() / "archive"


def log_dir() -> Path:
    return recall_home() / "logs"


def config_path() -> Path:
    return recall_home() / "config.json"


def socket_path() -> Path:
    return recall_home() / "service.sock"


def service_status_path() -> Path:
    """``service.json``: the running service's status (pid, counts, backfill progress)."""
    return recall_home() / "service.json"


def claude_config_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def transcript_roots(extra: list[Path] | tuple[Path, ...] = ()) -> list[Path]:
    """Claude Code's transcript root plus any extra ``--source`` directories, de-duplicated."""
    roots = [claude_config_dir() / "projects", *(Path(p).expanduser() for p in extra)]
    seen: set[str] = set()
    out: list[Path] = []
    for root in roots:
        key = os.path.abspath(root)
        if key not in seen:
            seen.add(key)
            out.append(Path(key))
    return out


def atomic_write(path: Path, data: bytes | str, mode: int = 0o600, private_dir: bool = True) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never half of one.

    ``private_dir`` creates a missing directory 0700 (right for recall's state; an existing
    one keeps its mode unless it is inside ``$RECALL_HOME``); pass False to write into a
    directory that is not ours (a project root): a missing one is created with the usual
    mode (the umask's), an existing one is left alone.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if private_dir:
        ensure_dir(path.parent)
    import tempfile  # lazily: the prompt hook imports this module and rarely writes

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class file_lock:
    """``with file_lock(path, timeout, busy):`` holds an exclusive ``flock`` on ``path`` (made
    0600 if missing), waiting up to ``timeout`` seconds for another process to let go; raises
    ``busy()`` when it does not. (A class, not a generator: this module stays import-light.)"""

    def __init__(self, path: Path, timeout: float, busy) -> None:
        self.path, self.timeout, self.busy = path, timeout, busy
        self.fd: int | None = None

    def __enter__(self) -> "file_lock":
        import errno
        import fcntl
        import time

        ensure_dir(self.path.parent)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) or time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = None
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise
                    raise self.busy() from None
                time.sleep(0.02)

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None
