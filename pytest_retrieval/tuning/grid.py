"""The fusion variants a sweep replays: the grid, the untuned defaults, and their labels.

The grid (:class:`SweepGrid`), per window:

* ``rrf`` over ``rank_constants`` (default 1, 5, 10, 20, 40, 60, 80, 100), with
  ``rrf_semantics`` (default ``opensearch``: ``score-ranker-processor``);
* ``weighted`` (OpenSearch ``normalization-processor``): ``normalizations`` {min_max, l2} x
  ``combinations`` {arithmetic_mean, geometric_mean, harmonic_mean} x weight vectors on the
  simplex with ``weight_step`` (default 0.1): for two sub-retrievers ``(w, 1 - w)`` for
  w = 0.0, 0.1, ..., 1.0 (11 vectors); for n, every vector of multiples of the step summing to
  1 (``C(1/step + n - 1, n - 1)``: 66 for three). OpenSearch requires each weight in [0, 1] and
  the sum within 0.01 of 1, which all of these satisfy.

So two sub-retrievers give ``8 + 2 * 3 * 11 = 74`` variants per window. The two defaults --
RRF with ``rank_constant`` 60 and weighted min_max / arithmetic_mean with equal weights -- are
always scored too (added if the grid lacks them): :func:`default_configs`.

Grid order (the last tie-break of the selection): windows ascending; within a window RRF by
rank constant ascending, then weighted by normalization, combination, and weight vector in the
order listed above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement
from typing import List, Optional, Tuple

import numpy as np

from ..fusion.config import COMBINATIONS, FusionConfig

__all__ = [
    "DEFAULT_RANK_CONSTANTS",
    "NORMALIZATIONS",
    "SweepGrid",
    "default_configs",
    "describe",
    "format_weight",
]

DEFAULT_RANK_CONSTANTS: Tuple[int, ...] = (1, 5, 10, 20, 40, 60, 80, 100)
NORMALIZATIONS: Tuple[str, ...] = ("min_max", "l2")


@dataclass(frozen=True)
class SweepGrid:
    """Which fusion variants to replay (see the module docstring).

    ``windows`` None = one window, the deepest candidate list fetched. ``tie_break`` is the
    :class:`~pytest_retrieval.fusion.config.FusionConfig` tie rule for equal fused scores."""

    normalizations: Tuple[str, ...] = NORMALIZATIONS
    combinations: Tuple[str, ...] = COMBINATIONS
    weight_step: float = 0.1
    rank_constants: Tuple[int, ...] = DEFAULT_RANK_CONSTANTS
    windows: Optional[Tuple[int, ...]] = None
    rrf_semantics: str = "opensearch"
    rrf: bool = True
    weighted: bool = True
    tie_break: str = "doc_id"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "normalizations", tuple(self.normalizations))
        set_(self, "combinations", tuple(self.combinations))
        set_(self, "rank_constants", tuple(int(k) for k in self.rank_constants))
        if self.windows is not None:
            set_(self, "windows", _sorted_windows(self.windows))
        _check_among("normalizations", self.normalizations, NORMALIZATIONS)
        _check_among("combinations", self.combinations, COMBINATIONS)
        if not self.rrf and not self.weighted:
            raise ValueError("sweep grid is empty: enable rrf and/or weighted")
        steps = self.steps
        if steps < 1 or abs(steps * self.weight_step - 1.0) > 1e-9:
            raise ValueError(f"weight_step must divide 1 (0.1, 0.05, 0.25, ...), got {self.weight_step!r}")
        # validates rank constants / semantics / tie_break the way FusionConfig does
        for k in self.rank_constants:
            FusionConfig(
                method="rrf", semantics=self.rrf_semantics, rank_constant=k, tie_break=self.tie_break
            )

    @property
    def steps(self) -> int:
        return int(round(1.0 / self.weight_step)) if self.weight_step > 0 else 0

    def weight_vectors(self, n_subs: int) -> List[Tuple[float, ...]]:
        """Every vector of multiples of ``weight_step`` summing to 1, in ascending
        lexicographic order of the first weight, then the second, ..."""
        if n_subs < 2:
            raise ValueError("a fusion needs at least two sub-retrievers")
        s = self.steps
        out = []
        # choose n-1 cut points in 0..s (with repetition) -> a composition of s into n parts
        for cuts in combinations_with_replacement(range(s + 1), n_subs - 1):
            bounds = (0,) + cuts + (s,)
            parts = [bounds[i + 1] - bounds[i] for i in range(n_subs)]
            out.append(tuple(p / s for p in parts))
        return sorted(out)

    def size(self, n_subs: int, n_windows: int = 1) -> int:
        """Number of grid variants: ``windows x (|rank_constants| + |norm| x |comb| x
        C(steps + n - 1, n - 1))``."""
        per_window = len(self.rank_constants) if self.rrf else 0
        if self.weighted:
            per_window += (
                len(self.normalizations)
                * len(self.combinations)
                * math.comb(self.steps + n_subs - 1, n_subs - 1)
            )
        return per_window * (len(self.windows) if self.windows is not None else n_windows)

    def configs(self, n_subs: int, default_window: int) -> List[FusionConfig]:
        """The grid as FusionConfigs, in grid order."""
        out: List[FusionConfig] = []
        for window in self.windows or (default_window,):
            if self.rrf:
                for k in self.rank_constants:
                    out.append(
                        FusionConfig(
                            method="rrf",
                            semantics=self.rrf_semantics,
                            rank_constant=k,
                            window=window,
                            tie_break=self.tie_break,
                        )
                    )
            if self.weighted:
                vectors = self.weight_vectors(n_subs)
                for norm in self.normalizations:
                    for comb in self.combinations:
                        for ws in vectors:
                            out.append(
                                FusionConfig(
                                    method="weighted",
                                    normalization=norm,
                                    combination=comb,
                                    weights=ws,
                                    window=window,
                                    tie_break=self.tie_break,
                                )
                            )
        return out


def _sorted_windows(windows: Tuple[int, ...]) -> Tuple[int, ...]:
    ws = tuple(windows)
    if not ws or any(isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1 for w in ws):
        raise ValueError(f"sweep windows must be integers >= 1, got {windows!r}")
    return tuple(sorted(set(int(w) for w in ws)))


def _check_among(what: str, values: Tuple[str, ...], allowed: Tuple[str, ...]) -> None:
    for v in values:
        if v not in allowed:
            raise ValueError(f"sweep {what} must be among {allowed}, got {v!r}")


def default_configs(
    n_subs: int, window: int, rrf_semantics: str = "opensearch", tie_break: str = "doc_id"
) -> List[FusionConfig]:
    """The configurations a team gets without tuning: RRF ``rank_constant`` 60 and weighted
    min_max / arithmetic_mean with equal weights (0.5/0.5 for two)."""
    equal = tuple(1.0 / n_subs for _ in range(n_subs))
    return [
        FusionConfig(
            method="rrf", semantics=rrf_semantics, rank_constant=60, window=window, tie_break=tie_break
        ),
        FusionConfig(
            method="weighted",
            normalization="min_max",
            combination="arithmetic_mean",
            weights=equal,
            window=window,
            tie_break=tie_break,
        ),
    ]


def describe(config: FusionConfig) -> str:
    """A short label: ``rrf k=60 window=100`` / ``weighted min_max arithmetic_mean
    [0.3, 0.7] window=100``."""
    if config.method == "rrf":
        return f"rrf k={config.rank_constant} window={config.window}"
    if config.method == "weighted":
        ws = (
            "equal"
            if config.weights is None
            else "[" + ", ".join(format_weight(w) for w in config.weights) + "]"
        )
        return f"weighted {config.normalization} {config.combination} {ws} window={config.window}"
    return f"linear {config.normalization} window={config.window}"


def format_weight(w: float) -> str:
    return repr(float(w))  # shortest text that reads back as the same double
