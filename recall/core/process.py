"""A long-lived process's plumbing, shared by the index writer (``indexer.ingest.Indexer``) and
the service (``recall.service.daemon``): glibc's heap (arenas capped, freed memory given back),
the pid locks (``writer.lock``, ``service.lock``), a thread's CPU and I/O priority, and the
resident set size. Standard library only; every call is best effort and a no-op where the
platform lacks it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

# memory ----------------------------------------------------------------------------------------
_libc = None


def _glibc():
    global _libc
    if _libc is None:
        _libc = False
        try:
            import ctypes

            lib = ctypes.CDLL(None)
            if hasattr(lib, "mallopt") and hasattr(lib, "malloc_trim"):
                _libc = lib
        except (OSError, AttributeError):
            pass
    return _libc


def limit_malloc_arenas(n: int = 2) -> None:
    """Cap glibc's malloc arenas (M_ARENA_MAX). Memory freed by Tantivy's indexing threads
    then goes back to arenas that ``trim_memory`` can return to the OS: measured on a 100K
    message backfill, peak RSS 257 MB -> ~140 MB. A no-op off glibc. Call before threads start."""
    lib = _glibc()
    if lib:
        lib.mallopt(-8, n)  # M_ARENA_MAX


def trim_memory() -> None:
    """Give freed heap memory back to the OS (glibc ``malloc_trim``; a no-op elsewhere)."""
    lib = _glibc()
    if lib:
        lib.malloc_trim(0)


def rss_mb() -> tuple[float, float, float | None]:
    """(current, peak, current anonymous) resident set size in MB. The peak (ru_maxrss)
    includes file-backed pages: Tantivy reads segments through mmap, so a merge of large
    segments maps hundreds of MB of page cache (reclaimable) into the process; the
    anonymous part is the memory the process itself holds."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
    cur_mb, anon_mb = peak_mb, None
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    cur_mb = int(line.split()[1]) / 1024
                elif line.startswith("RssAnon:"):
                    anon_mb = round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return round(cur_mb, 1), round(peak_mb, 1), anon_mb


# pid locks -------------------------------------------------------------------------------------
def hold_pid_lock(path: Path) -> tuple[int | None, str]:
    """Take an exclusive flock on ``path`` and write our pid into it (fixed width, so a
    reader never sees half of one). Returns ``(fd, "")``, or ``(None, holder_pid)`` when
    another process holds it. The kernel releases it on any exit, ``kill -9`` included."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = ""
        for _ in range(20):  # the holder writes its pid right after taking the lock
            try:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            except OSError:
                break
            if holder:
                break
            time.sleep(0.005)
        os.close(fd)
        return None, holder
    os.pwrite(fd, f"{os.getpid():>10}\n".encode(), 0)
    os.ftruncate(fd, 11)
    return fd, ""


def release_pid_lock(fd: int | None) -> None:
    """Give up a lock ``hold_pid_lock`` took (``None``: none held)."""
    if fd is None:
        return
    try:
        os.close(fd)  # closing the only descriptor releases the flock
    except OSError:
        pass


# priority --------------------------------------------------------------------------------------
_IOPRIO_WHO_PROCESS, _IOPRIO_CLASS_BE, _IOPRIO_CLASS_SHIFT = 1, 2, 13
_SYS_IOPRIO_SET = {"x86_64": 251, "aarch64": 30, "i686": 289, "armv7l": 314}


def set_io_priority(level: int) -> bool:
    """The calling thread's I/O priority, best-effort class level 0-7 (7 lowest, 4 the
    default); Linux only. Returns whether it was set."""
    import platform

    nr = _SYS_IOPRIO_SET.get(platform.machine())
    if not sys.platform.startswith("linux") or nr is None:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        value = (_IOPRIO_CLASS_BE << _IOPRIO_CLASS_SHIFT) | level
        return libc.syscall(nr, _IOPRIO_WHO_PROCESS, threading.get_native_id(), value) == 0
    except (OSError, AttributeError):
        return False


def lower_priority(nice: int) -> dict:
    """Lower the calling thread's CPU priority (nice + ``nice``) and I/O priority (best
    effort, lowest level); threads it starts afterwards (Tantivy's indexing threads) inherit
    both, threads started before keep theirs. Returns what was done."""
    done = {"nice": None, "io": False}
    if sys.platform.startswith("linux"):  # per thread on Linux; elsewhere nice is per process
        try:
            tid = threading.get_native_id()
            before = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, before + nice))
            done["nice"] = os.getpriority(os.PRIO_PROCESS, tid)
        except (OSError, AttributeError):
            pass
        done["io"] = set_io_priority(7)
    return done


def restore_priority() -> None:
    """Undo ``lower_priority`` for the calling thread where the OS lets an unprivileged
    process (raising priority back needs RLIMIT_NICE; I/O back to the default level)."""
    if not sys.platform.startswith("linux"):
        return
    set_io_priority(4)
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 0)
    except (OSError, AttributeError):
        pass
