"""IDF, applied query-side, and the efficiency facts of a learned sparse model (pure, no I/O).

IDF (issue #25): ``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` with ``N`` the number of
documents and ``df(t)`` those whose vector holds ``t``: Lucene's BM25 idf, never negative (the
variant Qdrant applies for ``Modifier.IDF``). It multiplies the query's weights, so that
``score(q, d) = sum_t q_t idf(t) d_t`` is the same dot product on every backend.

FLOPS (Paria et al. 2020, "Minimizing FLOPs to learn efficient sparse representations"; the
SPLADE papers report it): the expected number of multiplications a query costs per document,
``sum_t p_doc(t) * p_query(t)`` with ``p`` the share of the vectors that hold ``t``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

Vector = Mapping[str, float]

#: idf: none draws a warning when terms held by more than half the documents carry more than
#: this share of the score mass (summed over every query-document pair)
COMMON_TERM_WARNING_SHARE = 0.25


def bm25_idf(n_docs: int, df: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` (Lucene's BM25 idf; > 0 for every df <= N)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@dataclass
class DocStats:
    """The documents' side of a sparse model: how many, each term's document frequency and
    weight sum, their average number of non-zero terms, and how many are empty."""

    n_docs: int
    df: Dict[str, int]
    weight_sums: Dict[str, float]
    mean_nnz: float
    empty: int
    encoder_id: str = ""


def doc_stats(vectors: Sequence[Vector], encoder_id: str = "") -> DocStats:
    """Document frequencies (documents whose vector holds the term with a weight > 0), weight
    sums and non-zero counts of the documents' vectors."""
    df: Dict[str, int] = {}
    sums: Dict[str, float] = {}
    nnz = 0
    empty = 0
    for vector in vectors:
        held = [t for t, w in vector.items() if w > 0]
        nnz += len(held)
        empty += not held
        for t in held:
            df[t] = df.get(t, 0) + 1
            sums[t] = sums.get(t, 0.0) + float(vector[t])
    n = len(vectors)
    return DocStats(n, df, sums, nnz / n if n else 0.0, empty, encoder_id)


def apply_idf(vector: Vector, stats: DocStats) -> Dict[str, float]:
    """The query vector with each weight times ``idf(t)`` (terms no document holds keep the
    idf of df = 0: they match nothing anyway)."""
    n = stats.n_docs
    return {t: float(w) * bm25_idf(n, stats.df.get(t, 0)) for t, w in vector.items()}


def common_term_share(queries: Sequence[Vector], stats: DocStats) -> float:
    """The share of the score mass, summed over every (query, document) pair, that comes from
    terms held by more than half the documents: ``sum_t Q(t) D(t)`` over those terms divided by
    the sum over every term, with ``Q``/``D`` the weight sums of the queries/documents."""
    q_sums: Dict[str, float] = {}
    for vector in queries:
        for t, w in vector.items():
            q_sums[t] = q_sums.get(t, 0.0) + float(w)
    half = stats.n_docs / 2.0
    total = common = 0.0
    for t, q in q_sums.items():
        mass = q * stats.weight_sums.get(t, 0.0)
        total += mass
        if stats.df.get(t, 0) > half:
            common += mass
    return common / total if total > 0 else 0.0


