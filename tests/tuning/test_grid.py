"""The sweep grid: its size, the weight vectors on the simplex, validation, the defaults."""

from __future__ import annotations

import pytest

from pytest_retrieval.fusion.config import FusionConfig
from pytest_retrieval.tuning.grid import SweepGrid, default_configs, describe


def test_grid_size_is_what_is_claimed():
    grid = SweepGrid()
    assert grid.size(2) == len(grid.configs(2, 100)) == 8 + 2 * 3 * 11 == 74
    assert grid.size(3) == len(grid.configs(3, 100)) == 8 + 2 * 3 * 66 == 404
    assert (
        SweepGrid(windows=(50, 100, 200)).size(2)
        == len(SweepGrid(windows=(50, 100, 200)).configs(2, 100))
        == 3 * 74
    )
    assert SweepGrid(weighted=False).size(2) == 8
    assert SweepGrid(rrf=False, weight_step=0.25).size(2) == 2 * 3 * 5
    assert SweepGrid(rrf=False, weight_step=0.5, normalizations=("l2",)).size(4) == 3 * 10


def test_weight_vectors_are_valid_opensearch_weights():
    grid = SweepGrid()
    two = grid.weight_vectors(2)
    assert two == [(i / 10, (10 - i) / 10) for i in range(11)]
    three = grid.weight_vectors(3)
    assert len(three) == len(set(three)) == 66 and three == sorted(three)
    for ws in two + three:
        assert all(0.0 <= w <= 1.0 for w in ws) and abs(sum(ws) - 1.0) < 1e-9
        FusionConfig(method="weighted", weights=ws)  # OpenSearch's own check passes
    labels = [describe(c) for c in grid.configs(2, 100)]
    assert labels[:8] == [f"rrf k={k} window=100" for k in (1, 5, 10, 20, 40, 60, 80, 100)]
    assert labels[8] == "weighted min_max arithmetic_mean [0.0, 1.0] window=100"
    assert len(set(labels)) == 74


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"weight_step": 0.3}, "weight_step must divide 1"),
        ({"normalizations": ("z_score",)}, "normalizations"),
        ({"combinations": ("max",)}, "combinations"),
        ({"rank_constants": (0,)}, "rank_constant"),
        ({"rank_constants": (20000,)}, "[1, 10000]"),
        ({"windows": (0,)}, "windows"),
        ({"rrf": False, "weighted": False}, "empty"),
        ({"tie_break": "random"}, "tie_break"),
    ],
)
def test_grid_validation(kwargs, fragment):
    with pytest.raises(ValueError, match=None) as e:
        SweepGrid(**kwargs)
    assert fragment in str(e.value)


def test_default_configs():
    rrf, weighted = default_configs(3, 77)
    assert (rrf.method, rrf.rank_constant, rrf.window, rrf.semantics) == ("rrf", 60, 77, "opensearch")
    assert weighted.weights == (1 / 3, 1 / 3, 1 / 3) and weighted.normalization == "min_max"
