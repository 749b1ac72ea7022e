"""Fused scores: the one implementation of the engines' fusion arithmetic, on
:class:`~pytest_retrieval.fusion.candidates.Candidates` (one query or many). Both
:func:`~pytest_retrieval.fusion.semantics.fuse` (one row, then sorted) and the sweeps' replay
(:mod:`~pytest_retrieval.fusion.replay`, many rows, then ranked on whole matrices) read their
scores here, so they are the same floats by construction."""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .candidates import Candidates
from .combine import Normalized, linear_sum, opensearch_mean, resolve_weights
from .config import FusionConfig
from .normalize import NORMALIZERS
from .rrf import rrf_sum, rrf_table

__all__ = ["FusedScores"]


class FusedScores:
    """The fused score of every candidate cell (Q, U) float32, for any configuration but rrf
    ``reference`` (exact rationals, :func:`~pytest_retrieval.fusion.rrf.exact_rrf`). The
    normalisations are kept: the variants of a sweep share them."""

    def __init__(self, candidates: Candidates):
        self.candidates = candidates
        self._normalized: Dict[Tuple[str, str], Normalized] = {}

    def of(self, cfg: FusionConfig) -> np.ndarray:
        with np.errstate(all="ignore"):  # Java float arithmetic overflows to inf, silently
            if cfg.method == "rrf":
                assert cfg.semantics is not None and cfg.rank_constant is not None  # set for rrf
                table = rrf_table(cfg.semantics, cfg.rank_constant, self.candidates.raw.shape[2])
                return rrf_sum(table, self.candidates.rank)
            if self.candidates.score_error is not None:
                raise ValueError(self.candidates.score_error)
            if cfg.method == "weighted":
                return self._weighted(cfg)
            return self._linear(cfg)

    def normalized(self, engine: str, technique: str) -> Normalized:
        """Every sub-ranking normalised by ``engine``'s ``technique``, on the union layout."""
        key = (engine, technique)
        if key not in self._normalized:
            c, normalize = self.candidates, NORMALIZERS[key]
            values = np.stack([normalize(c.raw[j], c.live[j]) for j in range(c.n)]) if c.n else c.raw
            self._normalized[key] = Normalized(c.to_columns(values.astype(np.float32)))
        return self._normalized[key]

    def _weighted(self, cfg: FusionConfig) -> np.ndarray:
        """neural-search 2.19 ``normalization-processor``: normalisation global over the
        sub-query's hits (NormalizationProcessorWorkflow -> ScoreNormalizer), then ScoreCombiner."""
        n = self.candidates.n
        if cfg.weights is not None and len(cfg.weights) != n:
            # ScoreCombinationUtil#validateIfWeightsMatchScores
            raise ValueError(
                f"opensearch: number of weights [{len(cfg.weights)}] must match number of sub-queries [{n}]"
            )
        assert isinstance(cfg.normalization, str) and cfg.combination is not None  # set for weighted
        weights = resolve_weights(cfg.weights, n, "opensearch combination")
        return opensearch_mean(cfg.combination, self.normalized("opensearch", cfg.normalization), weights)

    def _linear(self, cfg: FusionConfig) -> np.ndarray:
        """Elasticsearch ``linear`` retriever: one normaliser per sub-retriever, weighted sum."""
        n = self.candidates.n
        norms = self._linear_normalizers(cfg, n)
        weights = resolve_weights(cfg.weights, n, "linear")
        normalized = [self.normalized("elasticsearch", norm).values[j] for j, norm in enumerate(norms)]
        return linear_sum(normalized, self.candidates.rank > 0, weights)

    @staticmethod
    def _linear_normalizers(cfg: FusionConfig, n: int) -> List[str]:
        if isinstance(cfg.normalization, tuple):
            if len(cfg.normalization) != n:
                raise ValueError(f"linear: {len(cfg.normalization)} normalizers given for {n} sub-rankings")
            return list(cfg.normalization)
        assert cfg.normalization is not None  # FusionConfig sets it for linear
        return [cfg.normalization] * n
