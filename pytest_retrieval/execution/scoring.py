"""One retriever of a suite run scored: its evaluation (with ``ann_recall@k`` against the exact
kNN run), latency, abstention, and for a fusion or rerank stage its window, warnings and the
recall its inputs' windows can hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from ..config.load import Suite
from .cutoffs import ANN_RECALL, gated_k, metric_k
from .results import Retrieval, RetrieverResult

if TYPE_CHECKING:
    from ..measures.columnar import QrelsColumns


def score_retriever(
    suite: Suite, name: str, got: Retrieval, unanswerable: List[str], qrels_columns: QrelsColumns
) -> RetrieverResult:
    """One retriever's evaluation, latency, abstention, and for a stage its window,
    warnings and the recall its inputs' windows can hold. ``qrels_columns``: the qrels
    as columns (``measures.columnar``), shared by every retriever's evaluation."""
    from ..measures.metrics import evaluate

    model = suite.model
    run = got.runs[name]
    ev = evaluate(
        qrels_columns, {q: rk.top(got.depth) for q, rk in run.items()}, suite.metrics, **suite.scoring()
    )
    if name in got.exact:  # ann_recall@k: against the exact kNN run, over the same queries
        _add_ann_recall(suite, ev, run, got.exact[name])
    rr = RetrieverResult(
        name, model.retrievers[name].type, run, ev, latency=got.latency.get(name), ab=got.ab.get(name)
    )
    rr.depth = got.depth
    rr.sparse = got.sparse.get(name)
    if rr.sparse is not None:
        rr.warnings.extend(rr.sparse.warnings())
    if model.unanswerable is not None:
        from ..stats.abstention import abstention

        rr.abstention = abstention(
            run, unanswerable, model.unanswerable.threshold.get(name), answerable_qids=ev.evaluated
        )
    _add_stage_window(suite, rr, got)
    if rr.window is not None:  # a stage: how much its window of each input can hold
        _add_candidate_recall(suite, rr, got, qrels_columns)
    return rr


def _add_ann_recall(suite: Suite, ev, run, exact) -> None:
    from ..measures.aggregate import mean
    from ..measures.ann import ann_recall

    for m in [m for m in suite.metrics if m.startswith(ANN_RECALL)]:
        ev.per_query[m] = ann_recall(run, exact, metric_k(m), ev.evaluated)
        ev.aggregate[m] = mean(ev.per_query[m].values())


def _add_stage_window(suite: Suite, rr: RetrieverResult, got: Retrieval) -> None:
    """A rerank or fusion stage's window and the warnings about it."""
    name = rr.name
    if name in got.rerankers:
        from ..models.rerankers import rerank_warnings

        window = suite.rerank_config(name).window
        rr.window = window
        rr.warnings.extend(rerank_warnings(window, gated_k(suite, name)))
    if name in got.fusions:
        from ..fusion.config import fusion_warnings

        rr.warnings.extend(fusion_warnings(got.fusions[name], gated_k(suite, name)))
        rr.window = got.fusions[name].window


def _add_candidate_recall(
    suite: Suite, rr: RetrieverResult, got: Retrieval, qrels_columns: QrelsColumns
) -> None:
    from ..measures.aggregate import average_over_of
    from ..measures.metrics import evaluate

    key = f"recall@{rr.window}"
    for inp in suite.inputs(rr.name):
        rr.candidate_recall[inp] = evaluate(
            qrels_columns,
            got.runs[inp],
            [key],
            relevance_threshold=suite.model.judgments.relevance_threshold,
            average_over=average_over_of(suite.model.evaluation),
        ).aggregate[key]
