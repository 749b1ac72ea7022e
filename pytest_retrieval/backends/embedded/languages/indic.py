"""The filters of the ``hindi`` analyzer, ported from ``lucene-analysis-common`` 9.12 (the same
classes in 10.4): ``IndicNormalizer`` (Unicode 5.2 ch. 6 compositions of nine Indic scripts),
``HindiNormalizer`` (Pingali and Varma, with Larkey et al.'s additions) and ``HindiStemmer``
(Ramanathan and Rao's light stemmer)."""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Tuple

__all__ = ["hindi_normalize", "hindi_stem", "indic_normalize"]

# Character.UnicodeBlock of the nine scripts: each a block of 0x80 from U+0900, its bit a flag
_DEV, _BEN, _GUR, _GUJ, _ORI, _TAM, _TEL, _KAN, _MAL = (1 << i for i in range(9))

# IndicNormalizer.decompositions: (ch1, ch2, ch3, composed, scripts), offsets in the script's
# block; ch3 -1 for none, 0xFF for a zero-width joiner
_DECOMPOSITIONS: Tuple[Tuple[int, int, int, int, int], ...] = (
    (0x05, 0x3E, 0x45, 0x11, _DEV | _GUJ),
    (0x05, 0x3E, 0x46, 0x12, _DEV),
    (0x05, 0x3E, 0x47, 0x13, _DEV | _GUJ),
    (0x05, 0x3E, 0x48, 0x14, _DEV | _GUJ),
    (0x05, 0x3E, -1, 0x06, _DEV | _BEN | _GUR | _GUJ | _ORI),
    (0x05, 0x45, -1, 0x72, _DEV),
    (0x05, 0x45, -1, 0x0D, _GUJ),
    (0x05, 0x46, -1, 0x04, _DEV),
    (0x05, 0x47, -1, 0x0F, _GUJ),
    (0x05, 0x48, -1, 0x10, _GUR | _GUJ),
    (0x05, 0x49, -1, 0x11, _DEV | _GUJ),
    (0x05, 0x4A, -1, 0x12, _DEV),
    (0x05, 0x4B, -1, 0x13, _DEV | _GUJ),
    (0x05, 0x4C, -1, 0x14, _DEV | _GUR | _GUJ),
    (0x06, 0x45, -1, 0x11, _DEV | _GUJ),
    (0x06, 0x46, -1, 0x12, _DEV),
    (0x06, 0x47, -1, 0x13, _DEV | _GUJ),
    (0x06, 0x48, -1, 0x14, _DEV | _GUJ),
    (0x07, 0x57, -1, 0x08, _MAL),
    (0x09, 0x41, -1, 0x0A, _DEV),
    (0x09, 0x57, -1, 0x0A, _TAM | _MAL),
    (0x0E, 0x46, -1, 0x10, _MAL),
    (0x0F, 0x45, -1, 0x0D, _DEV),
    (0x0F, 0x46, -1, 0x0E, _DEV),
    (0x0F, 0x47, -1, 0x10, _DEV),
    (0x0F, 0x57, -1, 0x10, _ORI),
    (0x12, 0x3E, -1, 0x13, _MAL),
    (0x12, 0x4C, -1, 0x14, _TEL | _KAN),
    (0x12, 0x55, -1, 0x13, _TEL),
    (0x12, 0x57, -1, 0x14, _TAM | _MAL),
    (0x13, 0x57, -1, 0x14, _ORI),
    (0x15, 0x3C, -1, 0x58, _DEV),
    (0x16, 0x3C, -1, 0x59, _DEV | _GUR),
    (0x17, 0x3C, -1, 0x5A, _DEV | _GUR),
    (0x1C, 0x3C, -1, 0x5B, _DEV | _GUR),
    (0x21, 0x3C, -1, 0x5C, _DEV | _BEN | _ORI),
    (0x22, 0x3C, -1, 0x5D, _DEV | _BEN | _ORI),
    (0x23, 0x4D, 0xFF, 0x7A, _MAL),
    (0x24, 0x4D, 0xFF, 0x4E, _BEN),
    (0x28, 0x3C, -1, 0x29, _DEV),
    (0x28, 0x4D, 0xFF, 0x7B, _MAL),
    (0x2B, 0x3C, -1, 0x5E, _DEV | _GUR),
    (0x2F, 0x3C, -1, 0x5F, _DEV | _BEN),
    (0x2C, 0x41, 0x41, 0x0B, _TEL),
    (0x30, 0x3C, -1, 0x31, _DEV),
    (0x30, 0x4D, 0xFF, 0x7C, _MAL),
    (0x32, 0x4D, 0xFF, 0x7D, _MAL),
    (0x33, 0x3C, -1, 0x34, _DEV),
    (0x33, 0x4D, 0xFF, 0x7E, _MAL),
    (0x35, 0x41, -1, 0x2E, _TEL),
    (0x3E, 0x45, -1, 0x49, _DEV | _GUJ),
    (0x3E, 0x46, -1, 0x4A, _DEV),
    (0x3E, 0x47, -1, 0x4B, _DEV | _GUJ),
    (0x3E, 0x48, -1, 0x4C, _DEV | _GUJ),
    (0x3F, 0x55, -1, 0x40, _KAN),
    (0x41, 0x41, -1, 0x42, _GUR),
    (0x46, 0x3E, -1, 0x4A, _TAM | _MAL),
    (0x46, 0x42, 0x55, 0x4B, _KAN),
    (0x46, 0x42, -1, 0x4A, _KAN),
    (0x46, 0x46, -1, 0x48, _MAL),
    (0x46, 0x55, -1, 0x47, _TEL | _KAN),
    (0x46, 0x56, -1, 0x48, _TEL | _KAN),
    (0x46, 0x57, -1, 0x4C, _TAM | _MAL),
    (0x47, 0x3E, -1, 0x4B, _BEN | _ORI | _TAM | _MAL),
    (0x47, 0x57, -1, 0x4C, _BEN | _ORI),
    (0x4A, 0x55, -1, 0x4B, _KAN),
    (0x72, 0x3F, -1, 0x07, _GUR),
    (0x72, 0x40, -1, 0x08, _GUR),
    (0x72, 0x47, -1, 0x0F, _GUR),
    (0x73, 0x41, -1, 0x09, _GUR),
    (0x73, 0x42, -1, 0x0A, _GUR),
    (0x73, 0x4B, -1, 0x13, _GUR),
)


