"""Per-prompt recall: what the UserPromptSubmit hook injects before Claude sees a prompt.

Pipeline (``build_context``): skip trivial prompts -> search the current project's past
sessions (not the current session: it is already in context) -> keep hits above the
relevance floor -> raw snippets as the fallback -> Haiku synthesis if a key exists and time
allows -> ``{"hookSpecificOutput": {..., "additionalContext": "<recalled-context>…"}}``.

Import-light on purpose: this module is imported on every prompt. The index (tantivy) is
imported only once a prompt is worth searching, the model client (anthropic) only when a
synthesis is actually sent, and neither when the service answers over its socket.

The deadline (``hook.budget_seconds``, counted from process start) is kept three ways: the
service gets the remaining budget and answers with raw snippets when its model call is
slow; the in-process synthesis runs in a worker thread that is abandoned at the deadline;
and ``Watchdog`` emits the best output known so far and ends the process if anything
else overruns.
"""

from __future__ import annotations

import math
import os
import threading
import time

from recall.core import config
from recall.prompt.block import format_raw, format_synthesis, hook_output
from recall.prompt.candidates import find_hits
from recall.prompt.settings import hook_settings
from recall.prompt.trivial import trivial_reason

SAFETY_SECONDS = 0.35      # the pipeline's own deadline: this long before the budget runs out
WATCHDOG_SECONDS = 0.1     # the watchdog's: this long before it
MIN_SYNTH_SECONDS = 0.6    # below this much time left, inject raw snippets right away
SERVICE_SLACK = 0.35       # time kept back from the service for an in-process fallback


_log_lock = threading.Lock()


def _log():
    from recall.core import log

    with _log_lock:  # the watchdog and the main thread may both be first to set logging up
        return log.get("hook")


def _synthesize_within(prompt: str, hits: list, seconds: float, max_chars: int):
    """Run the synthesis in a worker thread; (finished, text or exception)."""
    box: dict = {}

    def work() -> None:
        try:
            from recall.llm.synthesis import synthesize_recall

            box["text"] = synthesize_recall(prompt, hits, timeout=max(0.2, seconds - 0.1), max_chars=max_chars)
        except BaseException as exc:  # reported to the caller, never raised in the thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="recall-synthesis", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if worker.is_alive():
        return False, None
    return True, box.get("error") or box.get("text", "")


def refusal(payload: dict, cfg: dict) -> str | None:
    """Why nothing may be injected into this prompt: "paused" (`recall pause`), "off" (the
    session was switched off by a `recall: off` prompt, this one included) or "excluded"
    (`recall exclude`); None when recall may inject."""
    from indexer.ledger import hook_refusal

    def text(key):
        v = payload.get(key)
        return v if isinstance(v, str) and v else None

    return hook_refusal(text("cwd"), text("session_id"), payload.get("prompt"), cfg)


def build_context(payload: dict, deadline: float, *, cfg: dict | None = None, searcher=None,
                  on_fallback=None) -> dict | None:
    """The hook's output for ``payload`` (or None: nothing to inject), ready by ``deadline``
    (``time.time()`` seconds). ``on_fallback(output)`` is told the raw-snippet output as soon as
    it exists, so a watchdog can emit it if the synthesis overruns."""
    cfg = cfg if cfg is not None else config.load()
    hook = hook_settings(cfg)
    prompt = payload.get("prompt")
    if refusal(payload, cfg) or trivial_reason(prompt, hook):
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    hits = find_hits(prompt, cwd, session_id, hook, searcher)
    if not hits:
        return None
    if any(getattr(h, "kind", "") == "memory" for h in hits):
        from recall.memory import note_access  # import-light: one append, never raises

        note_access(hits)
    scope_all = hook.get("scope") == "all"
    max_chars = hook["max_chars"]
    raw = hook_output(format_raw(hits, prompt, max_chars, scope_all))
    if on_fallback is not None:
        on_fallback(raw)
    if not hook.get("synthesize", True):
        return raw
    from recall.llm import messages_api as llm

    if not llm.find_api_key(cfg)[0]:
        return raw
    left = deadline - time.time()
    if left < MIN_SYNTH_SECONDS:
        return raw
    finished, result = _synthesize_within(prompt, hits, left, max_chars)
    if not finished:
        _log().warning("synthesis did not finish within the hook budget; injected raw snippets")
        return raw
    if isinstance(result, BaseException):
        _log().warning("synthesis failed (%s); injected raw snippets", str(result)[:300])
        return raw
    if not result.strip():
        return None  # the model found nothing in the hits that bears on the prompt
    return hook_output(format_synthesis(result, max_chars, scope_all))


