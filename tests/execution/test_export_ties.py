"""Exports with ``ties`` (execution/export.py): the tools' own tie rules on the scores as returned,
and the suite's exact order with ``ties="engine"``/``"trec"`` (docs/explanation/trec-eval-parity.md)."""

from __future__ import annotations

import pytest

from pytest_retrieval.execution.export import Run
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking

QRELS = {"q": {"b": 1}}
RUN = Run("r", {"q": Ranking(["a", "b", "c"], [1.0, 1.0, 0.5])})  # a and b tied


def test_scores_replaced_by_rank_in_the_chosen_order():
    assert RUN.to_dict() == {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    assert RUN.to_dict(ties="engine") == {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert RUN.to_dict(ties="trec") == {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}  # doc id descending
    with pytest.raises(ValueError, match="ties must be"):
        RUN.to_dict(ties="random")


def test_ir_measures_rr_at_k_breaks_ties_by_doc_id_ascending_unless_exported_exactly():
    import ir_measures  # a test extra: a broken install fails, never skips

    qrels = [ir_measures.Qrel("q", "b", 1)]
    ours = {
        t: evaluate(QRELS, RUN.rankings, ["mrr@10"], ties=t).aggregate["mrr@10"] for t in ("engine", "trec")
    }
    assert ours == {"engine": 0.5, "trec": 1.0}
    rr = ir_measures.RR @ 10
    assert (
        ir_measures.calc_aggregate([rr], qrels, RUN.to_ir_measures())[rr] == 0.5
    )  # msmarco: "a" < "b" first
    for ties in ("engine", "trec"):
        assert ir_measures.calc_aggregate([rr], qrels, RUN.to_ir_measures(ties=ties))[rr] == ours[ties]


def test_ranx_keeps_insertion_order_on_ties_and_the_exact_export_matches():
    import ranx  # a test extra: a broken install fails, never skips

    from pytest_retrieval.execution.export import Qrels

    q = Qrels(QRELS).to_ranx()
    for ties, want in (("engine", 0.5), ("trec", 1.0)):
        assert float(ranx.evaluate(q, RUN.to_ranx(ties=ties), "mrr@10")) == want
