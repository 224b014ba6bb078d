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
from recall.prompt.injections import Outcome
from recall.prompt.settings import HookSettings, hook_settings
from recall.prompt.trivial import trivial_reason

SAFETY_SECONDS = 0.35  # the pipeline's own deadline: this long before the budget runs out
WATCHDOG_SECONDS = 0.1  # the watchdog's: this long before it
MIN_SYNTH_SECONDS = 0.6  # below this much time left, inject raw snippets right away
SERVICE_SLACK = 0.35  # time kept back from the service for an in-process fallback
BREAKER_SECONDS = 120.0  # after the service hung, prompts skip it this long (then try again)


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

    import contextvars  # the worker sees the caller's environment (recall.core.caller)

    worker = threading.Thread(target=contextvars.copy_context().run, args=(work,), name="recall-synthesis", daemon=True)
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


def fired_rules(payload: dict, hook: HookSettings) -> list:
    """The triggered rules (``recall rules``) this prompt fires and this session has not seen;
    [] on any failure (a broken rule file is logged, never stops the prompt)."""
    limit = hook.max_rules
    if limit <= 0:
        return []
    try:
        from recall.rules.files import any_rules, project_of

        if not any_rules(project_of(payload.get("cwd"))):
            return []  # no rule file: the matcher is not even imported
        from recall.rules.inject import rules_for_prompt

        return rules_for_prompt(payload, limit)
    except Exception as exc:  # noqa: BLE001 - the hook fails open
        _log().warning("rules skipped: %s", str(exc)[:300])
        return []


def without_rule_docs(hits: list) -> list:
    """Search hits minus the rules' own index documents (a rule reaches the prompt when it
    fires, not because its words matched), minus session summaries (a summary as a
    compact hit is not the hook's default until the retrieval benchmark says it helps) and
    minus echoes (``Hit.echo``: a reply restating what recall gave, a ``/recall`` turn, a
    question whose reply added nothing), bare acknowledgements ("OK.") and calls of recall's own
    tools that an older version indexed: never injected, the session they point to is; and minus
    content-free lines of a session that has lines saying something (``content_free``)."""
    from recall.search.exchange import adds_nothing, content_free

    kept = [
        h
        for h in hits
        if not (getattr(h, "kind", "") in ("memory", "team") and str(h.uuid).startswith(("rule-", "sum-")))
        and not getattr(h, "echo", False)
        and not adds_nothing(str(getattr(h, "text", "") or ""))
        and not (
            getattr(h, "role", "") == "tool_use"
            and str(getattr(h, "text", "")).startswith(("mcp__recall__", "mcp__plugin_recall_"))
        )
    ]
    # a content-free line (a tool's "File created successfully at: …", a bare `Write: path`)
    # never takes the place of its session's lines that say something; alone, it stands for
    # its session, and the model reads its turn (``Searcher.with_turns``)
    free = [content_free(str(getattr(h, "role", "")), str(getattr(h, "text", "") or "")) for h in kept]
    speaking = {h.session_id for h, f in zip(kept, free) if not f}
    return [h for h, f in zip(kept, free) if not f or h.session_id not in speaking]


def nothing_why(best: float | None, hook: HookSettings, path: str = "raw", gate: float | None = None) -> str:
    """Why a prompt got nothing, in the words ``recall log`` shows."""
    if best is None:
        return "no past message matches the prompt's words"
    setting = "hook.model_min_confidence" if path == "model" else "hook.min_confidence"
    if gate is None:
        gate = hook.model_min_confidence if path == "model" else hook.min_confidence
    raised = (
        ""
        if path == "model" or gate <= hook.min_confidence
        else f" (raised from {hook.min_confidence:.2f} in a history this large)"
    )
    return f"no hit confident enough: the best was {best:.2f}, under {setting} {gate:.2f}{raised}"


def not_worth_asking(best: float | None, nearest: float, hook: HookSettings) -> str | None:
    """Why the model is not asked about a prompt whose candidates it would read, or None: the
    best candidate's confidence is under ``hook.ask_min_confidence`` and the nearest past
    session in meaning under ``hook.ask_min_similarity``. A new task in a project's area has
    candidates above the model path's looser floors, and the model would answer NONE after
    reading them: a call for nothing (``benchmarks/call_gate.py`` chose the pair)."""
    lexical = hook.ask_min_confidence
    semantic = hook.ask_min_similarity
    if (best or 0.0) >= lexical or nearest >= semantic:
        return None
    return (
        f"not worth a model call: the best hit was {best or 0.0:.2f}, under hook.ask_min_confidence {lexical:.2f}"
        f"; the nearest in meaning {nearest:.2f}, under hook.ask_min_similarity {semantic:.2f}"
    )


