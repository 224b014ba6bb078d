"""Issue 47 (item 7): search by meaning where people search. With the service's vectors
attached, the service's ``search`` op (what `recall --raw` asks) and MCP ``memory_search``
(through the service's ``related`` op) fuse the semantic channel with the lexical ranking, so a
paraphrase finds its session from a shell; ``--json`` says which channel found each hit."""

from __future__ import annotations

import pytest

from recall.search.fused import fuse
from recall.search.hit import Hit
from tests.prompt.test_small_history import PARAPHRASES
from tests.search.test_semantic import attached, decisions  # noqa: F401


def _search_op(args):
    from recall.service import registry
    from recall.service.ops import search  # noqa: F401 (registers the op)

    return registry.OPS["search"](args)


def test_the_service_search_finds_a_paraphrase_by_meaning(attached, decisions, project):  # noqa: F811
    prompt = PARAPHRASES["prices"][0]  # "what's our convention for money amounts?"
    rows = _search_op({"text": prompt, "project": str(project), "limit": 5})
    sessions = [r["session_id"] for r in rows]
    assert decisions["prices"].session_id in sessions
    row = rows[sessions.index(decisions["prices"].session_id)]
    assert row["channel"] in ("semantic", "both") and row["similarity"] >= 0.3
    assert all(r["channel"] in ("lexical", "semantic", "both") for r in rows)
    # single messages stay the engine's
    assert all("channel" not in r for r in _search_op({"text": prompt, "project": str(project), "messages": True}))


def test_memory_search_fuses_meaning_in_the_service(attached, decisions, project):  # noqa: F811
    """MCP memory_search runs in the service when it is up (op ``mcp.memory_search``), which
    holds the vectors."""
    from recall.mcp import tools

    found = tools.memory_search(PARAPHRASES["prices"][0], cwd=str(project), limit=5)
    match = [m for m in found["matches"] if m["session_id"] == decisions["prices"].session_id]
    assert match and match[0]["channel"] in ("semantic", "both")


def test_without_vectors_the_words_alone(decisions, project):  # noqa: F811
    rows = _search_op({"text": "stripe webhooks", "project": str(project), "limit": 5})
    assert rows and all("channel" not in r for r in rows)


def _h(session, kind="message", similarity=None):
    return Hit(session, f"u-{session}", "/p", "/p", "", "user", "t", "", 1.0, kind=kind, similarity=similarity)


def test_fuse_by_reciprocal_rank():
    lexical = [_h("a"), _h("b"), _h("c")]
    semantic = [_h("c", similarity=0.6), _h("d", similarity=0.5), _h("e", similarity=0.2)]
    out = fuse(lexical, semantic, 10)
    assert [h.session_id for h in out] == ["c", "a", "b", "d"]  # e is under the floor
    assert [h.channel for h in out] == ["both", "lexical", "lexical", "semantic"]
    assert out[0].similarity == 0.6


@pytest.mark.parametrize("limit", [1, 2])
def test_fuse_keeps_the_limit(limit):
    assert len(fuse([_h("a"), _h("b")], [_h("c", similarity=0.9)], limit)) == limit