def _block(ch: str) -> int:
    """The script index (0..8) of a character of the nine blocks U+0900..U+0D7F, else -1."""
    code = ord(ch)
    return (code - 0x900) >> 7 if 0x900 <= code < 0xD80 else -1


def _rules() -> Dict[Tuple[int, int], List[Tuple[int, int, int, int]]]:
    by_start: Dict[Tuple[int, int], List[Tuple[int, int, int, int]]] = {}
    for ch1, ch2, ch3, res, flags in _DECOMPOSITIONS:
        for script in range(9):
            if flags & (1 << script):
                by_start.setdefault((script, ch1), []).append((ch1, ch2, ch3, res))
    return by_start


_RULES = _rules()


def _third(text: List[str], at: int, script: int, base: int) -> int:
    """The third character of a composition: its offset in the block, 0xFF for a ZWJ, -1 for
    none or another block."""
    if at >= len(text):
        return -1
    if text[at] == "\u200d":
        return 0xFF
    return ord(text[at]) - base if _block(text[at]) == script else -1


def _compose(text: List[str], pos: int, script: int, rules: List[Tuple[int, int, int, int]]) -> None:
    """``IndicNormalizer.compose``: the first rule whose next one or two characters (same
    block; a ZWJ third) follow ``pos`` replaces them with the composed character."""
    if pos + 1 >= len(text) or _block(text[pos + 1]) != script:
        return
    base = 0x900 + (script << 7)
    ch1 = ord(text[pos + 1]) - base
    ch2 = _third(text, pos + 2, script, base)
    for _, r2, r3, res in rules:
        if r2 == ch1 and (r3 < 0 or r3 == ch2):
            text[pos] = chr(base + res)
            del text[pos + 1 : pos + (3 if r3 >= 0 else 2)]
            return


