"""Checks and normalisation of what a model returns (numpy is imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def as_matrix(value: Any, n: int, source: str) -> np.ndarray:
    """Check an embedder's output: numeric, finite, shape (n, dim); return float32 C-order."""
    import numpy as np

    try:
        matrix = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source} returned something that is not a numeric array ({exc})") from None
    if matrix.ndim != 2 or matrix.shape[0] != n:
        raise ConfigError(
            f"{source} returned an array of shape {tuple(matrix.shape)} for {n} texts; expected ({n}, dim)"
        )
    if not np.isfinite(matrix).all():
        raise ConfigError(f"{source} returned NaN or infinite values")
    return np.ascontiguousarray(matrix)


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (an all-zero row stays zero), float32."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
