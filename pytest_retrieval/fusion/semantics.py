"""Score fusion of sub-retriever rankings, replicating what the engines compute.

Pure functions, no I/O. Every sub-ranking is a :class:`~pytest_retrieval.types.Ranking`
in engine order (best first); it is first cut to ``window`` (Elasticsearch
``rank_window_size``; OpenSearch sub-query ``size`` / ``pagination_depth``).

Methods and semantics (read from the engines' sources; ES = elastic/elasticsearch,
NS = opensearch-project/neural-search, src/main/java/org/opensearch/neuralsearch/):

* ``rrf`` - reciprocal rank fusion, ``sum 1/(rank_constant + rank)``, 1-based ranks,
  a document absent from a list adds nothing.

  - ``elasticsearch``: ``rrf`` retriever, ES >= 8.16 (ES x-pack/plugin/rank-rrf/.../rrf/
    RRFRetrieverBuilder.java#combineInnerRetrieverResults): Java ``float`` sum of
    ``1.0f / (k + rank)`` in retriever order; result cut to ``rank_window_size``.
  - ``elasticsearch_legacy``: ``rank: {rrf: ...}`` and the rrf retriever before 8.16
    (.../rrf/RRFQueryPhaseRankCoordinatorContext.java): same float sum, equal scores
    ordered by the sub-queries' original scores (query 1 first, present before
    absent), every unique document kept (``size`` cuts later).
  - ``opensearch``: NS 2.19 ``score-ranker-processor``
    (processor/normalization/RRFNormalizationTechnique.java): each ``1/(k + rank)``
    is rounded HALF_UP to 10 decimals (BigDecimal) then made a float; the floats are
    summed (processor/combination/RRFScoreCombinationTechnique.java). No weights in
    2.19 (added in 3.1). ``rank_constant`` in [1, 10000]. NOTE: 2.19 ranks within each
    shard's list (global ranks came later), so this equals the server for 1-shard indices.
  - ``reference``: exact rational sums rounded once to double (embedded engine).

* ``weighted`` - NS 2.19 ``normalization-processor``: per sub-query normalisation
  (``min_max`` / ``l2``, global over all shards' hits), then ``arithmetic_mean`` /
  ``geometric_mean`` / ``harmonic_mean`` with optional weights, in Java float;
  every unique document of the sub-query windows is kept.

* ``linear`` - ES ``linear`` retriever (8.18+; ``l2_norm`` from 8.19):
  ``sum weight * norm(score)`` in Java float, normalizer ``minmax`` / ``l2_norm`` /
  ``none`` (one per sub-ranking allowed), result cut to ``rank_window_size``.

Ties. Every engine orders equal fused scores by internal Lucene identifiers (ES:
shard index, then Lucene doc id, .../search/rank/RankDoc.java#compareTo; OpenSearch:
Java ``HashMap`` iteration order over Lucene doc ids, then a stable sort,
processor/combination/ScoreCombiner.java#getSortedDocIds). Those ids are not in a
``Ranking``, so ties are ordered by ``tie_break``: ``"doc_id"`` (ascending id, the
default) or ``"input_order"`` (first appearance, sub-ranking 1 first). Exact engine
order inside a group of equal scores is therefore not reproduced; compare such
groups as sets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..types import Ranking, Run

__all__ = [
    "FusionConfig",
    "fuse",
    "fuse_runs",
    "fusion_warnings",
    "rrf",
    "weighted_fusion",
    "linear_fusion",
    "normalize_opensearch",
    "combine_opensearch",
    "normalize_elasticsearch",
    "opensearch_rrf_score",
]

METHODS = ("rrf", "weighted", "linear")
RRF_SEMANTICS = ("elasticsearch", "elasticsearch_legacy", "opensearch", "reference")
COMBINATIONS = ("arithmetic_mean", "geometric_mean", "harmonic_mean")
TIE_BREAKS = ("doc_id", "input_order")

# Accepted spellings -> canonical normalisation names.
_NORMALIZATION_ALIASES = {
    "min_max": "min_max",
    "minmax": "min_max",
    "l2": "l2",
    "l2_norm": "l2",
    "none": "none",
    "identity": "none",
}

_F32 = np.float32
_F32_ZERO = _F32(0.0)
_F32_ONE = _F32(1.0)
_F32_MIN_VALUE = _F32(2.0**-149)  # java.lang.Float.MIN_VALUE (smallest positive, not most negative!)
_F32_MAX_VALUE = _F32(np.finfo(np.float32).max)
_OS_MIN_SCORE = _F32(0.001)  # MinMaxScoreNormalizationTechnique.MIN_SCORE
_ES_EPSILON = _F32(1e-6)  # MinMaxScoreNormalizer / L2ScoreNormalizer EPSILON (1e-6f)
_OS_WEIGHT_SUM_DELTA = float(_F32(0.01))  # ScoreCombinationUtil DELTA_FOR_SCORE_ASSERTION (0.01f)


# --------------------------------------------------------------------------- config


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
        set_ = object.__setattr__
        if self.method not in METHODS:
            raise ValueError(f"fusion method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not _is_int(self.window) or self.window < 1:
            raise ValueError(
                f"fusion window (rank_window_size / sub-query size) must be an integer >= 1, got {self.window!r}"
            )
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(
                f"fusion tie_break must be one of {', '.join(TIE_BREAKS)}, got {self.tie_break!r}"
            )
        if self.weights is not None:
            if isinstance(self.weights, (str, bytes)) or not isinstance(self.weights, Iterable):
                raise ValueError(f"fusion weights must be a sequence of numbers, got {self.weights!r}")
            ws = tuple(self.weights)
            if not ws or not all(_is_number(w) and math.isfinite(w) for w in ws):
                raise ValueError(
                    f"fusion weights must be a non-empty sequence of finite numbers, got {self.weights!r}"
                )
            set_(self, "weights", tuple(float(w) for w in ws))

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

    def _post_init_rrf(self) -> None:
        set_ = object.__setattr__
        sem = "reference" if self.semantics is None else self.semantics
        if sem not in RRF_SEMANTICS:
            raise ValueError(f"rrf semantics must be one of {', '.join(RRF_SEMANTICS)}, got {sem!r}")
        set_(self, "semantics", sem)
        k = 60 if self.rank_constant is None else self.rank_constant  # DEFAULT_RANK_CONSTANT in both engines
        set_(self, "rank_constant", k)
        if not _is_int(k) or k < 1:
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
        if not isinstance(norm, str) or _NORMALIZATION_ALIASES.get(norm) not in ("min_max", "l2"):
            raise ValueError(f"weighted normalization must be 'min_max' or 'l2', got {norm!r}")
        set_(self, "normalization", _NORMALIZATION_ALIASES[norm])
        if self.combination is None:
            set_(self, "combination", "arithmetic_mean")
        if self.combination not in COMBINATIONS:
            raise ValueError(
                f"weighted combination must be one of {', '.join(COMBINATIONS)}, got {self.combination!r}"
            )
        if self.weights is not None:
            _validate_opensearch_weights(self.weights)

    def _post_init_linear(self) -> None:
        set_ = object.__setattr__
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
        set_(self, "normalization", canon)
        if self.weights is not None and any(w < 0 for w in self.weights):
            # LinearRetrieverComponent: "[weight] must be non-negative"
            raise ValueError(f"linear weights must be non-negative, got {self.weights}")


def _canonical_linear_normalizer(name: object) -> str:
    canon = _NORMALIZATION_ALIASES.get(name) if isinstance(name, str) else None
    if canon is None:
        raise ValueError(f"linear normalization must be 'minmax', 'l2_norm' or 'none', got {name!r}")
    return canon


def _validate_opensearch_weights(weights: Sequence[float]) -> None:
    # ScoreCombinationUtil.validateWeights: weights become floats; each in [0.0, 1.0]
    # (Range.between, inclusive); float sum within 0.01f of 1.0 (DoubleMath.fuzzyEquals).
    ws = [_F32(w) for w in weights]
    if any(not (_F32_ZERO <= w <= _F32_ONE) for w in ws):
        raise ValueError(f"opensearch weights must each be in [0.0, 1.0], got {tuple(weights)}")
    total = _F32_ZERO
    for w in ws:
        total = _F32(total + w)
    if abs(1.0 - float(total)) > _OS_WEIGHT_SUM_DELTA:
        raise ValueError(
            f"opensearch weights must sum to 1.0 (tolerance 0.01), got {tuple(weights)} (sum {float(total):.6g})"
        )


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


# --------------------------------------------------------------------------- helpers


def _prepare(rankings: Sequence[Ranking], window: int) -> List[Ranking]:
    out = []
    for i, r in enumerate(rankings):
        if not isinstance(r, Ranking):
            raise ValueError(f"sub-ranking {i} is not a Ranking (got {type(r).__name__})")
        cut = r.top(window)
        if len(set(cut.doc_ids)) != len(cut.doc_ids):
            dup = next(d for j, d in enumerate(cut.doc_ids) if d in cut.doc_ids[:j])
            raise ValueError(f"sub-ranking {i} lists document {dup!r} twice")
        out.append(cut)
    return out


def _check_scores(rankings: Sequence[Ranking]) -> None:
    for i, r in enumerate(rankings):
        for d, s in r.pairs():
            if not _is_number(s) or not math.isfinite(s):
                raise ValueError(f"sub-ranking {i}: document {d!r} has a non-finite score {s!r}")


def _first_seen(rankings: Sequence[Ranking]) -> Dict[str, int]:
    order: Dict[str, int] = {}
    for r in rankings:
        for d in r.doc_ids:
            if d not in order:
                order[d] = len(order)
    return order


def _tie_key(tie_break: str, first_seen: Mapping[str, int]):
    if tie_break == "doc_id":
        return lambda d: d
    return lambda d: first_seen[d]


def _sorted(
    scores: Mapping[str, float], rankings: Sequence[Ranking], tie_break: str, extra_key=None
) -> List[str]:
    tk = _tie_key(tie_break, _first_seen(rankings))
    if extra_key is None:
        return sorted(scores, key=lambda d: (-scores[d], tk(d)))
    return sorted(scores, key=lambda d: (-scores[d], extra_key(d), tk(d)))


def _resolve_weights(weights: Optional[Sequence[float]], n: int, what: str) -> List[np.float32]:
    if weights is None:
        return [_F32_ONE] * n  # both engines: 1.0 per sub-query when not given
    if len(weights) != n:
        raise ValueError(f"{what}: {len(weights)} weights given for {n} sub-rankings")
    return [_F32(w) for w in weights]


# --------------------------------------------------------------------------- RRF


@lru_cache(maxsize=65536)
def opensearch_rrf_score(rank_constant: int, rank: int) -> float:
    """OpenSearch 2.19 per-list RRF score for a 1-based ``rank``.

    ``BigDecimal.ONE.divide(BigDecimal.valueOf(k + rank), 10, RoundingMode.HALF_UP).floatValue()``
    (RRFNormalizationTechnique#calculateNormalizedScore): 1/(k+rank) rounded HALF_UP to
    10 decimals, then correctly rounded to a float.
    """
    n = rank_constant + rank
    q = (2 * 10**10 + n) // (2 * n)  # round_half_up(10**10 / n), exact integers
    return _fraction_to_f32(Fraction(q, 10**10))


def _fraction_to_f32(x: Fraction) -> float:
    """Correctly rounded (ties-to-even) float32 of an exact rational."""
    approx = _F32(float(x))  # float(Fraction) is correctly rounded to double
    candidates = (np.nextafter(approx, _F32(-np.inf)), approx, np.nextafter(approx, _F32(np.inf)))
    # the smallest error; on a tie, the even mantissa (min keeps the first of equal keys)
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))
    return float(best)


def _rrf(rankings: List[Ranking], cfg: FusionConfig) -> Ranking:
    k = cfg.rank_constant
    sem = cfg.semantics
    assert k is not None  # FusionConfig sets it for rrf
    if sem == "reference":
        # exact rational sums, so equal rank profiles tie exactly whatever the list order
        exact: Dict[str, Fraction] = {}
        for r in rankings:
            for pos, d in enumerate(r.doc_ids):
                exact[d] = exact.get(d, Fraction(0)) + Fraction(1, k + pos + 1)
        tk = _tie_key(cfg.tie_break, _first_seen(rankings))
        order = sorted(exact, key=lambda d: (-exact[d], tk(d)))
        return Ranking(order, [float(exact[d]) for d in order])

    if sem == "opensearch":
        # Normalisation: every sub-query hit gets its rounded float RRF score; combination
        # (RRFScoreCombinationTechnique#combine) sums the per-sub-query float array, a
        # missing document contributing 0.0f, in sub-query order.
        per_doc: Dict[str, List[np.float32]] = {}
        n = len(rankings)
        for j, r in enumerate(rankings):
            for pos, d in enumerate(r.doc_ids):
                per_doc.setdefault(d, [_F32_ZERO] * n)[j] = _F32(opensearch_rrf_score(k, pos + 1))
        fused: Dict[str, float] = {}
        for d, arr in per_doc.items():
            total = _F32_ZERO
            for s in arr:
                total = _F32(total + s)
            fused[d] = float(total)
        order = _sorted(fused, rankings, cfg.tie_break)
        return Ranking(order, [fused[d] for d in order])

    # elasticsearch / elasticsearch_legacy: value.score += 1.0f / (rankConstant + rank)
    acc: Dict[str, np.float32] = {}
    for r in rankings:
        for pos, d in enumerate(r.doc_ids):
            acc[d] = _F32(acc.get(d, _F32_ZERO) + _F32(_F32_ONE / _F32(k + pos + 1)))
    fused = {d: float(s) for d, s in acc.items()}
    if sem == "elasticsearch":
        order = _sorted(fused, rankings, cfg.tie_break)
        order = order[: cfg.window]  # RRFRetrieverBuilder: top min(rank_window_size, n)
        return Ranking(order, [fused[d] for d in order])

    # legacy: equal rrf scores -> higher original score in query 1, 2, ... (a document
    # present in a query sorts before one absent from it), then shard / doc id.
    _check_scores(rankings)
    originals = [dict(zip(r.doc_ids, (float(_F32(s)) for s in r.scores))) for r in rankings]

    def by_query_scores(d: str) -> tuple:
        return tuple((0, -o[d]) if d in o else (1, 0.0) for o in originals)

    order = _sorted(fused, rankings, cfg.tie_break, extra_key=by_query_scores)
    return Ranking(order, [fused[d] for d in order])


# --------------------------------------------------------------------------- OpenSearch weighted


def normalize_opensearch(scores: Sequence[float], technique: str = "min_max") -> List[float]:
    """neural-search 2.19 normalisation of one sub-query's scores (all shards merged).

    ``min_max`` (MinMaxScoreNormalizationTechnique): ``(s - min) / (max - min)`` in float;
    if ``max == min == s`` -> 1.0; a result of exactly 0.0 -> 0.001. ``max`` starts at
    ``Float.MIN_VALUE`` (2**-149, positive), so an all-zero list gives 0.001, not 1.0.
    ``l2`` (L2ScoreNormalizationTechnique): ``s / (float) sqrt(float sum of s*s)``, 0.0 if
    the norm is 0.
    """
    canon = _NORMALIZATION_ALIASES.get(technique)
    if canon not in ("min_max", "l2"):
        raise ValueError(f"opensearch normalization must be 'min_max' or 'l2', got {technique!r}")
    xs = [_F32(s) for s in scores]
    if canon == "min_max":
        lo = min(xs, default=_F32_MAX_VALUE)
        lo = min(lo, _F32_MAX_VALUE)
        hi = max([_F32_MIN_VALUE] + xs)
        out = []
        for s in xs:
            if hi == lo and hi == s:
                out.append(1.0)  # SINGLE_RESULT_SCORE
                continue
            v = _F32(_F32(s - lo) / _F32(hi - lo))
            out.append(float(_OS_MIN_SCORE) if v == _F32_ZERO else float(v))
        return out
    total = _F32_ZERO
    for s in xs:
        total = _F32(total + _F32(s * s))
    norm = _F32(math.sqrt(float(total)))
    return [0.0 if norm == _F32_ZERO else float(_F32(s / norm)) for s in xs]


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
    xs = [_F32(s) for s in scores]
    ws = _resolve_weights(weights, len(xs), "opensearch combination")
    sum_w = _F32_ZERO
    if technique == "arithmetic_mean":
        # ArithmeticMeanScoreCombinationTechnique#combine
        total = _F32_ZERO
        for s, w in zip(xs, ws):
            if s >= 0.0:
                total = _F32(total + _F32(s * w))
                sum_w = _F32(sum_w + w)
        return 0.0 if sum_w == _F32_ZERO else float(_F32(total / sum_w))
    if technique == "geometric_mean":
        # GeometricMeanScoreCombinationTechnique#combine: float weightedLnSum += weight * Math.log(score)
        # (the product is double, the compound assignment narrows back to float)
        ln_sum = _F32_ZERO
        for s, w in zip(xs, ws):
            if s <= 0:
                continue
            sum_w = _F32(sum_w + w)
            ln_sum = _F32(float(ln_sum) + float(w) * math.log(float(s)))
        if sum_w == _F32_ZERO:
            return 0.0
        return float(_F32(math.exp(float(_F32(ln_sum / sum_w)))))
    # HarmonicMeanScoreCombinationTechnique#combine
    harm = _F32_ZERO
    for s, w in zip(xs, ws):
        if s <= 0:
            continue
        sum_w = _F32(sum_w + w)
        harm = _F32(harm + _F32(w / s))
    return float(_F32(sum_w / harm)) if harm > 0 else 0.0


def _weighted(rankings: List[Ranking], cfg: FusionConfig) -> Ranking:
    _check_scores(rankings)
    n = len(rankings)
    if cfg.weights is not None and len(cfg.weights) != n:
        # ScoreCombinationUtil#validateIfWeightsMatchScores
        raise ValueError(
            f"opensearch: number of weights [{len(cfg.weights)}] must match number of sub-queries [{n}]"
        )
    # Normalisation is global: min/max/norm over every shard's hits of that sub-query
    # (NormalizationProcessorWorkflow -> ScoreNormalizer over all CompoundTopDocs).
    norm, comb = cfg.normalization, cfg.combination
    assert isinstance(norm, str) and comb is not None  # FusionConfig sets both for weighted
    per_doc: Dict[str, List[float]] = {}
    for j, r in enumerate(rankings):
        for d, ns in zip(r.doc_ids, normalize_opensearch(r.scores, norm)):
            # ScoreCombiner#getNormalizedScoresPerDocument: new float[n] -> missing = 0.0f
            per_doc.setdefault(d, [0.0] * n)[j] = ns
    fused = {d: combine_opensearch(arr, comb, cfg.weights) for d, arr in per_doc.items()}
    # ScoreCombiner keeps every unique document of the sub-query windows.
    order = _sorted(fused, rankings, cfg.tie_break)
    return Ranking(order, [fused[d] for d in order])


# --------------------------------------------------------------------------- Elasticsearch linear


def normalize_elasticsearch(scores: Sequence[float], normalizer: str = "minmax") -> List[float]:
    """Elasticsearch linear-retriever normaliser of one sub-retriever's scores.

    ``minmax`` (MinMaxScoreNormalizer): ``(s - min) / (max - min)`` in float, no floor;
    if ``|max - min| < 1e-6f`` every score is 1.0 (since elastic/elasticsearch#128689;
    earlier 8.18 builds returned the raw ``min``). ``l2_norm`` (L2ScoreNormalizer):
    ``(float)(s / sqrt(sum of (float)(s*s)))`` with a double sum; if the norm is below
    1e-6 the raw scores are returned unchanged. ``none`` (IdentityScoreNormalizer).
    """
    canon = _NORMALIZATION_ALIASES.get(normalizer)
    if canon is None:
        raise ValueError(
            f"elasticsearch normalizer must be 'minmax', 'l2_norm' or 'none', got {normalizer!r}"
        )
    xs = [_F32(s) for s in scores]
    if canon == "none" or not xs:
        return [float(s) for s in xs]
    if canon == "min_max":
        lo = _F32_MAX_VALUE
        hi = _F32_MIN_VALUE  # same Float.MIN_VALUE start as OpenSearch
        for s in xs:
            if s > hi:
                hi = s
            if s < lo:
                lo = s
        if abs(_F32(lo - hi)) < _ES_EPSILON:
            return [1.0] * len(xs)
        span = _F32(hi - lo)
        return [float(_F32(_F32(s - lo) / span)) for s in xs]
    sum_sq = 0.0
    for s in xs:
        sum_sq += float(_F32(s * s))  # rd.score * rd.score is a float product, summed in double
    norm = math.sqrt(sum_sq)
    if norm < float(_ES_EPSILON):
        return [float(s) for s in xs]
    return [float(_F32(float(s) / norm)) for s in xs]


def _linear(rankings: List[Ranking], cfg: FusionConfig) -> Ranking:
    _check_scores(rankings)
    n = len(rankings)
    if isinstance(cfg.normalization, tuple):
        if len(cfg.normalization) != n:
            raise ValueError(f"linear: {len(cfg.normalization)} normalizers given for {n} sub-rankings")
        norms = list(cfg.normalization)
    else:
        assert cfg.normalization is not None  # FusionConfig sets it for linear
        norms = [cfg.normalization] * n
    ws = _resolve_weights(cfg.weights, n, "linear")
    acc: Dict[str, np.float32] = {}
    # LinearRetrieverBuilder#combineInnerRetrieverResults: rankDoc.score += weight * normalized
    for r, norm, w in zip(rankings, norms, ws):
        for d, ns in zip(r.doc_ids, normalize_elasticsearch(r.scores, norm)):
            acc[d] = _F32(acc.get(d, _F32_ZERO) + _F32(w * _F32(ns)))
    fused = {d: float(s) for d, s in acc.items()}
    order = _sorted(fused, rankings, cfg.tie_break)[: cfg.window]
    return Ranking(order, [fused[d] for d in order])


# --------------------------------------------------------------------------- entry points


def fuse(rankings: Sequence[Ranking], config: FusionConfig) -> Ranking:
    """Fuse one query's sub-rankings (engine order, best first) into one Ranking."""
    if not isinstance(config, FusionConfig):
        raise ValueError(f"fuse needs a FusionConfig, got {type(config).__name__}")
    subs = _prepare(list(rankings), config.window)
    if config.method == "rrf":
        return _rrf(subs, config)
    if config.method == "weighted":
        return _weighted(subs, config)
    return _linear(subs, config)


def fuse_runs(runs: Sequence[Run], config: FusionConfig, k: Optional[int] = None) -> Run:
    """Fuse per query; a query absent from one run is an empty sub-ranking there.

    Queries appear in first-seen order across ``runs``; ``k`` cuts each fused ranking.
    """
    if k is not None and (not _is_int(k) or k < 1):
        raise ValueError(f"fuse_runs k must be an integer >= 1 or None, got {k!r}")
    qids: Dict[str, None] = {}
    for run in runs:
        for q in run:
            qids.setdefault(q, None)
    out: Run = {}
    for q in qids:
        fused = fuse([run.get(q, Ranking()) for run in runs], config)
        out[q] = fused.top(k) if k is not None else fused
    return out


def rrf(
    rankings: Sequence[Ranking],
    *,
    rank_constant: Optional[int] = 60,
    window: int = 100,
    semantics: str = "reference",
    tie_break: str = "doc_id",
) -> Ranking:
    """Reciprocal rank fusion of ``rankings`` (see module docstring for ``semantics``)."""
    return fuse(
        rankings,
        FusionConfig(
            method="rrf", semantics=semantics, rank_constant=rank_constant, window=window, tie_break=tie_break
        ),
    )


def weighted_fusion(
    rankings: Sequence[Ranking],
    *,
    normalization: str = "min_max",
    combination: str = "arithmetic_mean",
    weights: Optional[Sequence[float]] = None,
    window: int = 100,
    tie_break: str = "doc_id",
) -> Ranking:
    """OpenSearch ``normalization-processor`` fusion (neural-search 2.19)."""
    return fuse(
        rankings,
        FusionConfig(
            method="weighted",
            semantics="opensearch",
            normalization=normalization,
            combination=combination,
            weights=None if weights is None else tuple(weights),
            window=window,
            tie_break=tie_break,
        ),
    )


def linear_fusion(
    rankings: Sequence[Ranking],
    *,
    normalization: Union[str, Sequence[str]] = "none",
    weights: Optional[Sequence[float]] = None,
    window: int = 100,
    tie_break: str = "doc_id",
) -> Ranking:
    """Elasticsearch ``linear`` retriever fusion."""
    norm = normalization if isinstance(normalization, str) else tuple(normalization)
    return fuse(
        rankings,
        FusionConfig(
            method="linear",
            semantics="elasticsearch",
            normalization=norm,
            weights=None if weights is None else tuple(weights),
            window=window,
            tie_break=tie_break,
        ),
    )


def fusion_warnings(config: FusionConfig, evaluated_k: int) -> List[str]:
    """Advice on a fusion set-up evaluated at cut-off ``evaluated_k``."""
    if not _is_int(evaluated_k) or evaluated_k < 1:
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
