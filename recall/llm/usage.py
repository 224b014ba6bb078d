"""The usage log every backend writes to: ``$RECALL_HOME/usage.jsonl``, one line per model
call (model, tokens, purpose, backend, the error when the backend answered with one), rolled
up per day when it grows (``compact_usage``). It gives the daily cap (``calls_today``) and the
calls and cost estimate ``recall status`` shows (``usage_summary``)."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from recall.core import config, paths
from recall.core.jsonio import loads_object, read_jsonl


def usage_path() -> Path:
    return paths.recall_home() / "usage.jsonl"


USAGE_COMPACT_BYTES = 256 << 10  # past this, usage.jsonl is rolled up (see compact_usage)


def _usage_lock(kind: int):
    """A flock on ``usage.lock``: appends share it, the roll-up holds it alone (so no line
    appended meanwhile is lost). Returns the fd (None when it cannot be had)."""
    import fcntl

    try:
        fd = os.open(paths.recall_home() / "usage.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, kind)
    except OSError:
        os.close(fd)
        return None
    return fd


def record_usage(
    model: str,
    input_tokens: int,
    output_tokens: int,
    purpose: str,
    backend: str = "api",
    error: str = "",
    key: str = "",
) -> None:
    """One model call. ``key``: where the api backend's credentials came from (the variable's
    name or the file's path, never the secret); ``env`` is recorded as "caller" when the call
    ran with a caller's environment (a hook's, sent to the service), so ``recall status`` and
    ``recall doctor`` can say which backend each caller really used (issue 44)."""
    import fcntl

    from recall.core import caller

    rec = {
        "t": time.time(),
        "model": model,
        "in": input_tokens,
        "out": output_tokens,
        "purpose": purpose,
        "backend": backend,
    }
    if key:
        rec["key"] = key
    if caller.is_caller():
        rec["env"] = "caller"
    if error:  # the backend answered, with an error ("Not logged in"): `recall status` says so
        rec["error"] = error[:200]
    line = json.dumps(rec) + "\n"
    size = 0
    try:
        paths.ensure_dir(paths.recall_home())
        lock = _usage_lock(fcntl.LOCK_SH)
        try:
            fd = os.open(usage_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode())
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        finally:
            if lock is not None:
                os.close(lock)
    except OSError:
        pass
    if size > USAGE_COMPACT_BYTES:
        compact_usage()


def compact_usage() -> int:
    """Roll ``usage.jsonl`` up to one line per (UTC day, model, purpose, backend, key source,
    environment), each with
    its call count ``n`` and token sums: every figure read from it (calls and cost today and
    in all, per purpose and backend, the daily cap) stays exact, and the file stays small
    (it grew by a line per prompt). Returns the lines written."""
    import fcntl

    lock = _usage_lock(fcntl.LOCK_EX)
    if lock is None:
        return 0
    try:
        groups: dict[tuple, dict] = {}
        try:  # read whole before the rewrite: a file that cannot be read is left as it is
            lines = usage_path().read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError:
            return 0
        for rec in filter(None, map(loads_object, lines)):
            t = float(rec.get("t", 0) or 0)
            day = datetime.fromtimestamp(t, tz=timezone.utc).date().isoformat()
            key = (
                day,
                str(rec.get("model", "")),
                str(rec.get("purpose", "other")),
                str(rec.get("backend", "api")),
                str(rec.get("key", "")),
                str(rec.get("env", "")),
            )
            g = groups.setdefault(
                key, {"t": t, "model": key[1], "in": 0, "out": 0, "purpose": key[2], "backend": key[3], "n": 0}
            )
            if key[4]:
                g["key"] = key[4]
            if key[5]:
                g["env"] = key[5]
            g["t"] = max(g["t"], t)
            g["in"] += int(rec.get("in", 0) or 0)
            g["out"] += int(rec.get("out", 0) or 0)
            g["n"] += int(rec.get("n", 1) or 1)
            failed = int(rec.get("failed", 1 if rec.get("error") else 0) or 0)
            if failed:  # failures stay counted, with the last error said (`recall status`)
                g["failed"] = g.get("failed", 0) + failed
                g["error"] = str(rec.get("error") or g.get("error", ""))
        lines = sorted(groups.values(), key=lambda g: g["t"])
        paths.atomic_write(usage_path(), "".join(json.dumps(g) + "\n" for g in lines))
        return len(lines)
    finally:
        os.close(lock)


def usage_summary(days: int | None = None) -> dict:
    """Calls, tokens and estimated dollars: today, and all time (or the last ``days``)."""
    today = datetime.now(timezone.utc).date()
    out = {
        "today_calls": 0,
        "today_cost": 0.0,
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost": 0.0,
        "by_purpose": {},
        "by_backend": {},
        "today_by_backend": {},
    }
    cutoff = time.time() - days * 86400 if days else 0
    for rec in read_jsonl(usage_path()):
        if rec.get("t", 0) < cutoff:
            continue
        pin, pout = config.price_per_mtok(str(rec.get("model", "")))
        cost = (rec.get("in", 0) * pin + rec.get("out", 0) * pout) / 1e6
        n = int(rec.get("n", 1) or 1)  # a rolled-up line (compact_usage) counts its calls
        out["calls"] += n
        out["input_tokens"] += rec.get("in", 0)
        out["output_tokens"] += rec.get("out", 0)
        out["cost"] += cost
        p = rec.get("purpose", "other")
        out["by_purpose"][p] = out["by_purpose"].get(p, 0) + n
        b = rec.get("backend", "api")
        out["by_backend"][b] = out["by_backend"].get(b, 0) + n
        if datetime.fromtimestamp(rec.get("t", 0), tz=timezone.utc).date() == today:
            out["today_calls"] += n
            out["today_cost"] += cost
            tb = out["today_by_backend"].setdefault(
                b, {"calls": 0, "failed": 0, "purposes": {}, "last_error": "", "keys": {}, "ok_purposes": {}}
            )
            tb["calls"] += n
            tb["purposes"][p] = tb["purposes"].get(p, 0) + n
            failed = int(rec.get("failed", 1 if rec.get("error") else 0) or 0)
            if failed:
                tb["failed"] += failed
                tb["last_error"] = str(rec.get("error") or tb["last_error"])
            if n - failed > 0:  # what worked: per purpose (which caller) and per key source
                tb["ok_purposes"][p] = tb["ok_purposes"].get(p, 0) + n - failed
                where = str(rec.get("key") or "")
                if where:
                    label = f"{where} from a hook's environment" if rec.get("env") == "caller" else where
                    tb["keys"][label] = tb["keys"].get(label, 0) + n - failed
    return out


def calls_today(purposes: tuple[str, ...] = ("extraction", "consolidation", "summary")) -> int:
    today = datetime.now(timezone.utc).date()
    n = 0
    for rec in read_jsonl(usage_path()):
        if rec.get("purpose") in purposes and datetime.fromtimestamp(rec.get("t", 0), tz=timezone.utc).date() == today:
            n += int(rec.get("n", 1) or 1)
    return n


def succeeded_today(summary: dict | None = None) -> dict[str, int]:
    """backend -> the model calls on it that succeeded today (no backend: none worked)."""
    summary = summary if summary is not None else usage_summary(days=1)
    out = {}
    for name, b in (summary.get("today_by_backend") or {}).items():
        ok = int(b.get("calls", 0)) - int(b.get("failed", 0))
        if ok > 0:
            out[name] = ok
    return out
