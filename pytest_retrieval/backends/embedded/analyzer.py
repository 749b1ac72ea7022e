"""Text analysis for the embedded backend: a close copy of Elasticsearch's ``standard`` analyzer.

Elasticsearch's ``standard`` analyzer is Lucene's ``StandardTokenizer`` (Unicode UAX#29 word
boundaries) followed by ``LowerCaseFilter`` and, only when configured, a ``StopFilter``. This
module reproduces it with one compiled :mod:`re` pattern, so the embedded backend indexes and
queries the same terms an Elasticsearch/OpenSearch index with the default analyzer would.

What a token is (Lucene 9 ``StandardTokenizerImpl.jflex`` rules, re-expressed as a regex):

* runs of letters and digits (``ALetter``/``Hebrew_Letter``/``Numeric`` word-break classes),
  with UAX#29's "mid" characters kept *inside* a word when both neighbours qualify:
  ``don't``, ``o'neil``, ``u.s.a`` (letter ``.`` letter), ``foo:bar`` (``:`` is MidLetter),
  ``3.14``, ``1,000``, ``1;2`` (``,`` ``;`` are MidNum between digits); ``e.g.`` -> ``e.g``;
* ``_`` (ExtendNumLet) joins anything: ``foo_bar``, ``__init__``, ``_x_`` are single tokens;
  a lone ``_`` is no token;
* letters and digits join directly (``v2``, ``mp3``, ``4th``), but ``a.1`` is two tokens
  (``.`` only joins letter-letter or digit-digit);
* combining marks and format characters (``Extend``/``Format``/``ZWJ``) stick to the
  preceding character (NFD accents, Devanagari vowel signs, Arabic harakat, soft hyphen);
* Katakana runs are one token; Hangul joins like Latin letters; every Han ideograph and every
  Hiragana character is its own token (Lucene's ``<IDEOGRAPHIC>``/``<HIRAGANA>``); runs of
  South-East-Asian scripts without spaces (Thai, Lao, Myanmar, Khmer: ``Line_Break=SA``) are
  one token each, as Lucene does;
* emoji (``Extended_Pictographic``, with ZWJ sequences and skin-tone modifiers), flag pairs
  and ``#``/``*`` keycaps are tokens, like Lucene's ``<EMOJI>`` type (Lucene 8/9, i.e.
  Elasticsearch 7/8); ``\u00a9`` ``\u00ae`` ``\u2122`` are Extended_Pictographic and so are
  single-character tokens too (not checked against a live engine);
* everything else (whitespace, punctuation, symbols, ``-``, ``/``, ``@``, ``#``, superscript
  digits, fractions) separates tokens and is dropped.

Then: lower-casing per code point like Java's ``Character.toLowerCase`` (so ``\u0130`` -> ``i``
and ``\u03a3`` -> ``\u03c3`` always, unlike Python's context-sensitive ``str.lower``), tokens
longer than ``max_token_length`` (255) split into chunks of that length (ES >= 6 behaviour),
and optional stop words (``"english"`` = Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``,
the same 33 words as Elasticsearch's ``_english_``).

Where Lucene (and so this module) departs from plain UAX#29 word segmentation: UAX#29 cuts
text into segments and leaves the choice of "words" to the caller; Lucene keeps only segments
containing a letter, digit, Katakana, ideograph, Hiragana, South-East-Asian letter or emoji.
UAX#29 leaves Han/Hiragana/Thai-style text to dictionary-based segmenters; Lucene emits one
token per Han ideograph and per Hiragana character, and keeps each run of Line_Break=SA
characters (Thai, Lao, Myanmar, Khmer...) whole. Emoji sequences follow Unicode TR#51.

Known differences from Lucene's StandardTokenizer:

* Character tables come from Unicode 17 (generated with the third-party ``regex`` module,
  which is not needed at run time); Lucene 9 uses Unicode 9 for word breaks and Unicode 11 emoji
  data. Only characters added or re-classified since then differ (e.g. U+202F NARROW NO-BREAK
  SPACE became ExtendNumLet in Unicode 11, so ``1\u202f000`` is one token here, two in Lucene).
* The pattern is a flattened, first-match rewrite of Lucene's longest-match grammar (checked
  equal on random strings by the tests). Known gaps: a mid-word joiner (``.``, ``'``, ``:``
  ...) preceded by three or more combining marks does not join (Lucene: any number); a word
  character directly followed by an emoji ZWJ sequence ends the word where Lucene might prefer
  the longer emoji token (only for the few letters that are also pictographs, like ``\u24c2``).
* Lengths are counted in code points; Lucene counts UTF-16 units, so a token with characters
  outside the BMP splits at a different place (only matters past 255 units).
* Only the "one token per ideograph" CJK behaviour is reproduced; no bigrams (that needs the
  ``cjk`` analyzer in Elasticsearch too).
* Lucene only recognises emoji through its Unicode 11 emoji data; later emoji are dropped
  or split by Lucene but are tokens here.
* Text must be valid Unicode: lone surrogates U+D800-U+D8FF in the input can match the
  internal placeholders described in ``_Grammar``.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

__all__ = [
    "ENGLISH_STOP_WORDS",
    "Analyzer",
    "check_fields",
    "get_analyzer",
    "java_lower",
    "raw_tokens",
    "token_spans",
    "resolve_stopwords",
    "tokenize",
]

#: Lucene ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (= Elasticsearch ``_english_``), 33 words.
ENGLISH_STOP_WORDS: FrozenSet[str] = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with""".split()
)

