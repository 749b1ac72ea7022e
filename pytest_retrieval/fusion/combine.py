"""Score combinations, written once on whole arrays: OpenSearch's arithmetic / geometric /
harmonic means (neural-search 2.19 processor/combination/*ScoreCombinationTechnique.java) and
Elasticsearch's linear sum (LinearRetrieverBuilder#combineInnerRetrieverResults).

Inputs are :class:`Normalized` scores on the (n, Q, U) candidate layout: sub-ranking ``j``'s
normalised score of each query's candidate ``u``, 0.0 where the document is absent (what
ScoreCombiner#getNormalizedScoresPerDocument's ``new float[n]`` holds). Every step is one
float32 (or, for the logs, float64) IEEE operation per cell, in sub-ranking order, exactly as
the engine does it per document; where the engine skips a score the cell keeps its value. One
document is the one-cell case: :func:`combine_opensearch`.
"""

from __future__ import annotations

from functools import cached_property
from typing import List, Optional, Sequence, Union

import numpy as np

from .config import COMBINATIONS
from .javafloat import exp_to_float32, float32_scores, logs

__all__ = ["Normalized", "combine_opensearch", "linear_sum", "opensearch_mean", "resolve_weights"]

F32 = np.float32
_ZERO = F32(0.0)


class Normalized:
    """One normalisation of every sub-ranking (n, Q, U), with the masks and logs the
    combinations read, each computed once (a sweep combines one normalisation many ways)."""

    def __init__(self, values: np.ndarray):
        self.values = values

    @cached_property
    def non_negative(self) -> np.ndarray:
        """Counted by the arithmetic mean (``score >= 0.0``; a missing document's 0.0 counts)."""
        return self.values >= _ZERO

    @cached_property
    def all_non_negative(self) -> List[bool]:
        return [bool(m.all()) for m in self.non_negative]

    @cached_property
    def counted(self) -> np.ndarray:
        """Counted by the geometric and harmonic means: not ``score <= 0``."""
        return ~(self.values <= _ZERO)

    @cached_property
    def logs(self) -> np.ndarray:
        """``Math.log(score)`` (float64) where counted, else 0.0."""
        return logs(self.values, self.counted)

    @cached_property
    def mask(self) -> np.ndarray:
        """1.0 where counted, else 0.0 (float32)."""
        return self.counted.astype(np.float32)

    @cached_property
    def safe(self) -> np.ndarray:
        """The score where counted, else 1.0 (a divisor that keeps a skipped cell finite)."""
        return np.where(self.counted, self.values, F32(1.0)).astype(np.float32)

    def counted_only(self, j: int, x: Union[np.ndarray, np.float32], weight: np.float32) -> np.ndarray:
        """``x`` where sub-ranking ``j``'s score counts, 0.0 where the engine skips it. With a
        finite weight ``x`` is finite at the skipped cells, and ``x * 0.0`` is a zero, which
        adds nothing to the engine's sums: a multiplication, ten times faster than np.where."""
        if np.isfinite(weight):
            return x * self.mask[j]
        return np.where(self.counted[j], x, _ZERO)


def resolve_weights(weights: Optional[Sequence[float]], n: int, what: str) -> List[np.float32]:
    if weights is None:
        return [F32(1.0)] * n  # both engines: 1.0 per sub-query when not given
    if len(weights) != n:
        raise ValueError(f"{what}: {len(weights)} weights given for {n} sub-rankings")
    return [F32(w) for w in weights]


def arithmetic_mean(norm: Normalized, weights: Sequence[np.float32]) -> np.ndarray:
    """ArithmeticMeanScoreCombinationTechnique#combine: scores >= 0 count, divided by the float
    sum of their weights (0.0 if that is 0)."""
    shape = norm.values.shape[1:]
    total = np.zeros(shape, dtype=np.float32)
    sum_w = np.zeros(shape, dtype=np.float32)
    for j, w in enumerate(weights):
        if norm.all_non_negative[j]:
            total += norm.values[j] * w
            sum_w += w
        else:
            counted = norm.non_negative[j]
            total = np.where(counted, total + norm.values[j] * w, total)
            sum_w = np.where(counted, sum_w + w, sum_w)
    out = np.zeros(shape, dtype=np.float32)
    np.divide(total, sum_w, out=out, where=sum_w != _ZERO)
    return out


