"""The engines' ``thai`` analyzer: Lucene's ``ThaiAnalyzer`` (``lucene-analysis-common`` 9.12/10.4).

Lucene's chain is ``ThaiTokenizer``, ``LowerCaseFilter``, ``DecimalDigitFilter`` and a
``StopFilter`` (``th/stopwords.txt``). ``ThaiTokenizer`` (a ``SegmentingTokenizerBase``) reads the
text in buffers of 1024 characters cut after the last line break (CR, LF, NEL, LS, PS) when there
is one, splits each buffer into sentences with ``BreakIterator.getSentenceInstance(Locale.ROOT)``,
each sentence into words with ``BreakIterator.getWordInstance(new Locale("th"))``, and keeps the
words whose first code point is a letter or digit (``Character.isLetterOrDigit``).

Java's Thai word ``BreakIterator`` is the JDK's own dictionary-based iterator with the JDK's Thai
dictionary (``sun.text``), which no Python library ships. The word and sentence breaks here are
ICU's (``icu4py``, ``pip install 'pytest-retrieval[thai]'``), whose dictionary and algorithm
differ: on XQuAD-R Thai 17% of the texts get exactly the engines' terms and about 71% of the
terms agree (``docs/how-to/languages.md``); pythainlp's ``newmm`` agreed less (5% of texts).
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any, Iterable, Iterator, List, Optional

from ..analyzer import java_lower
from . import filters
from .chains import LanguageAnalyzer, UnknownAnalyzer, stop_words

__all__ = ["ThaiAnalyzer", "thai_analyzer"]

#: SegmentingTokenizerBase.BUFFERSIZE
BUFFER = 1024
_SAFE_ENDS = frozenset("\r\n\u0085\u2028\u2029")  # SegmentingTokenizerBase.isSafeEnd
# Character.isLetterOrDigit: the general categories Lu, Ll, Lt, Lm, Lo and Nd
_LETTER_OR_DIGIT = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nd"))


def _breakers() -> Any:
    try:
        from icu4py import breakers  # ICU4C's BreakIterator, with its data, in the wheel
    except ImportError:
        raise UnknownAnalyzer(
            "'thai' needs icu4py for its dictionary word breaks: pip install 'pytest-retrieval[thai]'"
        ) from None
    return breakers


def buffers(text: str) -> Iterator[str]:
    """The blocks ``SegmentingTokenizerBase.refill`` hands to the sentence iterator: up to
    :data:`BUFFER` characters, cut after the last line break while more text follows (with no
    line break the block is cut at the buffer's end, splitting a word as Lucene does); code
    points stand for Java's UTF-16 units (the same for text of the Basic Multilingual Plane)."""
    pos, leftover = 0, ""
    while True:
        taken = text[pos : pos + BUFFER - len(leftover)]
        pos += len(taken)
        block = leftover + taken
        if not block:
            return
        usable = len(block)
        if pos < len(text):
            cut = max((i for i, ch in enumerate(block) if ch in _SAFE_ENDS), default=-1)
            usable = cut + 1 if cut >= 0 else len(block)
        yield block[:usable]
        leftover = block[usable:]


class ThaiAnalyzer(LanguageAnalyzer):
    """``thai``: ICU word breaks in Lucene's ``ThaiTokenizer`` loop, then Lucene's filters."""

    def __init__(self) -> None:
        super().__init__("thai", java_lower)
        self._icu = _breakers()
        self._stop = stop_words("th")

    def words(self, text: str) -> List[str]:
        """``ThaiTokenizer``'s tokens: the word segments starting with a letter or digit."""
        out: List[str] = []
        icu = self._icu
        for block in buffers(text):
            for s_start, s_end in icu.SentenceBreaker(block, "root").segments():
                sentence = block[s_start:s_end]
                for w_start, w_end in icu.WordBreaker(sentence, "th").segments():
                    if unicodedata.category(sentence[w_start]) in _LETTER_OR_DIGIT:
                        out.append(sentence[w_start:w_end])
        return out

    def filter_words(self, words: Iterable[str]) -> List[str]:
        """The filters after the tokenizer: words starting with a letter or digit (the
        tokenizer's test), LowerCase, DecimalDigit, Stop (``benchmarks/thai_segmenters.py``
        runs other segmenters' words through them)."""
        out = []
        for word in words:
            if word and unicodedata.category(word[0]) in _LETTER_OR_DIGIT:
                term = filters.decimal_digits(java_lower(word))
                if term not in self._stop:
                    out.append(term)
        return out

    def tokens(self, text: Optional[str]) -> List[str]:
        return self.filter_words(self.words(text)) if text else []


@functools.cache
def thai_analyzer() -> ThaiAnalyzer:
    """The shared ``thai`` analyzer; :class:`UnknownAnalyzer` without icu4py."""
    return ThaiAnalyzer()
