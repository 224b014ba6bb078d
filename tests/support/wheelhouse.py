"""A folder of wheels for everything recall needs, made from what the test venv already has
installed: the plugin's end-to-end test builds the plugin's runtime with
``PIP_NO_INDEX=1 PIP_FIND_LINKS=<this folder>``, offline and fast.

``wheelhouse() -> Path`` repacks each installed distribution of the closure of recall's
requirements (and of its build backend, setuptools) into a wheel: the files its ``RECORD``
lists inside site-packages, its ``.dist-info`` (``WHEEL`` keeps the original tags), a fresh
``RECORD``; no compiled ``__pycache__``, no scripts (pip makes the console scripts from
``entry_points.txt``). Stored, not compressed: a few seconds for ~40 distributions.

The folder is cached under ``<test cache>/wheelhouse/<key>`` (``support_cache_dir()`` of
tests/support/claude.py: ``$RECALL_TEST_CACHE`` or the run's folder under pytest's basetemp), the key a hash of the distributions and versions, built once under a
file lock; a test session on another venv gets its own.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata as md
import io
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DIST = "recall-memory"
#: the build backend pyproject.toml's [build-system] asks for (pip builds recall in isolation)
BUILD_REQUIRES = ["setuptools>=70.1"]


def _closure() -> list[md.Distribution]:
    """Installed distributions recall (and its build) needs: its requirements, recursively, with
    their markers evaluated here (extras requested along the way included)."""
    env = default_environment()
    todo = [Requirement(r) for r in (md.distribution(DIST).requires or []) if "extra ==" not in r]
    todo += [Requirement(r) for r in BUILD_REQUIRES]
    seen: dict[str, md.Distribution] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            raise RuntimeError(
                f"{req} is not installed in {sys.prefix}: install the test dependencies (pip install -e '.[test]')"
            ) from None
        if dist.version not in req.specifier:
            raise RuntimeError(
                f"{req.name} {dist.version} is installed but {req} is needed: "
                "reinstall the test dependencies (pip install -e '.[test]')"
            )
        seen[name] = dist
        for raw in dist.requires or []:
            r = Requirement(raw)
            extras = req.extras or {""}
            if r.marker is None or any(r.marker.evaluate({**env, "extra": e}) for e in extras):
                todo.append(r)
    return sorted(seen.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def _tags(wheel_text: str) -> str:
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")]
    parts = [sorted({t.split("-")[i] for t in tags}) for i in range(3)]
    return "-".join(".".join(p) for p in parts)


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(dist: md.Distribution, dest: Path) -> Path:
    """One installed distribution as a wheel in ``dest``."""
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    wheel_text = dist.read_text("WHEEL")
    if not wheel_text:
        raise RuntimeError(f"{dist.metadata['Name']} has no WHEEL file: it was not installed from a wheel")
    out = dest / f"{name}-{dist.version}-{_tags(wheel_text)}.whl"
    info = next(str(f).split("/")[0] for f in dist.files if str(f).split("/")[0].endswith(".dist-info"))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for f in dist.files:
            rel = str(f)
            if rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc"):
                continue
            if rel.split("/")[0] == info and rel.split("/")[-1] in (
                "RECORD",
                "INSTALLER",
                "REQUESTED",
                "direct_url.json",
            ):
                continue
            path = Path(dist.locate_file(f))
            if not path.is_file():
                continue
            data = path.read_bytes()
            zi = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (path.stat().st_mode & 0xFFFF) << 16
            zf.writestr(zi, data)
            writer.writerow([rel, _hash(data), len(data)])
        writer.writerow([f"{info}/RECORD", "", ""])
        zf.writestr(f"{info}/RECORD", record.getvalue())
    os.replace(tmp, out)
    return out


def _cache_dir() -> Path:
    from tests.support.claude import support_cache_dir

    return support_cache_dir() / "wheelhouse"


def wheelhouse() -> Path:
    """The wheel folder for this venv (built once, then reused)."""
    dists = _closure()
    key = hashlib.sha256(
        "\n".join([sys.version, *(f"{d.metadata['Name']}=={d.version}" for d in dists)]).encode()
    ).hexdigest()[:16]
    dest = _cache_dir() / key
    if (dest / ".complete").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(dest.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / ".complete").exists():
            return dest
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        for dist in dists:
            repack(dist, dest)
        (dest / ".complete").write_text("\n".join(f"{d.metadata['Name']}=={d.version}" for d in dists) + "\n")
    return dest


def offline_pip_env(folder: Path) -> dict[str, str]:
    """The environment that makes pip install only from ``folder``: no index, no pip.conf."""
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(folder),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
