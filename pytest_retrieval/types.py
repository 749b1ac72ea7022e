"""Runs: what a retriever returned, per query, in the order it returned it.

A ``Ranking`` keeps the engine's order (the default tie rule is "the order the engine
returned"); ``scores`` runs parallel to ``doc_ids``. A ``Run`` maps query id -> Ranking.
Query and document ids are always ``str``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Tuple


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
