"""junit.py: the properties a gate item records for the JUnit XML."""

from __future__ import annotations

import dataclasses

from pytest_retrieval.reports.junit import floor_properties, regression_properties


def test_floor_properties(state):
    o = state.outcomes[0]
    assert floor_properties(o) == [
        ("retrieval_suite", "tiny"),
        ("retrieval_retriever", "bm25"),
        ("retrieval_metric", "ndcg@10"),
        ("retrieval_value", repr(o.value)),
        ("retrieval_op", ">="),
        ("retrieval_threshold", "0.5"),
        ("retrieval_origin", o.floor.origin),  # where the floor was set, passed or not (issue #36)
    ]
    assert o.floor.origin.endswith(".yaml:" + o.floor.origin.rsplit(":", 1)[1])
    strat = [o for o in state.outcomes if o.floor.stratum][0]
    assert ("retrieval_metric", "ndcg@10") in floor_properties(strat)  # the metric, not the stratum name


def test_a_team_floor_names_its_team_owners_and_the_value_it_replaced(state):
    o = state.outcomes[0]
    floor = dataclasses.replace(
        o.floor, team="ranking", owners=("@org/a", "@org/b"), lowered="0.6 at s.yaml:3"
    )
    props = dict(floor_properties(dataclasses.replace(o, floor=floor)))
    assert props["retrieval_team"] == "ranking" and props["retrieval_owner"] == "@org/a @org/b"
    assert props["retrieval_lowered_from"] == "0.6 at s.yaml:3"


def test_regression_properties(state):
    reg = state.regressions[0]
    assert regression_properties(reg) == [
        ("retrieval_suite", "tiny"),
        ("retrieval_retriever", reg.retriever),
        ("retrieval_metric", "baseline:ndcg@10"),
        ("retrieval_mean_diff", "0.0"),
        ("retrieval_ci_low", "0.0"),
        ("retrieval_max_drop", "0.0"),
        ("retrieval_origin", reg.origin),  # where the max_drop was written
    ]
    assert reg.origin.endswith(".yaml:34"), reg.origin
