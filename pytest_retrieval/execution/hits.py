"""A retriever's answer to one query as a test reads it: :class:`Hits`, best first, each
:class:`Hit` with its id, score, rank, and title and judged grade when known."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional

from ..types import Ranking


@dataclass(frozen=True)
class Hit:
    """One document of a ranking: its id, score, 1-based rank, title and judged grade when known."""

    doc_id: str
    score: float
    rank: int
    title: Optional[str] = None
    grade: Optional[int] = None


@dataclass
class Hits:
    """A retriever's answer to one query, best first. Iterating gives the :class:`Hit` s;
    ``doc_id in hits`` and ``hits.doc_ids`` read well in a plain ``assert``."""

    query: str
    retriever: str
    hits: List[Hit] = field(default_factory=list)
    client_ms: Optional[float] = None  # wall time of this search (None inside search_many)
    server_ms: Optional[float] = None  # the engine's ``took`` summed over the leaf searches
    query_id: Optional[str] = None  # the judged query this text is, when it is one
    suite: str = ""
    depth: Optional[int] = None  # the hits asked for: ranks beyond it are unknown when all came back

    @property
    def doc_ids(self) -> List[str]:
        return [h.doc_id for h in self.hits]

    def rank(self, doc_id: str) -> Optional[int]:
        """The 1-based rank of ``doc_id``, or None when it is not among the hits."""
        return next((h.rank for h in self.hits if h.doc_id == str(doc_id)), None)

    def top(self, k: int) -> List[Hit]:
        return self.hits[:k]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]

    def __contains__(self, doc_id: object) -> bool:
        return str(doc_id) in self.doc_ids


class HitsBatch(List[Hits]):
    """``search_many``'s answers, in the order of the texts, with the batch's wall time."""

    client_ms: Optional[float] = None


def titles_of(corpus: Optional[Iterable[Any]]) -> Dict[str, str]:
    """doc id -> title, for the documents of ``corpus`` that have one."""
    return {d.doc_id: str(d.fields["title"]) for d in corpus or [] if d.fields.get("title")}


def make_hits(
    ranking: Ranking,
    k: int,
    *,
    query: str,
    retriever: str,
    titles: Dict[str, str],
    grades: Optional[Dict[str, int]] = None,
    query_id: Optional[str] = None,
    suite: str = "",
) -> Hits:
    """The top ``k`` of ``ranking`` as :class:`Hits` (titles and grades where known)."""
    grades = grades or {}
    hits = [
        Hit(d, float(s), i, titles.get(d), grades.get(d))
        for i, (d, s) in enumerate(zip(ranking.doc_ids[:k], ranking.scores[:k]), 1)
    ]
    return Hits(query, retriever, hits, query_id=query_id, suite=suite, depth=k)
