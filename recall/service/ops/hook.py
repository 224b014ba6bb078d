"""The service's ``hook_context`` op: the prompt hook's search and synthesis, done by the
warm service (``args``: the hook payload plus ``_budget``, the seconds the hook has left;
result: the hook's output dict, or None when there is nothing to inject)."""

from __future__ import annotations

from recall.core.errors import IndexMissing
from recall.prompt.context import service_op
from recall.prompt.trivial import trivial_reason
from recall.service.registry import op, searcher


@op("hook_context")
def hook_context(args: dict) -> dict | None:
    if trivial_reason(args.get("prompt") if isinstance(args, dict) else None):
        return None
    try:
        warm = searcher()
    except IndexMissing:
        return None
    return service_op(args, searcher=warm)