DEFAULT_MAX_TOKEN_LENGTH = 255

# Code point ranges (hex, "start-end" or single) for the UAX#29 word-break classes the grammar
# uses. Generated from Unicode 17 data with the `regex` module: for each name, every code point
# matching the property below, merging runs across unassigned code points:
#   ALETTER  [\p{WB=ALetter}\p{WB=Hebrew_Letter}]   HEBREW   \p{WB=Hebrew_Letter}
#   NUMERIC  [\p{WB=Numeric}\uFF10-\uFF19]          KATAKANA \p{WB=Katakana}
#   HAN      \p{Script=Han}                         HIRAGANA \p{Script=Hiragana}
#   COMPLEX  \p{Line_Break=Complex_Context}         EXTEND   [\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]
#   PICTO    \p{Extended_Pictographic}              RI       \p{WB=Regional_Indicator}
#   MIDLETTER / MIDNUM / MIDNUMLET / EXTENDNUMLET / SQ / DQ: the WB classes of those names.
_TABLES = {
    "ALETTER": (
        "0041-005A 0061-007A 00AA 00B5 00B8 00BA 00C0-00D6 00D8-00F6 00F8-02D7 02DE-02FF "
        "0370-0374 0376-037D 037F 0386 0388-03F5 03F7-0481 048A-055C 055E 0560-0588 058A "
        "05D0-05F3 0620-064A 066E-066F 0671-06D3 06D5 06E5-06E6 06EE-06EF 06FA-06FC 06FF "
        "070F-0710 0712-072F 074D-07A5 07B1 07CA-07EA 07F4-07F5 07FA 0800-0815 081A 0824 0828 "
        "0840-0858 0860-0887 0889-088F 08A0-08C9 0904-0939 093D 0950 0958-0961 0971-0980 "
        "0985-09B9 09BD 09CE 09DC-09E1 09F0-09F1 09FC 0A05-0A39 0A59-0A5E 0A72-0A74 0A85-0AB9 "
        "0ABD 0AD0-0AE1 0AF9 0B05-0B39 0B3D 0B5C-0B61 0B71 0B83-0BB9 0BD0 0C05-0C39 0C3D "
        "0C58-0C61 0C80 0C85-0CB9 0CBD 0CDC-0CE1 0CF1-0CF2 0D04-0D3A 0D3D 0D4E 0D54-0D56 "
        "0D5F-0D61 0D7A-0D7F 0D85-0DC6 0F00 0F40-0F6C 0F88-0F8C 10A0-10FA 10FC-135A 1380-138F "
        "13A0-13FD 1401-166C 166F-167F 1681-169A 16A0-16EA 16EE-1711 171F-1731 1740-1751 "
        "1760-1770 1820-1884 1887-18A8 18AA-191E 1A00-1A16 1B05-1B33 1B45-1B4C 1B83-1BA0 "
        "1BAE-1BAF 1BBA-1BE5 1C00-1C23 1C4D-1C4F 1C5A-1C7D 1C80-1CBF 1CE9-1CEC 1CEE-1CF3 "
        "1CF5-1CF6 1CFA-1DBF 1E00-1FBC 1FBE 1FC2-1FCC 1FD0-1FDB 1FE0-1FEC 1FF2-1FFC 2071 207F "
        "2090-209C 2102 2107 210A-2113 2115 2119-211D 2124 2126 2128 212A-212D 212F-2139 "
        "213C-213F 2145-2149 214E 2160-2188 24B6-24E9 2C00-2CE4 2CEB-2CEE 2CF2-2CF3 2D00-2D6F "
        "2D80-2DDE 2E2F 3005 303B-303C 3105-318E 31A0-31BF A000-A48C A4D0-A4FD A500-A60C "
        "A610-A61F A62A-A66E A67F-A69D A6A0-A6EF A708-A801 A803-A805 A807-A80A A80C-A822 "
        "A840-A873 A882-A8B3 A8F2-A8F7 A8FB A8FD-A8FE A90A-A925 A930-A946 A960-A97C A984-A9B2 "
        "A9CF AA00-AA28 AA40-AA42 AA44-AA4B AAE0-AAEA AAF2-AAF4 AB01-AB69 AB70-ABE2 AC00-D7FB "
        "FB00-FB1D FB1F-FB28 FB2A-FBB1 FBD3-FD3D FD50-FD8F FD92-FDC7 FDF0-FDFB FE70-FEFC "
        "FF21-FF3A FF41-FF5A FFA0-FFDC 10000-100FA 10140-10174 10280-102D0 10300-1031F "
        "1032D-10375 10380-1039D 103A0-103CF 103D1-1049D 104B0-10563 10570-10855 10860-10876 "
        "10880-1089E 108E0-108F5 10900-10915 10920-10939 10940-109B7 109BE-109BF 10A00 "
        "10A10-10A35 10A60-10A7C 10A80-10A9C 10AC0-10AC7 10AC9-10AE4 10B00-10B35 10B40-10B55 "
        "10B60-10B72 10B80-10B91 10C00-10CF2 10D00-10D23 10D4A-10D65 10D6F-10D85 10E80-10EA9 "
        "10EB0-10EC7 10F00-10F1C 10F27-10F45 10F70-10F81 10FB0-10FC4 10FE0-10FF6 11003-11037 "
        "11071-11072 11075 11083-110AF 110D0-110E8 11103-11126 11144 11147-11172 11176 "
        "11183-111B2 111C1-111C4 111DA 111DC 11200-1122B 1123F-11240 11280-112A8 112B0-112DE "
        "11305-11339 1133D 11350 1135D-11361 11380-113B7 113D1 113D3 11400-11434 11447-1144A "
        "1145F-114AF 114C4-114C5 114C7 11580-115AE 115D8-115DB 11600-1162F 11644 11680-116AA "
        "116B8 11800-1182B 118A0-118DF 118FF-1192F 1193F 11941 119A0-119D0 119E1 119E3 11A00 "
        "11A0B-11A32 11A3A 11A50 11A5C-11A89 11A9D 11AB0-11AF8 11BC0-11BE0 11C00-11C2E 11C40 "
        "11C72-11C8F 11D00-11D30 11D46 11D60-11D89 11D98 11DB0-11DDB 11EE0-11EF2 11F02 "
        "11F04-11F33 11FB0 12000-1246E 12480-12FF0 13000-1342F 13441-13446 13460-1611D "
        "16800-16A5E 16A70-16ABE 16AD0-16AED 16B00-16B2F 16B40-16B43 16B63-16D6C 16E40-16E7F "
        "16EA0-16F4A 16F50 16F93-16FE1 16FE3 1BC00-1BC99 1D400-1D6C0 1D6C2-1D6DA 1D6DC-1D6FA "
        "1D6FC-1D714 1D716-1D734 1D736-1D74E 1D750-1D76E 1D770-1D788 1D78A-1D7A8 1D7AA-1D7C2 "
        "1D7C4-1D7CB 1DF00-1DF2A 1E030-1E06D 1E100-1E12C 1E137-1E13D 1E14E 1E290-1E2AD "
        "1E2C0-1E2EB 1E4D0-1E4EB 1E5D0-1E5ED 1E5F0 1E6C0-1E6E2 1E6E4-1E6E5 1E6E7-1E6ED "
        "1E6F0-1E6F4 1E6FE-1E8C4 1E900-1E943 1E94B 1EE00-1EEBB 1F130-1F149 1F150-1F169 "
        "1F170-1F189"
    ),
    "HEBREW": "05D0-05F2 FB1D FB1F-FB28 FB2A-FB4F",
    "NUMERIC": (
        "0030-0039 0600-0605 0660-0669 066B 06DD 06F0-06F9 07C0-07C9 0890-0891 08E2 0966-096F "
        "09E6-09EF 0A66-0A6F 0AE6-0AEF 0B66-0B6F 0BE6-0BEF 0C66-0C6F 0CE6-0CEF 0D66-0D6F "
        "0DE6-0DEF 0E50-0E59 0ED0-0ED9 0F20-0F29 1040-1049 1090-1099 17E0-17E9 1810-1819 "
        "1946-194F 19D0-19DA 1A80-1A99 1B50-1B59 1BB0-1BB9 1C40-1C49 1C50-1C59 A620-A629 "
        "A8D0-A8D9 A900-A909 A9D0-A9D9 A9F0-A9F9 AA50-AA59 ABF0-ABF9 FF10-FF19 104A0-104A9 "
        "10D30-10D49 11066-1106F 110BD 110CD 110F0-110F9 11136-1113F 111D0-111D9 112F0-112F9 "
        "11450-11459 114D0-114D9 11650-11659 116C0-116E3 11730-11739 118E0-118E9 11950-11959 "
        "11BF0-11BF9 11C50-11C59 11D50-11D59 11DA0-11DA9 11DE0-11DE9 11F50-11F59 16130-16139 "
        "16A60-16A69 16AC0-16AC9 16B50-16B59 16D70-16D79 1CCF0-1CCF9 1D7CE-1D7FF 1E140-1E149 "
        "1E2F0-1E2F9 1E4F0-1E4F9 1E5F1-1E5FA 1E950-1E959 1FBF0-1FBF9"
    ),
    "KATAKANA": (
        "3031-3035 309B-309C 30A0-30FA 30FC-30FF 31F0-31FF 32D0-32FE 3300-3357 FF66-FF9D "
        "1AFF0-1B000 1B120-1B122 1B155-1B167"
    ),
    "HAN": (
        "2E80-2FD5 3005 3007 3021-3029 3038-303B 3400-4DBF 4E00-9FFF F900-FAD9 16FE2-16FE3 "
        "16FF0-16FF6 20000-33479"
    ),
    "HIRAGANA": "3041-3096 309D-309F 1B001-1B11F 1B132-1B152 1F200",
    "COMPLEX": (
        "0E01-0E3A 0E40-0E4E 0E81-0ECE 0EDC-0EDF 1000-103F 1050-108F 109A-109F 1780-17D3 17D7 "
        "17DC-17DD 1950-19C9 19DE-19DF 1A20-1A7C 1AA0-1AAD A9E0-A9EF A9FA-A9FE AA60-AADF "
        "11700-1172B 1173A-1173B 1173F-11746"
    ),
    "EXTEND": (
        "00AD 0300-036F 0483-0489 0591-05BD 05BF 05C1-05C2 05C4-05C5 05C7 0610-061A 061C "
        "064B-065F 0670 06D6-06DC 06DF-06E4 06E7-06E8 06EA-06ED 0711 0730-074A 07A6-07B0 "
        "07EB-07F3 07FD 0816-0819 081B-0823 0825-0827 0829-082D 0859-085B 0897-089F 08CA-08E1 "
        "08E3-0903 093A-093C 093E-094F 0951-0957 0962-0963 0981-0983 09BC 09BE-09CD 09D7 "
        "09E2-09E3 09FE-0A03 0A3C-0A51 0A70-0A71 0A75 0A81-0A83 0ABC 0ABE-0ACD 0AE2-0AE3 "
        "0AFA-0B03 0B3C 0B3E-0B57 0B62-0B63 0B82 0BBE-0BCD 0BD7 0C00-0C04 0C3C 0C3E-0C56 "
        "0C62-0C63 0C81-0C83 0CBC 0CBE-0CD6 0CE2-0CE3 0CF3-0D03 0D3B-0D3C 0D3E-0D4D 0D57 "
        "0D62-0D63 0D81-0D83 0DCA-0DDF 0DF2-0DF3 0E31 0E34-0E3A 0E47-0E4E 0EB1 0EB4-0EBC "
        "0EC8-0ECE 0F18-0F19 0F35 0F37 0F39 0F3E-0F3F 0F71-0F84 0F86-0F87 0F8D-0FBC 0FC6 "
        "102B-103E 1056-1059 105E-1060 1062-1064 1067-106D 1071-1074 1082-108D 108F 109A-109D "
        "135D-135F 1712-1715 1732-1734 1752-1753 1772-1773 17B4-17D3 17DD 180B-180F 1885-1886 "
        "18A9 1920-193B 1A17-1A1B 1A55-1A7F 1AB0-1B04 1B34-1B44 1B6B-1B73 1B80-1B82 1BA1-1BAD "
        "1BE6-1BF3 1C24-1C37 1CD0-1CD2 1CD4-1CE8 1CED 1CF4 1CF7-1CF9 1DC0-1DFF 200C-200F "
        "202A-202E 2060-206F 20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302F 3099-309A A66F-A672 "
        "A674-A67D A69E-A69F A6F0-A6F1 A802 A806 A80B A823-A827 A82C A880-A881 A8B4-A8C5 "
        "A8E0-A8F1 A8FF A926-A92D A947-A953 A980-A983 A9B3-A9C0 A9E5 AA29-AA36 AA43 AA4C-AA4D "
        "AA7B-AA7D AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEB-AAEF AAF5-AAF6 ABE3-ABEA ABEC- "
        "ABED FB1E FE00-FE0F FE20-FE2F FEFF FF9E-FF9F FFF9-FFFB 101FD 102E0 10376-1037A "
        "10A01-10A0F 10A38-10A3F 10AE5-10AE6 10D24-10D27 10D69-10D6D 10EAB-10EAC 10EFA-10EFF "
        "10F46-10F50 10F82-10F85 11000-11002 11038-11046 11070 11073-11074 1107F-11082 "
        "110B0-110BA 110C2 11100-11102 11127-11134 11145-11146 11173 11180-11182 111B3-111C0 "
        "111C9-111CC 111CE-111CF 1122C-11237 1123E 11241 112DF-112EA 11300-11303 1133B-1133C "
        "1133E-1134D 11357 11362-11374 113B8-113D0 113D2 113E1-113E2 11435-11446 1145E "
        "114B0-114C3 115AF-115C0 115DC-115DD 11630-11640 116AB-116B7 1171D-1172B 1182C-1183A "
        "11930-1193E 11940 11942-11943 119D1-119E0 119E4 11A01-11A0A 11A33-11A39 11A3B-11A3E "
        "11A47 11A51-11A5B 11A8A-11A99 11B60-11B67 11C2F-11C3F 11C92-11CB6 11D31-11D45 11D47 "
        "11D8A-11D97 11EF3-11EF6 11F00-11F01 11F03 11F34-11F42 11F5A 13430-13440 13447-13455 "
        "1611E-1612F 16AF0-16AF4 16B30-16B36 16F4F 16F51-16F92 16FE4-16FF1 1BC9D-1BC9E "
        "1BCA0-1BCA3 1CF00-1CF46 1D165-1D169 1D16D-1D182 1D185-1D18B 1D1AA-1D1AD 1D242-1D244 "
        "1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DAAF 1E000-1E02A 1E08F 1E130-1E136 1E2AE "
        "1E2EC-1E2EF 1E4EC-1E4EF 1E5EE-1E5EF 1E6E3 1E6E6 1E6EE-1E6EF 1E6F5 1E8D0-1E8D6 "
        "1E944-1E94A 1F3FB-1F3FF E0001-E01EF"
    ),
    "PICTO": (
        "00A9 00AE 203C 2049 2122 2139 2194-2199 21A9-21AA 231A-231B 2328 23CF 23E9-23F3 "
        "23F8-23FA 24C2 25AA-25AB 25B6 25C0 25FB-25FE 2600-2604 260E 2611 2614-2615 2618 261D "
        "2620 2622-2623 2626 262A 262E-262F 2638-263A 2640 2642 2648-2653 265F-2660 2663 "
        "2665-2666 2668 267B 267E-267F 2692-2697 2699 269B-269C 26A0-26A1 26A7 26AA-26AB "
        "26B0-26B1 26BD-26BE 26C4-26C5 26C8 26CE-26CF 26D1 26D3-26D4 26E9-26EA 26F0-26F5 "
        "26F7-26FA 26FD 2702 2705 2708-270D 270F 2712 2714 2716 271D 2721 2728 2733-2734 2744 "
        "2747 274C 274E 2753-2755 2757 2763-2764 2795-2797 27A1 27B0 27BF 2934-2935 2B05-2B07 "
        "2B1B-2B1C 2B50 2B55 3030 303D 3297 3299 1F004 1F02C-1F02F 1F094-1F09F 1F0AF-1F0B0 1F0C0 "
        "1F0CF-1F0D0 1F0F6-1F0FF 1F170-1F171 1F17E-1F17F 1F18E 1F191-1F19A 1F1AE-1F1E5 "
        "1F201-1F20F 1F21A 1F22F 1F232-1F23A 1F23C-1F23F 1F249-1F25F 1F266-1F321 1F324-1F393 "
        "1F396-1F397 1F399-1F39B 1F39E-1F3F0 1F3F3-1F3F5 1F3F7-1F3FA 1F400-1F4FD 1F4FF-1F53D "
        "1F549-1F54E 1F550-1F567 1F56F-1F570 1F573-1F57A 1F587 1F58A-1F58D 1F590 1F595-1F596 "
        "1F5A4-1F5A5 1F5A8 1F5B1-1F5B2 1F5BC 1F5C2-1F5C4 1F5D1-1F5D3 1F5DC-1F5DE 1F5E1 1F5E3 "
        "1F5E8 1F5EF 1F5F3 1F5FA-1F64F 1F680-1F6C5 1F6CB-1F6D2 1F6D5-1F6E5 1F6E9 1F6EB-1F6F0 "
        "1F6F3-1F6FF 1F7DA-1F7FF 1F80C-1F80F 1F848-1F84F 1F85A-1F85F 1F888-1F88F 1F8AE-1F8AF "
        "1F8BC-1F8BF 1F8C2-1F8CF 1F8D9-1F8FF 1F90C-1F93A 1F93C-1F945 1F947-1F9FF 1FA58-1FA5F "
        "1FA6E-1FAFF 1FC00-1FFFD"
    ),
    "MIDLETTER": "003A 00B7 0387 055F 05F4 2027 FE13 FE55 FF1A",
    "MIDNUM": "002C 003B 037E 0589 060C-060D 066C 07F8 2044 FE50 FE54 FF0C FF1B",
    "MIDNUMLET": "002E 2018-2019 2024 FE52 FF07 FF0E",
    "EXTENDNUMLET": "005F 202F 203F-2040 2054 FE33-FE34 FE4D-FE4F FF3F",
    "SQ": "0027",
    "DQ": "0022",
    "RI": "1F1E6-1F1FF",
}


