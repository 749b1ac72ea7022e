"""Jacques Savoy's light stemmers for French, Italian, Portuguese, Bulgarian and (with Ljiljana
Dolamic) Czech, ported from ``lucene-analysis-common`` 9.12 (``FrenchLightStemmer``,
``ItalianLightStemmer``, ``PortugueseLightStemmer``, ``BulgarianStemmer``, ``CzechStemmer``; the
algorithms are BSD, the class names in each function). The same
classes are in Lucene 10.4. Lengths are Java ``char`` counts: the same as Python's for the
Basic Multilingual Plane, which is where these suffixes live."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Tuple

__all__ = ["bulgarian_stem", "czech_stem", "french_light_stem", "italian_light_stem", "portuguese_light_stem"]

_FRENCH_FOLD = str.maketrans("àáâôèéêùûîç", "aaaoeeeuuic")


def _collapse(s: str) -> str:
    """Runs of one letter collapsed to one (``StemmerUtil.delete`` in ``norm``)."""
    out = [s[0]]
    for ch in s[1:]:
        if not (ch == out[-1] and ch.isalpha()):
            out.append(ch)
    return "".join(out)


def _french_norm(s: str) -> str:
    """``FrenchLightStemmer.norm``: for words over 4 characters, accents folded and runs of one
    letter collapsed; then a final ``-ie``, ``-r``, ``-e``, ``-e`` and a doubled letter go."""
    if len(s) > 4:
        s = _collapse(s.translate(_FRENCH_FOLD))
    if len(s) > 4 and s.endswith("ie"):
        s = s[:-2]
    if len(s) <= 4:
        return s
    for last in "ree":
        if s[-1] == last:
            s = s[:-1]
    return s[:-1] if s[-1] == s[-2] and s[-1].isalpha() else s


def _cut(s: str, cut: int, repl: str) -> str:
    """Drop ``cut`` characters, then overwrite the last ``len(repl)`` with ``repl`` (the Java
    class's ``len -= cut; s[len - 1] = ...``)."""
    s = s[: len(s) - cut]
    return s[: len(s) - len(repl)] + repl if repl else s


_Rule = Tuple[int, Tuple[str, ...], int, str, bool, Optional[Tuple[int, str, int, str]]]

# FrenchLightStemmer.stem after its plural step, in order: (the word must be longer than this,
# suffixes, characters cut, replacement of the new last characters, whether norm() follows at
# once, a second rule tried right after on the result)
_FRENCH_RULES: Tuple[_Rule, ...] = (
    (9, ("issement",), 6, "r", True, None),
    (8, ("issant",), 4, "r", True, None),
    (6, ("ement",), 4, "", True, (3, "ive", 1, "f")),
    (11, ("ficatrice",), 5, "er", True, None),
    (10, ("ficateur",), 4, "er", True, None),
    (9, ("catrice",), 3, "quer", True, None),
    (8, ("cateur",), 2, "quer", True, None),
    (8, ("atrice",), 4, "er", True, None),
    (7, ("ateur",), 3, "er", True, None),
    (6, ("trice",), 1, "eur", False, None),
    (5, ("ième",), 4, "", True, None),
    (7, ("teuse",), 2, "r", True, None),
    (6, ("teur",), 1, "r", True, None),
    (5, ("euse",), 2, "", True, None),
    (8, ("ère",), 1, "er", True, None),
    (7, ("ive",), 1, "f", True, None),
    (4, ("folle", "molle"), 2, "u", True, None),
    (9, ("nnelle",), 5, "", True, None),
    (9, ("nnel",), 3, "", True, None),
    (4, ("ète",), 1, "et", False, None),
    (8, ("ique",), 4, "", False, None),
    (8, ("esse",), 3, "", True, None),
    (7, ("inage",), 3, "", True, None),
    (9, ("isation",), 7, "", True, (5, "ual", 0, "el")),
    (9, ("isateur",), 7, "", True, None),
    (8, ("ation", "ition"), 5, "", True, None),
)


def _french_plural(s: str) -> str:
    """The plural step: ``-aux`` -> ``-al`` (not after ``e``), then a final ``x``, then ``s``."""
    if len(s) > 5 and s[-1] == "x":
        if s[-3] == "a" and s[-2] == "u" and s[-4] != "e":
            s = s[:-2] + "l" + s[-1]
        s = s[:-1]
    for last in "xs":
        if len(s) > 3 and s[-1] == last:
            s = s[:-1]
    return s


@lru_cache(maxsize=100_000)
def french_light_stem(s: str) -> str:
    """``FrenchLightStemmer.stem`` on a lower-cased term."""
    s = _french_plural(s)
    for least, suffixes, cut, repl, final, then in _FRENCH_RULES:
        if len(s) > least and s.endswith(suffixes):
            s = _cut(s, cut, repl)
            if then and len(s) > then[0] and s.endswith(then[1]):
                s = _cut(s, then[2], then[3])
            if final:
                return _french_norm(s)
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


# PortugueseLightStemmer.removeSuffix after its -es rule: (longer than, suffixes, cut,
# replacement), first match wins
_PT_SUFFIXES: Tuple[Tuple[int, Tuple[str, ...], int, str], ...] = (
    (3, ("ns",), 1, "m"),
    (4, ("eis", "éis"), 1, "el"),
    (4, ("ais",), 1, "l"),
    (4, ("óis",), 1, "ol"),
    (4, ("is",), 0, "l"),
    (3, ("ões", "ães"), 1, "ão"),
    (6, ("mente",), 5, ""),
    (3, ("s",), 1, ""),
)


def _pt_remove_suffix(s: str) -> str:
    if len(s) > 4 and s.endswith("es") and s[-3] in "rslz":
        return s[:-2]
    for least, suffixes, cut, repl in _PT_SUFFIXES:
        if len(s) > least and s.endswith(suffixes):
            return _cut(s, cut, repl)
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


# CzechStemmer.removeCase: (longer than, suffixes, characters cut), first match wins
_CZECH_CASES: Tuple[Tuple[int, Tuple[str, ...], int], ...] = (
    (7, ("atech",), 5),
    (6, ("ětem", "etem", "atům"), 4),
    (
        5,
        ("ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ěte", "ete", "ěti", "eti", "ího", "iho")
        + ("ími", "ímu", "imu", "ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými"),
        3,
    ),
    (4, ("em", "es", "ém", "ím", "ům", "at", "ám", "os", "us", "ým", "mi", "ou"), 2),
    (3, tuple("aeiouůyáéíýě"), 1),
)
_CZECH_FINAL = {"c": "k", "č": "k", "z": "h", "ž": "h"}


def _czech_normalize(s: str) -> str:
    """``CzechStemmer.normalize``: ``čt``/``št`` -> ``ck``/``sk``, ``[cč]`` -> ``k``, ``[zž]`` ->
    ``h``, ``e*`` -> ``*``, ``*ů*`` -> ``*o*``."""
    if s.endswith("čt"):
        return s[:-2] + "ck"
    if s.endswith("št"):
        return s[:-2] + "sk"
    if s[-1] in _CZECH_FINAL:
        return s[:-1] + _CZECH_FINAL[s[-1]]
    if len(s) > 1 and s[-2] == "e":
        return s[:-2] + s[-1]
    if len(s) > 2 and s[-2] == "ů":
        return s[:-2] + "o" + s[-1]
    return s


@lru_cache(maxsize=100_000)
def czech_stem(s: str) -> str:
    """``CzechStemmer`` (Dolamic and Savoy's light stemmer): a case ending, a possessive
    (``-ov``, ``-in``, ``-ův``), then the final consonant normalised."""
    for least, suffixes, cut in _CZECH_CASES:
        if len(s) > least and s.endswith(suffixes):
            s = s[:-cut]
            break
    if len(s) > 5 and s.endswith(("ov", "in", "ův")):
        s = s[:-2]
    return _czech_normalize(s) if s else s


def _bg_article(s: str) -> str:
    """``BulgarianStemmer.removeArticle``: the definite article."""
    if len(s) > 6 and s.endswith("ият"):
        return s[:-3]
    if len(s) > 5 and s.endswith(("ът", "то", "те", "та", "ия")):
        return s[:-2]
    return s[:-2] if len(s) > 4 and s.endswith("ят") else s


# BulgarianStemmer.removePlural: (longer than, suffix, characters cut, replacement), in order
_BG_PLURALS: Tuple[Tuple[int, str, int, str], ...] = (
    (6, "овци", 3, ""),
    (6, "ове", 3, ""),
    (6, "еве", 2, "й"),
    (5, "ища", 3, ""),
    (5, "та", 2, ""),
    (5, "ци", 1, "к"),
    (5, "зи", 1, "г"),
)


def _bg_plural(s: str) -> str:
    for least, suffix, cut, repl in _BG_PLURALS:
        if len(s) > least and s.endswith(suffix):
            return _cut(s, cut, repl)
    if len(s) > 5 and s[-3] == "е" and s[-1] == "и":  # -е?и -> -я?
        return s[:-3] + "я" + s[-2]
    if len(s) > 4 and s.endswith("си"):
        return s[:-2] + "х"
    return s[:-1] if len(s) > 4 and s.endswith("и") else s


@lru_cache(maxsize=100_000)
def bulgarian_stem(s: str) -> str:
    """``BulgarianStemmer`` (Savoy's light stemmer): article, plural, a final vowel, ``-ен`` ->
    ``-н``, ``ъ`` before the last letter."""
    if len(s) < 4:
        return s
    if len(s) > 5 and s.endswith("ища"):
        return s[:-3]
    s = _bg_plural(_bg_article(s))
    if len(s) > 3:
        if s.endswith("я"):
            s = s[:-1]
        if s.endswith(("а", "о", "е")):
            s = s[:-1]
    if len(s) > 4 and s.endswith("ен"):
        s = s[:-2] + "н"
    if len(s) > 5 and s[-2] == "ъ":
        s = s[:-2] + s[-1]
    return s
