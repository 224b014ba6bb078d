"""The ``api`` model backend (the Messages API through the anthropic SDK): key discovery,
the client, and the usage log every backend writes to.

The anthropic SDK is imported lazily (it costs ~1.5 s): only when a call is actually made.
Credentials are looked up in the environment of the caller (``recall.core.caller.current()``:
the hook's or MCP server's when the service works for one, else this process's):
``ANTHROPIC_API_KEY``, then ``ANTHROPIC_AUTH_TOKEN`` (a bearer token), then recall's config
file (``api_key``), ``~/.config/anthropic/api_key``, ``~/.anthropic/api_key``; with the
caller's ``ANTHROPIC_BASE_URL``. Every call of every backend is recorded in
``$RECALL_HOME/usage.jsonl`` (model, tokens, purpose, backend) for the daily cap and the
cost estimate in ``recall status``. Which backend runs is ``recall.llm.backend``'s choice.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from recall.core import config
from recall.core import paths
from recall.core.errors import RecallError


class NoKey(RecallError):
    """No model backend can run (no key, no usable Claude Code, or ``model.backend off``)."""

    def __init__(self, why: str | None = None) -> None:
        super().__init__(why or (
            "No Anthropic API key found: set ANTHROPIC_API_KEY, or run `recall config set api_key KEY` "
            "(synthesis and memory extraction stay off until then; search works without one)."
        ))


class ModelError(RecallError):
    """The model call failed (HTTP error, timeout, bad answer): callers fall back. Its text
    is logged and kept (the worker's status, a summary's retry marker): ``scrub`` takes out
    any key or token an endpoint echoed back in its error."""

    def __init__(self, message: str = "") -> None:
        super().__init__(scrub(str(message)))


def scrub(text: str) -> str:
    """``text`` (an error from an endpoint or a child process) as it may be logged or stored:
    the credentials in use replaced wherever they appear, then whatever the redaction rules
    call a secret (a proxy may echo a key of any shape)."""
    try:
        creds = find_credentials() or {}
    except Exception:  # noqa: BLE001 - a broken config must not hide the error itself
        creds = {}
    for value in (creds.get("api_key"), creds.get("auth_token")):
        if isinstance(value, str) and len(value) >= 8:
            text = text.replace(value, "[redacted:api-key]")
    try:
        from indexer.redact import redact

        return redact(text)
    except Exception:  # noqa: BLE001
        return text


class CapReached(RecallError):
    def __init__(self, cap: int) -> None:
        super().__init__(
            f"The daily cap of {cap} model calls is reached; it resets at midnight UTC "
            "(raise it with `recall config set memory.daily_call_cap N`)."
        )


def find_credentials(cfg: dict | None = None, env: dict | None = None) -> dict | None:
    """``{"api_key" | "auth_token": secret, "base_url": url or None, "where": source}`` from the
    caller's environment (``env``, default ``caller.current()``), else the config file, else
    the key files; None when there is none."""
    from recall.core import caller

    env = env if env is not None else caller.current()
    base = (env.get("ANTHROPIC_BASE_URL") or "").strip() or None
    for var, kind in (("ANTHROPIC_API_KEY", "api_key"), ("ANTHROPIC_AUTH_TOKEN", "auth_token")):
        value = (env.get(var) or "").strip()
        if value:
            return {kind: value, "base_url": base, "where": var}
    key, where = _stored_key(cfg, env)
    return {"api_key": key, "base_url": base, "where": where} if key else None


def find_api_key(cfg: dict | None = None, env: dict | None = None) -> tuple[str | None, str | None]:
    """(key or token, where it came from) or (None, None)."""
    found = find_credentials(cfg, env)
    if not found:
        return None, None
    return found.get("api_key") or found.get("auth_token"), found["where"]


def _stored_key(cfg: dict | None, env: dict) -> tuple[str | None, str | None]:
    cfg = cfg if cfg is not None else config.load()
    key = cfg.get("api_key")
    if isinstance(key, str) and key.strip():
        return key.strip(), str(paths.config_path())
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    for candidate in (home / ".config" / "anthropic" / "api_key", home / ".anthropic" / "api_key"):
        try:
            key = candidate.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if key:
            return key, str(candidate)
    return None, None


_clients: dict[tuple, object] = {}


def client(timeout: float = 30.0, max_retries: int = 0, cfg: dict | None = None):
    """A cached ``anthropic.Anthropic`` client for the caller's credentials; raises NoKey."""
    creds = find_credentials(cfg)
    if not creds:
        raise NoKey()
    cache_key = (creds.get("api_key"), creds.get("auth_token"), creds["base_url"], timeout, max_retries)
    c = _clients.get(cache_key)
    if c is None:
        import anthropic

        kwargs = {"base_url": creds["base_url"]} if creds["base_url"] else {}
        if creds.get("auth_token"):
            kwargs["auth_token"] = creds["auth_token"]
        else:
            kwargs["api_key"] = creds["api_key"]
        c = anthropic.Anthropic(timeout=timeout, max_retries=max_retries, **kwargs)
        _clients[cache_key] = c
    return c


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