def _ranges(name: str) -> List[Tuple[int, int]]:
    out: List[Tuple[int, int]] = []
    for item in _TABLES[name].split():
        lo_s, _, hi_s = item.partition("-")
        lo = int(lo_s, 16)
        out.append((lo, int(hi_s, 16) if hi_s else lo))
    return out


def _esc(cp: int) -> str:
    return f"\\U{cp:08X}" if cp > 0xFFFF else f"\\u{cp:04X}"


def _astral_bounds(names: List[str]) -> List[int]:
    """The astral ranges of every table swept into the bounds of disjoint intervals."""
    points = set()
    for name in names:
        for lo, hi in _ranges(name):
            if hi > 0xFFFF:
                points.add(max(lo, 0x10000))
                points.add(hi + 1)
    return sorted(points)


def _astral_masks(names: List[str], bounds: List[int]) -> List[int]:
    """For each interval of ``bounds``, the tables (bit ``i`` for ``names[i]``) holding it."""
    masks = [0] * len(bounds)
    for bit, name in enumerate(names):
        for lo, hi in _ranges(name):
            if hi <= 0xFFFF:
                continue
            lo = max(lo, 0x10000)
            first = bisect.bisect_left(bounds, lo)
            for i in range(first, bisect.bisect_left(bounds, hi + 1)):
                masks[i] |= 1 << bit
    return masks