def choose_path(hook: HookSettings, cfg: dict) -> tuple[str, str]:
    """``("model", backend)`` when a synthesis may decide (a model backend exists and
    ``hook.synthesize`` is on), else ``("raw", why not)``."""
    if not hook.synthesize:
        return "raw", "off"
    from recall.llm import backend

    choice = backend.choose(cfg)
    return ("raw", "off") if choice.name == "off" else ("model", choice.name)


class Run:
    """One prompt's run through the pipeline, built once by ``plan_context``: what every later
    step reads (``_decide``, ``Pending.deliver``, ``_deliver``). ``payload``: the hook's input;
    ``hook``: the ``HookSettings``; ``cfg``: the loaded config (the backend's choice reads it);
    ``searcher``: the caller's, or None (this process's shared one); ``trace``: what happened, for
    the injection log (``recall.prompt.injections.record``); ``rules``: the fired rules, and
    ``only_rules``: the output they alone make (or None)."""

    __slots__ = ("payload", "prompt", "hook", "cfg", "searcher", "trace", "rules", "only_rules")

    def __init__(
        self,
        payload: dict,
        hook: HookSettings,
        cfg: dict,
        trace: dict,
        *,
        searcher=None,
        rules: list | None = None,
        only_rules: dict | None = None,
    ) -> None:
        self.payload, self.prompt, self.hook, self.cfg = payload, payload.get("prompt"), hook, cfg
        self.searcher, self.trace = searcher, trace
        self.rules, self.only_rules = rules if rules is not None else [], only_rules


class Pending:
    """A prompt the model will read (``plan_context``): its ``run``, the ``hits`` the model reads
    and the raw path's own pick (``raw_hits``, the fallback), and the way (``recall.prompt.ways``:
    ``wait`` or ``background``) it takes."""

    __slots__ = ("run", "hits", "raw_hits", "way", "prepare")

    def __init__(self, run: Run, hits: list, raw_hits: list, way: str, prepare=None) -> None:
        self.run, self.hits, self.raw_hits, self.way = run, hits, raw_hits, way
        # the search and the call gate, run after the prompt went on (the background way): called
        # once, it returns ``_decide``'s ``(output, pending)``
        self.prepare = prepare

    @property
    def trace(self) -> dict:
        return self.run.trace

    def fallback(self) -> dict | None:
        """What the prompt gets when the model fails or is late: the raw path's own pick (the
        strict gate), else the fired rules alone, else nothing."""
        from recall.prompt.block import format_raw, hook_output

        run = self.run
        if not self.raw_hits:
            return run.only_rules
        return hook_output(
            format_raw(self.raw_hits, run.prompt, run.hook.raw_max_chars, run.hook.scope_all, rules=run.rules)
        )

    def deliver(self, deadline: float, on_fallback=None) -> dict | None:
        """The briefing (or the fallback), ready by ``deadline``; ``trace`` completed."""
        if self.prepare is not None:  # the prompt went on before it was searched
            prepare, self.prepare = self.prepare, None
            out, later = prepare(on_fallback)
            if later is None:  # nothing for the model to read: nothing, the rules, or raw snippets
                return out
            self.hits, self.raw_hits = later.hits, later.raw_hits
        if not self.hits:  # nothing left for the model to read (e.g. every hit hidden meanwhile)
            self.trace.update(
                outcome=Outcome.RULES if self.run.only_rules else Outcome.NOTHING, why="no hit left to read"
            )
            return self.run.only_rules
        out = _deliver(self, deadline, on_fallback)
        if out is not None:
            self.trace["text"] = _redacted(out["hookSpecificOutput"]["additionalContext"])
        return out


