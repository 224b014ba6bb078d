"""Team items in the local index: doctype ``team``, so every search, the prompt hook and the
MCP tools find them locally (never waiting on the network), ranked as memories are.

A pulled item gets one document per checkout of its project shared on this machine (its
``project`` is that checkout, so the hook's project filter finds it there), keyed
``team:<id>`` (``team:sum-<id>`` for a session summary and ``team:rule-<id>`` for a rule, as
local memory documents name theirs, so the hook leaves them out alike; ``@<n>`` added for a
second checkout), all with ``session_id`` ``team:<id>``: one term deletes every copy. The author is stored in ``branch`` (a team
item has no branch), the item's text in ``text``; ``ts`` is its last update.
"""

from __future__ import annotations

import tantivy



PREFIX = {"summary": "sum-", "rule": "rule-"}


def session_key(item_id: str) -> str:
    return f"team:{item_id}"


def doc_key(item: dict, n: int = 0) -> str:
    key = f"team:{PREFIX.get(str(item.get('kind')), '')}{item['id']}"
    return key if n == 0 else f"{key}@{n}"


def document(item: dict, project: str, n: int = 0) -> tantivy.Document:
    from indexer.documents import team_document

    content = str(item.get("content") or "")
    tags = [str(t) for t in item.get("tags") or [] if str(t)]
    return team_document(doc_key(item, n), session_key(item["id"]), project, str(item.get("author") or ""),
                         content, tags, str(item.get("mtype") or ""),
                         int(float(item.get("updated") or item.get("created") or 0)))


def write(ix, upserts: list[dict], deletes: list[str], checkouts: dict[str, list[str]]) -> int:
    """Replace the documents of ``upserts`` (one per checkout of their project in
    ``checkouts``: remote -> local paths) and delete those of ``deletes``, then commit with
    the service's (or our own) index writer ``ix``. Returns the documents written."""
    writer = ix.writer
    if writer is None:
        raise ix._no_writer()
    for item_id in [*(u["id"] for u in upserts), *deletes]:
        writer.delete_documents_by_term("session_id", session_key(item_id))
    written = 0
    for item in upserts:
        for n, project in enumerate(checkouts.get(item["remote"]) or [item["remote"]]):
            writer.add_document(document(item, project, n))
            written += 1
    ix.pending_other = True
    ix.commit()
    return written
