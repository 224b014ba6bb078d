"""Where the ``api`` backend's credentials come from, looked up in the caller's environment
(``recall.core.caller.current()``: the hook's or MCP server's when the service works for one,
else this process's): ``ANTHROPIC_API_KEY``, then ``ANTHROPIC_AUTH_TOKEN`` (a bearer token),
then recall's config file (``api_key``), ``~/.config/anthropic/api_key``,
``~/.anthropic/api_key``; with the caller's ``ANTHROPIC_BASE_URL``. Never imports the SDK."""

from __future__ import annotations

from pathlib import Path

from recall.core import config, paths


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
