"""An unchanged pipeline, run 50 times, gives bit-identical quality numbers and passes its
regression gate against the baseline written by the first run (issue: "passes 50 repeated
runs with identical quality numbers"). The example suite: BM25, exact kNN, RRF, weighted."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.gates.baseline import load_comparable_baseline
from pytest_retrieval.gates.regression import judge_against_baseline

EXAMPLE = Path(__file__).resolve().parents[2] / "example_suite" / "retrieval_scifact_mini.yaml"
RUNS = 50


def test_fifty_unchanged_runs_are_identical_and_pass(tmp_path: Path) -> None:
    cli = {
        "latency": {"max_queries": 5, "repetitions": 1, "warmup": 0},  # timing is not compared
        "regression": {
            "baseline": str(tmp_path / "baseline.json"),
            "max_drop": {"ndcg@10": 0.0},
            "strata": True,
            "resamples": 1000,
        },
    }
    suite = load_suite(EXAMPLE, cli=cli)
    first = SuiteRunner(suite).run()
    from pytest_retrieval.gates.baseline import update_baseline

    update_baseline(suite, first)

    def numbers(result):
        return {
            name: (
                {m: dict(v) for m, v in r.evaluation.per_query.items()},
                {q: (rk.doc_ids, rk.scores) for q, rk in r.run.items()},
            )
            for name, r in result.retrievers.items()
        }

    reference = numbers(first)
    for i in range(RUNS):
        result = SuiteRunner(suite).run()
        assert numbers(result) == reference, f"run {i + 1} differs"
        baseline, note = load_comparable_baseline(suite, result)
        assert baseline is not None, note
        for retriever, metric, max_drop, *_ in suite.regression:
            outcome = judge_against_baseline(result, baseline, retriever, metric, max_drop)
            # max_drop 0 and identical numbers: every query ties, nothing regressed
            assert outcome.passed, outcome.message
            assert outcome.overall.mean_diff == 0.0 and outcome.overall.lost == 0
