"""The query side of search: the index's terms for any text, the stopwords, which terms
are too common to decide a match (``common_terms``), and the word families the stemmer
leaves apart (``variants``: decide -> decision).

The query text is never handed to Tantivy's query parser (it raises on raw user text): it
is analysed here with the index's own analyzer, and ``Searcher.build_query`` turns the
terms into term and phrase queries.
"""

from __future__ import annotations

import re

from indexer.schema import prepare_content, text_analyzer
from recall.core.lazy_re import lazy

W_CONTENT = 10.0  # the weight of a match in ``content`` (Searcher.build_query; the confidence's scale)
COMMON_SHARE = 0.2  # a content word in this share of the index is common (common_terms) ...
COMMON_MIN_DOCS = 5000  # ... and in at least this many documents (below, its postings are cheap)

# Tuned on the LoCoMo / LongMemEval dev sets (benchmarks/retrieval.py, docs/benchmarks.md):
# down-weighting stopwords and the proximity bonus each beat dropping stopwords outright,
# minimum-should-match, coverage re-ranking and neighbour-message smoothing.
_STOPWORDS_RAW = """a about above after again against all am an and any are as at be because been before
being below between both but by can cannot could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself me more
most my myself no nor not of off on once only or other ought our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those through
to too under until up very was we were what when where which while who whom why with would you your
yours yourself yourselves s t d ll m re ve don didn doesn isn wasn aren weren won wouldn shouldn couldn"""

# Words that carry no weight in a match either, though ranking keeps them at full weight
# (the dev sets were tuned with them): a hit that matched only these and stopwords is not
# shown, and they are never highlighted (``weighty``).
_FILLER_RAW = """ok okay please just yeah yes yep no nope hi hello hey thanks thank sure also really
actually maybe basically like well now let lets still even much many thing things stuff anyway
kind sort got gonna wanna"""

_ANALYZER = text_analyzer()
STOPWORDS = frozenset(t for w in _STOPWORDS_RAW.split() for t in _ANALYZER.analyze(w))
FILLER = frozenset(t for w in _FILLER_RAW.split() for t in _ANALYZER.analyze(w)) - STOPWORDS
# Chinese and Japanese function words, as the bigrams the index holds them as (see
# indexer.schema.prepare_content): "为什么" would otherwise tie every why-question together.
# A bigram holding a particle (的, 了, 吗; が, の, は …) or made of hiragana alone is
# grammar too (は何, 像が, した, ない). They are stopwords for ranking and for ``weighty``.
_CJK_FUNCTION_WORDS = """为什么 什么 怎么 怎么办 怎么样 怎样 我们 你们 他们 这个 那个 这些 那些 一个 没有 因为
所以 可以 就是 还是 但是 如果 然后 已经 这样 那样 哪个 哪些 是不是 有没有 """
_CJK_PARTICLES = frozenset("的了吗呢吧么啊呀嘛がのはをにでともへやかねよ")
_HIRAGANA = lazy("^[\u3040-\u309f]+$")
_CJK_TERM = lazy("^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+$")
IDENT = re.compile(r"[\w]+(?:[./\\:\-#@]+[\w]+)+|\b[\w]*[a-z0-9][A-Z][\w]*")
QUOTED = re.compile(r'"([^"]{2,200})"')


# Word families the English stemmer leaves apart: it takes off inflections (decide, decided,
# deciding -> "decid"), not derivations (decision -> "decis"), nor irregular forms (chose,
# chosen). A query term of a family also matches the family's other terms
# (``variants``), weighted VARIANT_WEIGHT of its own, so "what did we decide" finds
# "Decision: ..." while a message with the query's own word still ranks first. Query-side
# only: the index holds each word's own stem, so no re-index. Each family was checked against
# every common English word that stems like one of its members
# (``recall.search.common_words``): a stem shared with another sense is left out
# (conversion/conversation: "convers"; definition/definitely: "definit").
_FAMILIES_RAW = """decide decision | conclude conclusion | include inclusion | exclude exclusion
| divide division | collide collision | provide provision | explode explosion | invade invasion
| persuade persuasion | evade evasion | erode erosion | corrode corrosion | intrude intrusion
| extend extension | expand expansion | intend intention | comprehend comprehension
| admit admission | permit permission | submit submission | transmit transmission | omit omission
| emit emission | describe description | subscribe subscription | prescribe prescription
| assume assumption | consume consumption | resume resumption | presume presumption
| reduce reduction | introduce introduction | deduce deduction | solve solution
| resolve resolution | evolve evolution | absorb absorption | destroy destruction
| retain retention | maintain maintenance | repeat repetition | acquire acquisition
| explain explanation | verify verification | modify modification | notify notification
| identify identification | classify classification | simplify simplification
| clarify clarification | justify justification | qualify qualification | unify unification
| represent representation | fail failure | agree agreement | disagree disagreement
| settle settlement | argue argument | deny denial | sign signature | stable stability
| choose chose chosen choice | write wrote written | build built | break broke broken
| begin began begun | forget forgot forgotten | think thought | buy bought | teach taught
| catch caught | bring brought | seek sought | fight fought | speak spoke spoken
| steal stole stolen | freeze froze frozen"""
VARIANT_WEIGHT = 0.5  # a family member's match, of the query's own word's (Searcher.build_query)
_families: dict[str, tuple[str, ...]] | None = None


