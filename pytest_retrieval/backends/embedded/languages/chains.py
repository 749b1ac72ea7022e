"""The engines' built-in analyzers by name, as tokenizer + filter chains.

Each chain is the ``createComponents`` of the Lucene analyzer that Elasticsearch's and
OpenSearch's ``analysis-common`` module registers under that name (``GermanAnalyzerProvider``
builds ``new GermanAnalyzer(stopwords, stemExclusion)`` and so on; both engines use the
analyzers' default stop words and no stem exclusions). The tokenizer is the
``StandardTokenizer`` of :mod:`..analyzer`; Java's per-code-point lower-casing likewise.

=========  ===================================================================================
name       Lucene chain (after StandardTokenizer)
=========  ===================================================================================
standard   LowerCase (StandardAnalyzer; the engines' default stop words: none)
english    EnglishPossessive, LowerCase, Stop (33 words), PorterStem (``porter.py``)
german     LowerCase, Stop (german_stop.txt), GermanNormalization, GermanLightStem
spanish    LowerCase, Stop (spanish_stop.txt), SpanishLightStem
arabic     LowerCase, DecimalDigit, Stop (ar/stopwords.txt), ArabicNormalization, ArabicStem
cjk        CJKWidth, LowerCase, CJKBigram, Stop (cjk/stopwords.txt)
turkish    Apostrophe, TurkishLowerCase, Stop (tr/stopwords.txt), Snowball Turkish
catalan    Elision (d l m n s t), LowerCase, Stop (ca/stopwords.txt), Snowball Catalan
french     Elision (13 articles), LowerCase, Stop (french_stop.txt), FrenchLightStem
italian    Elision (21 articles), LowerCase, Stop (italian_stop.txt), ItalianLightStem
portuguese LowerCase, Stop (portuguese_stop.txt), PortugueseLightStem
dutch      LowerCase, Stop (dutch_stop.txt), StemmerOverride (4 words), Snowball Dutch (Porter)
czech      LowerCase, Stop (cz/stopwords.txt), CzechStem
bulgarian  LowerCase, Stop (bg/stopwords.txt), BulgarianStem
hindi      LowerCase, DecimalDigit, IndicNormalization, HindiNormalization, Stop (hi), HindiStem
russian, danish, finnish, hungarian, norwegian, swedish, basque, armenian, lithuanian,
estonian   LowerCase, Stop (the language's list), Snowball stemmer of the language
=========  ===================================================================================

Snowball stemmers are PyStemmer's (``pip install pytest-retrieval[languages]``), the C
library built from the same Snowball sources Lucene's generated Java classes come from;
``english``'s Porter stemmer is Lucene's own (``porter.py``); the light stemmers of ``french``,
``italian``, ``portuguese`` are in ``light_stemmers.py``, ``hindi``'s filters in ``indic.py``.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

from ..analyzer import ENGLISH_STOP_WORDS, java_lower, token_spans
from . import filters, indic, light_stemmers, stemmers
from .porter import porter_stem

__all__ = ["ANALYZER_NAMES", "LanguageAnalyzer", "UnknownAnalyzer", "named_analyzer"]

Chain = Callable[[List[str]], List[str]]


class UnknownAnalyzer(ValueError):
    """A name the embedded engine has no analyzer for (or lacks the library it needs)."""


@functools.cache
def stop_words(name: str) -> FrozenSet[str]:
    """A Lucene stop word file of ``stopwords/`` (Apache-2.0/BSD, see its NOTICE): snowball files
    (``|`` starts a comment, several words a line) or plain ones (a word a line, ``#`` comments)."""
    text = resources.files(__package__).joinpath("stopwords").joinpath(f"{name}.txt").read_text("utf-8")
    words = set()
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        words.update(line.split("|", 1)[0].split())
    return frozenset(words)


def _stemmer(algorithm: str) -> Callable[[List[str]], List[str]]:
    try:
        import Stemmer  # type: ignore[import-not-found]  # PyStemmer
    except ImportError:
        raise UnknownAnalyzer(
            f"needs PyStemmer for its Snowball stemmer ({algorithm}): pip install 'pytest-retrieval[languages]'"
        ) from None
    if algorithm == "dutch" and "dutch_porter" in Stemmer.algorithms():
        # Snowball 3 (PyStemmer 3) made Kraaij-Pohlmann its "dutch" and kept the Porter-based
        # one Lucene's DutchStemmer was generated from as "dutch_porter"
        algorithm = "dutch_porter"
    return Stemmer.Stemmer(algorithm).stemWords


class LanguageAnalyzer:
    """A named analyzer: ``tokens(text) -> terms`` like :class:`..analyzer.Analyzer`. Each
    distinct token is analysed once (the filters are per token and pure)."""

    def __init__(self, name: str, per_token: Callable[[str], Optional[str]], bigrams: bool = False):
        self.name = name
        self._per_token = per_token
        self._bigrams = bigrams
        self._memo: Dict[str, Optional[str]] = {}

    def tokens(self, text: Optional[str]) -> List[str]:
        if not text:
            return []
        spans = token_spans(text)
        if self._bigrams:
            return self._cjk(text, spans)
        memo, out = self._memo, []
        for start, end in spans:
            raw = text[start:end]
            term = memo.get(raw, "\0")
            if term == "\0":
                term = memo[raw] = self._per_token(raw)
            if term is not None:  # an empty term is a term (Lucene keeps it: Arabic "ـ")
                out.append(term)
        if len(memo) > 500_000:  # a bound on the memo; the vocabulary of one corpus stays under it
            memo.clear()
        return out

    def _cjk(self, text: str, spans: List[Tuple[int, int]]) -> List[str]:
        typed = []
        for start, end in spans:
            raw = text[start:end]
            typed.append((java_lower(filters.cjk_width(raw)), filters.cjk_type(raw), start, end))
        return filters.stop(filters.cjk_bigrams(typed), stop_words("cjk"))

    def __call__(self, text: str) -> List[str]:
        return self.tokens(text)

    def __repr__(self) -> str:
        return f"LanguageAnalyzer({self.name!r})"


def _standard(raw: str) -> Optional[str]:
    return java_lower(raw)


def _english(raw: str) -> Optional[str]:
    term = java_lower(filters.english_possessive(raw))
    return None if term in ENGLISH_STOP_WORDS else porter_stem(term)


def _german() -> Callable[[str], Optional[str]]:
    stop = stop_words("german")

    def one(raw: str) -> Optional[str]:
        term = java_lower(raw)
        return None if term in stop else stemmers.german_light_stem(stemmers.german_normalize(term))

    return one


def _spanish() -> Callable[[str], Optional[str]]:
    stop = stop_words("spanish")

    def one(raw: str) -> Optional[str]:
        term = java_lower(raw)
        return None if term in stop else stemmers.spanish_light_stem(term)

    return one


def _arabic() -> Callable[[str], Optional[str]]:
    stop = stop_words("ar")

    def one(raw: str) -> Optional[str]:
        term = filters.decimal_digits(java_lower(raw))
        if term in stop:
            return None
        return stemmers.arabic_stem(stemmers.arabic_normalize(term))

    return one


def _snowball(
    stop_file: str, algorithm: str, pre: Callable[[str], str] = java_lower
) -> Callable[[], Callable]:
    def build() -> Callable[[str], Optional[str]]:
        stop = stop_words(stop_file)
        stem = _stemmer(algorithm)

        def one(raw: str) -> Optional[str]:
            term = pre(raw)
            return None if not term or term in stop else stem([term])[0]

        return one

    return build


def _turkish_pre(raw: str) -> str:
    return filters.turkish_lower(filters.apostrophe(raw))


_CATALAN_ARTICLES = frozenset("d l m n s t".split())


def _catalan_pre(raw: str) -> str:
    return java_lower(filters.elision(raw, _CATALAN_ARTICLES))


def _light(
    stop_file: str, stem: Callable[[str], str], articles: FrozenSet[str] = frozenset()
) -> Callable[[], Callable[[str], Optional[str]]]:
    """[Elision,] LowerCase, Stop, a light stemmer (FrenchAnalyzer, ItalianAnalyzer,
    PortugueseAnalyzer)."""

    def build() -> Callable[[str], Optional[str]]:
        stop = stop_words(stop_file)

        def one(raw: str) -> Optional[str]:
            term = java_lower(filters.elision(raw, articles) if articles else raw)
            return None if term in stop else stem(term)

        return one

    return build


# FrenchAnalyzer.DEFAULT_ARTICLES, ItalianAnalyzer.DEFAULT_ARTICLES
_FRENCH_ARTICLES = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
_ITALIAN_ARTICLES = frozenset(
    "c l all dall dell nell sull coll pell gl agl dagl degl negl sugl un m t s v d".split()
)
# DutchAnalyzer.DEFAULT_STEM_DICT: StemmerOverrideFilter marks these keywords, unstemmed after
_DUTCH_OVERRIDES = {"fiets": "fiets", "bromfiets": "bromfiets", "ei": "eier", "kind": "kinder"}


def _dutch() -> Callable[[str], Optional[str]]:
    stop = stop_words("dutch")
    stem = _stemmer("dutch")

    def one(raw: str) -> Optional[str]:
        term = java_lower(raw)
        if term in stop:
            return None
        return _DUTCH_OVERRIDES.get(term) or stem([term])[0]

    return one


def _hindi() -> Callable[[str], Optional[str]]:
    stop = stop_words("hi")

    def one(raw: str) -> Optional[str]:
        term = filters.decimal_digits(java_lower(raw))
        term = indic.hindi_normalize(indic.indic_normalize(term))
        return None if term in stop else indic.hindi_stem(term)

    return one


_BUILDERS: Dict[str, Callable[[], Callable[[str], Optional[str]]]] = {
    "standard": lambda: _standard,
    "english": lambda: _english,
    "german": _german,
    "spanish": _spanish,
    "arabic": _arabic,
    "russian": _snowball("russian", "russian"),
    "danish": _snowball("danish", "danish"),
    "finnish": _snowball("finnish", "finnish"),
    "hungarian": _snowball("hungarian", "hungarian"),
    "norwegian": _snowball("norwegian", "norwegian"),
    "swedish": _snowball("swedish", "swedish"),
    "basque": _snowball("eu", "basque"),
    "armenian": _snowball("hy", "armenian"),
    "lithuanian": _snowball("lt", "lithuanian"),
    "estonian": _snowball("et", "estonian"),
    "turkish": _snowball("tr", "turkish", _turkish_pre),
    "catalan": _snowball("ca", "catalan", _catalan_pre),
    "french": _light("french", light_stemmers.french_light_stem, _FRENCH_ARTICLES),
    "italian": _light("italian", light_stemmers.italian_light_stem, _ITALIAN_ARTICLES),
    "portuguese": _light("portuguese", light_stemmers.portuguese_light_stem),
    "dutch": _dutch,
    "czech": _light("cz", light_stemmers.czech_stem),
    "bulgarian": _light("bg", light_stemmers.bulgarian_stem),
    "hindi": _hindi,
}

#: every analyzer name the embedded engine knows
ANALYZER_NAMES: Tuple[str, ...] = tuple(sorted([*_BUILDERS, "cjk"]))


@functools.cache
def named_analyzer(name: str) -> LanguageAnalyzer:
    """The shared analyzer of that name; :class:`UnknownAnalyzer` for a name it lacks."""
    if name == "cjk":
        return LanguageAnalyzer("cjk", _standard, bigrams=True)
    builder = _BUILDERS.get(name)
    if builder is None:
        raise UnknownAnalyzer(
            f"the embedded engine has no analyzer {name!r} (it has: {', '.join(ANALYZER_NAMES)})"
        )
    return LanguageAnalyzer(name, builder())
