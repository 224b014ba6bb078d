"""The ``api`` model backend (the Messages API through the anthropic SDK): the client and
the call, with the credentials ``recall.llm.credentials`` finds.

The anthropic SDK is imported lazily (it costs ~1.5 s): only when a call is actually made.
Every call is recorded in the usage log (``recall.llm.usage``) and fails with the errors of
``recall.llm.errors``. Which backend runs is ``recall.llm.backend``'s choice.
"""

from __future__ import annotations

from recall.core import config
from recall.llm.credentials import find_credentials
from recall.llm.errors import ModelError, NoKey
from recall.llm.usage import record_usage

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


def api_complete(
    system: str, prompt: str, *, purpose: str, max_tokens: int = 1024, timeout: float = 30.0, model: str | None = None
) -> str:
    """One non-streaming Messages call with the caller's credentials."""
    model_id = model or config.model()
    c = client(timeout=timeout)
    where = (find_credentials() or {}).get("where") or ""
    try:
        resp = c.messages.create(
            model=model_id, max_tokens=max_tokens, system=system, messages=[{"role": "user", "content": prompt}]
        )
    except Exception as exc:  # the SDK's APIError family, timeouts, connection errors
        err = ModelError(f"model call failed: {type(exc).__name__}: {str(exc)[:400]}")
        record_usage(model_id, 0, 0, purpose, error=str(err)[len("model call failed: ") :][:150], key=where)
        # not chained: the SDK's error holds the endpoint's reply, which may echo the key
        raise err from None
    usage = getattr(resp, "usage", None)
    record_usage(
        model_id,
        getattr(usage, "input_tokens", 0) or 0,
        getattr(usage, "output_tokens", 0) or 0,
        purpose,
        key=where,
    )
    text = "".join(getattr(b, "text", "") for b in (resp.content or []) if getattr(b, "type", "") == "text")
    if not text.strip():
        raise ModelError("model returned no text")
    return text
