"""A judgment set (queries, qrels, optional corpus and tags) and the overlap of its queries
and qrels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ConfigError
from ..types import Document
from .qrels import Qrels


@dataclass
class JudgmentSet:
    queries: Dict[str, str]  # qid -> text
    qrels: Qrels  # qid -> {doc_id: grade}
    tags: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    corpus: Optional[List[Document]] = None
    sources: Dict[str, str] = field(default_factory=dict)  # role -> file, for messages
    normalised: Dict[str, int] = field(default_factory=dict)  # role -> ids matched only loosely
    # ``backend.index.id_field``: the judgments name documents by this field, not their ``_id``
    id_field: Optional[str] = None
    _judged: Optional[List[Document]] = field(default=None, repr=False, compare=False)

    @property
    def judged_corpus(self) -> Optional[List[Document]]:
        """The corpus keyed as the judgments and rankings name its documents: by their
        ``id_field`` value when the suite names one (``backends/id_field.py``), else as read.
        ``corpus`` stays keyed by the documents' own ids, which the index is built with."""
        if self.id_field is None or self.corpus is None:
            return self.corpus
        if self._judged is None:
            from ..backends.id_field import IdField, unique_ids

            reader = IdField(self.id_field)
            where = self.sources.get("corpus", "the corpus")
            docs = [Document(reader.of_document(d, where), d.fields) for d in self.corpus]
            unique_ids((d.doc_id for d in docs), reader, where)
            self._judged = docs
        return self._judged


@dataclass
class Overlap:
    queries: int
    qrels: int
    both: int
    run: Optional[int] = None
    qrels_without_query: List[str] = field(default_factory=list)

    def describe(self) -> str:
        s = (
            f"{self.queries} queries, {self.qrels} judged, {self.both} with both a text "
            f"and a relevant judgment"
        )
        if self.run is not None:
            s += f"; {self.run} sent to every retriever"
        return s


def check_overlap(js: JudgmentSet, *, where: str) -> Overlap:
    """Refuse a judgment set whose queries and qrels share no id (the wrong-split mistake)."""
    relevant = {q for q, d in js.qrels.items() if any(g > 0 for g in d.values())}
    both = relevant & set(js.queries)
    ov = Overlap(
        queries=len(js.queries),
        qrels=len(js.qrels),
        both=len(both),
        qrels_without_query=sorted(set(js.qrels) - set(js.queries)),
    )
    if not both:
        q_ex = ", ".join(repr(q) for q in list(js.queries)[:3])
        r_ex = ", ".join(repr(q) for q in list(js.qrels)[:3])
        raise ConfigError(
            f"no query id has both a text and a relevant judgment ({len(js.queries)} queries "
            f"e.g. {q_ex}; {len(js.qrels)} judged e.g. {r_ex}): wrong split or wrong file?",
            file=where,
        )
    return ov
