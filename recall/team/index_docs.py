"""Team items in the local index: doctype ``team``, so every search, the prompt hook and the
MCP tools find them locally (never waiting on the network), ranked as memories are.

A pulled item gets one document per checkout of its project shared on this machine (its
``project`` is that checkout, so the hook's project filter finds it there), built by
``indexer.documents.team_document``: keyed ``team:<id>`` (``team:sum-<id>`` for a session
summary and ``team:rule-<id>`` for a rule, as local memory documents name theirs, so the hook
leaves them out alike; ``@<n>`` added for a second checkout), all with ``session_id``
``team:<id>``: one term deletes every copy. The author is in ``author``, the item's text in
``text``; ``ts`` is its last update.
"""

from __future__ import annotations

from indexer.documents import team_document, team_session_key


def write(ix, upserts: list[dict], deletes: list[str], checkouts: dict[str, list[str]]) -> int:
    """Replace the documents of ``upserts`` (one per checkout of their project in
    ``checkouts``: remote -> local paths) and delete those of ``deletes``, then commit with
    the service's (or our own) index writer ``ix``. Returns the documents written."""
    writer = ix.writer
    if writer is None:
        raise ix._no_writer()
    for item_id in [*(u["id"] for u in upserts), *deletes]:
        writer.delete_documents_by_term("session_id", team_session_key(item_id))
    written = 0
    for item in upserts:
        for n, project in enumerate(checkouts.get(item["remote"]) or [item["remote"]]):
            writer.add_document(team_document(item, project, n))
            written += 1
    ix.pending_other = True
    ix.commit()
    return written