def _bmp_class(name: str) -> str:
    """The BMP part of a table as the body of a character class."""
    return "".join(
        _esc(lo) if lo == min(hi, 0xFFFF) else f"{_esc(lo)}-{_esc(min(hi, 0xFFFF))}"
        for lo, hi in _ranges(name)
        if lo <= 0xFFFF
    )


class _Grammar:
    """The compiled pattern plus the astral-plane substitution it relies on.

    Speed trick: :mod:`re` tests a character class containing code points above U+FFFF by a
    linear scan over those ranges whenever the bitmap test fails, which made the pattern ~10x
    slower. So the classes in the pattern hold only BMP ranges plus one *placeholder* per
    distinct set of classes an astral character can belong to (lone surrogates
    U+D800..., which never occur in real text). Text containing astral characters is
    matched in a copy where each one is replaced by its placeholder (same length, so the
    match spans index the original text)."""

    def __init__(self) -> None:
        names = list(_TABLES)
        bounds = _astral_bounds(names)
        masks = _astral_masks(names, bounds)
        placeholder_of_mask: Dict[int, int] = {}
        for m in masks:
            if m and m not in placeholder_of_mask:
                placeholder_of_mask[m] = 0xD800 + len(placeholder_of_mask)
        self._bounds = bounds
        self._placeholders = [chr(placeholder_of_mask[m]) if m else "\udbff" for m in masks]
        self._classes: Dict[str, str] = {
            name: _bmp_class(name)
            + "".join(_esc(ph) for m, ph in placeholder_of_mask.items() if m >> bit & 1)
            for bit, name in enumerate(names)
        }
        self.pattern = self._compile()

    def _astral_placeholder(self, match: re.Match[str]) -> str:
        i = bisect.bisect_right(self._bounds, ord(match.group())) - 1
        return self._placeholders[i] if i >= 0 else "\udbff"

    def spans(self, text: str) -> List[Tuple[int, int]]:
        mapped = _ASTRAL.sub(self._astral_placeholder, text) if _ASTRAL.search(text) else text
        return [m.span() for m in self.pattern.finditer(mapped)]

    def findall(self, text: str) -> List[str]:
        if not _ASTRAL.search(text):
            return self.pattern.findall(text)
        mapped = _ASTRAL.sub(self._astral_placeholder, text)
        return [text[m.start() : m.end()] for m in self.pattern.finditer(mapped)]

    def _compile(self) -> re.Pattern[str]:
        """Lucene 9's StandardTokenizer grammar, flattened into one fast alternation.

        Lucene's word rule, ``ENL* block (ENL+ block)* ENL*`` with ``block`` a Katakana run or
        a run of letters/digits, is written with character-class runs (``[L][L E]*+``) rather
        than one group per character, and the "mid" joiners (WB6/7, WB11/12) as look-arounds;
        that is several times faster in :mod:`re` and gives the same tokens
        (``tests/test_embedded.py`` checks it against a literal transcription of the grammar
        on random strings). A joiner is recognised after up to two combining marks (a
        look-behind must have a fixed width); Lucene allows any number."""
        c = self._classes
        ext = c["EXTEND"]
        letter, digit, hebrew = c["ALETTER"], c["NUMERIC"], c["HEBREW"]
        mid_letter = c["MIDLETTER"] + c["MIDNUMLET"] + c["SQ"]
        mid_num = c["MIDNUM"] + c["MIDNUMLET"] + c["SQ"]

        def after(cls: str) -> str:  # previous base character in cls, <= 2 marks between
            return f"(?:(?<=[{cls}])|(?<=[{cls}][{ext}])|(?<=[{cls}][{ext}]{{2}}))"

        any_mid = mid_letter + mid_num + c["DQ"]
        joiner = (  # the look-ahead first: most words end in a space, which fails it at once
            f"(?=[{any_mid}])"
            f"(?:{after(letter)}[{mid_letter}][{ext}]*(?=[{letter}])"  # WB6/7: a.b don't
            f"|{after(digit)}[{mid_num}][{ext}]*(?=[{digit}])"  # WB11/12: 3.14 1,000
            f"|{after(hebrew)}[{c['DQ']}][{ext}]*(?=[{hebrew}])"  # WB7b/c
            f"|{after(hebrew)}[{c['SQ']}][{ext}]*(?=[{letter}{digit}]))"  # WB7a + a run
        )
        alnum_run = (
            f"[{letter}{digit}][{letter}{digit}{ext}]*+"
            f"(?:{joiner}[{letter}{digit}][{letter}{digit}{ext}]*+)*"
            f"(?:(?=[{c['SQ']}]){after(hebrew)}[{c['SQ']}][{ext}]*)?"  # WB7a: Hebrew x "'"
        )
        katakana_run = f"[{c['KATAKANA']}][{c['KATAKANA']}{ext}]*+"
        enl_run = f"[{c['EXTENDNUMLET']}][{c['EXTENDNUMLET']}{ext}]*+"
        block = f"(?:{alnum_run}|{katakana_run})"
        word = f"(?:{enl_run})?{block}(?:{enl_run}{block})*(?:{enl_run})?"

        # Emoji (Lucene's <EMOJI> rule, simplified): pictographs with their modifiers and
        # variation selectors (all WB=Extend) joined by ZWJ, flag pairs, keycaps.
        picto = f"[{c['PICTO']}]"
        ext_no_zwj = f"(?:(?!\\u200D)[{ext}])*"
        emoji = (
            f"{picto}{ext_no_zwj}(?:\\u200D{picto}{ext_no_zwj})*"
            f"|[{c['RI']}][{ext}]*[{c['RI']}][{ext}]*"
            f"|[#*]\\uFE0F?\\u20E3[{ext}]*"  # digit keycaps are words already
        )
        south_east_asian = f"[{c['COMPLEX']}][{c['COMPLEX']}{ext}]*+"
        single = f"[{c['HAN']}{c['HIRAGANA']}][{ext}]*"  # one token per ideograph / hiragana
        return re.compile(f"{word}|{emoji}|{south_east_asian}|{single}")


