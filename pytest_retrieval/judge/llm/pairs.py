"""What a judge is asked about: (query, document) pairs with their texts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, List, Optional

__all__ = ["JudgePair", "document_text", "pairs_from_pool"]


@dataclass(frozen=True)
class JudgePair:
    query_id: str
    query: str
    doc_id: str
    document: str


def document_text(title: str, text: str, max_chars: Optional[int] = None) -> str:
    """Title and text as the judge reads them (one line apart), cut to ``max_chars``."""
    doc = f"{title}\n{text}" if title and text else (title or text)
    if max_chars is not None and len(doc) > max_chars:
        doc = doc[:max_chars]
    return doc


def pairs_from_pool(pool_pairs: Iterable[Any], *, max_doc_chars: Optional[int] = None) -> List[JudgePair]:
    """``pool.PoolPair`` (or annotation rows) -> JudgePair (document = title + text)."""
    return [
        JudgePair(p.query_id, p.query, p.doc_id, document_text(p.title, p.text, max_doc_chars))
        for p in pool_pairs
    ]
