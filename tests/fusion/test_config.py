"""FusionConfig: the engines' validation rules and defaults; fusion_warnings."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_retrieval.fusion.config import FusionConfig, fusion_warnings
from pytest_retrieval.fusion.semantics import weighted_fusion

from .helpers import R


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rank_constant=0), "rank_constant must be an integer >= 1"),
        (dict(rank_constant=-5), "rank_constant must be an integer >= 1"),
        (dict(rank_constant=1.5), "rank_constant must be an integer >= 1"),
        (dict(window=0), "window"),
        (dict(window=2.0), "window"),
        (dict(semantics="opensearch", rank_constant=10_001), "[1, 10000]"),
        (dict(semantics="solr"), "rrf semantics must be one of"),
        (dict(weights=(0.5, 0.5)), "rrf weights are not supported"),
        (dict(normalization="min_max"), "rrf takes no normalization"),
        (dict(combination="arithmetic_mean"), "combination applies to weighted fusion only"),
        (dict(tie_break="random"), "tie_break"),
    ],
)
def test_rrf_config_validation(kwargs, message):
    with pytest.raises(ValueError) as err:
        FusionConfig(method="rrf", **kwargs)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_rrf_elasticsearch_has_no_upper_rank_constant():
    assert FusionConfig(method="rrf", semantics="elasticsearch", rank_constant=50_000).rank_constant == 50_000
    assert FusionConfig(method="rrf", semantics="opensearch", rank_constant=10_000).rank_constant == 10_000


def test_os_weight_validation():
    FusionConfig(method="weighted", weights=(0.5, 0.505))  # float sum 1.005: within 0.01
    FusionConfig(method="weighted", weights=(0.0, 1.0))  # bounds inclusive
    with pytest.raises(ValueError, match="sum to 1.0"):
        FusionConfig(method="weighted", weights=(0.5, 0.6))
    with pytest.raises(ValueError, match="sum to 1.0"):
        FusionConfig(method="weighted", weights=(0.5, 0.489))
    with pytest.raises(ValueError, match=r"in \[0.0, 1.0\]"):
        FusionConfig(method="weighted", weights=(1.2, -0.2))
    with pytest.raises(ValueError, match="must match number of sub-queries"):
        weighted_fusion([R(("a", 1.0)), R(("a", 1.0)), R(("b", 1.0))], weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="finite"):
        FusionConfig(method="weighted", weights=(float("nan"), 1.0))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(semantics="elasticsearch"), "only with semantics 'opensearch'"),
        (dict(normalization="z_score"), "'min_max' or 'l2'"),
        (dict(normalization="none"), "'min_max' or 'l2'"),
        (dict(combination="max"), "combination must be one of"),
        (dict(rank_constant=60), "rank_constant applies to rrf only"),
    ],
)
def test_weighted_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        FusionConfig(method="weighted", **kwargs)


def test_weighted_defaults():
    cfg = FusionConfig(method="weighted")
    assert (cfg.semantics, cfg.normalization, cfg.combination, cfg.rank_constant) == (
        "opensearch",
        "min_max",
        "arithmetic_mean",
        None,
    )
    assert FusionConfig(method="weighted", normalization="l2").normalization == "l2"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(weights=(1.0, -0.5)), "non-negative"),
        (dict(semantics="opensearch"), "only with semantics 'elasticsearch'"),
        (dict(normalization="z"), "'minmax', 'l2_norm' or 'none'"),
        (dict(normalization=()), "must not be empty"),
        (dict(combination="harmonic_mean"), "combination applies to weighted fusion only"),
    ],
)
def test_linear_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FusionConfig(method="linear", **kwargs)


def test_fusion_warnings():
    assert fusion_warnings(FusionConfig(window=100), 10) == []
    w = fusion_warnings(FusionConfig(window=15), 10)
    assert len(w) == 1 and "< 2 x k" in w[0]
    w = fusion_warnings(FusionConfig(semantics="elasticsearch", window=5), 10)
    assert len(w) == 2 and "rejects size > rank_window_size" in w[0]
    assert all("\n" not in m for m in w)
    w = fusion_warnings(FusionConfig(method="weighted", window=10), 10)  # OpenSearch default size
    assert len(w) == 1
    with pytest.raises(ValueError):
        fusion_warnings(FusionConfig(), 0)


def test_config_is_frozen_and_hashable():
    cfg = FusionConfig(method="linear", weights=[1, 2], normalization=["minmax", "none"])
    assert cfg.weights == (1.0, 2.0) and cfg.normalization == ("min_max", "none")
    hash(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.window = 5
