"""Token filters of the engines' language analyzers, ported from Lucene (``lucene-analysis-common``
9.12, the classes named in each function), on lists of terms.

Each function follows the Lucene class it names, character for character where it matters; the
tests compare whole analyzers with OpenSearch's ``_analyze`` (``tests/engines``)."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import FrozenSet, List, Sequence, Tuple

__all__ = [
    "CJK_TYPES",
    "apostrophe",
    "cjk_bigrams",
    "cjk_type",
    "cjk_width",
    "decimal_digits",
    "elision",
    "english_possessive",
    "stop",
    "turkish_lower",
]

_APOSTROPHES = ("'", "\u2019")


def stop(terms: List[str], words: FrozenSet[str]) -> List[str]:
    """``StopFilter``: terms in ``words`` are dropped."""
    return [t for t in terms if t not in words] if words else terms


def english_possessive(term: str) -> str:
    """``EnglishPossessiveFilter``: a trailing ``'s`` (``'``, U+2019 or U+FF07, then s or S) goes."""
    if len(term) >= 2 and term[-1] in "sS" and term[-2] in "'\u2019\uff07":
        return term[:-2]
    return term


def elision(term: str, articles: FrozenSet[str]) -> str:
    """``ElisionFilter``: the part before the first apostrophe (``'`` or U+2019), if it is one of
    ``articles`` (compared case-insensitively, as the analyzers build the set), is removed
    with the apostrophe: ``l'avion`` -> ``avion``."""
    for i, ch in enumerate(term):
        if ch in _APOSTROPHES:
            return term[i + 1 :] if term[:i].lower() in articles else term
    return term


def apostrophe(term: str) -> str:
    """``ApostropheFilter`` (Turkish): everything from the first apostrophe on is removed."""
    for i, ch in enumerate(term):
        if ch in _APOSTROPHES:
            return term[:i]
    return term


def turkish_lower(term: str) -> str:
    """``TurkishLowerCaseFilter``: ``I`` -> dotless ``ı`` unless a combining dot above (U+0307)
    follows, which makes it ``i`` and is removed; ``İ`` -> ``i``; the rest as Java lower-cases."""
    out = []
    i, n = 0, len(term)
    while i < n:
        ch = term[i]
        if ch == "I":
            j = i + 1
            while j < n and unicodedata.combining(term[j]) and term[j] != "\u0307":
                j += 1
            if j < n and term[j] == "\u0307":
                out.append("i" + term[i + 1 : j])
                i = j + 1
                continue
            out.append("\u0131")
        elif ch == "\u0130":
            out.append("i")
        else:
            out.append(ch.lower() if ch != "\u03a3" else "\u03c3")
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def _digit(ch: str) -> str:
    value = unicodedata.decimal(ch, None)
    return ch if value is None else str(value)


def decimal_digits(term: str) -> str:
    """``DecimalDigitFilter``: every decimal digit (``Nd``) becomes its ASCII digit."""
    if term.isascii():
        return term
    return "".join(_digit(ch) if ch.isdecimal() else ch for ch in term)


def _kana(ch: str) -> str:
    code = ord(ch)
    if 0xFF01 <= code <= 0xFF5E:  # fullwidth ASCII variants -> Basic Latin
        return chr(code - 0xFEE0)
    if 0xFF65 <= code <= 0xFF9F:  # halfwidth Katakana -> the standard ones
        return unicodedata.normalize("NFKC", ch)
    return ch


def cjk_width(term: str) -> str:
    """``CJKWidthFilter``: fullwidth ASCII to Basic Latin, halfwidth Katakana to fullwidth.
    (Lucene also merges a halfwidth voiced mark into the Katakana before it; not done here.)"""
    if term.isascii():
        return term
    return "".join(_kana(ch) if ch >= "\uff01" else ch for ch in term)


#: the StandardTokenizer types CJKBigramFilter joins (all four by default)
CJK_TYPES = ("han", "hiragana", "katakana", "hangul")


def _script_class(ch: str) -> str:
    code = ord(ch)
    if 0x3041 <= code <= 0x309F or 0x1B001 <= code <= 0x1B11F or code == 0x1F200:
        return "hiragana"
    if 0x30A0 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9D:
        return "katakana"
    if 0xAC00 <= code <= 0xD7A3 or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    if 0xA960 <= code <= 0xA97F or 0xD7B0 <= code <= 0xD7FF or 0xFFA0 <= code <= 0xFFDC:
        return "hangul"
    name = unicodedata.name(ch, "")
    if name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")):
        return "han"
    return ""


def cjk_type(token: str) -> str:
    """The ``StandardTokenizer`` type of a token as far as ``CJKBigramFilter`` cares: ``han``
    (``<IDEOGRAPHIC>``: one ideograph), ``hiragana`` (one character), ``katakana`` / ``hangul``
    (a token of only that script), else ``""`` (``<ALPHANUM>`` etc.). Combining marks
    (``Extend``) do not change the type."""
    kinds = {_script_class(ch) for ch in token if not unicodedata.combining(ch)}
    if len(kinds) == 1:
        kind = next(iter(kinds))
        return kind
    return ""


def cjk_bigrams(tokens: Sequence[Tuple[str, str, int, int]]) -> List[str]:
    """``CJKBigramFilter`` (all four scripts, no unigrams): ``tokens`` are ``(term, type, start,
    end)``. A run of CJK-typed tokens that touch in the text (the next one starts where the
    last ended) is cut into code points and emitted as overlapping bigrams; a run of one code
    point as that unigram; other tokens pass unchanged, in order."""
    out: List[str] = []
    run: List[str] = []
    last_end = -1

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        else:
            out.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
        run.clear()

    for term, kind, start, end in tokens:
        if kind in CJK_TYPES:
            if run and start != last_end:
                flush()
            run.extend(term)
            last_end = end
        else:
            if run:
                flush()
            out.append(term)
    if run:
        flush()
    return out
