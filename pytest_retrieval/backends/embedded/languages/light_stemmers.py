"""Jacques Savoy's light stemmers for French, Italian and Portuguese, ported from
``lucene-analysis-common`` 9.12 (``FrenchLightStemmer``, ``ItalianLightStemmer``,
``PortugueseLightStemmer``; the algorithms are BSD, the class names in each function). The same
classes are in Lucene 10.4. Lengths are Java ``char`` counts: the same as Python's for the
Basic Multilingual Plane, which is where these suffixes live."""

from __future__ import annotations

from functools import lru_cache
from typing import Tuple

__all__ = ["french_light_stem", "italian_light_stem", "portuguese_light_stem"]

_FRENCH_FOLD = str.maketrans("àáâôèéêùûîç", "aaaoeeeuuic")


def _french_norm(s: str) -> str:
    """``FrenchLightStemmer.norm``: for words over 4 characters, accents folded and runs of one
    letter collapsed; then a final ``-ie``, ``-r``, ``-e``, ``-e`` and a doubled letter go."""
    if len(s) > 4:
        s = s.translate(_FRENCH_FOLD)
        out = [s[0]]
        for ch in s[1:]:
            if not (ch == out[-1] and ch.isalpha()):
                out.append(ch)
        s = "".join(out)
    if len(s) > 4 and s.endswith("ie"):
        s = s[:-2]
    if len(s) > 4:
        if s[-1] == "r":
            s = s[:-1]
        if s[-1] == "e":
            s = s[:-1]
        if s[-1] == "e":
            s = s[:-1]
        if s[-1] == s[-2] and s[-1].isalpha():
            s = s[:-1]
    return s


# (minimum length exclusive, suffix, characters cut, replacement of the new last characters);
# the rules of FrenchLightStemmer.stem that end in norm(), in order, after its plural step
_FRENCH_RULES: Tuple[Tuple[int, str, int, str], ...] = (
    (9, "issement", 6, "r"),
    (8, "issant", 4, "r"),
)
_FRENCH_AGENT: Tuple[Tuple[int, str, int, str], ...] = (
    (11, "ficatrice", 5, "er"),
    (10, "ficateur", 4, "er"),
    (9, "catrice", 3, "quer"),
    (8, "cateur", 2, "quer"),
    (8, "atrice", 4, "er"),
    (7, "ateur", 3, "er"),
)
_FRENCH_TAIL: Tuple[Tuple[int, str, int], ...] = (  # (min, suffix, cut), straight to norm()
    (8, "esse", 3),
    (7, "inage", 3),
)


def _cut(s: str, cut: int, repl: str) -> str:
    """Drop ``cut`` characters, then overwrite the last ``len(repl)`` with ``repl``."""
    s = s[: len(s) - cut]
    return s[: len(s) - len(repl)] + repl if repl else s


@lru_cache(maxsize=100_000)
def french_light_stem(s: str) -> str:  # noqa: C901  (one branch per rule of the Java class)
    """``FrenchLightStemmer.stem`` on a lower-cased term."""
    if len(s) > 5 and s[-1] == "x":
        if s[-3] == "a" and s[-2] == "u" and s[-4] != "e":
            s = s[:-2] + "l" + s[-1]
        s = s[:-1]
    if len(s) > 3 and s[-1] == "x":
        s = s[:-1]
    if len(s) > 3 and s[-1] == "s":
        s = s[:-1]
    n = len(s)
    for least, suffix, cut, repl in _FRENCH_RULES:
        if n > least and s.endswith(suffix):
            return _french_norm(_cut(s, cut, repl))
    if n > 6 and s.endswith("ement"):
        s = s[:-4]
        if len(s) > 3 and s.endswith("ive"):
            s = s[:-2] + "f"
        return _french_norm(s)
    for least, suffix, cut, repl in _FRENCH_AGENT:
        if n > least and s.endswith(suffix):
            return _french_norm(_cut(s, cut, repl))
    if n > 6 and s.endswith("trice"):
        s = s[:-4] + "eur"
        n = len(s)
    if n > 5 and s.endswith("ième"):
        return _french_norm(s[:-4])
    if n > 7 and s.endswith("teuse"):
        return _french_norm(s[:-3] + "r")
    if n > 6 and s.endswith("teur"):
        return _french_norm(s[:-2] + "r")
    if n > 5 and s.endswith("euse"):
        return _french_norm(s[:-2])
    if n > 8 and s.endswith("ère"):
        return _french_norm(s[:-3] + "e" + s[-2])
    if n > 7 and s.endswith("ive"):
        return _french_norm(s[:-2] + "f")
    if n > 4 and (s.endswith("folle") or s.endswith("molle")):
        return _french_norm(s[:-3] + "u")
    if n > 9 and s.endswith("nnelle"):
        return _french_norm(s[:-5])
    if n > 9 and s.endswith("nnel"):
        return _french_norm(s[:-3])
    if n > 4 and s.endswith("ète"):
        s = s[:-3] + "e" + s[-2]
        n = len(s)
    if n > 8 and s.endswith("ique"):
        s = s[:-4]
        n = len(s)
    for least, suffix, cut in _FRENCH_TAIL:
        if n > least and s.endswith(suffix):
            return _french_norm(s[:-cut])
    if n > 9 and s.endswith("isation"):
        s = s[:-7]
        if len(s) > 5 and s.endswith("ual"):
            s = s[:-2] + "e" + s[-1]
        return _french_norm(s)
    if n > 9 and s.endswith("isateur"):
        return _french_norm(s[:-7])
    if n > 8 and (s.endswith("ation") or s.endswith("ition")):
        return _french_norm(s[:-5])
    return _french_norm(s)


