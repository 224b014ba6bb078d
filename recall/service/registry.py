"""The operations the service answers over its socket (see ``recall.core.service_client``).

An op is a function ``args: dict -> JSON-able result`` registered with ``@op("name")``.
The server imports every module named in ``OP_MODULES`` at start (a module that fails to
import is logged, not fatal): the service's own op modules, one a feature, add ops by
appending one string there and decorating functions in their own module::

    from recall.service.registry import op

    @op("hook_context")
    def hook_context(args: dict) -> dict: ...

A floor above the service never appears in that list (the service would import upwards, out
of sight of the floor map): whoever starts the service imports that floor's op module itself
and hands it in with ``add_module`` before the start, as ``recall serve`` does with the
page's (``recall.ui.op``).

A module that needs a thread of its own in the service defines ``start(service)``, which the
service calls once its ops are loaded (``start_modules``; nothing starts a thread because it
was imported), and may define ``stop()``, called as the service stops (``stop_modules``).

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
import sys
from types import ModuleType
from typing import Any, Callable

OPS: dict[str, Callable[[dict], Any]] = {}

# The service's own modules whose import registers ops (``recall/service/ops/``).
OP_MODULES: list[str] = [
    "recall.service.ops.search",
    "recall.service.ops.index",
    "recall.service.ops.mcp",
    "recall.service.ops.hook",
    "recall.service.ops.memory",
    "recall.service.ops.team",
]

# Op modules of the floors above, imported there and handed in (``add_module``).
ADDED: list[ModuleType] = []

_service = None


def op(name: str):
    """Register ``fn`` as the handler of op ``name``."""

    def deco(fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
        OPS[name] = fn
        return fn

    return deco


def add_module(module: ModuleType) -> None:
    """Serve the ops of ``module``, a floor above that imported it (its ``@op`` functions are
    registered by that import); its ``start``/``stop`` are called like those of OP_MODULES."""
    if module not in ADDED:
        ADDED.append(module)


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


def _loaded() -> list:
    named = [sys.modules[name] for name in list(OP_MODULES) if name in sys.modules]
    return named + [module for module in ADDED if module not in named]


def start_modules(service, log: logging.Logger | None = None) -> list[str]:
    """Call ``start(service)`` of every loaded op module that has one (the threads the service
    runs beside its loop: the memory worker, the team sync); returns the ones that failed."""
    failed = []
    for module in _loaded():
        start = getattr(module, "start", None)
        if start is None:
            continue
        try:
            start(service)
        except Exception as exc:  # one broken module must not take the service down
            failed.append(module.__name__)
            if log is not None:
                log.error("op module %s failed to start: %s: %s", module.__name__, type(exc).__name__, exc)
    return failed


def stop_modules() -> None:
    """Call ``stop()`` of every loaded op module that has one (the service is stopping)."""
    for module in _loaded():
        stop = getattr(module, "stop", None)
        if stop is not None:
            try:
                stop()
            except Exception:  # noqa: BLE001 - the service stops anyway
                pass


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
