"""How to fuse: :class:`FusionConfig`, its validation against the engines' own rules, and
:func:`fusion_warnings` (advice on a set-up). Pure, no I/O."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = [
    "COMBINATIONS",
    "METHODS",
    "NORMALIZATION_ALIASES",
    "RRF_SEMANTICS",
    "TIE_BREAKS",
    "FusionConfig",
    "fusion_warnings",
    "is_int",
    "is_number",
]

METHODS = ("rrf", "weighted", "linear")
RRF_SEMANTICS = ("elasticsearch", "elasticsearch_legacy", "opensearch", "reference")
COMBINATIONS = ("arithmetic_mean", "geometric_mean", "harmonic_mean")
TIE_BREAKS = ("doc_id", "input_order")

# Accepted spellings -> canonical normalisation names.
NORMALIZATION_ALIASES = {
    "min_max": "min_max",
    "minmax": "min_max",
    "l2": "l2",
    "l2_norm": "l2",
    "none": "none",
    "identity": "none",
}

_OS_WEIGHT_SUM_DELTA = float(np.float32(0.01))  # ScoreCombinationUtil DELTA_FOR_SCORE_ASSERTION (0.01f)


@dataclass(frozen=True)
class FusionConfig:
    """How to fuse sub-rankings. ``None`` fields take the engine's default.

    ``semantics`` defaults to ``reference`` for rrf, ``opensearch`` for weighted and
    ``elasticsearch`` for linear (the only engine implementing each of the last two).
    ``normalization`` defaults to ``min_max`` (weighted) / ``none`` (linear); for
    linear it may be a tuple, one normaliser per sub-ranking.
    ``weights`` default to 1.0 per sub-ranking (both engines), not 1/n.
    ``rank_constant`` (default 60) is for rrf only, ``combination`` (default
    ``arithmetic_mean``) for weighted only; setting either for another method is an error.
    """

    method: str = "rrf"
    semantics: Optional[str] = None
    rank_constant: Optional[int] = None
    window: int = 100
    normalization: Union[None, str, Tuple[str, ...]] = None
    combination: Optional[str] = None
    weights: Optional[Tuple[float, ...]] = None
    tie_break: str = "doc_id"

    def __post_init__(self) -> None:
        self._check_method_window_tie_break()
        if self.weights is not None:
            object.__setattr__(self, "weights", _finite_weights(self.weights))
        if self.method != "rrf" and self.rank_constant is not None:
            raise ValueError(f"rank_constant applies to rrf only, not to {self.method!r} fusion")
        if self.method != "weighted" and self.combination is not None:
            raise ValueError(f"combination applies to weighted fusion only, not to {self.method!r} fusion")
        if self.method == "rrf":
            self._post_init_rrf()
        elif self.method == "weighted":
            self._post_init_weighted()
        else:
            self._post_init_linear()

    def _check_method_window_tie_break(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"fusion method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not is_int(self.window) or self.window < 1:
            raise ValueError(
                f"fusion window (rank_window_size / sub-query size) must be an integer >= 1, got {self.window!r}"
            )
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(
                f"fusion tie_break must be one of {', '.join(TIE_BREAKS)}, got {self.tie_break!r}"
            )

    def _post_init_rrf(self) -> None:
        set_ = object.__setattr__
        sem = "reference" if self.semantics is None else self.semantics
        if sem not in RRF_SEMANTICS:
            raise ValueError(f"rrf semantics must be one of {', '.join(RRF_SEMANTICS)}, got {sem!r}")
        set_(self, "semantics", sem)
        k = 60 if self.rank_constant is None else self.rank_constant  # DEFAULT_RANK_CONSTANT in both engines
        set_(self, "rank_constant", k)
        if not is_int(k) or k < 1:
            raise ValueError(f"rrf rank_constant must be an integer >= 1, got {k!r}")
        # RRFNormalizationTechnique.RANK_CONSTANT_RANGE = [1, 10_000]
        if sem == "opensearch" and k > 10_000:
            raise ValueError(f"opensearch rrf rank_constant must be in [1, 10000], got {k}")
        if self.weights is not None:
            raise ValueError(
                "rrf weights are not supported (Elasticsearch 8.x rrf and OpenSearch 2.19 rrf have none)"
            )
        if self.normalization is not None:
            raise ValueError("rrf takes no normalization (it only uses ranks)")

    def _single_semantics(self, only: str, implementation: str) -> None:
        """Weighted and linear fusion exist in one engine each: ``semantics`` is that one."""
        sem = only if self.semantics is None else self.semantics
        if sem != only:
            raise ValueError(
                f"{self.method} fusion exists only with semantics {only!r} ({implementation}), got {sem!r}"
            )
        object.__setattr__(self, "semantics", sem)

    def _post_init_weighted(self) -> None:
        set_ = object.__setattr__
        self._single_semantics("opensearch", "normalization-processor")
        norm = "min_max" if self.normalization is None else self.normalization
        if not isinstance(norm, str) or NORMALIZATION_ALIASES.get(norm) not in ("min_max", "l2"):
            raise ValueError(f"weighted normalization must be 'min_max' or 'l2', got {norm!r}")
        set_(self, "normalization", NORMALIZATION_ALIASES[norm])
        if self.combination is None:
            set_(self, "combination", "arithmetic_mean")
        if self.combination not in COMBINATIONS:
            raise ValueError(
                f"weighted combination must be one of {', '.join(COMBINATIONS)}, got {self.combination!r}"
            )
        if self.weights is not None:
            _validate_opensearch_weights(self.weights)

    def _post_init_linear(self) -> None:
        self._single_semantics("elasticsearch", "linear retriever")
        norm = "none" if self.normalization is None else self.normalization
        if isinstance(norm, str):
            canon: Union[str, Tuple[str, ...]] = _canonical_linear_normalizer(norm)
        elif isinstance(norm, Iterable):
            canon = tuple(_canonical_linear_normalizer(n) for n in norm)
            if not canon:
                raise ValueError("linear normalization tuple must not be empty")
        else:
            raise ValueError(f"linear normalization must be a name or a tuple of names, got {norm!r}")
        object.__setattr__(self, "normalization", canon)
        if self.weights is not None and any(w < 0 for w in self.weights):
            # LinearRetrieverComponent: "[weight] must be non-negative"
            raise ValueError(f"linear weights must be non-negative, got {self.weights}")


def _finite_weights(weights: object) -> Tuple[float, ...]:
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Iterable):
        raise ValueError(f"fusion weights must be a sequence of numbers, got {weights!r}")
    ws = tuple(weights)
    if not ws or not all(is_number(w) and math.isfinite(w) for w in ws):
        raise ValueError(f"fusion weights must be a non-empty sequence of finite numbers, got {weights!r}")
    return tuple(float(w) for w in ws)


def _canonical_linear_normalizer(name: object) -> str:
    canon = NORMALIZATION_ALIASES.get(name) if isinstance(name, str) else None
    if canon is None:
        raise ValueError(f"linear normalization must be 'minmax', 'l2_norm' or 'none', got {name!r}")
    return canon


def _validate_opensearch_weights(weights: Sequence[float]) -> None:
    # ScoreCombinationUtil.validateWeights: weights become floats; each in [0.0, 1.0]
    # (Range.between, inclusive); float sum within 0.01f of 1.0 (DoubleMath.fuzzyEquals).
    ws = [np.float32(w) for w in weights]
    if any(not (np.float32(0.0) <= w <= np.float32(1.0)) for w in ws):
        raise ValueError(f"opensearch weights must each be in [0.0, 1.0], got {tuple(weights)}")
    total = np.float32(0.0)
    for w in ws:
        total = np.float32(total + w)
    if abs(1.0 - float(total)) > _OS_WEIGHT_SUM_DELTA:
        raise ValueError(
            f"opensearch weights must sum to 1.0 (tolerance 0.01), got {tuple(weights)} (sum {float(total):.6g})"
        )


def is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def is_number(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def fusion_warnings(config: FusionConfig, evaluated_k: int) -> List[str]:
    """Advice on a fusion set-up evaluated at cut-off ``evaluated_k``."""
    if not is_int(evaluated_k) or evaluated_k < 1:
        raise ValueError(f"evaluated_k must be an integer >= 1, got {evaluated_k!r}")
    warnings: List[str] = []
    if config.semantics in ("elasticsearch", "elasticsearch_legacy") and config.window < evaluated_k:
        warnings.append(
            f"fusion window {config.window} < k {evaluated_k}: Elasticsearch rejects size > rank_window_size"
        )
    if config.window < 2 * evaluated_k:
        warnings.append(
            f"fusion window {config.window} < 2 x k ({2 * evaluated_k}): documents just outside one "
            f"sub-ranking's top {config.window} lose that contribution, so the fused top {evaluated_k} "
            f"depends on the window (raise rank_window_size / pagination_depth)"
        )
    return warnings