_ITALIAN_FOLD = str.maketrans("àáâäòóôöèéêëùúûüìíîï", "aaaaooooeeeeuuuuiiii")


@lru_cache(maxsize=100_000)
def italian_light_stem(s: str) -> str:
    """``ItalianLightStemmer`` (Savoy, CLEF 2001): words of 6+ characters lose accents and a
    final vowel (``-ie``/``-he``, ``-hi``/``-ii``, ``-ia``, ``-io`` as two)."""
    if len(s) < 6:
        return s
    s = s.translate(_ITALIAN_FOLD)
    last, before = s[-1], s[-2]
    if last == "e":
        return s[:-2] if before in "ih" else s[:-1]
    if last == "i":
        return s[:-2] if before in "hi" else s[:-1]
    if last in "ao":
        return s[:-2] if before == "i" else s[:-1]
    return s


_PORTUGUESE_FOLD = str.maketrans("àáâäãòóôöõèéêëùúûüìíîïç", "aaaaaoooooeeeeuuuuiiiic")


def _pt_remove_suffix(s: str) -> str:
    n = len(s)
    if n > 4 and s.endswith("es") and s[-3] in "rslz":
        return s[:-2]
    if n > 3 and s.endswith("ns"):
        return s[:-2] + "m"
    if n > 4 and (s.endswith("eis") or s.endswith("éis")):
        return s[:-3] + "el"
    if n > 4 and s.endswith("ais"):
        return s[:-2] + "l"
    if n > 4 and s.endswith("óis"):
        return s[:-3] + "ol"
    if n > 4 and s.endswith("is"):
        return s[:-1] + "l"
    if n > 3 and (s.endswith("ões") or s.endswith("ães")):
        return s[:-3] + "ão"
    if n > 6 and s.endswith("mente"):
        return s[:-5]
    if n > 3 and s[-1] == "s":
        return s[:-1]
    return s


def _pt_norm_feminine(s: str) -> str:
    n = len(s)
    if n > 7 and s.endswith(("inha", "iaca", "eira")):
        return s[:-1] + "o"
    if n > 6:
        if s.endswith(("osa", "ica", "ida", "ada", "iva", "ama")):
            return s[:-1] + "o"
        if s.endswith("ona"):
            return s[:-3] + "ão"
        if s.endswith("ora"):
            return s[:-1]
        if s.endswith("esa"):
            return s[:-3] + "ês"
        if s.endswith("na"):
            return s[:-1] + "o"
    return s


@lru_cache(maxsize=100_000)
def portuguese_light_stem(s: str) -> str:
    """``PortugueseLightStemmer`` (Savoy's "UniNE"): a plural or adverb suffix, a feminine
    ending, a final vowel, then accents folded."""
    if len(s) < 4:
        return s
    s = _pt_remove_suffix(s)
    if len(s) > 3 and s[-1] == "a":
        s = _pt_norm_feminine(s)
    if len(s) > 4 and s[-1] in "eao":
        s = s[:-1]
    return s.translate(_PORTUGUESE_FOLD)