def variants(term: str) -> tuple[str, ...]:
    """The other terms of ``term``'s word family (``decid`` -> ``("decis",)``), or ()."""
    global _families
    if _families is None:
        families: dict[str, tuple[str, ...]] = {}
        for group in _FAMILIES_RAW.split("|"):
            stems = unique(_ANALYZER.analyze(group))  # (a call per group: ~0.1 ms in all, per word ~10)
            for s in stems:
                families[s] = tuple(x for x in stems if x != s)
        _families = families
    return _families.get(term, ())


def analyze(text: str) -> list[str]:
    """The index's terms for ``text``, in order, with duplicates."""
    try:
        return _ANALYZER.analyze(prepare_content(text))
    except Exception:  # the analyzer takes any str; be safe anyway
        return []


_cjk_stopwords: frozenset | None = None
# the index's own: what the stopwords are made with, even where a study swaps the module's
_SCHEMA_PREPARE = prepare_content


def cjk_stopwords() -> frozenset:
    """The analyzer's terms of the Chinese/Japanese function words (made on the first CJK term
    a query holds: an English search never compiles the CJK patterns they need)."""
    global _cjk_stopwords
    if _cjk_stopwords is None:
        _cjk_stopwords = frozenset(
            t for w in _CJK_FUNCTION_WORDS.split() for t in _ANALYZER.analyze(_SCHEMA_PREPARE(w))
        )
    return _cjk_stopwords


def is_stopword(term: str) -> bool:
    """An English stopword, or a Chinese/Japanese function word or grammar bigram."""
    if term in STOPWORDS:
        return True
    if term.isascii() or not _CJK_TERM.match(term):  # (an ASCII term never compiles the CJK class)
        return False
    return term in cjk_stopwords() or bool(_HIRAGANA.match(term)) or not _CJK_PARTICLES.isdisjoint(term)


def weighty(terms: list[str]) -> list[str]:
    """The query terms a shown hit must match and its snippet highlights: no stopwords, no
    filler ("ok", "just", "thing"), no bare one- or two-digit numbers, unless the query is
    nothing but those; empty when the
    query is nothing but English stopwords (then nothing it matches means anything). A
    query of Chinese or Japanese grammar alone keeps it (a lone particle is rarely typed)."""
    content = [t for t in terms if not is_stopword(t)]
    if not content:
        return [t for t in terms if t not in STOPWORDS]
    content = [t for t in content if not _bare_digits(t)] or content  # "eu-west-1": the 1 decides nothing
    return [t for t in content if t not in FILLER] or content


def _bare_digits(term: str) -> bool:
    """One or two digits on their own ("1" of eu-west-1, "2" of v2): in most messages of any
    history, so a hit that matched only them is no match (3 digits and more, a port or an
    issue number, stay words)."""
    return len(term) <= 2 and term.isdigit()


def unique(seq):
    return list(dict.fromkeys(seq))


def common_terms(dfs: dict[str, int], terms: list[str], num_docs: int) -> set[str]:
    """The query terms too common to decide which documents match: each in at least
    COMMON_MIN_DOCS documents and COMMON_SHARE of the index, while a rarer term of the query
    occurs at all. Such a term (``home``, ``src``, ``py`` in a path: each in a third of the
    messages of a heavy user) has a near-flat BM25 score, so Tantivy cannot skip any of its
    postings: ~2.5 ms each at 1M messages. It only counts inside the query's phrases
    (``Searcher.build_query``). Stopwords are never common: they are weighted down already,
    and LoCoMo's questions lose recall without them. When every other term is common, the
    rarest one stays.
    """
    floor = max(COMMON_MIN_DOCS, COMMON_SHARE * num_docs)
    words = sorted((dfs.get(t, 0), t) for t in terms if dfs.get(t, 0) and t not in STOPWORDS)
    common = {t for df, t in words if df >= floor}
    if common and len(common) == len(words):
        common.discard(words[0][1])
    return common
