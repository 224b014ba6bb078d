"""Rules in the search index: one memory document of type "rule" per rule (key
``mem:rule-<id>``), so ``recall QUERY``, the MCP tools and the hook's search find them.
Delivered like memory documents (``recall.memory.index_docs.deliver``: the service's writer,
our own, or the pending file when the index is busy), and archived with them, so a rebuild
keeps them."""

from __future__ import annotations

from recall.rules.store import Rule, parse_iso

RULE_TYPE = "rule"


def doc_id(rule_id: str) -> str:
    return f"rule-{rule_id}"


def doc(rule: Rule) -> dict:
    words = " ".join([*rule.any, *rule.all, *rule.paths, *rule.tools])
    content = f"Rule ({rule.condition()}): {rule.text}"
    return {
        "id": doc_id(rule.id),
        "project": rule.project,
        "type": RULE_TYPE,
        "content": content,
        "tags": ["rule", *words.split()][:10],
        "updated": parse_iso(rule.updated) or 0.0,
        "session_ids": [],
    }


def sync(upserts: list[Rule] = (), removed: list[str] = ()) -> str:
    """Put these rules in the index (and take removed ids out); returns how (see deliver).
    Never raises: the rule file is the truth, the index follows it."""
    from recall.core import log
    from recall.memory.index_docs import deliver

    try:
        return deliver([doc(r) for r in upserts], [f"mem:{doc_id(i)}" for i in removed])
    except Exception as exc:  # noqa: BLE001 - a busy or broken index must not lose the rule
        log.get("rules").warning("rule documents not indexed: %s", exc)
        return ""