def indic_normalize(term: str) -> str:
    """``IndicNormalizer.normalize``."""
    if term.isascii():
        return term
    text = list(term)
    i = 0
    while i < len(text):
        script = _block(text[i])
        if script >= 0:
            rules = _RULES.get((script, ord(text[i]) - 0x900 - (script << 7)))
            if rules:
                _compose(text, i, script, rules)
        i += 1
    return "".join(text)


# HindiNormalizer: one character to another (None deletes it)
_HINDI_MAP: Dict[str, Optional[str]] = {
    "\u0901": "\u0902",  # candrabindu -> bindu
    "\u093c": None,  # nukta
    "\u0929": "\u0928",
    "\u0931": "\u0930",
    "\u0934": "\u0933",
    "\u0958": "\u0915",
    "\u0959": "\u0916",
    "\u095a": "\u0917",
    "\u095b": "\u091c",
    "\u095c": "\u0921",
    "\u095d": "\u0922",
    "\u095e": "\u092b",
    "\u095f": "\u092f",
    "\u200d": None,  # zwj, zwnj
    "\u200c": None,
    "\u094d": None,  # virama
    "\u0945": "\u0947",  # chandra / short vowels
    "\u0946": "\u0947",
    "\u0949": "\u094b",
    "\u094a": "\u094b",
    "\u090d": "\u090f",
    "\u090e": "\u090f",
    "\u0911": "\u0913",
    "\u0912": "\u0913",
    "\u0972": "\u0905",
    "\u0906": "\u0905",  # long -> short independent vowels
    "\u0908": "\u0907",
    "\u090a": "\u0909",
    "\u0960": "\u090b",
    "\u0961": "\u090c",
    "\u0910": "\u090f",
    "\u0914": "\u0913",
    "\u0940": "\u093f",  # long -> short dependent vowels
    "\u0942": "\u0941",
    "\u0944": "\u0943",
    "\u0963": "\u0962",
    "\u0948": "\u0947",
    "\u094c": "\u094b",
}


def hindi_normalize(term: str) -> str:
    """``HindiNormalizer.normalize``: a dead NA (NA + virama) becomes anusvara, then the
    character map above (nuktas, joiners and viramas deleted)."""
    if term.isascii():
        return term
    out: List[str] = []
    i, n = 0, len(term)
    while i < n:
        ch = term[i]
        if ch == "\u0928" and i + 1 < n and term[i + 1] == "\u094d":
            out.append("\u0902")
            i += 2
            continue
        mapped = _HINDI_MAP.get(ch, ch)
        if mapped is not None:
            out.append(mapped)
        i += 1
    return "".join(out)


# HindiStemmer: (the word must be longer than this, suffixes of that group), first match wins;
# a match removes (the bound - 1) characters, as the Java class returns len - 5 ... len - 1
_HINDI_SUFFIXES: Tuple[Tuple[int, Tuple[str, ...]], ...] = (
    (6, ("ाएंगी", "ाएंगे", "ाऊंगी", "ाऊंगा", "ाइयाँ", "ाइयों", "ाइयां")),
    (
        5,
        ("ाएगी", "ाएगा", "ाओगी", "ाओगे", "एंगी", "ेंगी", "एंगे", "ेंगे", "ूंगी", "ूंगा")
        + ("ातीं", "नाओं", "नाएं", "ताओं", "ताएं", "ियाँ", "ियों", "ियां"),
    ),
    (
        4,
        ("ाकर", "ाइए", "ाईं", "ाया", "ेगी", "ेगा", "ोगी", "ोगे", "ाने", "ाना", "ाते", "ाती")
        + ("ाता", "तीं", "ाओं", "ाएं", "ुओं", "ुएं", "ुआं"),
    ),
    (
        3,
        ("कर", "ाओ", "िए", "ाई", "ाए", "ने", "नी", "ना", "ते", "ीं", "ती", "ता", "ाँ", "ां") + ("ों", "ें"),
    ),
    (2, ("ो", "े", "ू", "ु", "ी", "ि", "ा")),
)


@lru_cache(maxsize=100_000)
def hindi_stem(term: str) -> str:
    """``HindiStemmer.stem``: the longest group of inflectional suffixes first; one suffix goes."""
    for least, suffixes in _HINDI_SUFFIXES:
        if len(term) > least and term.endswith(suffixes):
            return term[: len(term) - least + 1]
    return term
