"""Which analyzer analyses a field on the embedded engine, as a cache key of its indexes."""

from __future__ import annotations

from typing import Any, Optional

from ...errors import ConfigError

__all__ = ["analyzer_key", "analyzer_of_key", "stopword_key"]


def analyzer_key(name: str, stop_key: Optional[str]) -> Optional[str]:
    """The cache key of a field's analysis: the standard analyzer's stop word list (None or
    "english"), or ``lang:<name>`` for a language analyzer (``languages/``)."""
    return stop_key if name == "standard" else f"lang:{name}"


def analyzer_of_key(key: Optional[str]) -> Any:
    """The analyzer of a key of :func:`analyzer_key`; a ConfigError for a name it lacks."""
    from .analyzer import get_analyzer

    if key is not None and key.startswith("lang:"):
        from .languages import UnknownAnalyzer, named_analyzer

        try:
            return named_analyzer(key[5:])
        except UnknownAnalyzer as exc:
            raise ConfigError(f"analyzer: {exc}") from None
    return get_analyzer(key)


def stopword_key(stopwords: Optional[str]) -> Optional[str]:
    """The standard analyzer's stop word list key (None or "english"); a ConfigError otherwise."""
    from .analyzer import ENGLISH_STOP_WORDS, resolve_stopwords

    if stopwords is not None and not isinstance(stopwords, str):
        raise ConfigError("stopwords: give a list name ('english') or leave it unset")
    try:
        words = resolve_stopwords(stopwords)
    except ValueError as exc:
        raise ConfigError(f"stopwords: {exc}") from None
    if words and words != ENGLISH_STOP_WORDS:  # pragma: no cover - only named lists exist
        raise ConfigError(f"stopwords: unsupported list {stopwords!r}")
    return "english" if words else None
