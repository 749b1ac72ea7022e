"""Lucene's ``PorterStemmer`` (``PorterStemFilter``, the stemmer of the ``english`` analyzer):
Martin Porter's own ANSI C/Java implementation of his 1980 algorithm, with its three departures
from the paper (``-bli`` -> ``-ble`` instead of ``-abli`` -> ``-able``, ``-logi`` -> ``-log``,
words of one or two letters left alone). The Snowball ``porter`` of PyStemmer follows the paper,
so it stems ``possibly`` to ``possibli`` and ``us`` to ``u`` where the engines give ``possibl``
and ``us``. Ported from ``org.apache.lucene.analysis.en.PorterStemmer`` (Lucene 9.12)."""

from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Tuple

__all__ = ["porter_stem"]

# paper step 2 (Lucene step3), by the last-but-one letter: (suffix, replacement), first match wins
_STEP3 = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
# paper step 3 (Lucene step4), by the last letter
_STEP4 = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
# paper step 4 (Lucene step5), by the last-but-one letter: suffixes removed when m() > 1
_STEP5 = {
    "a": ("al",),
    "c": ("ance", "ence"),
    "e": ("er",),
    "i": ("ic",),
    "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"),
    "o": ("ion", "ou"),
    "s": ("ism",),
    "t": ("ate", "iti"),
    "u": ("ous",),
    "v": ("ive",),
    "z": ("ize",),
}


class _Word:
    """The word being stemmed: ``b[0..k]`` is the stem so far, ``j`` the end of a suffix's
    stem (set by :meth:`ends`), as in Porter's code."""

    def __init__(self, word: str):
        self.b: List[str] = list(word)
        self.k = len(word) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        ch = self.b[i]
        if ch in "aeiou":
            return False
        if ch == "y":
            return i == 0 or not self.cons(i - 1)
        return True

    def m(self) -> int:
        """The number of vowel-consonant sequences in ``b[0..j]``."""
        n, i, j = 0, 0, self.j
        while i <= j and self.cons(i):
            i += 1
        while True:
            while i <= j and not self.cons(i):
                i += 1
            if i > j:
                return n
            n += 1
            while i <= j and self.cons(i):
                i += 1
            if i > j:
                return n

    def vowel_in_stem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def double_c(self, j: int) -> bool:
        return j >= 1 and self.b[j] == self.b[j - 1] and self.cons(j)

    def cvc(self, i: int) -> bool:
        if i < 2 or not self.cons(i) or self.cons(i - 1) or not self.cons(i - 2):
            return False
        return self.b[i] not in "wxy"

    def ends(self, s: str) -> bool:
        n = len(s)
        if n > self.k + 1 or "".join(self.b[self.k - n + 1 : self.k + 1]) != s:
            return False
        self.j = self.k - n
        return True

    def set_to(self, s: str) -> None:
        self.b[self.j + 1 :] = list(s)
        self.k = self.j + len(s)

    def r(self, s: str) -> None:
        if self.m() > 0:
            self.set_to(s)

    def text(self) -> str:
        return "".join(self.b[: self.k + 1])


def _step1(w: _Word) -> None:  # plurals and -ed, -ing (paper 1a, 1b)
    if w.b[w.k] == "s":
        if w.ends("sses"):
            w.k -= 2
        elif w.ends("ies"):
            w.set_to("i")
        elif w.b[w.k - 1] != "s":
            w.k -= 1
        del w.b[w.k + 1 :]
    if w.ends("eed"):
        if w.m() > 0:
            w.k -= 1
    elif (w.ends("ed") or w.ends("ing")) and w.vowel_in_stem():
        w.k = w.j
        del w.b[w.k + 1 :]
        if w.ends("at"):
            w.set_to("ate")
        elif w.ends("bl"):
            w.set_to("ble")
        elif w.ends("iz"):
            w.set_to("ize")
        elif w.double_c(w.k):
            if w.b[w.k - 1] not in "lsz":
                w.k -= 1
        elif w.m() == 1 and w.cvc(w.k):
            w.set_to("e")
    del w.b[w.k + 1 :]


def _replace(w: _Word, rules: Optional[Tuple[Tuple[str, str], ...]]) -> None:
    for suffix, replacement in rules or ():
        if w.ends(suffix):
            w.r(replacement)
            break
    del w.b[w.k + 1 :]


def _step5(w: _Word) -> None:  # paper step 4: -al, -ance, ... removed when m() > 1
    for suffix in _STEP5.get(w.b[w.k - 1], ()):
        if w.ends(suffix):
            if suffix == "ion" and not (w.j >= 0 and w.b[w.j] in "st"):
                continue
            if w.m() > 1:
                w.k = w.j
                del w.b[w.k + 1 :]
            return


def _step6(w: _Word) -> None:  # paper step 5: a final -e, a double l
    w.j = w.k
    if w.b[w.k] == "e":
        a = w.m()
        if a > 1 or (a == 1 and not w.cvc(w.k - 1)):
            w.k -= 1
    if w.b[w.k] == "l" and w.double_c(w.k) and w.m() > 1:
        w.k -= 1


@lru_cache(maxsize=100_000)
def porter_stem(word: str) -> str:
    """The Porter stem of a lower-cased word, as Lucene's ``PorterStemmer`` gives it."""
    if len(word) <= 2:
        return word
    w = _Word(word)
    _step1(w)
    if w.ends("y") and w.vowel_in_stem():  # paper 1c (Lucene step2)
        w.b[w.k] = "i"
    if w.k > 0:
        _replace(w, _STEP3.get(w.b[w.k - 1]))
    _replace(w, _STEP4.get(w.b[w.k]))
    if w.k > 0:
        _step5(w)
    _step6(w)
    return w.text()