# The same grammar restricted to ASCII text, where it reduces to: ``\w`` runs with at least one
# letter or digit (``_`` is ExtendNumLet), joined by ``: . '`` between letters and ``, ; . '``
# between digits. About twice as fast as the full pattern; the tests check they agree.
_ASCII_WORD = re.compile(
    r"_*[A-Za-z0-9]\w*(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[,;.'](?=[0-9]))\w+)*",
    re.ASCII,
)
_ASTRAL = re.compile("[\\U00010000-\\U0010FFFF]")
_GRAMMAR: Optional[_Grammar] = None


def _grammar() -> _Grammar:
    global _GRAMMAR
    if _GRAMMAR is None:
        _GRAMMAR = _Grammar()
    return _GRAMMAR


def _findall(text: str) -> List[str]:
    if text.isascii():  # the common case; does not even need the full pattern compiled
        return _ASCII_WORD.findall(text)
    return _grammar().findall(text)


def token_spans(
    text: Optional[str], max_token_length: int = DEFAULT_MAX_TOKEN_LENGTH
) -> List[Tuple[int, int]]:
    """The tokenizer's tokens as ``(start, end)`` spans of ``text`` (code point offsets), a token
    longer than ``max_token_length`` cut into pieces of that length (the language analyzers need
    offsets: ``CJKBigramFilter`` joins only adjacent tokens)."""
    if not text:
        return []
    if text.isascii():
        spans = [m.span() for m in _ASCII_WORD.finditer(text)]
    else:
        spans = _grammar().spans(text)
    limit = max_token_length
    if any(end - start > limit for start, end in spans):
        spans = [(i, min(i + limit, end)) for start, end in spans for i in range(start, end, limit)]
    return spans


