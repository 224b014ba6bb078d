"""Whose environment a model call runs with.

The service is usually started by systemd, launchd or another shell and does not see the
environment Claude Code runs in, where the user's ``ANTHROPIC_API_KEY`` (or the ``claude``
binary on ``PATH``) usually is. So the edges that hand model work to the service (the prompt
hook, the capture hooks, the MCP server, ``recall ask``) send ``caller_env()`` along with the
request (``call(..., credentials=True)``, only to a verified socket), and the service runs
that op under ``use(env)``: every model call inside it sees the caller's variables instead
of the service's own (``current()``). The memory worker thread of the service uses the last
caller's (``remember`` / ``remembered``): in memory only, never written anywhere.

Stdlib only: the prompt hook imports this.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from contextlib import contextmanager

# What decides the model backend and its credentials. The ANTHROPIC_* ones are secrets or
# point at them: they are never logged, cached to disk or put in an error message.
KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "PATH", "HOME", "CLAUDE_CONFIG_DIR")
REMEMBER_SECONDS = 24 * 3600

_current: contextvars.ContextVar[dict | None] = contextvars.ContextVar("recall_caller_env", default=None)
_remembered: dict = {}
_lock = threading.Lock()


def caller_env() -> dict:
    """The variables of this process that a model call depends on (for sending along)."""
    return {k: os.environ[k] for k in KEYS if os.environ.get(k)}


def clean(env) -> dict | None:
    """``env`` as received: only the known keys with string values (None if not a dict)."""
    if not isinstance(env, dict):
        return None
    return {k: v for k, v in env.items() if k in KEYS and isinstance(v, str) and v and len(v) < 65536}


def current() -> dict:
    """The environment a model call made now should see: the caller's when this runs for
    one (its variables replace the service's: a key the caller lacks is not borrowed from
    the service), else this process's."""
    env = _current.get()
    if env is None:
        return dict(os.environ)
    merged = {k: v for k, v in os.environ.items() if k not in KEYS}
    merged.update(env)
    if "PATH" not in env and os.environ.get("PATH"):
        merged["PATH"] = os.environ["PATH"]
    if "HOME" not in env and os.environ.get("HOME"):
        merged["HOME"] = os.environ["HOME"]
    return merged


def is_caller() -> bool:
    return _current.get() is not None


@contextmanager
def use(env: dict | None):
    """Run the body with ``env`` as the caller's environment (None: this process's own)."""
    token = _current.set(clean(env) if env is not None else None)
    try:
        yield
    finally:
        _current.reset(token)


def remember(env: dict | None) -> None:
    env = clean(env)
    if env is None:
        return
    with _lock:
        _remembered.clear()
        _remembered.update(env=env, t=time.time())


def remembered() -> dict | None:
    """The last caller's environment if it came less than a day ago (None otherwise)."""
    with _lock:
        if _remembered and time.time() - _remembered["t"] < REMEMBER_SECONDS:
            return dict(_remembered["env"])
    return None