@dataclass
class SparseFacts:
    """What a sparse retriever costs and how its vectors look, for the summary, the JSON report
    and the ``sparse_doc_nnz`` / ``sparse_query_nnz`` / ``flops`` gates."""

    encoder: str
    idf: str
    documents: int
    queries: int
    doc_nnz: Optional[float]  # None: the documents' vectors were not available (existing index)
    query_nnz: float
    flops: Optional[float]
    empty_documents: int = 0
    empty_queries: List[str] = field(default_factory=list)
    common_term_share: Optional[float] = None  # with idf: none only

    def value(self, key: str) -> Optional[float]:
        """The value of a gate key: ``sparse_doc_nnz``, ``sparse_query_nnz`` or ``flops``."""
        return {"sparse_doc_nnz": self.doc_nnz, "sparse_query_nnz": self.query_nnz, "flops": self.flops}[key]

    def line(self) -> str:
        """One summary line."""
        return sparse_line(self.as_dict())

    def warnings(self) -> List[str]:
        out = []
        if self.empty_queries:
            shown = ", ".join(repr(q) for q in self.empty_queries[:5])
            more = f" and {len(self.empty_queries) - 5} more" if len(self.empty_queries) > 5 else ""
            out.append(
                f"{len(self.empty_queries)} of {self.queries} queries have an empty sparse vector and "
                f"get zero hits: {shown}{more}"
            )
        share = self.common_term_share
        if share is not None and share > COMMON_TERM_WARNING_SHARE:
            out.append(
                f"idf: none with raw weights: terms held by more than half the documents carry "
                f"{share:.0%} of the score mass; set idf: bm25_plus1 unless the model was trained for it"
            )
        return out

    def as_dict(self) -> Dict[str, Any]:
        return {
            "encoder": self.encoder,
            "idf": self.idf,
            "documents": self.documents,
            "queries": self.queries,
            "sparse_doc_nnz": self.doc_nnz,
            "sparse_query_nnz": self.query_nnz,
            "flops": self.flops,
            "empty_documents": self.empty_documents,
            "empty_queries": len(self.empty_queries),
            "common_term_share": self.common_term_share,
        }


def sparse_facts(
    raw_queries: Mapping[str, Vector], stats: Optional[DocStats], encoder: str, idf: str
) -> SparseFacts:
    """The facts of a sparse retriever over its queries' raw (pre-IDF) vectors, qid -> vector."""
    vectors = list(raw_queries.values())
    n_q = len(vectors)
    qf: Dict[str, int] = {}
    for vector in vectors:
        for t in vector:
            qf[t] = qf.get(t, 0) + 1
    facts = SparseFacts(
        encoder=encoder,
        idf=idf,
        documents=0,
        queries=n_q,
        doc_nnz=None,
        query_nnz=sum(qf.values()) / n_q if n_q else 0.0,
        flops=None,
        empty_queries=[q for q, v in raw_queries.items() if not v],
    )
    if stats is not None:
        facts.documents, facts.doc_nnz, facts.empty_documents = stats.n_docs, stats.mean_nnz, stats.empty
        facts.flops = expected_flops(qf, n_q, stats)
        if idf == "none":
            facts.common_term_share = common_term_share(vectors, stats)
    return facts


def expected_flops(query_df: Mapping[str, int], n_queries: int, stats: DocStats) -> Optional[float]:
    """``sum_t p_doc(t) p_query(t)`` from the queries' term counts (None without vectors)."""
    if not (stats.n_docs and n_queries):
        return None
    return sum((stats.df.get(t, 0) / stats.n_docs) * (c / n_queries) for t, c in query_df.items())


def sparse_line(facts: Mapping[str, Any]) -> str:
    """A sparse retriever's summary line from its facts as the JSON report keeps them
    (``SparseFacts.as_dict``: the terminal summary renders from the report)."""

    def show(x: Any, fmt: str) -> str:
        return "?" if x is None else format(float(x), fmt)

    parts = [
        f"sparse {facts.get('encoder')} (idf: {facts.get('idf')}): {show(facts.get('sparse_doc_nnz'), '.1f')} "
        f"non-zero terms per document, {show(facts.get('sparse_query_nnz'), '.1f')} per query, "
        f"FLOPS {show(facts.get('flops'), '.4g')}"
    ]
    if facts.get("empty_documents"):
        parts.append(f"{facts['empty_documents']} of {facts.get('documents')} documents have an empty vector")
    if facts.get("empty_queries"):
        parts.append(
            f"{facts['empty_queries']} of {facts.get('queries')} queries have an empty vector (zero hits)"
        )
    return "; ".join(parts)
