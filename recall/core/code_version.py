"""Which installed code a process runs: a fingerprint that changes with every install,
upgrade, reinstall (``pip install .``, ``pip install -e .``, ``pipx upgrade``) or edit of an
editable install.

The service takes it at start and compares every few seconds (``recall.service.daemon``): when
the installed code changed under it (a reinstall removes the modules it has not imported yet,
and every later import fails), it restarts itself on the new code. ``recall doctor`` compares
the running service's fingerprint with the one of the code it would run itself.

The fingerprint covers the source files (``*.py``: path, size, mtime, inode: a reinstall writes new files) of the ``recall`` and
``indexer`` packages, from the folders this process loaded them from, and the installed
distribution's ``RECORD`` (a reinstall rewrites it). Stdlib only, a few milliseconds.
"""

from __future__ import annotations

import hashlib
import os

DIST = "recall-memory"
PACKAGES = ("recall", "indexer")


def package_dirs() -> list[str]:
    """The folders this process loaded recall's packages from."""
    import importlib

    out = []
    for name in PACKAGES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        out += [os.path.abspath(p) for p in getattr(mod, "__path__", [])]
    return out


def record_file() -> str | None:
    """The RECORD of the installed distribution (its ``.dist-info``), None when there is none
    (recall run from a source tree). An ``.egg-info`` beside the sources (left by an editable
    install, found when the working directory is the checkout) is not an install."""
    try:
        from importlib import metadata

        dists = list(metadata.distributions(name=DIST))
    except Exception:  # noqa: BLE001
        return None
    for dist in dists:
        path = getattr(dist, "_path", None)
        if path is None or not str(path).endswith(".dist-info"):
            continue
        record = os.path.abspath(os.path.join(str(path), "RECORD"))
        if os.path.isfile(record):
            return record
    return None


def fingerprint(dirs: list[str] | None = None, record: str | None = "") -> str:
    """A short hash of the code in ``dirs`` (default: this process's) and of ``record``."""
    dirs = package_dirs() if dirs is None else dirs
    record = record_file() if record == "" else record
    h = hashlib.sha1()
    for d in sorted(dirs):
        h.update(d.encode("utf-8", "surrogateescape") + b"\0")
        for root, subdirs, files in os.walk(d):
            subdirs[:] = sorted(s for s in subdirs if s != "__pycache__")
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode("utf-8", "surrogateescape"))
    if record:
        try:
            st = os.stat(record)
            h.update(f"RECORD\0{record}\0{st.st_size}\0{st.st_mtime_ns}".encode("utf-8", "surrogateescape"))
        except OSError:
            h.update(b"RECORD\0gone")
    return h.hexdigest()[:16]
