"""Applying a reranker to a ranking or a run, and advice on a rerank stage's window.

What :func:`rerank_ranking` returns. Only the reranked window: the top ``window`` candidates,
ordered by the new score (descending), equal new scores kept in their previous order (stable),
carrying the reranker's scores. Candidates below the window are dropped. This is what the
engines do in production (Elasticsearch's ``text_similarity_reranker`` returns at most
``rank_window_size`` hits; OpenSearch's ``rerank`` response processor reorders the hits the
query returned, i.e. ``size``), and it keeps one score scale per ranking (appending the tail
with first-stage scores would mix scales and break ``evaluation.ties: trec``). Consequence:
a metric whose cut-off is deeper than ``window`` (``recall@100`` after reranking the top 20)
sees at most ``window`` documents; :func:`rerank_warnings` says so.
"""

from __future__ import annotations

from typing import List, Mapping, Sequence

from ...errors import ConfigError, InfrastructureError
from ...types import Ranking, Run
from .base import Reranker, checked_scores


def rerank_ranking(
    reranker: Reranker, query_text: str, ranking: Ranking, doc_texts: Mapping[str, str], window: int
) -> Ranking:
    """Rerank the top ``window`` of ``ranking``; return only those, best first.

    Sorted by the reranker's score descending; equal scores keep their previous rank
    (stable). The returned scores are the reranker's. A candidate without an entry in
    ``doc_texts`` is a :class:`ConfigError`; a reranker returning the wrong number of scores,
    or non-finite ones, is an :class:`InfrastructureError`."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ConfigError(f"rerank window must be an integer >= 1, got {window!r}")
    head = ranking.top(window)
    if not head.doc_ids:
        return Ranking()
    _require_texts(reranker, head.doc_ids, doc_texts)
    candidates = [(d, doc_texts[d] or "") for d in head.doc_ids]
    scores = checked_scores(
        reranker.rerank(query_text, candidates),
        len(candidates),
        f"reranker {reranker.id!r}",
        InfrastructureError,
    )
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return Ranking([head.doc_ids[i] for i in order], [scores[i] for i in order])


def _require_texts(reranker: Reranker, doc_ids: Sequence[str], doc_texts: Mapping[str, str]) -> None:
    """A :class:`ConfigError` naming (the first five) candidates without a document text."""
    missing = [d for d in doc_ids if d not in doc_texts]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ConfigError(
            f"reranker {reranker.id!r}: no document text for {len(missing)} candidate(s): {shown}{more}"
        )


def rerank_run(
    reranker: Reranker,
    run: Mapping[str, Ranking],
    query_texts: Mapping[str, str],
    doc_texts: Mapping[str, str],
    window: int,
) -> Run:
    """:func:`rerank_ranking` for every query of ``run`` (same query order). A query without
    text in ``query_texts`` is a :class:`ConfigError`."""
    out: Run = {}
    for qid, ranking in run.items():
        if qid not in query_texts:
            raise ConfigError(f"reranker {reranker.id!r}: no query text for query {qid!r}")
        out[qid] = rerank_ranking(reranker, query_texts[qid], ranking, doc_texts, window)
    return out


MAX_SENSIBLE_WINDOW = 200


def rerank_warnings(window: int, evaluated_k: int) -> List[str]:
    """Advice on a rerank stage: a window shallower than a gated cut-off, or one so deep
    (> 200 candidates) that the model's cost grows for little gain."""
    out = []
    if window < evaluated_k:
        out.append(
            f"rerank window {window} < k {evaluated_k}: a reranked ranking holds only its "
            f"top {window} candidates, so metrics @{evaluated_k} see at most {window} "
            f"documents (raise the window)"
        )
    if window > MAX_SENSIBLE_WINDOW:
        out.append(
            f"rerank window {window} > {MAX_SENSIBLE_WINDOW}: every query pays the model "
            f"on {window} candidates; rerankers rarely gain below the top "
            f"{MAX_SENSIBLE_WINDOW} (measure the lift at a smaller window)"
        )
    return out
