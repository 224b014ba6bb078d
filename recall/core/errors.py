"""The few error classes recall raises. Each carries a one-line message that says what to do
next; the edges (CLI, hooks, MCP tools) translate them to user output once."""

from __future__ import annotations


class RecallError(Exception):
    """Base class: ``str(err)`` is a complete user-facing sentence naming the next step."""

    exit_code = 1


class UsageError(RecallError):
    """The user asked for something malformed (a bad --since, an unknown project...)."""

    exit_code = 2


class IndexMissing(RecallError):
    def __init__(self, path) -> None:
        super().__init__(f"No index at {path} yet: run `recall index` to build it.")


class IndexBusy(RecallError):
    def __init__(self, holder: str = "") -> None:
        who = f" ({holder})" if holder else ""
        super().__init__(
            f"The index is being written by another recall process{who}: "
            "wait for it to finish, or stop it with `recall service stop`."
        )


def report(exc: BaseException) -> int:
    """Print one line on stderr for an error that reached a command-line edge (never a
    traceback: unexpected ones go to the log file) and return the exit code."""
    import sys

    if isinstance(exc, RecallError):
        message, code = f"recall: {exc}", exc.exit_code
    elif isinstance(exc, KeyboardInterrupt):
        message, code = "recall: interrupted; nothing was lost (indexing resumes where it stopped).", 130
    elif isinstance(exc, BrokenPipeError):
        return 0
    else:
        from recall.core import log

        log.get("cli").exception("unexpected error")
        message, code = (
            (f"recall: unexpected error ({type(exc).__name__}: {exc}); details in {log.log_file()}. Please report it."),
            1,
        )
    print(message, file=sys.stderr)
    return code


class StorageError(RecallError):
    """Writing recall's own state (index, archive, offsets) failed: a full disk, a read-only
    or vanished filesystem. Nothing read since the last successful commit is marked done, so
    it is read again once the cause is fixed."""


_FULL = ("no space left on device", "storagefull", "disk quota exceeded", "database or disk is full")


def is_disk_full(exc: BaseException) -> bool:
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return any(marker in text for marker in _FULL)


def mount_point(path) -> str:
    """The mount point of the filesystem holding ``path`` (its nearest existing parent)."""
    import os

    p = os.path.abspath(os.fspath(path))
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    while not os.path.ismount(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def nearly_full(path) -> bool:
    """Whether the filesystem holding ``path`` has (almost) no room left: under 8 MB or 0.5%
    free. Some failed writes do not say ENOSPC (Tantivy's writer thread dies with "an index
    writer was killed"): the free space tells the cause then."""
    import os

    try:
        st = os.statvfs(mount_point(path))
    except OSError:
        return False
    free, total = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
    return total > 0 and free < max(8 << 20, total // 200)


def storage_error(exc: BaseException, path, what: str = "the index") -> StorageError:
    """The one-line StorageError for a failed write of ``what`` under ``path``, naming the
    real cause: a full filesystem (by its mount point and free space) or the OS error."""
    import os

    if is_disk_full(exc) or nearly_full(path):
        mount = mount_point(path)
        try:
            st = os.statvfs(mount)
            free = f", {st.f_bavail * st.f_frsize // 1024} KB free"
        except OSError:
            free = ""
        return StorageError(
            f"Cannot write {what}: the filesystem at {mount} is full (holding {path}{free}). Free some "
            "space there; nothing is lost: what was not saved is read again once space returns "
            "(the service retries by itself, or run `recall index`)."
        )
    if not os.path.exists(path):
        return StorageError(
            f"Cannot write {what} at {path}: it was deleted. Nothing is lost: recall rebuilds it from the "
            "archive and reads again what was not saved (the service by itself, or run `recall index`)."
        )
    detail = getattr(exc, "strerror", None) or (str(exc).splitlines() or [type(exc).__name__])[0][:200]
    return StorageError(
        f"Cannot write {what} at {path} ({detail}): check that the filesystem is mounted and writable; "
        "nothing is lost: what was not saved is read again (the service retries by itself, or run "
        "`recall index`)."
    )
