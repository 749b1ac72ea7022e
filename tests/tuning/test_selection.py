"""Splits (deterministic, disjoint, the overlap refusal), the selection rule, and the snippets
(suite-file block, OpenSearch pipeline)."""

from __future__ import annotations

import math

import pytest
import yaml

from pytest_retrieval.fusion.config import FusionConfig
from pytest_retrieval.tuning.selection import (
    VariantScore,
    check_disjoint,
    opensearch_pipeline,
    restrict_qrels,
    selection_key,
    split_queries,
    yaml_block,
)
from pytest_retrieval.tuning.sweep import sweep
from pytest_retrieval.types import Ranking

from .helpers import one_line


def test_split_queries_is_deterministic_disjoint_and_complete():
    ids = [str(i) for i in range(101)]
    tune, ev = split_queries(ids, 0.5, seed=3)
    assert len(tune) == 50 and len(ev) == 51 and not set(tune) & set(ev)
    assert sorted(tune + ev, key=int) == ids
    shuffled = ids[::-1]
    t2, e2 = split_queries(shuffled, 0.5, seed=3)
    assert set(t2) == set(tune) and set(e2) == set(ev)
    assert t2 == [q for q in shuffled if q in set(tune)]  # input order kept
    assert set(split_queries(ids, 0.5, seed=4)[0]) != set(tune)
    assert len(split_queries(ids, 0.2, seed=0)[0]) == 20
    # a query keeps its side when others are added (unless it sits at the boundary)
    more_t, _ = split_queries(ids + [f"x{i}" for i in range(10)], 0.5, seed=3)
    assert len(set(tune) - set(more_t)) <= 5
    for bad in (0.0, 1.0, -0.1, 2):
        with pytest.raises(ValueError):
            split_queries(ids, bad)
    with pytest.raises(ValueError):
        split_queries(["only"], 0.5)


def test_overlapping_splits_are_refused():
    check_disjoint(["1", "2"], ["3"])
    with pytest.raises(ValueError) as e:
        check_disjoint(["1", "2", "3"], ["3", "2", "9"])
    assert one_line(e).startswith("sweep refused: 2 query id(s) are in both")
    runs = {"a": {"1": Ranking(["x"], [1.0])}, "b": {"1": Ranking(["y"], [1.0])}}
    qrels = {"1": {"x": 1}, "2": {"y": 1}}
    with pytest.raises(ValueError) as e:
        sweep(runs, qrels, restrict_qrels(qrels, ["2", "1"]))
    assert "'1'" in one_line(e)


def test_selection_rule_prefers_score_then_default_then_grid_order():
    c = FusionConfig()
    vs = [
        VariantScore(c, "late default", 0.5, True, 9),
        VariantScore(c, "early", 0.5, False, 1),
        VariantScore(c, "earlier", 0.5, False, 0),
        VariantScore(c, "best", 0.6, False, 5),
        VariantScore(c, "nan", math.nan, False, 2),
    ]
    order = [v.label for v in sorted(vs, key=selection_key)]
    assert order == ["best", "late default", "earlier", "early", "nan"]


def test_snippets_match_the_suite_schema_and_the_opensearch_builders():
    from pytest_retrieval.backends.opensearch import normalization_pipeline, rrf_pipeline
    from pytest_retrieval.config.schema import RRFRetrieverConfig, WeightedRetrieverConfig

    w = FusionConfig(
        method="weighted", normalization="l2", combination="harmonic_mean", weights=(0.3, 0.7), window=150
    )
    block = yaml.safe_load(yaml_block(w, ["bm25", "dense"], name="hybrid"))
    assert block == {
        "hybrid": {
            "type": "weighted",
            "of": ["bm25", "dense"],
            "normalization": "l2",
            "combination": "harmonic_mean",
            "weights": [0.3, 0.7],
            "window": 150,
        }
    }
    WeightedRetrieverConfig.model_validate(block["hybrid"])
    assert opensearch_pipeline(w) == normalization_pipeline("l2", "harmonic_mean", [0.3, 0.7])

    r = FusionConfig(method="rrf", semantics="opensearch", rank_constant=20, window=100)
    block = yaml.safe_load(yaml_block(r, ["bm25", "dense"], name="rrf20", comment="tuned"))
    assert block == {
        "rrf20": {
            "type": "rrf",
            "of": ["bm25", "dense"],
            "rank_constant": 20,
            "window": 100,
            "semantics": "opensearch",
        }
    }
    RRFRetrieverConfig.model_validate(block["rrf20"])
    assert opensearch_pipeline(r) == rrf_pipeline(20)
    assert opensearch_pipeline(r, "d")["description"] == "d"
    with pytest.raises(ValueError):
        yaml_block(FusionConfig(method="linear"), ["a", "b"])
