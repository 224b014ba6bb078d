"""Opening the index to read it, with the one-line errors every reader gives.

``recall.search.searcher.Searcher`` opens it this way; so does ``recall status``, which only
counts documents and so does not import the searcher (its query, ranking, archive and
confidence modules cost a glance at recall tens of milliseconds).
"""

from __future__ import annotations

from pathlib import Path

from recall.core import paths
from recall.core.errors import IndexMissing, RecallError


class SearchIndexError(RecallError):
    pass


def open_for_reading(index_path: Path | None = None):
    """The tantivy index at ``index_path`` (default: ``paths.index_dir()``); ``IndexMissing``
    when there is none, ``SearchIndexError`` naming the next step when it is damaged or was
    built by another version."""
    from indexer.schema import IndexCorrupt, SchemaMismatch, open_index

    path = index_path or paths.index_dir()
    try:
        return open_index(path)
    except FileNotFoundError:
        raise IndexMissing(path) from None
    except IndexCorrupt as exc:
        raise SearchIndexError(
            f"The index at {path} is damaged ({exc}): run `recall index` to rebuild it from "
            "the archive (nothing is lost)."
        ) from None
    except SchemaMismatch:
        raise SearchIndexError(
            "The index was built by another version of recall: run `recall index --rebuild`."
        ) from None
