"""The run history (issue #37): one run record per pytest session, kept in a store (a SQLite
file, or an index in a team's own Elasticsearch or OpenSearch), read back by ``pytest-retrieval
history`` and by the gates that judge a run against a stored reference.

* ``record.py``: the run record (the JSON report plus where and when it ran).
* ``store.py``: the ``HistoryStore`` protocol every store implements.
* ``sqlite.py``: the SQLite store; ``engine_store.py``: the Elasticsearch / OpenSearch index store.
* here: ``open_store(url)``, the store a location names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import HistoryStore

__all__ = ["ENGINE_SCHEMES", "is_engine_url", "open_store"]

ENGINE_SCHEMES = ("elasticsearch+http", "elasticsearch+https", "opensearch+http", "opensearch+https")


def is_engine_url(url: str) -> bool:
    """``elasticsearch+https://host:9200/index`` (or ``opensearch+http://...``): an engine store."""
    return str(url).split("://", 1)[0].lower() in ENGINE_SCHEMES and "://" in str(url)


def open_store(url: str, **options: Any) -> HistoryStore:
    """The store ``url`` names: an engine index URL (``history/engine_store.py``), else a
    SQLite file path (``sqlite:///path`` or a plain path). ``options`` go to the store
    (``busy_timeout`` for SQLite). Nothing is opened until the store is first used."""
    from ..errors import HistoryError

    text = str(url).strip()
    if not text:
        raise HistoryError("history: an empty store location")
    if is_engine_url(text):
        from .engine_store import EngineStore

        return EngineStore.from_url(text, **options)
    from pathlib import Path

    from .sqlite import SQLiteStore

    if text.lower().startswith("sqlite://"):
        text = text[len("sqlite://") :]
    elif "://" in text:
        scheme = text.split("://", 1)[0][:40]
        raise HistoryError(
            f"history: unknown store {scheme!r}://: expected a SQLite file path, sqlite:///path, "
            "elasticsearch+https://host:9200/index or opensearch+https://host:9200/index"
        )
    return SQLiteStore(Path(text).expanduser(), **options)