def java_lower(text: str) -> str:
    """Lower case per code point like Java's ``Character.toLowerCase`` (Lucene's ``LowerCaseFilter``)."""
    return _lower(text)


def raw_tokens(text: Optional[str]) -> List[str]:
    """The tokenizer alone: UAX#29-like words of ``text`` as they appear (no lower-casing)."""
    return _findall(text) if text else []


# Java's Character.toLowerCase is per code point: U+0130 -> "i" (Python: "i" + U+0307) and
# U+03A3 -> U+03C3 everywhere (Python uses final sigma U+03C2 at the end of a word).
_JAVA_LOWER_FIXES = str.maketrans({"\u0130": "i", "\u03a3": "\u03c3"})


def _lower(token: str) -> str:
    if token.isascii():
        return token.lower()
    return token.translate(_JAVA_LOWER_FIXES).lower()


StopWords = Union[None, str, Iterable[str]]


def resolve_stopwords(stopwords: StopWords) -> FrozenSet[str]:
    """``None``/``"none"``/``"_none_"`` -> no stop words; ``"english"``/``"_english_"`` -> the
    33 Lucene words; an iterable of words -> those (lower-cased). Anything else: ValueError."""
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        name = stopwords.strip().lower().strip("_")
        if name in ("", "none"):
            return frozenset()
        if name == "english":
            return ENGLISH_STOP_WORDS
        raise ValueError(f"unknown stop word list {stopwords!r} (known: 'english', or a list of words)")
    return frozenset(_lower(w) for w in stopwords)


