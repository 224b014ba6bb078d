"""The index's documents: what a message, a session, a memory, a teammate's item becomes in
Tantivy (key, doctype, the searched ``content``, the fast fields ranking reads), and a message
(or a team item) read back from an index's stored fields. The writer (``indexer.ingest``), the
re-redaction pass, the purge and the team sync build them here; the schema itself is
``indexer.schema``. A new field is added here (and in the schema).
"""

from __future__ import annotations

import tantivy

from indexer.message import Message
from indexer.schema import DOCTYPE_CODES, group_hash, prepare_content, stored_value
from indexer.state import SessionInfo
from recall.core.errors import UsageError


def message_document(m: Message, pos: int | None = None) -> tantivy.Document:
    """The document of message ``m``; ``pos``: its position in the archive, where its text
    is read from (stored in the document when there is none)."""
    # one add_* call per field: ~4x cheaper than Document(**fields), which converts kwargs
    doc = tantivy.Document()
    doc.add_text("key", "m:" + m.uuid)
    doc.add_text("doctype", "message")
    doc.add_text("session_id", m.session_id)
    doc.add_text("project", m.project)
    doc.add_text("role", m.role)
    doc.add_text("agent", m.agent)
    doc.add_integer("ts", int(m.timestamp))
    doc.add_unsigned("group", group_hash(m.session_id))
    doc.add_unsigned("dtcode", DOCTYPE_CODES["message"])
    if pos is None:
        doc.add_bytes("text", m.text.encode("utf-8", "replace"))
        doc.add_bytes("cwd", m.cwd.encode("utf-8", "replace"))
        doc.add_bytes("branch", m.branch.encode("utf-8", "replace"))
    else:
        doc.add_integer("apos", pos)
    doc.add_text("content", prepare_content(m.text))
    if m.files:
        doc.add_text("files", "\n".join(m.files))
    if m.tools:
        doc.add_text("tools", " ".join(m.tools))
    return doc


def session_document(s: SessionInfo) -> tantivy.Document:
    body = "\n".join([s.first_prompt, *s.summaries])
    doc = tantivy.Document(
        key="s:" + s.session_id,
        doctype="session",
        session_id=s.session_id,
        project=s.project,
        role="session",
        ts=int(s.ended or s.started),
        text=body.encode("utf-8", "replace"),
        cwd=s.cwd.encode("utf-8", "replace"),
        branch=b"",
        content=prepare_content(body + "\n" + " ".join(s.files)),
    )
    doc.add_unsigned("group", group_hash(s.session_id))
    doc.add_unsigned("dtcode", DOCTYPE_CODES["session"])
    doc.add_text("agent", s.agent or "claude-code")
    if s.files:
        doc.add_text("files", "\n".join(s.files))
    return doc


def memory_document(d: dict) -> tantivy.Document:
    """A memory dict (see ``Indexer.upsert_memory_docs``) -> its "mem:<id>" document."""
    tags = [str(t) for t in (d.get("tags") or []) if str(t)]
    content = str(d.get("content") or "")
    sids = [str(s) for s in (d.get("session_ids") or []) if s]
    doc = tantivy.Document(
        key="mem:" + str(d["id"]),
        doctype="memory",
        session_id=sids[0] if sids else "",
        project=str(d.get("project") or ""),
        role="memory",
        ts=int(float(d.get("updated") or 0)),
        text=content.encode("utf-8", "replace"),
        cwd=b"",
        branch=b"",
        content=prepare_content(content + " " + " ".join(tags)),
    )
    doc.add_unsigned("group", group_hash("mem:" + str(d["id"])))
    doc.add_unsigned("dtcode", DOCTYPE_CODES["memory"])
    if d.get("type"):
        doc.add_text("mtype", str(d["type"]))
    if tags:
        doc.add_text("tags", " ".join(tags))
    return doc


# A team item's key names its kind as a local memory document's does (``sum-`` a session summary,
# ``rule-`` a rule), so the hook leaves them out alike.
TEAM_KEY_PREFIX = {"summary": "sum-", "rule": "rule-"}


def team_session_key(item_id: str) -> str:
    """The ``session_id`` of every document of team item ``item_id``: one term deletes every copy."""
    return f"team:{item_id}"


def team_key(item: dict, n: int = 0) -> str:
    """``team:<id>`` (``team:sum-<id>``, ``team:rule-<id>``), ``@<n>`` added for the ``n``-th
    checkout of its project on this machine."""
    key = f"team:{TEAM_KEY_PREFIX.get(str(item.get('kind')), '')}{item['id']}"
    return key if n == 0 else f"{key}@{n}"


