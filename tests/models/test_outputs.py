"""Checks of what a model returns (models/outputs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.models.outputs import as_matrix, normalize_rows


def test_as_matrix_and_normalize_rows():
    m = as_matrix([[3.0, 4.0], [0.0, 0.0]], 2, "src")
    assert m.dtype == np.float32
    np.testing.assert_allclose(normalize_rows(m), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(ConfigError, match="src returned NaN"):
        as_matrix([[float("nan")]], 1, "src")
