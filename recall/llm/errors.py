"""The model calls' errors, shared by every backend (``recall.llm.messages_api``,
``recall.llm.claude_code``) and caught by their callers: ``NoKey`` (no backend can run),
``ModelError`` (the call failed: callers fall back), ``CapReached`` (the daily cap), and
``scrub``, which takes any credential out of an error's text before it is logged or kept."""

from __future__ import annotations

from recall.core.errors import RecallError


class NoKey(RecallError):
    """No model backend can run (no key, no usable Claude Code, or ``model.backend off``)."""

    def __init__(self, why: str | None = None) -> None:
        super().__init__(
            why
            or (
                "No Anthropic API key found: set ANTHROPIC_API_KEY, or run `recall config set api_key KEY` "
                "(synthesis and memory extraction stay off until then; search works without one)."
            )
        )


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
        from recall.llm.credentials import find_credentials

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
