"""all-MiniLM-L6-v2 in numpy, for ``benchmarks.ranking_ideas --idea dense`` and
``benchmarks.coding_semantic``: the encoder recall ships (``recall.search.minilm``), pointed at
a weights folder when one is given."""

from recall.search.minilm import MiniLM  # noqa: F401