def build_context(
    payload: dict,
    deadline: float,
    *,
    cfg: dict | None = None,
    searcher=None,
    on_fallback=None,
    trace: dict | None = None,
    screened: bool = False,
) -> dict | None:
    """The hook's output for ``payload`` (or None: nothing to inject), ready by ``deadline``
    (``time.time()`` seconds), the model's briefing waited for whatever the way
    (``plan_context`` says which way a prompt takes). ``on_fallback(output)`` is told the
    raw-snippet output as soon as it exists, so a watchdog can emit it if the synthesis
    overruns. ``trace`` (a dict) is filled with what happened, for the injection log
    (``recall.prompt.injections``)."""
    trace = trace if trace is not None else {}
    out, pending = plan_context(
        payload, cfg=cfg, searcher=searcher, on_fallback=on_fallback, trace=trace, screened=screened
    )
    return pending.deliver(deadline, on_fallback) if pending is not None else out


def plan_context(
    payload: dict,
    *,
    cfg: dict | None = None,
    searcher=None,
    on_fallback=None,
    trace: dict | None = None,
    screened: bool = False,
) -> tuple[dict | None, Pending | None]:
    """What the prompt gets before any model is asked: ``(output, None)`` when no model reads
    it (nothing, the fired rules, or the raw path's snippets), else ``(None, pending)``: the
    model will read ``pending.hits`` (``Pending.deliver``), waited for or in the background
    (``pending.way``, ``recall.prompt.ways``). ``trace`` gets ``path`` (``model``: the
    synthesis reads the candidates above ``hook.model_min_confidence``; ``raw``: no model, the
    strict ``hook.min_confidence``), ``gate`` (the setting and value it used) and ``way``."""
    from recall.prompt import ways

    trace = trace if trace is not None else {}
    cfg = cfg if cfg is not None else config.load()
    hook = hook_settings(cfg)
    prompt = payload.get("prompt")
    # screened: the hook (run_hook) found the prompt neither refused nor trivial; not checked again
    refused = None if screened else refusal(payload, cfg)
    if refused:  # paused, switched off or excluded: nothing injected, nothing logged
        trace.update(outcome=Outcome.REFUSED, why=refused)
        return None, None
    reason = None if screened else trivial_reason(prompt, hook)
    if reason:
        trace.update(outcome=Outcome.TRIVIAL, why=str(reason))
        return None, None
    from recall.prompt.block import format_rules, hook_output

    rules = fired_rules(payload, hook)
    only_rules = hook_output(format_rules(rules, hook.max_chars)) if rules else None
    if only_rules is not None and on_fallback is not None:
        on_fallback(only_rules)
    if rules:
        trace["rules"] = [f.rule.id for f in rules]
    run = Run(payload, hook, cfg, trace, searcher=searcher, rules=rules, only_rules=only_rules)
    early = None
    # a fired rule goes with the prompt itself when no model is asked: such a prompt is searched first
    if hook.background and not rules and isinstance(prompt, str) and not ways.asks_about_past(prompt):
        early = choose_path(hook, cfg)
        if early[0] == "model":
            # the way is known before any search: a prompt that asks for work goes on at once
            # (the model in the background); the search, the call gate and what the model
            # reads are worked out after the prompt has gone on (``Pending.deliver``)
            trace.update(backend=early[1], path="model", way=ways.BACKGROUND)

            def prepare(on_fallback) -> tuple[dict | None, Pending | None]:
                from recall.search.semantic import attached

                choice = early if attached() is not None else None
                out, later = _decide(run, choice, on_fallback)
                trace["way"] = ways.BACKGROUND  # the prompt went on at once, whatever the search found
                return out, later

            return None, Pending(run, [], [], ways.BACKGROUND, prepare)
    from recall.search.semantic import attached

    choice = (early or choose_path(hook, cfg)) if attached() is not None else None  # asked once, below too
    return _decide(run, choice, on_fallback)


