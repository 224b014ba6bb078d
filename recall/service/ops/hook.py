"""The service's ``hook_context`` op: the prompt hook's search and synthesis, done by the
warm service (``args``: the hook payload plus ``_budget``, the seconds the hook has left;
result: the hook's output dict, or None when there is nothing to inject)."""

from __future__ import annotations

from recall.core.errors import IndexMissing
from recall.prompt.context import service_op
from recall.service.registry import op, searcher


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
    return service_op(args, searcher=warm)
