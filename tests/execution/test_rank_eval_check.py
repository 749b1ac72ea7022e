"""``evaluation.rank_eval`` where no ``_rank_eval`` can answer (issue #34): the embedded engine
has no such API, so the suite's check is one line in the summary and the JSON report (not a pass
of the check, not an error of the run), and every gate still runs. The engines' side (agreement,
the retrievers and measures it cannot express, an engine without the module) is in
``tests/engines/test_rank_eval_option.py``; the mapping in ``tests/measures/test_rank_eval.py``."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.rank_eval import RankEvalCheck, compare
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.reports.terminal import render_summary

ROOT = Path(__file__).resolve().parents[2]


def test_embedded_backend_is_one_line(tmp_path):
    suite = load_suite(
        ROOT / "example_suite" / "retrieval_scifact_mini.yaml",
        cli={"evaluation.rank_eval": True, "latency.repetitions": 1, "latency.warmup": 0},
    )
    result = SuiteRunner(suite).run()
    check = result.rank_eval
    assert check is not None and "embedded backend has no _rank_eval API" in check.unavailable
    assert check.lines() == [f"_rank_eval cross-check not run: {check.unavailable}"]
    assert check.as_dict()["compared"] == {} and not check.disagreements
    from pytest_retrieval.reports.json_report import suite_report

    class State:
        outcomes: list = []

    state = State()
    state.suite, state.result, state.error = suite, result, None
    lines = render_summary(suite_report(state))
    assert sum("_rank_eval cross-check" in line for line in lines) == 1


def test_not_asked_is_absent():
    suite = load_suite(ROOT / "example_suite" / "retrieval_scifact_mini.yaml", cli={"latency.repetitions": 1})
    assert suite.model.evaluation.rank_eval is False


def test_a_query_without_an_answer_is_a_disagreement():
    """A query the plugin scored that ``_rank_eval`` did not answer is named, never passed over."""
    from types import SimpleNamespace

    from pytest_retrieval.types import Ranking

    check = RankEvalCheck(measures=["mrr@10"])
    check.answers = {"bm25": {"mrr@10": {"q1": (1.0, ["a"])}}}
    ev = SimpleNamespace(per_query={"mrr@10": {"q1": 1.0, "q2": 0.5}})
    rr = SimpleNamespace(evaluation=ev, run={"q1": Ranking(["a"], [1.0]), "q2": Ranking(["b"], [1.0])})
    compare(check, {"bm25": rr})
    assert check.compared == {"bm25": 2}
    assert check.disagreements == [
        {
            "retriever": "bm25",
            "query": "q2",
            "measure": "mrr@10",
            "plugin": 0.5,
            "rank_eval": None,
            "same_hits": False,
        }
    ]
    assert any("query 'q2' mrr@10: plugin 0.5, _rank_eval None" in line for line in check.lines())
