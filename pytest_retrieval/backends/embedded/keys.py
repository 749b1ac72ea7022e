"""Which analyzer analyses a field on the embedded engine, as a cache key of its indexes."""

from __future__ import annotations

from typing import Any, Optional

from ...errors import ConfigError

__all__ = ["analyzer_key", "analyzer_of_key"]


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
