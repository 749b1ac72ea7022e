"""The engines' built-in language analyzers for the embedded engine (issue #35): the
tokenizer + filter chains of ``chains.py`` and the dictionary-segmenting ``thai`` of ``thai.py``."""

from __future__ import annotations

from typing import Tuple

from . import chains
from .chains import LanguageAnalyzer, UnknownAnalyzer
from .thai import thai_analyzer

__all__ = ["ANALYZER_NAMES", "LanguageAnalyzer", "UnknownAnalyzer", "named_analyzer"]

#: every analyzer name the embedded engine knows
ANALYZER_NAMES: Tuple[str, ...] = tuple(sorted([*chains.ANALYZER_NAMES, "thai"]))


def named_analyzer(name: str) -> LanguageAnalyzer:
    """The shared analyzer of that name; :class:`UnknownAnalyzer` for a name it lacks (or whose
    library is not installed: PyStemmer, icu4py)."""
    if name == "thai":
        return thai_analyzer()
    if name not in chains.ANALYZER_NAMES:
        raise UnknownAnalyzer(
            f"the embedded engine has no analyzer {name!r} (it has: {', '.join(ANALYZER_NAMES)})"
        )
    return chains.named_analyzer(name)
