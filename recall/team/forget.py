"""``recall forget``'s team step (``recall.privacy.forget.forget_everywhere`` calls ``step``
once everything else is forgotten).

* What this machine shared and just lost (a forgotten memory, summary or rule) is withdrawn
  from the server by the push, which compares the distilled layer with what was pushed:
  ``step`` wakes the service's sync loop, or, with no service running, pushes itself
  (a teammate's copy goes with the tombstone).
* Teammates' items pulled here that the selection covers (its project, text, date or
  secret; a session selection covers none: they are not sessions of this machine) are
  deleted here, from ``team.db`` and the index, and remembered as gone so a later pull
  does not bring them back. They stay on the server: they are the teammate's to withdraw.
"""

from __future__ import annotations

from recall.core import log
from recall.team import local


def _covered(items: list[dict], sel, remotes: set[str] | None) -> list[str]:
    needle = sel.match.casefold() if sel.match else None
    out = []
    for it in items:
        if remotes is not None and it["remote"] not in remotes:
            continue
        text = it["content"] + " " + " ".join(it["tags"])
        if sel.secret is not None:
            if sel.secret in text:
                out.append(it["id"])  # a teammate's item is not ours to rewrite: it goes here
            continue
        if needle is not None and needle not in text.casefold():
            continue
        if sel.before is not None and not (it["created"] and it["created"] < sel.before):
            continue
        out.append(it["id"])
    return out


def covered(db: local.TeamDB, sel) -> list[str]:
    """The ids of the pulled items ``sel`` covers."""
    remotes = None
    if sel.project:
        remotes = {r for p, r in db.shares().items() if p == sel.project}
        if not remotes:
            return []
    elif sel.sessions and sel.whole:
        return []
    return _covered(db.items(), sel, remotes)


def plan(sel) -> int:
    """How many pulled items forgetting ``sel`` would delete here."""
    if not local.db_path().exists():
        return 0
    with local.TeamDB() as db:
        return len(covered(db, sel))


def local_step(ix, sel) -> int:
    """Delete the pulled items ``sel`` covers here (with the caller's index writer ``ix``)."""
    if not local.db_path().exists():
        return 0
    with local.TeamDB() as db:
        ids = covered(db, sel)
        if not ids:
            return 0
        db.forget_items(ids)
    from recall.team import index_docs

    index_docs.write(ix, [], ids, {})
    with local.TeamDB() as db:
        db.mark_indexed([], ids)
    return len(ids)


def withdraw() -> str:
    """Send the tombstones of what this machine no longer shares: "" (not joined), "queued"
    (the service's loop will), "sent N" (N withdrawn), or "pending: <why>" (it goes at the
    next sync)."""
    join = local.joined()
    if join is None:
        return ""
    from recall.team import runner

    if runner.active():
        runner.wake()
        return "queued"
    try:
        from recall.team.conn import connect
        from recall.team.sync import Sync

        conn = connect(join.url, timeout=5, server=join.server)
        try:
            done = Sync(join).push(conn)
        finally:
            conn.close()
        return f"sent {done['withdrawn']}"
    except Exception as exc:  # noqa: BLE001 - the forget itself is done; the service sends it later
        from recall.team.conn import scrub

        why = scrub(str(exc), join.url)
        log.get("team").warning("team withdrawal after forget left for the next sync: %s", why)
        return f"pending: {why}"


def step(ix, sel) -> dict:
    """The team step of ``recall forget``: {"team_items": removed here, "team": how the
    withdrawal went} (empty when this machine never joined a team)."""
    if local.joined() is None and not local.db_path().exists():
        return {}
    out = {"team_items": local_step(ix, sel)}
    how = withdraw()
    if how:
        out["team"] = how
    return out
