"""A real run of the tiny suite with every gate kind, judged as the plugin judges it, for the
report writers (which only format what ``gates`` decided)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_retrieval.gates import evaluate
from pytest_retrieval.gates.baseline import baseline_from_result

from ..tiny import RICH_SUITE, run_tiny


@pytest.fixture(scope="package")
def state(tmp_path_factory):
    """What the plugin keeps per suite: the suite, its result, the floors' and baseline gates'
    outcomes (compared with a baseline of the same run) and the baseline note."""
    result = run_tiny(tmp_path_factory.mktemp("reports"), RICH_SUITE)
    baseline = baseline_from_result(result)
    return SimpleNamespace(
        suite=result.suite,
        result=result,
        error=None,
        outcomes=[evaluate(result, f) for f in result.suite.floors],
        regressions=[evaluate(result, g, baseline=baseline) for g in result.suite.regression],
        baseline_note="compared with retrieval_tiny.baseline.json",
    )
