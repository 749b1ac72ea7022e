"""The data types every layer shares: what goes into a retriever and what comes out.

In: a ``Query`` (text, tags, and a vector when a kNN stage needs one), the corpus as
``Document``s and, for vector search, the documents' embeddings as ``DocVectors``.

Out: a ``Ranking`` keeps the engine's order (the default tie rule is "the order the engine
returned"); ``scores`` runs parallel to ``doc_ids``. A ``Run`` maps query id -> Ranking.
Query and document ids are always ``str``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple


@dataclass(frozen=True)
class Query:
    """One query as the backends see it. ``vector`` is set when a kNN stage needs it."""

    qid: str
    text: str
    vector: Any = None  # numpy float32 array (dim,) or None
    tags: Tuple[str, ...] = ()
    # learned sparse query vector {term: weight} (IDF already applied query-side) when a
    # sparse stage needs it, else None
    sparse: Any = None


@dataclass(frozen=True)
class Document:
    doc_id: str
    fields: Mapping[str, str]  # e.g. {"title": ..., "text": ...}


@dataclass
class DocVectors:
    """Document embeddings: row i of ``matrix`` belongs to ``doc_ids[i]``."""

    doc_ids: Sequence[str]
    matrix: Any  # numpy float32 (n, dim)
    embedder_id: str = ""


@dataclass
class DocSparseVectors:
    """Learned sparse document vectors: ``vectors[i]`` ({term: weight}, weights > 0, raw:
    never IDF-weighted) belongs to ``doc_ids[i]``. ``encoder_id`` names the model/files."""

    doc_ids: Sequence[str]
    vectors: Sequence[Mapping[str, float]]
    encoder_id: str = ""


@dataclass
class Ranking:
    doc_ids: List[str] = field(default_factory=list)
    scores: List[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.doc_ids) != len(self.scores):
            raise ValueError("Ranking.doc_ids and Ranking.scores differ in length")

    def __len__(self) -> int:
        return len(self.doc_ids)

    @classmethod
    def from_pairs(cls, pairs: Iterable[Tuple[str, float]]) -> Ranking:
        doc_ids: List[str] = []
        scores: List[float] = []
        for d, s in pairs:
            doc_ids.append(str(d))
            scores.append(float(s))
        return cls(doc_ids, scores)

    def pairs(self) -> List[Tuple[str, float]]:
        return list(zip(self.doc_ids, self.scores))

    def top(self, k: int) -> Ranking:
        return Ranking(self.doc_ids[:k], self.scores[:k])


Run = Dict[str, Ranking]
