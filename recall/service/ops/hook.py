"""The service's ``hook_context`` op: the prompt hook's search and synthesis, done by the
warm service (``args``: the hook payload plus ``_budget``, the seconds the hook has left;
result: the hook's output dict, or None when there is nothing to inject)."""

from __future__ import annotations

import secrets
import threading
import time

from recall.core.errors import IndexMissing
from recall.prompt.context import service_deliver, service_op
from recall.service.registry import op, searcher

#: prompts whose briefing the model writes in the background: ticket -> (kept at, Pending);
#: one the hook never comes back for is dropped after KEEP_SECONDS
_pending: dict[str, tuple[float, object]] = {}
_pending_lock = threading.Lock()
KEEP_SECONDS = 60.0


def _keep(pending) -> str:
    ticket = secrets.token_hex(12)
    now = time.monotonic()
    with _pending_lock:
        for old in [t for t, (at, _) in _pending.items() if now - at > KEEP_SECONDS]:
            del _pending[old]
        _pending[ticket] = (now, pending)
    return ticket


def _take(ticket) -> object | None:
    with _pending_lock:
        kept = _pending.pop(ticket, None) if isinstance(ticket, str) else None
    return kept[1] if kept is not None else None


@op("backend")
def backend(args: dict) -> dict:
    """The model backend a call would use for this caller (its credentials were sent with the
    request) and with the service's own environment alone; no secret in the answer."""
    from recall.core import caller
    from recall.llm import backend as backends

    def brief(choice) -> dict:
        return {"backend": choice.name, "why": choice.why, "source": choice.source}

    mine = caller.current() if caller.is_caller() else None
    with caller.use(None):
        own = brief(backends.choose())
        last = caller.remembered()  # what memory extraction uses: the last hook's credentials
        memory = brief(backends.choose(env=last)) if last is not None else own
    return {"caller": brief(backends.choose(env=mine)) if mine is not None else own, "service": own, "memory": memory}


@op("hook_context")
def hook_context(args: dict) -> dict | None:
    # refusal and trivial_reason: checked by the hook (``_screened``), else by service_op, once
    try:
        warm = searcher()
    except IndexMissing:
        return None
    return service_op(args, searcher=warm, keep=_keep)


@op("hook_deliver")
def hook_deliver(args: dict) -> dict:
    """The briefing of a prompt ``hook_context`` kept for the background (``args``: ``ticket``
    and ``_budget``, the seconds the hook has left), with its ``_trace``."""
    return service_deliver(_take(args.get("ticket")), args.get("_budget"))