class Analyzer:
    """Tokenizer + lower-case + optional stop words; ``analyzer(text) -> list of terms``."""

    def __init__(self, stopwords: StopWords = None, max_token_length: int = DEFAULT_MAX_TOKEN_LENGTH):
        if max_token_length < 1:
            raise ValueError("max_token_length must be >= 1")
        self.stopwords = resolve_stopwords(stopwords)
        self.max_token_length = int(max_token_length)

    def __call__(self, text: str) -> List[str]:
        return self.tokens(text)

    def tokens(self, text: Optional[str]) -> List[str]:
        if not text:
            return []
        # Lower-casing the whole text first gives the same terms as Lucene's per-token
        # LowerCaseFilter (case mapping never changes a character's word-break class here,
        # and _lower keeps lengths), and is much faster than one call per token.
        terms = _findall(_lower(text))
        limit = self.max_token_length
        if terms and max(map(len, terms)) > limit:
            terms = [t[i : i + limit] for t in terms for i in range(0, len(t), limit)]
        if self.stopwords:
            stop = self.stopwords
            terms = [t for t in terms if t not in stop]
        return terms

    def __repr__(self) -> str:
        stop = "english" if self.stopwords == ENGLISH_STOP_WORDS else len(self.stopwords)
        return f"Analyzer(stopwords={stop!r}, max_token_length={self.max_token_length})"


