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
    """The model call failed (HTTP error, timeout, bad answer): callers fall back."""


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


def record_usage(model: str, input_tokens: int, output_tokens: int, purpose: str,
                 backend: str = "api", error: str = "") -> None:
    rec = {"t": time.time(), "model": model, "in": input_tokens, "out": output_tokens, "purpose": purpose,
           "backend": backend}
    if error:  # the backend answered, with an error ("Not logged in"): `recall status` says so
        rec["error"] = error[:200]
    line = json.dumps(rec) + "\n"
    try:
        paths.ensure_dir(paths.recall_home())
        fd = os.open(usage_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass


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
            out["calls"] += 1
            out["input_tokens"] += rec.get("in", 0)
            out["output_tokens"] += rec.get("out", 0)
            out["cost"] += cost
            p = rec.get("purpose", "other")
            out["by_purpose"][p] = out["by_purpose"].get(p, 0) + 1
            b = rec.get("backend", "api")
            out["by_backend"][b] = out["by_backend"].get(b, 0) + 1
            if datetime.fromtimestamp(rec.get("t", 0), tz=timezone.utc).date() == today:
                out["today_calls"] += 1
                out["today_cost"] += cost
                tb = out["today_by_backend"].setdefault(b, {"calls": 0, "failed": 0, "purposes": {},
                                                            "last_error": ""})
                tb["calls"] += 1
                tb["purposes"][p] = tb["purposes"].get(p, 0) + 1
                if rec.get("error"):
                    tb["failed"] += 1
                    tb["last_error"] = str(rec["error"])
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
                    n += 1
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
        record_usage(model_id, 0, 0, purpose, error=f"{type(exc).__name__}: {str(exc)[:150]}")
        raise ModelError(f"model call failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
    usage = getattr(resp, "usage", None)
    record_usage(model_id, getattr(usage, "input_tokens", 0) or 0, getattr(usage, "output_tokens", 0) or 0, purpose)
    text = "".join(getattr(b, "text", "") for b in (resp.content or []) if getattr(b, "type", "") == "text")
    if not text.strip():
        raise ModelError("model returned no text")
    return text
