"""The page's writes, each the library call the matching command makes: marking an injection
wrong (``recall.prompt.injections.mark_wrong``; kept, shown by ``recall log``), forgetting a
session a hit came from (``recall forget --session``: ``recall.privacy.forget``, on the service's
writer when there is one), and a memory's edit, pin and forget (``recall.memory.store``, then the
briefing and the index, as ``recall memories forget`` does).
"""

from __future__ import annotations

from recall.core.errors import UsageError


def _project(form: dict) -> str:
    from recall.ui.views import memory_project

    return memory_project(form.get("project") or "")


def _need(form: dict, key: str) -> str:
    value = (form.get(key) or "").strip()
    if not value:
        raise UsageError(f"{key} is missing.")
    return value


def mark_wrong(form: dict) -> dict:
    from recall.prompt import injections

    try:
        t = float(_need(form, "t"))
    except ValueError:
        raise UsageError("t must be the record's time (epoch seconds).") from None
    wrong = form.get("wrong", "1") not in ("0", "false", "")
    n = injections.mark_wrong(t, form.get("session") or "", wrong)
    if not n:
        raise UsageError("No such prompt in the injection log (it may have been forgotten).")
    return {"marked": n, "wrong": wrong}


def forget_session(form: dict) -> dict:
    """``recall forget --session ID --yes``: every store at once."""
    from indexer.forgetting import Selection, resolve_session

    sel = Selection()
    sel.sessions = [resolve_session(_need(form, "session"))]
    sel.check()
    return {"forgot": sel.sessions[0], "result": forget(sel.as_args())}


def forget(args: dict) -> dict:
    """Forget on the service's writer (inside the service: its own op; else over its socket),
    else on an index writer of this process's own."""
    from indexer.forgetting import Selection
    from recall.core import service_client as client
    from recall.privacy.forget import forget_everywhere
    from recall.service import registry

    svc = registry.service()
    if svc is not None:  # what the service's "forget" op does
        sel = Selection.from_args(args)
        return svc.run_in_writer(lambda ix: forget_everywhere(ix, sel), timeout=600.0)
    try:
        return client.call("forget", args, timeout=600.0)
    except client.RemoteError as exc:
        from recall.core.errors import RecallError

        raise RecallError(str(exc)) from None
    except client.Unavailable:
        pass
    from indexer.ingest import Indexer

    with Indexer() as ix:
        return forget_everywhere(ix, Selection.from_args(args))


def _memory_change(form: dict, change) -> dict:
    from recall.memory import briefing, index_docs, store

    project = _project(form)
    ref = _need(form, "id")
    with store.transaction(project) as state:
        m = change(state, ref)
    briefing.write_briefing(project, state)
    index_docs.sync(project, state.changed, state.removed, state)
    return {"id": m.id, "type": m.type}


def memory_forget(form: dict) -> dict:
    from recall.memory import store

    return _memory_change(form, store.forget)


def memory_pin(form: dict) -> dict:
    from recall.memory import store

    on = form.get("pinned", "1") not in ("0", "false", "")
    return {**_memory_change(form, lambda state, ref: store.set_pinned(state, ref, on)), "pinned": on}


def memory_edit(form: dict) -> dict:
    from recall.memory import store

    content = form.get("content") or ""
    return _memory_change(form, lambda state, ref: store.edit(state, ref, content))


ACTIONS = {
    "/api/prompts/wrong": mark_wrong,
    "/api/sessions/forget": forget_session,
    "/api/memories/forget": memory_forget,
    "/api/memories/pin": memory_pin,
    "/api/memories/edit": memory_edit,
}


def run(path: str, form: dict) -> dict:
    """The action at ``path`` (KeyError: none)."""
    return ACTIONS[path](form)
