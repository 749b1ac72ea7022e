"""Query texts as ``judge sample`` and ``judge synth`` compare and clean them: one
normalisation for de-duplication, and the PII guard.

**Normalisation** (:class:`Normalisation`): Unicode NFKC (full-width letters, ligatures and
compatibility digits become their plain forms), case folding (``str.casefold``, so ``Straße``
~ ``strasse``), punctuation removed (every character of a Unicode ``P*`` category, plus the
``S*`` symbols a search box ignores), white space collapsed. Two queries with the same
normalised text are one query ("near-identical": ``Solar  Panels?`` ~ ``solar panels``).

**PII guard** (:func:`find_pii`, :func:`mask_pii`): e-mail addresses, phone numbers and long
digit runs (account, card or order numbers). The rules, in this order (a span found by one
is not looked at by the next):

The text is NFKC-folded first (full-width ``＠`` and digits, a no-break space; every dash is
``-``), so ``ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ`` is an address; masking replaces the original span.

* ``email``: ``local@domain.tld`` (RFC 5322's common subset: letters of any script (RFC 6531),
  digits, ``._%+-`` before the ``@``, a dotted domain with a 2+ letter top level);
* ``phone``: an optional ``+``, then digits with separators (a space, or one of ``.``, ``-``,
  ``/``, parentheses with a space either side; mixed) holding 9 to 15 digits in all (E.164 allows 15) with at least one
  separator or the leading ``+`` (so a plain ``123456789`` is a digit run, not a phone), and
  not shaped like a range (decimal to decimal as in ``0.53 (0.27-1.04)``, or two equally
  long groups in order as in the pages ``12442-12448``);
* ``digits``: a run of at least ``min_digits`` (7) digits standing alone (``rs10818488``, an
  identifier inside a word, is not one).

Masking replaces each span by ``[email]``, ``[phone]`` or ``[number]``; dropping leaves the
query out. Either way the counts per kind are reported.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Dict, List, Tuple

__all__ = ["PII_KINDS", "Normalisation", "find_pii", "mask_pii", "normalise"]

PII_KINDS = ("email", "phone", "digits")
_MASKS = {"email": "[email]", "phone": "[phone]", "digits": "[number]"}

# letters of any script (RFC 6531 internationalised addresses: ``josé@exämple.com``)
_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}")
# a separator: one of . - / ( ) with a space either side, or one space (``555 - 123 - 4567``,
# ``030/123 4567``, ``+49 (0)30 1234-5678``)
_PHONE = re.compile(r"(?<![\w+.\-])(?:\+\s?)?\(?\d(?:\d|(?:\s?[.\-/()]\s?|\s)(?=[\d(]))*\d(?![\w])")
_DIGIT_RUN = "(?<![\\w.,])\\d{%d,}(?![\\w])"


@dataclass(frozen=True)
class Normalisation:
    """Which steps make two query texts "the same" (see the module docstring)."""

    nfkc: bool = True
    case: bool = True
    punctuation: bool = True
    whitespace: bool = True

    def __call__(self, text: str) -> str:
        return normalise(text, self)


def normalise(text: str, how: Normalisation = Normalisation()) -> str:
    """The de-duplication key of a query text."""
    if how.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if how.case:
        text = text.casefold()
    if how.punctuation:
        text = "".join(" " if _is_punctuation(c) else c for c in text)
    if how.whitespace:
        text = " ".join(text.split())
    return text


@functools.lru_cache(maxsize=65536)
def _is_punctuation(c: str) -> bool:
    if c.isalnum() or c.isspace():
        return False
    cat = unicodedata.category(c)
    return cat[0] in "PS"


def _range_shaped(s: str) -> bool:
    """A confidence interval or a range, not a phone: ``.`` and ``-`` mixed (``0.27-1.04``),
    or two equally long groups, the second not smaller (pages ``12442-12448``)."""
    if re.search(r"\d\.\d+\s?-\s?\d+\.\d", s):  # decimal-decimal, not 555.123-4567
        return True
    groups = re.findall(r"\d+", s)
    return len(groups) == 2 and len(groups[0]) == len(groups[1]) and int(groups[1]) >= int(groups[0])


def _phone_spans(text: str) -> List[Tuple[int, int]]:
    out = []
    for m in _PHONE.finditer(text):
        s = m.group(0)
        digits = sum(c.isdigit() for c in s)
        separated = s.startswith("+") or any(not c.isdigit() for c in s)
        if 9 <= digits <= 15 and separated and not _range_shaped(s):
            out.append(m.span())
    return out


def _folded(text: str) -> Tuple[str, List[int]]:
    """``text`` NFKC-folded character by character (full-width ``＠``/digits/letters, a
    no-break space) with every dash (``–``, ``‑``, ``−``) a ``-``, and the index in ``text`` of
    each folded character, so spans found in the folded text mask the original."""
    out: List[str] = []
    where: List[int] = []
    for i, c in enumerate(text):
        f = unicodedata.normalize("NFKC", c)
        f = "".join("-" if unicodedata.category(x) == "Pd" or x == "\u2212" else x for x in f)
        out.append(f)
        where.extend([i] * len(f))
    return "".join(out), where


def find_pii(text: str, *, min_digits: int = 7) -> List[Tuple[str, int, int]]:
    """(kind, start, end) of every PII span in ``text``, in text order, not overlapping; found
    in the NFKC-folded text (:func:`_folded`), given as positions in ``text``."""
    folded, where = _folded(text)
    if folded == text:
        return _find_pii(text, min_digits)
    return [(kind, where[a], where[b - 1] + 1) for kind, a, b in _find_pii(folded, min_digits)]


def _find_pii(text: str, min_digits: int) -> List[Tuple[str, int, int]]:
    spans: List[Tuple[str, int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for _, s, e in spans)

    for m in _EMAIL.finditer(text):
        spans.append(("email", m.start(), m.end()))
    for a, b in _phone_spans(text):
        if free(a, b):
            spans.append(("phone", a, b))
    for m in re.finditer(_DIGIT_RUN % min_digits, text):
        if free(m.start(), m.end()):
            spans.append(("digits", m.start(), m.end()))
    return sorted(spans, key=lambda s: s[1])


def mask_pii(text: str, *, min_digits: int = 7) -> Tuple[str, Dict[str, int]]:
    """``text`` with every PII span masked, and the spans found per kind."""
    spans = find_pii(text, min_digits=min_digits)
    counts: Dict[str, int] = {}
    out, last = [], 0
    for kind, a, b in spans:
        out.append(text[last:a])
        out.append(_MASKS[kind])
        last = b
        counts[kind] = counts.get(kind, 0) + 1
    out.append(text[last:])
    return "".join(out), counts