def team_document(item: dict, project: str, n: int = 0) -> tantivy.Document:
    """A teammate's item pulled by the team sync (a ``team.db`` row: ``id``, ``kind``, ``author``,
    ``content``, ``tags``, ``mtype``, ``updated``/``created``) -> its document in the checkout
    ``project``, the ``n``-th of its project here: its author in ``author``, its text in ``text``,
    all stored, so a purge builds it again (``team_from_document``)."""
    key, session_key = team_key(item, n), team_session_key(item["id"])
    content = str(item.get("content") or "")
    tags = [str(t) for t in item.get("tags") or [] if str(t)]
    doc = tantivy.Document()
    doc.add_text("key", key)
    doc.add_text("doctype", "team")
    doc.add_text("session_id", session_key)
    doc.add_text("project", project)
    doc.add_text("role", "team")
    doc.add_integer("ts", int(float(item.get("updated") or item.get("created") or 0)))
    doc.add_unsigned("group", group_hash(session_key))
    doc.add_unsigned("dtcode", DOCTYPE_CODES["team"])
    doc.add_bytes("text", content.encode("utf-8", "replace"))
    doc.add_bytes("cwd", b"")
    if item.get("author"):
        doc.add_text("author", str(item["author"]))
    doc.add_text("content", prepare_content(content + " " + " ".join(tags)))
    if item.get("mtype"):
        doc.add_text("mtype", str(item["mtype"]))
    if tags:
        doc.add_text("tags", " ".join(tags))
    return doc


def team_from_document(doc: tantivy.Document) -> tuple[dict, str, int]:
    """A stored team document's item, checkout and copy number: what ``team_document`` was given."""
    key, sid = str(stored_value(doc, "key")), str(stored_value(doc, "session_id"))
    item_id = sid[len("team:") :]
    rest, kind, n = key[len("team:") :], "", 0
    for k, prefix in [("memory", ""), *TEAM_KEY_PREFIX.items()]:
        if rest == prefix + item_id or rest.startswith(prefix + item_id + "@"):
            kind, copy = k, rest[len(prefix + item_id) + 1 :]
            n = int(copy) if copy.isdigit() else 0
            break
    tags = str(stored_value(doc, "tags"))
    item = {
        "id": item_id,
        "kind": kind,
        "author": str(stored_value(doc, "author")),
        "content": str(stored_value(doc, "text")),
        "tags": tags.split() if tags else [],
        "mtype": str(stored_value(doc, "mtype")),
        "updated": int(stored_value(doc, "ts", 0) or 0),
    }
    return item, str(stored_value(doc, "project")), n


def check_memory_doc(d) -> dict:
    """Validate and normalise one memory dict; raises UsageError naming what is wrong."""
    from indexer.redact import redact

    if not isinstance(d, dict) or not isinstance(d.get("id"), str) or not d["id"]:
        raise UsageError(
            "A memory document needs a non-empty string 'id': "
            "pass {'id', 'project', 'type', 'content', 'tags', 'updated', 'session_ids'}."
        )
    tags = d.get("tags") or []
    if isinstance(tags, str):
        tags = tags.split()
    sids = d.get("session_ids") or []
    if isinstance(sids, str):
        sids = [sids]
    try:
        updated = float(d.get("updated") or 0.0)
    except (TypeError, ValueError):
        raise UsageError(f"Memory {d['id']!r}: 'updated' must be seconds since the epoch.") from None
    return {
        "id": d["id"],
        "project": str(d.get("project") or ""),
        "type": str(d.get("type") or ""),
        "content": redact(str(d.get("content") or "")),
        "tags": [str(t) for t in tags],
        "updated": updated,
        "session_ids": [str(s) for s in sids],
    }


def message_from_document(doc: tantivy.Document) -> Message:
    def first(name, default=""):
        return stored_value(doc, name, default)

    key = first("key")
    return Message(
        uuid=key[2:],
        session_id=first("session_id"),
        project=first("project"),
        cwd=first("cwd"),
        branch=first("branch"),
        role=first("role"),
        timestamp=float(first("ts", 0) or 0),
        text=first("text"),
        tools=first("tools").split(),
        files=[f for f in first("files").split("\n") if f],
        agent=first("agent") or "claude-code",
    )
