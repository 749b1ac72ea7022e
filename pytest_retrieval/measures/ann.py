"""ANN recall: how much of the exact k nearest neighbours an approximate (HNSW) kNN search
finds (pure, numpy only).

``ann_recall@k`` of a query = |approximate top k ∩ exact top k| / |exact top k|, the
recall measure of the ANN benchmarks (Aumüller et al., "ANN-Benchmarks", Information
Systems 87, 2020, section 3: "recall" as the fraction of the true k nearest neighbours
returned). The exact top k comes from :func:`exact_top_k` (document vectors in hand) or
from the engine's brute-force ``script_score`` query (an existing index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Sequence

from ..errors import InfrastructureError
from ..types import Ranking, Run

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ann_recall", "exact_top_k"]


def _scores(queries: np.ndarray, docs: np.ndarray, similarity: str) -> np.ndarray:
    """Similarity of every query to every document, in float32 as the engines compute it;
    higher is nearer (l2_norm: the negative squared distance)."""
    import numpy as np

    q = np.asarray(queries, dtype=np.float32)
    d = np.asarray(docs, dtype=np.float32)
    if similarity == "cosine":
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), np.float32(1e-30))
        d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), np.float32(1e-30))
        return q @ d.T
    if similarity in ("dot_product", "max_inner_product"):
        return q @ d.T
    if similarity == "l2_norm":
        return -(np.sum(q * q, axis=1)[:, None] - 2 * (q @ d.T) + np.sum(d * d, axis=1)[None, :])
    raise ValueError(f"unknown vector similarity {similarity!r}")


def exact_top_k(
    query_ids: Sequence[str],
    query_vectors: np.ndarray,
    doc_ids: Sequence[str],
    doc_vectors: np.ndarray,
    similarity: str,
    k: int,
    batch: int = 256,
) -> Run:
    """The exact top ``k`` documents of every query by brute force (score descending, ties
    by document position)."""
    import numpy as np

    run: Run = {}
    k = min(k, len(doc_ids))
    for start in range(0, len(query_ids), batch):
        scores = _scores(query_vectors[start : start + batch], doc_vectors, similarity)
        for row, qid in enumerate(query_ids[start : start + batch]):
            s = scores[row]
            top = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
            top = top[np.lexsort((top, -s[top]))]
            run[qid] = Ranking([str(doc_ids[i]) for i in top], [float(s[i]) for i in top])
    return run


def ann_recall(approximate: Run, exact: Run, k: int, qids: Sequence[str]) -> Dict[str, float]:
    """qid -> |approximate top k ∩ exact top k| / |exact top k| (a query missing from
    ``approximate`` scores 0). A query whose exact top k is empty has nothing to measure the
    approximate search against: an error naming those queries, never a recall of 1.0."""
    empty = [qid for qid in qids if qid not in exact or not exact[qid].doc_ids[:k]]
    if empty:
        raise InfrastructureError(
            f"ann_recall@{k}: the exact top {k} is empty for {_some(empty)}: no document vector "
            f"to compare the approximate search with (a recall cannot be measured on nothing)"
        )
    out: Dict[str, float] = {}
    for qid in qids:
        truth = set(exact[qid].doc_ids[:k])
        found = set(approximate[qid].doc_ids[:k]) if qid in approximate else set()
        out[qid] = len(found & truth) / len(truth)
    return out


def _some(qids: Sequence[str], shown: int = 5) -> str:
    """``query 'a'`` / ``7 queries ('a', 'b', ... and 2 more)``: bounded, whatever the count."""
    if len(qids) == 1:
        return f"query {_short(qids[0])}"
    named = ", ".join(_short(q) for q in qids[:shown])
    more = f" and {len(qids) - shown} more" if len(qids) > shown else ""
    return f"{len(qids)} queries ({named}{more})"


def _short(qid: str, chars: int = 40) -> str:
    return repr(qid if len(qid) <= chars else qid[:chars] + "…")


def mean(values: Mapping[str, float]) -> float:
    """The mean of per-query values (:func:`.aggregate.mean`)."""
    from .aggregate import mean as _mean

    return _mean(values.values())