def _decide(run: Run, choice, on_fallback):
    """``plan_context`` once the prompt is searched: the past sessions' candidates judged, each
    path's gate, the semantic channel's picks; ``(output, None)`` or ``(None, pending)``.
    ``choice``: ``choose_path``'s answer when the semantic channel is attached (the service), else None."""
    # imported here, not at the top: a trivial prompt, or one the service answers, needs neither
    from indexer.native_memory import without_loaded
    from recall.prompt import ways
    from recall.prompt.block import format_raw, hook_output
    from recall.prompt.candidates import (
        judged_candidates,
        may_corroborate,
        model_candidates,
        model_decision,
        nearest_sessions,
        question_picks,
        raw_decision,
        semantic_picks,
        with_answers,
    )
    from recall.prompt.injections import injected_sessions

    payload, prompt, hook, cfg, trace = run.payload, run.prompt, run.hook, run.cfg, run.trace
    searcher, rules, only_rules = run.searcher, run.rules, run.only_rules
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and payload.get("cwd") else None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    if choice is not None and choice[0] == "model" and isinstance(prompt, str):
        from recall.prompt.candidates import MAX_PROMPT_CHARS
        from recall.search.semantic import embed_ahead, enabled

        if enabled(hook) and hook.scope != "all":
            embed_ahead(prompt[:MAX_PROMPT_CHARS])  # the prompt's vector, while the words are searched
    judged, s = judged_candidates(prompt, cwd, session_id, hook, searcher)
    judged = without_rule_docs(judged)
    judged = without_loaded(judged, cwd, payload.get("_auto_memory_off"))  # Claude Code has them already
    before = injected_sessions(session_id) if judged and session_id else frozenset()
    raw = raw_decision(judged, hook, before)
    model = model_decision(judged, hook, before)
    state = {"s": s, "before": before}

    def semantic_part() -> tuple[list, float]:
        """The semantic channel's additions to each path (the service only): the model path's
        picks and the nearest cosine; the raw path's corroborated pick joins ``raw.hits``."""
        if session_id and not state["before"]:
            state["before"] = injected_sessions(session_id)
        state["s"] = state["s"] or searcher
        near = nearest_sessions(prompt, cwd, session_id, hook, state["s"], state["before"])
        found, raw_extra = semantic_picks(near, judged, model.hits, raw.hits, hook)
        raw.hits = list(raw.hits) + raw_extra
        if found or raw_extra:
            trace["semantic"] = [{"session": h.session_id, "similarity": h.similarity} for h in found or raw_extra]
        return found, max((h.similarity or 0.0 for h in near), default=0.0)

    def finish(hits: list, model_path: bool) -> list:
        """What is injected or read, ready: on the model path with the replies and turns the
        model reads; stale marks; the log's hits."""
        if model_path and hits:
            sr = state["s"]
            hits = with_answers(sr, hits, len(hits) + hook.limit // 2)
            if sr is not None:
                sr.with_turns(hits)  # each excerpt the model reads carries its turn: the prompt, the conclusion
                hits = _told_once(hits)
        if hits and hook.stale_marks:
            from recall.search.stale import mark_hits  # stat calls and state.db: no subprocess

            mark_hits(hits, cwd)
        if any(getattr(h, "kind", "") == "memory" for h in hits):
            from recall.memory import note_access  # import-light: one append, never raises

            note_access(hits)
        trace["hits"] = [_traced(h) for h in hits]
        return hits

    found = []  # the semantic channel's additions to the model path (the service only)
    nearest = 0.0  # the nearest past session's cosine (the service only)
    if choice is not None and (choice[0] == "model" or may_corroborate(judged, raw.hits, hook)):
        found, nearest = semantic_part()
    # a question about the past: the model also reads the sessions its words rank first (below the gates)
    asked_past = ways.asks_about_past(prompt or "") and bool(judged)
    picks = question_picks(judged, model.hits + found, state["before"]) if asked_past else []
    path, backend_name = ("raw", "") if not (model.hits or found or picks) else (choice or choose_path(hook, cfg))
    if backend_name:
        trace["backend"] = backend_name
    trace["path"] = path
    chosen = model if path == "model" else raw
    trace["gate"] = {"setting": chosen.setting, "value": chosen.gate}
    trace["best"] = chosen.best
    if chosen.repeated:
        trace["repeated"] = chosen.repeated  # sessions injected earlier in this conversation
    hits = chosen.hits
    if path == "model":
        hits = model_candidates(hits, found, hook) + picks
        unasked = None if asked_past else not_worth_asking(chosen.best, nearest, hook)
        if unasked and hits:  # the model is not asked: nothing bears on the prompt strongly enough
            trace["hits"] = []
            return _nothing_but_rules(trace, only_rules, unasked), None
    hits = finish(hits, path == "model")
    if not hits:
        if chosen.repeated and chosen.best is not None and chosen.best >= chosen.gate:
            why = "every confident hit is of a session injected earlier in this conversation"
        else:
            why = nothing_why(chosen.best, hook, path, chosen.gate)
        return _nothing_but_rules(trace, only_rules, why), None
    if path != "model":
        trace["way"] = ways.RAW
        trace.update(outcome=Outcome.RAW, why="synthesis off" if not hook.synthesize else "no backend")
        trace["injected"] = list(dict.fromkeys(h.session_id for h in hits))
        out = hook_output(format_raw(hits, prompt, hook.raw_max_chars, hook.scope == "all", rules=rules))
        if on_fallback is not None:
            on_fallback(out)
        trace["text"] = _redacted(out["hookSpecificOutput"]["additionalContext"])
        return out, None
    way = ways.model_way(prompt, hits, hook)
    trace["way"] = way
    return None, Pending(run, hits, raw.hits, way)


def _nothing_but_rules(trace: dict, only_rules: dict | None, why: str) -> dict | None:
    """No past session is injected (``why``): the fired rules alone, if any; the way is nothing."""
    from recall.prompt import ways

    trace.update(way=ways.NOTHING, outcome=Outcome.RULES if only_rules is not None else Outcome.NOTHING, why=why)
    if only_rules is not None:
        trace["text"] = _redacted(only_rules["hookSpecificOutput"]["additionalContext"])
    return only_rules


def _told_once(hits: list) -> list:
    """``hits`` without a message another hit's excerpt already carries whole: a recalled prompt's
    excerpt holds the reply it got, so that reply's own hit would only say it twice."""
    told = [" ".join(str(h.reply).split()) for h in hits if getattr(h, "reply", None)]
    if not told:
        return hits

    def carried(h) -> bool:
        body = " ".join(str(h.text or "").split())
        return len(body) >= 40 and h.role == "assistant" and any(body[:300] in t for t in told)

    return [h for h in hits if not carried(h)]


def _traced(hit) -> dict:
    """A hit as the injection log keeps it."""
    return {
        "session": hit.session_id,
        "score": round(float(hit.score), 3),
        **({"confidence": round(hit.confidence, 3)} if hit.confidence is not None else {}),
        **({"similarity": round(hit.similarity, 3)} if getattr(hit, "similarity", None) is not None else {}),
    }


def _redacted(text: str) -> str:
    try:
        from indexer.redact import redact

        return redact(text)
    except Exception:  # noqa: BLE001 - the log keeps nothing rather than something unredacted
        return ""


def _deliver(p: Pending, deadline: float, on_fallback=None) -> dict | None:
    """The model path's output for ``p``: a synthesis of ``p.hits``, with the raw path's own
    pick (``p.raw_hits``, the strict gate) as the fallback when the model fails or is late."""
    from recall.prompt.block import format_synthesis, hook_output

    run = p.run
    hook, trace, only_rules, raw_hits = run.hook, run.trace, run.only_rules, p.raw_hits
    raw = p.fallback() if raw_hits else None

    def raw_because(why: str) -> dict | None:
        if raw is None:  # nothing passes the raw path's gate: nothing rather than a loose guess
            trace["hits"] = []
            trace.update(
                outcome=Outcome.RULES if only_rules is not None else Outcome.NOTHING,
                why=f"{why}; no hit reached hook.min_confidence {float(hook['min_confidence']):.2f}",
            )
            return only_rules
        trace.update(outcome=Outcome.RAW, why=why)
        trace["injected"] = list(dict.fromkeys(h.session_id for h in raw_hits))
        trace["hits"] = [_traced(h) for h in raw_hits]
        return raw

    scope_all = hook.scope == "all"
    max_chars = hook.max_chars
    if raw is not None and on_fallback is not None:
        on_fallback(raw)
    from recall.llm import backend

    left = deadline - time.time()
    if left < (backend.CLAUDE_CODE_HOOK_SECONDS if trace.get("backend") == "claude-code" else MIN_SYNTH_SECONDS):
        return raw_because("deadline")
    finished, result = _synthesize_within(run.prompt, p.hits, left, max_chars)
    if not finished:
        _log().warning("synthesis did not finish within the hook budget; injected raw snippets")
        return raw_because("deadline")
    from recall.llm.errors import CapReached, NoKey

    if isinstance(result, CapReached):
        return raw_because("cap")
    if isinstance(result, NoKey):
        return raw_because("no backend")
    if isinstance(result, BaseException):
        _log().warning("synthesis failed (%s); injected raw snippets", str(result)[:300])
        return raw_because("error")
    hits = p.hits
    if not result.strip():
        trace.update(
            outcome=Outcome.RULES if only_rules is not None else Outcome.NOTHING,
            why=f"the model found nothing relevant in the {len(hits)} hits it read (above "
            f"hook.model_min_confidence {float(hook['model_min_confidence']):.2f}"
            + (
                f"; by meaning, above hook.semantic_min_similarity {float(hook['semantic_min_similarity']):.2f})"
                if trace.get("semantic")
                else ")"
            ),
        )
        return only_rules  # the model found nothing in the hits that bears on the prompt
    trace.update(outcome=Outcome.SYNTHESIZED, why="")
    trace["injected"] = list(dict.fromkeys(h.session_id for h in hits if h.session_id[:8] in result)) or list(
        dict.fromkeys(h.session_id for h in hits)
    )
    return hook_output(
        format_synthesis(
            result, max_chars, scope_all, rules=run.rules, marks=any(getattr(h, "stale", None) for h in hits)
        )
    )


def _service_may_run() -> bool:
    """False when there is certainly no service to ask (saves importing the socket client)."""
    if os.environ.get("RECALL_NO_SERVICE", "") not in ("", "0"):
        return False
    from recall.core import paths

    sock = os.fsencode(str(paths.socket_path()))
    if len(sock) > 100:  # too long for a unix socket: recall.core.service_client knows the short path
        return True
    return os.path.exists(sock)


def _breaker_path():
    from recall.core import paths

    return paths.recall_home() / "service-hung"


def breaker_open() -> float | None:
    """When the service last hung on a prompt, if that was less than BREAKER_SECONDS ago
    (the circuit is open: prompts work in-process and do not wait for it), else None."""
    try:
        since = os.stat(_breaker_path()).st_mtime
    except OSError:
        return None
    return since if 0 <= time.time() - since < BREAKER_SECONDS else None


def _trip_breaker(reason: str) -> None:
    from recall.core import paths

    try:
        paths.atomic_write(_breaker_path(), reason[:300] + "\n")
    except OSError:
        pass


def _reset_breaker() -> None:
    try:
        os.unlink(_breaker_path())
    except OSError:
        pass


class Later:
    """The service's answer for a prompt whose briefing the model writes in the background:
    the ``ticket`` to fetch it with (``hook_deliver``) and the ``fallback`` (raw output, or
    None) for a model that fails or is late."""

    __slots__ = ("ticket", "fallback")

    def __init__(self, ticket: str, fallback: dict | None) -> None:
        self.ticket, self.fallback = ticket, fallback


def service_deliver_call(later: Later, deadline: float, trace: dict) -> dict | None:
    """The briefing of a prompt the service kept (``Later``), asked for by ``deadline``; the
    fallback when the service fails or does not answer in time."""
    from recall.core import service_client as client

    left = deadline - time.time()
    try:
        result = client.call(
            "hook_deliver",
            {"ticket": later.ticket, "_budget": max(0.2, left - SERVICE_SLACK)},
            timeout=max(0.5, left - SERVICE_SLACK + 0.15),
            credentials=True,
        )
    except Exception as exc:  # noqa: BLE001 - the raw fallback, as for a model that failed
        _log().warning(
            "service hook_deliver failed (%s: %s); injected the fallback", type(exc).__name__, str(exc)[:200]
        )
        trace.update(outcome=Outcome.RAW if later.fallback else Outcome.NOTHING, why="error")
        return later.fallback
    if not isinstance(result, dict) or not isinstance(result.get("_trace"), dict):
        trace.update(outcome=Outcome.RAW if later.fallback else Outcome.NOTHING, why="error")
        return later.fallback
    result = dict(result)
    trace.update(result.pop("_trace"))
    return result if "hookSpecificOutput" in result else None


def service_context(payload: dict, deadline: float, trace: dict | None = None):
    """Ask the running service. Returns (answered, output); answered is False when the service
    is not running or failed, so the caller works it out in-process.

    A service that accepted the request and did not answer in time trips a short circuit
    breaker (``$RECALL_HOME/service-hung``): for ``BREAKER_SECONDS`` the next prompts do
    not wait for it, then one prompt tries it again."""
    trace = trace if trace is not None else {}
    if not _service_may_run():
        return False, None
    if breaker_open() is not None:
        trace["service"] = "skipped: hung on an earlier prompt"
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
    try:  # with this process's model credentials: the service may have none of its own
        result = client.call("hook_context", args, timeout=left - SERVICE_SLACK + 0.15, credentials=True)
    except client.Untrusted as exc:
        _log().warning("%s", exc)
        trace["service"] = "untrusted"
        return False, None
    except client.Timeout as exc:
        _trip_breaker(str(exc))
        _log().warning("%s; the next prompts skip it for %d s", exc, BREAKER_SECONDS)
        trace["service"] = "hung"
        return False, None
    except client.Unavailable:
        return False, None
    except Exception as exc:
        _log().warning(
            "service hook_context failed (%s: %s); working it out in-process", type(exc).__name__, str(exc)[:200]
        )
        return False, None
    if breaker_open() is not None:
        _reset_breaker()
    if isinstance(result, dict) and isinstance(result.get("_trace"), dict):
        result = dict(result)
        trace.update(result.pop("_trace"))
        trace["via"] = "service"
        if isinstance(result.get("_background"), str):
            fallback = result.get("_fallback")
            return True, Later(result["_background"], fallback if isinstance(fallback, dict) else None)
        if "hookSpecificOutput" not in result:
            result = None
    if result is None or (isinstance(result, dict) and "hookSpecificOutput" in result):
        return True, result
    _log().warning("service hook_context returned %r; working it out in-process", type(result).__name__)
    return False, None


def service_op(args: dict, searcher=None, keep=None) -> dict | None:
    """The service side of ``hook_context``: ``args`` is the hook payload plus ``_budget``.
    Returns the hook's output with ``_trace`` (what happened, for the injection log) added,
    or ``{"_trace": ...}`` alone when there is nothing to inject. With ``_ways`` (the hook can
    go on in the background) and a prompt whose way is ``background``, the model is not asked
    yet: ``keep(pending)`` keeps it under a ticket that the answer carries (``_background``,
    with ``_fallback``: the raw output for a failed or late model), for ``hook_deliver``."""
    args = dict(args) if isinstance(args, dict) else {}
    budget = args.pop("_budget", None)
    screened = args.pop("_screened", None) is True  # the hook checked refusal and triviality
    ways_ok = args.pop("_ways", None) is True and keep is not None
    if not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        budget = hook_settings().budget_seconds - 1.0
    deadline = time.time() + min(float(budget), 120.0)
    trace: dict = {}
    out, pending = plan_context(args, searcher=searcher, trace=trace, screened=screened)
    if pending is not None and pending.way == "background" and ways_ok:
        return {"_trace": dict(trace), "_background": keep(pending), "_fallback": pending.fallback()}
    if pending is not None:
        out = pending.deliver(deadline)
    return {**(out or {}), "_trace": trace}


def service_deliver(pending: Pending | None, budget) -> dict:
    """The service side of ``hook_deliver``: the briefing of a prompt ``service_op`` kept, by
    ``budget`` seconds from now; ``{"_trace": ...}`` alone when there is nothing to inject."""
    if pending is None:
        return {"_trace": {"outcome": Outcome.NOTHING, "why": "the service no longer held the prompt (restarted?)"}}
    if not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        budget = pending.run.hook.background_seconds - 1.0
    out = pending.deliver(time.time() + min(float(budget), 300.0))
    return {**(out or {}), "_trace": pending.trace}


def stop_children() -> None:
    """Kill a headless Claude Code (the claude-code backend) still running for this hook:
    none outlives the prompt it was started for."""
    import sys

    backend = sys.modules.get("recall.llm.claude_code")
    if backend is not None:
        try:
            backend.kill_all()
        except Exception:
            pass


class Watchdog:
    """At ``deadline``: emit the best output known (``fallback``) and end the process."""

    def __init__(self, deadline: float, emit, on_fire=None) -> None:
        self.fallback: dict | None = None
        self._emit = emit
        self._on_fire = on_fire
        self._timer = threading.Timer(max(0.0, deadline - time.time()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def offer(self, output: dict | None) -> None:
        self.fallback = output

    def _fire(self) -> None:
        if not self._emit(self.fallback):
            return  # the main thread got there first
        try:
            if self._on_fire is not None:
                self._on_fire(self.fallback)
        except Exception:
            pass
        try:
            _log().warning("hook budget reached; emitted %s", "raw snippets" if self.fallback else "nothing")
        except Exception:
            pass
        stop_children()
        os._exit(0)

    def cancel(self) -> None:
        self._timer.cancel()


def run_hook(payload: dict, started: float, emit, go_async=None) -> dict | None:
    """The whole UserPromptSubmit hook. ``started``: process start (epoch seconds);
    ``emit(output) -> bool`` writes the output once (False if it was already written);
    ``go_async(timeout_ms)`` writes Claude Code's async marker as the first line (the prompt
    goes on at once; what ``emit`` writes later joins the turn): given, a prompt whose way is
    ``background`` (``recall.prompt.ways``) does not hold the prompt for the model."""
    from recall.prompt import injections, turns, ways

    cfg = config.load()
    hook = hook_settings(cfg)
    if refusal(payload, cfg):  # paused, switched off or excluded: not even logged
        return None
    trace: dict = {}
    reason = trivial_reason(payload.get("prompt"), hook)
    if reason:
        trace.update(outcome=Outcome.TRIVIAL, why=str(reason), way=ways.NOTHING)
        injections.append(injections.record(payload, trace, None, started))
        return None
    session_id = payload.get("session_id")
    mark = turns.mark_prompt(session_id)  # a background briefing of an earlier prompt now stays out
    deadline = started + hook.budget_seconds - SAFETY_SECONDS
    background_ok = go_async is not None and hook.background

    def on_fire(fallback) -> None:  # the watchdog ended the hook: log what it emitted
        trace.update(outcome=Outcome.RAW if fallback else Outcome.NOTHING, why="deadline")
        injections.append(injections.record(payload, trace, fallback, started))

    dog = Watchdog(started + hook.budget_seconds - WATCHDOG_SECONDS, emit, on_fire)
    pending = None
    try:
        # screened: refusal and trivial_reason ran above, once per prompt; neither side repeats them
        ask = {**payload, "_screened": True, **({"_ways": True} if background_ok else {})}
        ask["_auto_memory_off"] = os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "")  # this session's
        answered, out = service_context(ask, deadline, trace)
        if not answered:
            trace["via"] = "in-process"
            out, pending = plan_context(payload, cfg=cfg, on_fallback=dog.offer, trace=trace, screened=True)
            if pending is not None and not (background_ok and pending.way == ways.BACKGROUND):
                out, pending = pending.deliver(deadline, dog.offer), None
    finally:
        dog.cancel()
    if pending is None and not isinstance(out, Later):
        if emit(out):  # printed now, then logged: the log never delays the prompt's context
            trace["held_ms"] = round((time.time() - started) * 1000, 1)
            injections.append(injections.record(payload, trace, out, started))
        return None
    # the model in the background: the prompt goes on now, the briefing joins the turn later
    go_async(int(max(1.0, hook.background_seconds - (time.time() - started)) * 1000) + 2000)
    trace["held_ms"] = round((time.time() - started) * 1000, 1)
    fallback = out.fallback if isinstance(out, Later) else pending.fallback()

    def in_turn(output):
        """``output``, or None when its turn is over (``recall.prompt.turns``)."""
        late = turns.ended_since(session_id, mark, started) if output is not None else None
        if late:
            trace.update(outcome=Outcome.DROPPED, why=f"{late} before the briefing was ready")
            return None
        return output

    late_dog = Watchdog(started + hook.background_seconds - WATCHDOG_SECONDS, lambda o: emit(in_turn(o)), on_fire)
    late_dog.offer(fallback)
    try:
        until = started + hook.background_seconds - SAFETY_SECONDS
        if isinstance(out, Later):
            out = service_deliver_call(out, until, trace)
        else:
            out = pending.deliver(until, late_dog.offer)
    finally:
        late_dog.cancel()
    out = in_turn(out)
    if emit(out):
        injections.append(injections.record(payload, trace, out, started))
    return None