def record_usage(model: str, input_tokens: int, output_tokens: int, purpose: str,
                 backend: str = "api", error: str = "") -> None:
    import fcntl

    rec = {"t": time.time(), "model": model, "in": input_tokens, "out": output_tokens, "purpose": purpose,
           "backend": backend}
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
    """Roll ``usage.jsonl`` up to one line per (UTC day, model, purpose, backend), each with
    its call count ``n`` and token sums: every figure read from it (calls and cost today and
    in all, per purpose and backend, the daily cap) stays exact, and the file stays small
    (it grew by a line per prompt). Returns the lines written."""
    import fcntl

    lock = _usage_lock(fcntl.LOCK_EX)
    if lock is None:
        return 0
    try:
        groups: dict[tuple, dict] = {}
        try:
            with open(usage_path(), encoding="utf-8") as fh:
                for raw in fh:
                    try:
                        rec = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(rec, dict):
                        continue
                    t = float(rec.get("t", 0) or 0)
                    day = datetime.fromtimestamp(t, tz=timezone.utc).date().isoformat()
                    key = (day, str(rec.get("model", "")), str(rec.get("purpose", "other")),
                           str(rec.get("backend", "api")))
                    g = groups.setdefault(key, {"t": t, "model": key[1], "in": 0, "out": 0, "purpose": key[2],
                                                "backend": key[3], "n": 0})
                    g["t"] = max(g["t"], t)
                    g["in"] += int(rec.get("in", 0) or 0)
                    g["out"] += int(rec.get("out", 0) or 0)
                    g["n"] += int(rec.get("n", 1) or 1)
                    failed = int(rec.get("failed", 1 if rec.get("error") else 0) or 0)
                    if failed:  # failures stay counted, with the last error said (`recall status`)
                        g["failed"] = g.get("failed", 0) + failed
                        g["error"] = str(rec.get("error") or g.get("error", ""))
        except OSError:
            return 0
        lines = sorted(groups.values(), key=lambda g: g["t"])
        paths.atomic_write(usage_path(), "".join(json.dumps(g) + "\n" for g in lines))
        return len(lines)
    finally:
        os.close(lock)


def usage_summary(days: int | None = None) -> dict:
    """Calls, tokens and estimated dollars: today, and all time (or the last ``days``)."""
    today = datetime.now(timezone.utc).date()
    out = {"today_calls": 0, "today_cost": 0.0, "calls": 0, "input_tokens": 0, "output_tokens": 0,
           "cost": 0.0, "by_purpose": {}, "by_backend": {}, "today_by_backend": {}}
    try:
        fh = open(usage_path(), encoding="utf-8")
    except OSError:
        return out
    cutoff = time.time() - days * 86400 if days else 0
    with fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
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
                tb = out["today_by_backend"].setdefault(b, {"calls": 0, "failed": 0, "purposes": {},
                                                            "last_error": ""})
                tb["calls"] += n
                tb["purposes"][p] = tb["purposes"].get(p, 0) + n
                failed = int(rec.get("failed", 1 if rec.get("error") else 0) or 0)
                if failed:
                    tb["failed"] += failed
                    tb["last_error"] = str(rec.get("error") or tb["last_error"])
    return out


def calls_today(purposes: tuple[str, ...] = ("extraction", "consolidation", "summary")) -> int:
    today = datetime.now(timezone.utc).date()
    n = 0
    try:
        with open(usage_path(), encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("purpose") in purposes and \
                        datetime.fromtimestamp(rec.get("t", 0), tz=timezone.utc).date() == today:
                    n += int(rec.get("n", 1) or 1)
    except OSError:
        pass
    return n


def api_complete(system: str, prompt: str, *, purpose: str, max_tokens: int = 1024, timeout: float = 30.0,
                 model: str | None = None) -> str:
    """One non-streaming Messages call with the caller's credentials."""
    model_id = model or config.model()
    c = client(timeout=timeout)
    try:
        resp = c.messages.create(model=model_id, max_tokens=max_tokens, system=system,
                                 messages=[{"role": "user", "content": prompt}])
    except Exception as exc:  # the SDK's APIError family, timeouts, connection errors
        err = ModelError(f"model call failed: {type(exc).__name__}: {str(exc)[:400]}")
        record_usage(model_id, 0, 0, purpose, error=str(err)[len("model call failed: "):][:150])
        # not chained: the SDK's error holds the endpoint's reply, which may echo the key
        raise err from None
    usage = getattr(resp, "usage", None)
    record_usage(model_id, getattr(usage, "input_tokens", 0) or 0, getattr(usage, "output_tokens", 0) or 0, purpose)
    text = "".join(getattr(b, "text", "") for b in (resp.content or []) if getattr(b, "type", "") == "text")
    if not text.strip():
        raise ModelError("model returned no text")
    return text