_ANALYZERS: Dict[Tuple[Optional[str], int], Analyzer] = {}


def get_analyzer(
    stopwords: Optional[str] = None, max_token_length: int = DEFAULT_MAX_TOKEN_LENGTH
) -> Analyzer:
    """A shared analyzer for a named stop word list (``None`` or ``"english"``)."""
    key = (stopwords, max_token_length)
    analyzer = _ANALYZERS.get(key)
    if analyzer is None:
        analyzer = _ANALYZERS[key] = Analyzer(stopwords, max_token_length)
    return analyzer


def tokenize(text: Optional[str], stopwords: StopWords = None) -> List[str]:
    """Analyze ``text`` like Elasticsearch's ``standard`` analyzer (see the module docstring)."""
    if stopwords is None or isinstance(stopwords, str):
        return get_analyzer(stopwords).tokens(text)
    return Analyzer(stopwords).tokens(text)


def check_fields(documents: Any, fields: Any, known: Set[str]) -> List[str]:
    """The BM25 fields no document of the corpus has, named for the summary (the engines' throwaway
    indexes map them and find nothing there either); when none of the named fields is in any
    document, a ConfigError, as the engines refuse a field the index does not map
    (``search_engine/search.FieldCheck``): the search would find nothing. ``known``: the fields
    found before (checked once)."""
    from ...errors import ConfigError

    named = list(dict.fromkeys(f for f, _ in fields if "*" not in f))
    absent = [f for f in named if f not in known and not any(f in d.fields for d in documents or ())]
    if named and len(absent) == len(named):
        which = (
            f"the field {absent[0]!r}"
            if len(absent) == 1
            else "any of the fields " + ", ".join(map(repr, absent))
        )
        raise ConfigError(
            f"no document of the corpus has {which}: a search on it would find nothing",
            key="retrievers",
        )
    known.update(f for f in named if f not in absent)
    return absent