def _service_may_run() -> bool:
    """False when there is certainly no service to ask (saves importing the socket client)."""
    if os.environ.get("RECALL_NO_SERVICE", "") not in ("", "0"):
        return False
    from recall.core import paths

    sock = os.fsencode(str(paths.socket_path()))
    if len(sock) > 100:  # too long for a unix socket: recall.core.service_client knows the short path
        return True
    return os.path.exists(sock)


def service_context(payload: dict, deadline: float):
    """Ask the running service. Returns (answered, output); answered is False when the service
    is not running or failed, so the caller works it out in-process."""
    if not _service_may_run():
        return False, None
    try:
        from recall.core import service_client as client
    except ImportError:
        return False, None
    left = deadline - time.time()
    if left <= SERVICE_SLACK + 0.1:
        return False, None
    args = dict(payload)
    args["_budget"] = left - SERVICE_SLACK
    try:
        result = client.call("hook_context", args, timeout=left - SERVICE_SLACK + 0.15)
    except client.Unavailable:
        return False, None
    except Exception as exc:
        _log().warning("service hook_context failed (%s: %s); working it out in-process",
                       type(exc).__name__, str(exc)[:200])
        return False, None
    if result is None or (isinstance(result, dict) and "hookSpecificOutput" in result):
        return True, result
    _log().warning("service hook_context returned %r; working it out in-process", type(result).__name__)
    return False, None


def service_op(args: dict, searcher=None) -> dict | None:
    """The service side of ``hook_context``: ``args`` is the hook payload plus ``_budget``."""
    args = dict(args) if isinstance(args, dict) else {}
    budget = args.pop("_budget", None)
    if not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        budget = hook_settings()["budget_seconds"] - 1.0
    deadline = time.time() + min(float(budget), 120.0)
    return build_context(args, deadline, searcher=searcher)


class Watchdog:
    """At ``deadline``: emit the best output known (``fallback``) and end the process."""

    def __init__(self, deadline: float, emit) -> None:
        self.fallback: dict | None = None
        self._emit = emit
        self._timer = threading.Timer(max(0.0, deadline - time.time()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def offer(self, output: dict | None) -> None:
        self.fallback = output

    def _fire(self) -> None:
        if not self._emit(self.fallback):
            return  # the main thread got there first
        try:
            _log().warning("hook budget reached; emitted %s", "raw snippets" if self.fallback else "nothing")
        except Exception:
            pass
        os._exit(0)

    def cancel(self) -> None:
        self._timer.cancel()


def run_hook(payload: dict, started: float, emit) -> dict | None:
    """The whole UserPromptSubmit hook. ``started``: process start (epoch seconds);
    ``emit(output) -> bool`` writes the output once (False if it was already written)."""
    cfg = config.load()
    hook = hook_settings(cfg)
    if refusal(payload, cfg) or trivial_reason(payload.get("prompt"), hook):
        return None
    deadline = started + hook["budget_seconds"] - SAFETY_SECONDS
    dog = Watchdog(started + hook["budget_seconds"] - WATCHDOG_SECONDS, emit)
    try:
        answered, out = service_context(payload, deadline)
        if answered:
            return out
        return build_context(payload, deadline, cfg=cfg, on_fallback=dog.offer)
    finally:
        dog.cancel()
