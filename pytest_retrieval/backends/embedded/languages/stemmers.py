"""The small Lucene stemmers and normalisers no library has, ported from ``lucene-analysis-common``
9.12 (the class named in each function; the algorithms are Jacques Savoy's light stemmers, BSD).
Snowball stemmers come from PyStemmer instead (``chains.py``)."""

from __future__ import annotations

from typing import Tuple

__all__ = [
    "arabic_normalize",
    "arabic_stem",
    "german_light_stem",
    "german_normalize",
    "spanish_light_stem",
]

_GERMAN_FOLD = str.maketrans("äàáâöòóôïìíîüùúû", "aaaaooooiiiiuuuu")
_ST_ENDING = frozenset("bdfghklmnt")


def german_normalize(term: str) -> str:
    """``GermanNormalizationFilter`` (the German2 snowball heuristics): ``ß`` -> ``ss``; ``ä ö ü``
    -> ``a o u``; ``ae oe`` -> ``a o``; ``ue`` -> ``u`` unless after a vowel or ``q``."""
    out = []
    state = 0  # 0: ordinary; 1: stops 'u' from entering the umlaut state; 2: umlaut, 'e' deleted
    for ch in term:
        if ch in "ao":
            state = 2
        elif ch == "u":
            state = 2 if state == 0 else 1
        elif ch == "e":
            if state == 2:
                state = 1
                continue
            state = 1
        elif ch in "iqy":
            state = 1
        elif ch in "äöü":
            ch = {"ä": "a", "ö": "o", "ü": "u"}[ch]
            state = 1
        elif ch == "ß":
            ch = "ss"
            state = 0
        else:
            state = 0
        out.append(ch)
    return "".join(out)


def german_light_stem(term: str) -> str:
    """``GermanLightStemmer`` (Savoy's "UniNE" light stemmer): accents folded, then two steps
    of suffix removal."""
    s = term.translate(_GERMAN_FOLD)
    n = len(s)
    # step 1
    if n > 5 and s.endswith("ern"):
        n -= 3
    elif n > 4 and s[n - 2] == "e" and s[n - 1] in "mnrs":
        n -= 2
    elif n > 3 and s[n - 1] == "e":
        n -= 1
    elif n > 3 and s[n - 1] == "s" and s[n - 2] in _ST_ENDING:
        n -= 1
    s = s[:n]
    # step 2
    if n > 5 and s.endswith("est"):
        n -= 3
    elif n > 4 and s[n - 2] == "e" and s[n - 1] in "rn":
        n -= 2
    elif n > 4 and s[n - 2] == "s" and s[n - 1] == "t" and s[n - 3] in _ST_ENDING:
        n -= 2
    return s[:n]


_SPANISH_FOLD = str.maketrans("àáâäòóôöèéêëùúûüìíîï", "aaaaooooeeeeuuuuiiii")


def spanish_light_stem(term: str) -> str:
    """``SpanishLightStemmer`` (Savoy, CLEF 2001): words of 5+ characters lose accents and a
    final vowel or plural ending (``-eses`` -> ``-es``, ``-ces`` -> ``-z``)."""
    n = len(term)
    if n < 5:
        return term
    s = term.translate(_SPANISH_FOLD)
    last = s[-1]
    if last in "oae":
        return s[:-1]
    if last == "s":
        if s[-4:-1] == "ese":
            return s[:-2]
        if s[-3:-1] == "ce":
            return s[:-3] + "z"
        if s[-2] in "oae":
            return s[:-2]
    return s


# ArabicNormalizer: hamza-seated alefs -> alef, alef maksura -> yeh, teh marbuta -> heh;
# tatweel and the harakat (U+064B..U+0652) removed.
_ARABIC_NORM = str.maketrans(
    {"\u0622": "\u0627", "\u0623": "\u0627", "\u0625": "\u0627", "\u0649": "\u064a", "\u0629": "\u0647"}
    | {chr(c): None for c in (0x0640, *range(0x064B, 0x0653))}
)

_AR_PREFIXES: Tuple[str, ...] = (
    "\u0627\u0644",
    "\u0648\u0627\u0644",
    "\u0628\u0627\u0644",
    "\u0643\u0627\u0644",
)
_AR_PREFIXES += ("\u0641\u0627\u0644", "\u0644\u0644", "\u0648")
_AR_SUFFIXES: Tuple[str, ...] = (
    "\u0647\u0627",
    "\u0627\u0646",
    "\u0627\u062a",
    "\u0648\u0646",
    "\u064a\u0646",
)
_AR_SUFFIXES += ("\u064a\u0647", "\u064a\u0629", "\u0647", "\u0629", "\u064a")


def arabic_normalize(term: str) -> str:
    """``ArabicNormalizer`` (``ArabicNormalizationFilter``)."""
    return term.translate(_ARABIC_NORM)


def arabic_stem(term: str) -> str:
    """``ArabicStemmer``: the first matching prefix (al-, wal-, bal-, kal-, fal-, ll-, w-) goes if 2
    characters stay (``w-`` needs a 4-character word); then every suffix of the list, in order,
    that leaves 2 characters goes."""
    s = term
    for prefix in _AR_PREFIXES:
        if s.startswith(prefix) and (len(s) >= 4 if len(prefix) == 1 else len(s) >= len(prefix) + 2):
            s = s[len(prefix) :]
            break
    for suffix in _AR_SUFFIXES:
        if len(s) >= len(suffix) + 2 and s.endswith(suffix):
            s = s[: -len(suffix)]
    return s
