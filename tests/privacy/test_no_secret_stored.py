"""No secret from the corpus reaches anything recall stores: the index (stored text and
terms), the archive, the offsets/session database — whether it was typed in a prompt,
printed by a tool, passed as a tool input, or sat in a file path."""

from __future__ import annotations

import re

import tantivy

from indexer.ingest import Indexer
from indexer.schema import prepare_content, text_analyzer
from recall.core import paths
from tests.support.factory import Session
from tests.support.secrets_corpus import corpus


def _pieces(secret: str) -> list[str]:
    """The distinctive parts of a secret: every run of 8+ token characters."""
    return [p for p in re.findall(r"[A-Za-z0-9+/_\-]{8,}", secret)]


def _transcript(root):
    s = Session(cwd="/home/dev/payments")
    for i, (_kind, _secret, text) in enumerate(corpus()):
        where = i % 4
        if where == 0:
            s.user(f"here is what I see:\n{text}")
        elif where == 1:
            tid = s.tool_use("Bash", {"command": "cat .env", "description": "show config"})
            s.tool_result(tid, text)
        elif where == 2:
            s.tool_use("Bash", {"command": text[:1500]})
        else:
            s.assistant(f"The log says:\n{text}")
    s.write(root)
    return s


def _all_stored_text(searcher) -> str:
    out = []
    result = searcher.search(tantivy.Query.all_query(), searcher.num_docs or 1)
    for _score, address in result.hits:
        doc = searcher.doc(address)
        for name in ("text", "cwd", "files", "tools", "tags"):
            for v in doc.get_all(name):
                out.append(bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v))
    return "\n".join(out)


def test_no_corpus_secret_is_stored_anywhere(claude_projects):
    assert len(corpus()) >= 30
    _transcript(claude_projects)
    with Indexer() as ix:
        summary = ix.run([claude_projects])
    assert summary.messages >= len(corpus())

    from indexer.schema import open_index

    searcher = open_index(paths.index_dir()).searcher()
    stored = _all_stored_text(searcher)
    assert "[redacted:" in stored
    archive = b"".join(p.read_bytes() for p in paths.archive_dir().rglob("*") if p.is_file())
    state = paths.state_db_path().read_bytes()
    analyzer = text_analyzer()
    leaks = []
    for kind, secret, _text in corpus():
        for piece in _pieces(secret):
            if piece in stored or piece.encode() in archive or piece.encode() in state:
                leaks.append((kind, piece))
            # nor as a searchable term (the analyzer lower-cases and splits on punctuation)
            for term in analyzer.analyze(prepare_content(piece)):
                if len(term) >= 12 and searcher.doc_freq("content", term):
                    leaks.append((kind, term))
    assert leaks == []


def test_no_corpus_secret_comes_back_in_search_or_the_hook(claude_projects, capsys):
    """Issue 17 named the leaks' way out too: ``recall --raw`` and the hook's injected
    context. Every placement word of the corpus is searched; nothing secret comes back."""
    from recall.cli.app import run
    from recall.prompt.block import format_raw
    from recall.search.searcher import Searcher

    _transcript(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    shown = []
    for query in (
        "dashboard",
        "service value",
        "twilio auth token",
        "curl",
        "sshpass",
        "mysql",
        "jdbc password",
        "django key",
        "Basic",
        "backup url",
        "password",
        "token",
        "key",
    ):
        assert run(["--raw", "--limit", "50", query]) == 0
        shown.append(capsys.readouterr().out)
        hits = Searcher().search(query, limit=50, messages=True)
        shown.append(format_raw(hits, query, max_chars=9000))
    out = "\n".join(shown)
    assert "[redacted:" in out
    leaks = [(kind, piece) for kind, secret, _text in corpus() for piece in _pieces(secret) if piece in out]
    assert leaks == []
