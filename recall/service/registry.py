"""The operations the service answers over its socket (see ``recall.core.service_client``).

An op is a function ``args: dict -> JSON-able result`` registered with ``@op("name")``.
The server imports every module named in ``OP_MODULES`` at start (a module that fails to
import is logged, not fatal), so other parts of recall add ops by appending one string
here and decorating functions in their own module::

    from recall.service.registry import op

    @op("hook_context")
    def hook_context(args: dict) -> dict: ...

Ops run in server threads, concurrently. Raise a ``RecallError`` for a bad request (its
one-line message reaches the caller as ``client.RemoteError``). Inside an op:

  * ``searcher()`` is the service's warm ``Searcher`` (reloaded after each commit); in a
    process without the service it is a fresh one;
  * ``service()`` is the running ``recall.service.daemon.Service`` (or None outside it); its
    ``run_in_writer(fn, timeout)`` runs ``fn(indexer)`` on the single writer thread and
    returns its result (the way to write to the index from an op).

This module stays import-light (no tantivy at import time).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any, Callable

OPS: dict[str, Callable[[dict], Any]] = {}

# Modules whose import registers ops; others append to this list.
OP_MODULES: list[str] = ["recall.service.ops.search", "recall.service.ops.index", "recall.service.ops.mcp",
                         "recall.service.ops.hook", "recall.service.ops.memory", "recall.service.ops.team",
                         "recall.ui.op"]  # the page of `recall ui` (a floor above: named here, never imported)

_service = None


def op(name: str):
    """Register ``fn`` as the handler of op ``name``."""

    def deco(fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
        OPS[name] = fn
        return fn

    return deco


def load_modules(log: logging.Logger | None = None) -> list[str]:
    """Import every module of OP_MODULES; returns the ones that failed (each is logged)."""
    failed = []
    for name in list(OP_MODULES):
        try:
            importlib.import_module(name)
        except Exception as exc:  # one broken module must not take the service down
            failed.append(name)
            if log is not None:
                log.error("op module %s failed to import: %s: %s", name, type(exc).__name__, exc)
    return failed


def set_service(service) -> None:
    global _service
    _service = service


def service():
    return _service


def searcher():
    """The warm searcher inside the service; a new one elsewhere."""
    if _service is not None:
        return _service.searcher()
    from recall.search.searcher import Searcher

    return Searcher()
