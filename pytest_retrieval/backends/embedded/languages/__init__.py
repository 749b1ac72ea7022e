"""The engines' built-in language analyzers for the embedded engine (issue #35): see ``chains.py``."""

from .chains import ANALYZER_NAMES, LanguageAnalyzer, UnknownAnalyzer, named_analyzer

__all__ = ["ANALYZER_NAMES", "LanguageAnalyzer", "UnknownAnalyzer", "named_analyzer"]
