"""The one place recall talks to a model: key discovery, the client, usage accounting.

The anthropic SDK is imported lazily (it costs ~1.5 s): only when a call is actually made.
Key lookup order: ``ANTHROPIC_API_KEY``, recall's config file (``api_key``),
``~/.config/anthropic/api_key``, ``~/.anthropic/api_key``. ``ANTHROPIC_BASE_URL`` is honoured
by the SDK. Every call is recorded in ``$RECALL_HOME/usage.jsonl`` (model, tokens,
purpose) for the daily cap and the cost estimate in ``recall status``.
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
    def __init__(self) -> None:
        super().__init__(
            "No Anthropic API key found: set ANTHROPIC_API_KEY, or run `recall config set api_key KEY` "
            "(synthesis and memory extraction stay off until then; search works without one)."
        )


class ModelError(RecallError):
    """The model call failed (HTTP error, timeout, bad answer): callers fall back."""


class CapReached(RecallError):
    def __init__(self, cap: int) -> None:
        super().__init__(
            f"The daily cap of {cap} model calls is reached; it resets at midnight UTC "
            "(raise it with `recall config set memory.daily_call_cap N`)."
        )


def find_api_key(cfg: dict | None = None) -> tuple[str | None, str | None]:
    """(key, where it came from) or (None, None)."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key and key.strip():
        return key.strip(), "ANTHROPIC_API_KEY"
    cfg = cfg if cfg is not None else config.load()
    key = cfg.get("api_key")
    if isinstance(key, str) and key.strip():
        return key.strip(), str(paths.config_path())
    for candidate in (Path.home() / ".config" / "anthropic" / "api_key", Path.home() / ".anthropic" / "api_key"):
        try:
            key = candidate.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if key:
            return key, str(candidate)
    return None, None


_clients: dict[tuple, object] = {}


def client(timeout: float = 30.0, max_retries: int = 0):
    """A cached ``anthropic.Anthropic`` client; raises NoKey."""
    key, _ = find_api_key()
    if not key:
        raise NoKey()
    cache_key = (key, os.environ.get("ANTHROPIC_BASE_URL"), timeout, max_retries)
    c = _clients.get(cache_key)
    if c is None:
        import anthropic

        c = anthropic.Anthropic(api_key=key, timeout=timeout, max_retries=max_retries)
        _clients[cache_key] = c
    return c


def usage_path() -> Path:
    return paths.recall_home() / "usage.jsonl"


def record_usage(model: str, input_tokens: int, output_tokens: int, purpose: str) -> None:
    line = json.dumps({"t": time.time(), "model": model, "in": input_tokens, "out": output_tokens,
                       "purpose": purpose}) + "\n"
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
           "cost": 0.0, "by_purpose": {}}
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
            if datetime.fromtimestamp(rec.get("t", 0), tz=timezone.utc).date() == today:
                out["today_calls"] += 1
                out["today_cost"] += cost
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


def complete(system: str, prompt: str, *, purpose: str, max_tokens: int = 1024, timeout: float = 30.0,
             model: str | None = None, cap: int | None = None) -> str:
    """One non-streaming Messages call; returns the text. Raises NoKey, CapReached, ModelError."""
    if cap is not None and calls_today() >= cap:
        raise CapReached(cap)
    model_id = model or config.model()
    c = client(timeout=timeout)
    try:
        resp = c.messages.create(model=model_id, max_tokens=max_tokens, system=system,
                                 messages=[{"role": "user", "content": prompt}])
    except Exception as exc:  # the SDK's APIError family, timeouts, connection errors
        raise ModelError(f"model call failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
    usage = getattr(resp, "usage", None)
    record_usage(model_id, getattr(usage, "input_tokens", 0) or 0, getattr(usage, "output_tokens", 0) or 0, purpose)
    text = "".join(getattr(b, "text", "") for b in (resp.content or []) if getattr(b, "type", "") == "text")
    if not text.strip():
        raise ModelError("model returned no text")
    return text
