"""The Tantivy index: schema, analyzers, and opening it.

Tantivy does not persist custom tokenizers, so every process that opens the index must
call ``open_index`` (which registers them). The schema carries a version in a file
beside it; opening an index of another version (or one Tantivy cannot read) makes
``open_index(..., rebuild_on_mismatch=True)`` start a fresh one and say so.

Fields (one document per message, per session, per memory and per team item; ``doctype``
tells them apart):
  key        raw, stored, indexed   unique key: "m:<uuid>", "s:<session>", "mem:<id>", "team:<id>"
  doctype    raw, stored, indexed   message | session | memory | team (a teammate's item pulled
             by the team sync, ``recall.team.index_docs``: its session_id is "team:<id>")
  session_id, project, role, mtype  raw, stored, indexed (filters)
  agent      raw, stored, indexed: the agent a message or session came from ("claude-code",
             "codex", "gemini": ``indexer.sources``); memory and team documents have none
  author     raw, stored, indexed: the teammate who shared a team item; only team documents
  ts         integer seconds, stored, indexed, fast (range filters, recency)
  apos       integer, stored only: a message's position in its archive file (see
             indexer.archive_files); its text, cwd and branch are read from there, not
             stored here (half the index, and less for merges to copy). A message indexed
             without an archive copy has no apos and stores them itself.
  text, cwd, branch   stored bytes: the redacted text as written, and where it was said
             (session and memory documents, and messages without an apos)
  content    ``recall_text``: Unicode words, lowercased, English-stemmed, with positions.
             It is fed camelCase-split text (and CJK as overlapping bigrams) so identifiers are
             found by their parts; whole identifiers, paths and dotted.names are found by a
             phrase of their parts (see recall.search.query).
  files, tools, tags   ``recall_text``, frequencies only
  group      u64, fast only: ``group_hash`` of what search groups a hit under (its session;
             a memory's own key), so ranking and grouping read columns, not stored documents
  dtcode     u64, fast only: DOCTYPE_CODES[doctype] (the ranking weights by doctype)

Why not a regex tokenizer for identifiers: measured at ~15K docs/s against ~75K for the
built-in simple tokenizer, and the backfill target is 30K messages/s end to end.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

import tantivy
from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

from recall.core.jsonio import read_json
from recall.core.lazy_re import lazy
from recall.core.paths import atomic_write, ensure_dir

# The tag of a memory document (a session summary) whose session mostly restated what recall
# itself recalled: ranked below the session it came from (recall.search.confidence).
ECHO_TAG = "recall-echo"

# 2: the group and dtcode fast fields; 3: message text in the archive (apos); 4: CJK as
# overlapping bigrams (was one term per character); 5: the agent field (Codex CLI and Gemini CLI
# sessions beside Claude Code's); 6: the author field (a team item's author was kept in
# ``branch``). Another version on disk is rebuilt from the archive (indexer.ingest), and the
# team's documents from team.db (recall.team.sync), nothing lost.
SCHEMA_VERSION = 6

DOCTYPE_CODES = {"message": 0, "session": 1, "memory": 2, "team": 3}
DOCTYPES_BY_CODE = {v: k for k, v in DOCTYPE_CODES.items()}

TEXT_ANALYZER = "recall_text"


def text_analyzer() -> tantivy.TextAnalyzer:
    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(64))
        .filter(Filter.lowercase())
        .filter(Filter.stemmer("english"))
        .build()
    )


_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")
# (compiled when first used: a class of these ranges costs ~3 ms, and English text never needs it)
_CJK = lazy("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_CJK_RUN = lazy(_CJK.pattern + "+")
# Lower-case letters and digits -> "a", upper case -> "A", the rest -> " ": every camelCase
# boundary is then an ``aA`` found by ``bytes.find`` (C speed), where the regex above costs
# ~3x more on the backfill path (long tool results).
# In UTF-8, lead bytes 0xE3-0xEF (U+3000-U+FFFF, every CJK range of _CJK) map to "C".
_CASE_MAP = bytes(
    0x61
    if (0x61 <= b <= 0x7A or 0x30 <= b <= 0x39)
    else 0x41
    if 0x41 <= b <= 0x5A
    else 0x43
    if 0xE3 <= b <= 0xEF
    else 0x20
    for b in range(256)
)


def prepare_content(text: str) -> str:
    """What the ``content`` field is fed: camelCase split, CJK runs as overlapping bigrams.

    Index and query both pass text through here, so ``getUserName`` is found by ``user``.
    Chinese and Japanese are written without spaces: a run of CJK characters becomes its
    overlapping character pairs (``数据库连接`` -> ``数据 据库 库连 连接``, a lone character
    stays itself), as Lucene's CJK analyzer does, so a query matches by words, not by single
    common characters; a query's own pairs, adjacent, are a phrase of the run.
    Measured against per-character terms and jieba's segmenter on a probe set of Chinese
    and Japanese questions (``benchmarks.cjk_probe``, docs/benchmarks.md).
    """
    # camelCase boundaries from a byte map over the UTF-8 (same result as _CAMEL): every byte
    # of a non-ASCII character maps to " ", so an "aA" is still two adjacent ASCII characters
    data = text.encode("utf-8", "surrogatepass")
    mapped = data.translate(_CASE_MAP)
    i = mapped.find(b"aA")
    if i >= 0:
        parts = []
        last = 0
        while i >= 0:
            parts.append(data[last : i + 1])
            last = i + 1
            i = mapped.find(b"aA", last)
        parts.append(data[last:])
        text = b" ".join(parts).decode("utf-8", "surrogatepass")
    if b"C" in mapped and _CJK.search(text):
        text = _CJK_RUN.sub(_bigrams, text)
    return text


def _bigrams(m: re.Match) -> str:
    run = m.group(0)
    if len(run) < 3:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


@lru_cache(maxsize=8192)  # a backfill asks for the same session's hash line after line
def group_hash(key: str) -> int:
    """A stable 64-bit hash (not Python's per-process ``hash``) for the ``group`` field."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def stored_value(doc: tantivy.Document, name: str, default=""):
    """The first stored value of ``name`` in ``doc`` (bytes fields decoded), or ``default``."""
    v = doc.get_first(name)
    if v is None:
        return default
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    for name in ("key", "doctype", "session_id", "project", "role", "mtype", "agent", "author"):
        sb.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("ts", stored=True, indexed=True, fast=True)
    for name in ("group", "dtcode"):
        sb.add_unsigned_field(name, stored=False, indexed=False, fast=True)
    sb.add_integer_field("apos", stored=True, indexed=False, fast=False)
    for name in ("text", "cwd", "branch"):
        sb.add_bytes_field(name, stored=True, indexed=False)
    sb.add_text_field("content", stored=False, tokenizer_name=TEXT_ANALYZER, index_option="position")
    for name in ("files", "tools", "tags"):
        sb.add_text_field(name, stored=True, tokenizer_name=TEXT_ANALYZER, index_option="freq")
    return sb.build()


def register(index: tantivy.Index) -> tantivy.Index:
    index.register_tokenizer(TEXT_ANALYZER, text_analyzer())
    return index


def version_file(path: Path) -> Path:
    return path / "recall-schema.json"


def index_exists(path: Path) -> bool:
    return version_file(path).exists()


def stored_version(path: Path) -> int | None:
    try:
        return int(read_json(version_file(path), {}, dict)["version"])
    except (ValueError, KeyError, TypeError):
        return None


def index_id(path: Path) -> str | None:
    """The identity of the index at ``path`` (a random id written when it was created, also
    kept in state.db beside the offsets that describe it), or None (no index, or one
    created before identities)."""
    value = read_json(version_file(path), {}, dict).get("id")
    return value if isinstance(value, str) and value else None


def _write_version(path: Path, ident: str) -> None:
    atomic_write(version_file(path), json.dumps({"version": SCHEMA_VERSION, "id": ident}))


def assign_index_id(path: Path) -> str:
    """Give an index created before identities one (kept from then on); returns it."""
    import uuid

    ident = uuid.uuid4().hex
    _write_version(path, ident)
    return ident


class SchemaMismatch(Exception):
    pass


class IndexCorrupt(SchemaMismatch):
    """The index's own files cannot be read (damaged, truncated): rebuilt from the archive
    like a schema change, but reported as what it is."""


def open_index(path: Path, create: bool = False) -> tantivy.Index:
    """Open the index at ``path`` (creating it when ``create``), with analyzers registered.

    Raises ``SchemaMismatch`` when the index on disk is of another schema version, and
    ``FileNotFoundError`` when there is none and ``create`` is false.
    """
    version = stored_version(path)
    if version is None:
        if not create:
            raise FileNotFoundError(path)
        if path.exists():
            import shutil  # (here: reading the index, as `recall status` does, needs none of it)

            shutil.rmtree(path)
        ensure_dir(path)
        index = tantivy.Index(build_schema(), path=str(path))
        assign_index_id(path)
        return register(index)
    if version != SCHEMA_VERSION:
        raise SchemaMismatch(f"index schema {version}, this recall expects {SCHEMA_VERSION}")
    try:
        index = tantivy.Index(build_schema(), path=str(path), reuse=True)
    except ValueError as exc:
        # Tantivy's own schema check, or files it cannot read (a damaged index)
        text = str(exc)
        if "schema does not match" in text.lower() or "schema error" in text.lower():
            raise SchemaMismatch(text) from exc
        raise IndexCorrupt(text.splitlines()[0][:300] if text else "unreadable") from exc
    return register(index)


def drop_index(path: Path) -> None:
    if path.exists():
        import shutil

        shutil.rmtree(path)
