"""Benchmark: Python Thai word segmenters in Lucene's ``ThaiTokenizer`` loop against the engines'
``thai`` analyzer (the JDK's dictionary ``BreakIterator``), on every XQuAD-R Thai corpus sentence,
title and query, OpenSearch 2.19 and 3.6 in one run.

    python benchmarks/thai_segmenters.py [--xquad PATH] [--engines os2,os3]

Each candidate's words go through the same filters as the embedded ``thai`` analyzer
(``languages/thai.py``: words starting with a letter or digit, LowerCase, DecimalDigit, Lucene's
Thai stop words). Printed per candidate and engine: the share of texts whose terms are identical
and the share of terms in common (multiset overlap over the longer of the two term lists). A
candidate whose library is not installed is named and skipped: icu4py (the ``thai`` extra), PyICU
(``icu``), pythainlp (``newmm``, ``longest`` with its default dictionary).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from pytest_retrieval.backends.embedded.languages import named_analyzer  # noqa: E402
from tests.engines.analyze_batches import engine_tokens, xquad_texts  # noqa: E402

URLS = {"os2": "http://127.0.0.1:19201", "os3": "http://127.0.0.1:19203"}
Segmenter = Callable[[str], List[str]]


def _icu4py() -> Segmenter:
    analyzer = named_analyzer("thai")  # the embedded analyzer itself
    return analyzer.words


def _pyicu() -> Segmenter:
    import icu  # type: ignore[import-not-found]  # PyICU (or the pyicu-wheels build)

    sentences = icu.BreakIterator.createSentenceInstance(icu.Locale.getRoot())
    words = icu.BreakIterator.createWordInstance(icu.Locale("th"))

    def split(text: str) -> List[str]:
        u, out, s0 = icu.UnicodeString(text), [], 0
        sentences.setText(u)
        for s1 in sentences:
            sentence, w0 = u[s0:s1], 0
            words.setText(sentence)
            for w1 in words:
                out.append(str(sentence[w0:w1]))
                w0 = w1
            s0 = s1
        return out

    return split


def _pythainlp(engine: str) -> Callable[[], Segmenter]:
    def build() -> Segmenter:
        from pythainlp.tokenize import word_tokenize  # type: ignore[import-not-found]

        return lambda text: word_tokenize(text, engine=engine, keep_whitespace=True)

    return build


CANDIDATES: Dict[str, Callable[[], Segmenter]] = {
    "icu4py (embedded thai)": _icu4py,
    "PyICU": _pyicu,
    "pythainlp newmm": _pythainlp("newmm"),
    "pythainlp longest": _pythainlp("longest"),
}


def _terms(split: Segmenter, text: str) -> List[str]:
    """The ``thai`` analyzer's filters over another segmenter's words."""
    thai = named_analyzer("thai")
    return thai.filter_words(split(text))


def _overlap(ours: List[List[str]], theirs: List[List[str]]) -> float:
    common = total = 0
    for a, b in zip(ours, theirs):
        common += sum((collections.Counter(a) & collections.Counter(b)).values())
        total += max(len(a), len(b))
    return common / total if total else 1.0


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    icu = ""
    if name == "icu4py":
        from icu4py import _version  # type: ignore[import-not-found]

        icu = f", ICU {_version.icu_version}"
    elif name == "PyICU":
        import icu as pyicu  # type: ignore[import-not-found]

        icu = f", ICU {pyicu.ICU_VERSION}"
    for dist in {"icu4py": ["icu4py"], "PyICU": ["PyICU", "pyicu-wheels"]}.get(name, ["pythainlp"]):
        try:
            return f"{dist} {version(dist)}{icu}"
        except PackageNotFoundError:
            continue
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--xquad", type=Path, default=ROOT.parent / "shared" / "data" / "xquad-r")
    parser.add_argument("--engines", default="os2,os3")
    args = parser.parse_args()
    texts = xquad_texts(args.xquad / "th")
    engines = {k: engine_tokens(URLS[k], "thai", texts) for k in args.engines.split(",")}
    header = ["segmenter", "version"]
    for k in engines:
        header += [f"identical {k}", f"terms in common {k}"]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for name, build in CANDIDATES.items():
        try:
            split = build()
        except ImportError as exc:
            print(f"| {name} | not installed ({exc.name}) |")
            continue
        ours = [_terms(split, t) for t in texts]
        row = [name, _version(name.split()[0])]
        for theirs in engines.values():
            same = sum(a == b for a, b in zip(ours, theirs))
            row += [f"{same / len(texts):.2%}", f"{_overlap(ours, theirs):.2%}"]
        print("| " + " | ".join(row) + " |")
    print(f"\n{len(texts):,} texts (XQuAD-R th: corpus sentences, titles, queries)")


if __name__ == "__main__":
    main()