def geometric_mean(norm: Normalized, weights: Sequence[np.float32]) -> np.ndarray:
    """GeometricMeanScoreCombinationTechnique#combine: scores <= 0 skipped; float
    ``weightedLnSum += weight * Math.log(score)`` (the product is double, the compound
    assignment narrows back to float); ``(float) Math.exp(weightedLnSum / sumOfWeights)``,
    0.0 if no weight counted."""
    shape = norm.values.shape[1:]
    sum_w = np.zeros(shape, dtype=np.float32)
    ln_sum = np.zeros(shape, dtype=np.float32)
    for j, w in enumerate(weights):
        sum_w += norm.counted_only(j, w, w)
        step = np.float64(w) * norm.logs[j]  # logs are 0.0 where skipped
        if not np.isfinite(w):
            step = np.where(norm.counted[j], step, 0.0)
        ln_sum = (ln_sum.astype(np.float64) + step).astype(np.float32)
    counted = sum_w != _ZERO
    mean = ln_sum / np.where(counted, sum_w, F32(1.0))  # 0/0 never computed
    return np.where(counted, exp_to_float32(mean), _ZERO)


def harmonic_mean(norm: Normalized, weights: Sequence[np.float32]) -> np.ndarray:
    """HarmonicMeanScoreCombinationTechnique#combine: scores <= 0 skipped; float
    ``sumOfWeights / sum(weight / score)``, 0.0 unless that sum is > 0."""
    shape = norm.values.shape[1:]
    sum_w = np.zeros(shape, dtype=np.float32)
    harm = np.zeros(shape, dtype=np.float32)
    for j, w in enumerate(weights):
        sum_w += norm.counted_only(j, w, w)
        harm += norm.counted_only(j, w / norm.safe[j], w)
    out = np.zeros(shape, dtype=np.float32)
    np.divide(sum_w, harm, out=out, where=harm > _ZERO)
    return out


_MEANS = {
    "arithmetic_mean": arithmetic_mean,
    "geometric_mean": geometric_mean,
    "harmonic_mean": harmonic_mean,
}


def opensearch_mean(technique: str, norm: Normalized, weights: Sequence[np.float32]) -> np.ndarray:
    """(Q, U) float32: the ``technique`` combination of every candidate's normalised scores."""
    return _MEANS[technique](norm, weights)


def linear_sum(
    normalized: Sequence[np.ndarray], present: np.ndarray, weights: Sequence[np.float32]
) -> np.ndarray:
    """(Q, U) float32: ``rankDoc.score += weight * normalized`` over the sub-rankings that hold
    the document (``present`` (n, Q, U)), in retriever order."""
    total = np.zeros(present.shape[1:], dtype=np.float32)
    for values, here, w in zip(normalized, present, weights):
        total = np.where(here, total + (w * values).astype(np.float32), total)
    return total


def combine_opensearch(
    scores: Sequence[float], technique: str = "arithmetic_mean", weights: Optional[Sequence[float]] = None
) -> float:
    """neural-search 2.19 combination of one document's normalised scores (0.0 = missing).

    arithmetic_mean: scores >= 0 count (so a missing document's 0.0 counts), divided by
    the float sum of their weights. geometric_mean / harmonic_mean skip scores <= 0.
    Weights default to 1.0 each (ScoreCombinationUtil#getWeightForSubQuery).
    """
    if technique not in COMBINATIONS:
        raise ValueError(
            f"opensearch combination must be one of {', '.join(COMBINATIONS)}, got {technique!r}"
        )
    values = float32_scores(scores).reshape(len(scores), 1, 1)
    ws = resolve_weights(weights, len(scores), "opensearch combination")
    with np.errstate(all="ignore"):  # Java float arithmetic overflows to inf, silently
        return float(opensearch_mean(technique, Normalized(values), ws)[0, 0])
