"""Per-engine score normalisations, written once on whole arrays.

Each normaliser takes ``x`` (Q, W): one sub-ranking's raw scores per query, float32 (Java
``float``), in ranking order, with ``live`` (Q, W) marking the real entries (a row is one query's
list; padding cells are ignored), and returns the normalised float32 scores at the live cells.
Every float32 step is the engine's, in its order (the l2 sums run in ranking order). One list
is the one-row case: :func:`normalize_opensearch` / :func:`normalize_elasticsearch`.

Sources: NS = opensearch-project/neural-search 2.19, processor/normalization/; ES =
elastic/elasticsearch x-pack/plugin/rank-rrf/.../linear/.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

from .config import NORMALIZATION_ALIASES
from .javafloat import FLOAT_MAX_VALUE, FLOAT_MIN_VALUE, float32_scores

__all__ = ["NORMALIZERS", "normalize_elasticsearch", "normalize_opensearch"]

F32 = np.float32
_OS_MIN_SCORE = F32(0.001)  # MinMaxScoreNormalizationTechnique.MIN_SCORE
_ES_EPSILON = F32(1e-6)  # MinMaxScoreNormalizer / L2ScoreNormalizer EPSILON (1e-6f)

Normalizer = Callable[[np.ndarray, np.ndarray], np.ndarray]


def opensearch_min_max(x: np.ndarray, live: np.ndarray) -> np.ndarray:
    """NS MinMaxScoreNormalizationTechnique: ``(s - min) / (max - min)`` in float; if
    ``max == min == s`` -> 1.0; a result of exactly 0.0 -> 0.001. ``max`` starts at
    ``Float.MIN_VALUE`` (2**-149, positive), so an all-zero list gives 0.001, not 1.0."""
    lo = np.minimum(np.where(live, x, F32(np.inf)).min(axis=1), FLOAT_MAX_VALUE)[:, None]
    hi = np.maximum(np.where(live, x, F32(-np.inf)).max(axis=1), FLOAT_MIN_VALUE)[:, None]
    v = ((x - lo) / (hi - lo)).astype(np.float32)
    v = np.where(v == F32(0.0), _OS_MIN_SCORE, v)
    return np.where((hi == lo) & (hi == x), F32(1.0), v)  # SINGLE_RESULT_SCORE


def opensearch_l2(x: np.ndarray, live: np.ndarray) -> np.ndarray:
    """NS L2ScoreNormalizationTechnique: ``s / (float) sqrt(float sum of s*s)``, 0.0 if the
    norm is 0."""
    squares = np.where(live, (x * x).astype(np.float32), F32(0.0))
    total = np.add.accumulate(squares, axis=1, dtype=np.float32)[:, -1]  # in ranking order
    norm = np.sqrt(total.astype(np.float64)).astype(np.float32)[:, None]
    return np.where(norm == F32(0.0), F32(0.0), (x / norm).astype(np.float32))


def elasticsearch_min_max(x: np.ndarray, live: np.ndarray) -> np.ndarray:
    """ES MinMaxScoreNormalizer: ``(s - min) / (max - min)`` in float, no floor; if
    ``|max - min| < 1e-6f`` every score is 1.0 (since elastic/elasticsearch#128689; earlier
    8.18 builds returned the raw ``min``). ``min`` / ``max`` start at ``Float.MAX_VALUE`` /
    ``Float.MIN_VALUE``, as in OpenSearch."""
    lo = np.minimum(np.where(live, x, FLOAT_MAX_VALUE).min(axis=1), FLOAT_MAX_VALUE)
    # ``if (score < min)`` keeps the first of equal minima: only a zero's sign tells them apart
    zero = lo == F32(0.0)
    if zero.any():
        first = np.argmax(live & (x == F32(0.0)), axis=1)
        lo = np.where(zero, x[np.arange(len(x)), first], lo)
    hi = np.maximum(np.where(live, x, F32(-np.inf)).max(axis=1), FLOAT_MIN_VALUE)
    lo_, hi_ = lo[:, None], hi[:, None]
    flat = np.abs((lo_ - hi_).astype(np.float32)) < _ES_EPSILON
    span = (hi_ - lo_).astype(np.float32)
    return np.where(flat, F32(1.0), ((x - lo_) / span).astype(np.float32))


def elasticsearch_l2(x: np.ndarray, live: np.ndarray) -> np.ndarray:
    """ES L2ScoreNormalizer: ``(float)(s / sqrt(sum of (float)(s*s)))`` with a double sum; if
    the norm is below 1e-6 the raw scores are returned unchanged."""
    squares = np.where(live, (x * x).astype(np.float32), F32(0.0)).astype(np.float64)
    norm = np.sqrt(np.add.accumulate(squares, axis=1)[:, -1])[:, None]  # summed in ranking order
    return np.where(norm < float(_ES_EPSILON), x, (x.astype(np.float64) / norm).astype(np.float32))


def identity(x: np.ndarray, live: np.ndarray) -> np.ndarray:
    """ES IdentityScoreNormalizer."""
    return x


#: (engine, canonical technique) -> normaliser
NORMALIZERS: Dict[Tuple[str, str], Normalizer] = {
    ("opensearch", "min_max"): opensearch_min_max,
    ("opensearch", "l2"): opensearch_l2,
    ("elasticsearch", "min_max"): elasticsearch_min_max,
    ("elasticsearch", "l2"): elasticsearch_l2,
    ("elasticsearch", "none"): identity,
}


def _one_list(engine: str, technique: str, scores: Sequence[float]) -> List[float]:
    if not len(scores):
        return []
    x = float32_scores(scores)[None, :]
    with np.errstate(all="ignore"):  # Java float arithmetic overflows to inf, silently
        out = NORMALIZERS[engine, technique](x, np.ones(x.shape, dtype=bool))
    return out[0].astype(np.float32).tolist()


def normalize_opensearch(scores: Sequence[float], technique: str = "min_max") -> List[float]:
    """neural-search 2.19 normalisation of one sub-query's scores (all shards merged):
    ``min_max`` (:func:`opensearch_min_max`) or ``l2`` (:func:`opensearch_l2`)."""
    canon = NORMALIZATION_ALIASES.get(technique)
    if canon not in ("min_max", "l2"):
        raise ValueError(f"opensearch normalization must be 'min_max' or 'l2', got {technique!r}")
    return _one_list("opensearch", canon, scores)


def normalize_elasticsearch(scores: Sequence[float], normalizer: str = "minmax") -> List[float]:
    """Elasticsearch linear-retriever normaliser of one sub-retriever's scores: ``minmax``
    (:func:`elasticsearch_min_max`), ``l2_norm`` (:func:`elasticsearch_l2`) or ``none``."""
    canon = NORMALIZATION_ALIASES.get(normalizer)
    if canon is None:
        raise ValueError(
            f"elasticsearch normalizer must be 'minmax', 'l2_norm' or 'none', got {normalizer!r}"
        )
    return _one_list("elasticsearch", canon, scores)
