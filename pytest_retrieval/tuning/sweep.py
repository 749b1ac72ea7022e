"""Fusion sweeps: replay every fusion variant offline from candidates fetched once.

Pure (no I/O). Each sub-retriever is queried once, deep enough for the largest window (a
:class:`~pytest_retrieval.types.Run` per sub-retriever, with scores); every variant of the grid
is then fused from those candidates, exactly as :func:`pytest_retrieval.measures.fusion.fuse_runs`
would fuse them (same documents, same order, bit-identical scores: :func:`replay` is a
vectorised equivalent, checked against ``fuse_runs`` in ``tests/test_sweep.py``), scored with
:func:`pytest_retrieval.measures.metrics.evaluate` on a *tuning* split, and the best variant is then
measured once on a disjoint *evaluation* split next to the default configurations.

Speed. ``replay`` lays each query's candidate union out as one row of a padded matrix (columns
in tie order) and does every float32 step of the engine's arithmetic on whole matrices; the
top k per row come from one ``np.partition`` on an integer key (float32 score order, then
column); each variant's top k is scored by :func:`~pytest_retrieval.measures.metrics.evaluate`, the
one metric engine (with the engine's order, a metric @k reads only the top k, so the tuning
pass fuses no deeper). Queries whose scores fall outside the safe
range (non-finite, |score| > 1e18) and methods without a vectorised path (``linear``,
``rrf`` ``reference`` / ``elasticsearch_legacy``) go through :func:`fusion.fuse` per query.
On SciFact (809 tuning + 300 evaluation queries, top 100 BM25 + kNN) the 74-variant sweep
takes ~0.4-0.7 s on 2 CPUs (``benchmarks/bench_sweep.py``).

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
always scored too (added if the grid lacks them).

Choosing the best (deterministic): the highest tuning-split objective; exact ties go to a
default configuration, then to the earlier variant in grid order (windows ascending; within
a window RRF by rank constant ascending, then weighted by normalization, combination, and
weight vector in the order listed above).

Splits. The tuning and evaluation qrels must not share a query id (a sweep that tunes on
the queries it reports is refused with ``ValueError``). Use two qrels files (e.g. BEIR
``train``/``dev`` for tuning and ``test`` for evaluation), or :func:`split_queries` +
:func:`restrict_qrels` on one file.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..measures.fusion import COMBINATIONS, FusionConfig, fuse, opensearch_rrf_score
from ..measures.metrics import Evaluation, evaluate, parse_metric
from ..types import Ranking, Run

__all__ = [
    "DEFAULT_RANK_CONSTANTS",
    "SweepGrid",
    "SweepResult",
    "VariantScore",
    "check_disjoint",
    "default_configs",
    "describe",
    "opensearch_pipeline",
    "replay",
    "restrict_qrels",
    "split_queries",
    "sweep",
    "yaml_block",
]

Qrels = Mapping[str, Mapping[str, int]]

DEFAULT_RANK_CONSTANTS: Tuple[int, ...] = (1, 5, 10, 20, 40, 60, 80, 100)
NORMALIZATIONS: Tuple[str, ...] = ("min_max", "l2")

_F32 = np.float32
_F32_MIN_VALUE = _F32(2.0**-149)
_OS_MIN_SCORE = _F32(0.001)
# Raw scores beyond this (in float32) could overflow in normalisation arithmetic; such
# queries go through the reference implementation instead of the vectorised one.
_SAFE_ABS = 1e18
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


# =========================================================================== splits


def split_queries(qids: Iterable[str], fraction: float = 0.5, seed: int = 0) -> Tuple[List[str], List[str]]:
    """Deterministic split of ``qids`` into (tune, evaluate).

    Each id is ranked by ``sha256(f"{seed}:{qid}")``; the ``round(fraction * n)`` lowest go to
    the tuning split. The result depends only on the set of ids and the seed (not on their
    order, the Python version or the platform), and a query keeps its side when others are
    added unless it sits at the boundary. Both lists keep the input order."""
    ids = list(dict.fromkeys(str(q) for q in qids))
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"split fraction must be strictly between 0 and 1, got {fraction!r}")
    if len(ids) < 2:
        raise ValueError(f"cannot split {len(ids)} query id(s) into two non-empty sets")
    n_tune = min(max(int(round(fraction * len(ids))), 1), len(ids) - 1)
    ranked = sorted(ids, key=lambda q: (hashlib.sha256(f"{seed}:{q}".encode()).digest(), q))
    tune = set(ranked[:n_tune])
    return [q for q in ids if q in tune], [q for q in ids if q not in tune]


def restrict_qrels(qrels: Qrels, qids: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """The judgments of ``qids`` only (ids absent from ``qrels`` are skipped)."""
    return {q: dict(qrels[q]) for q in qids if q in qrels}


def check_disjoint(tune_qids: Iterable[str], eval_qids: Iterable[str]) -> None:
    """``ValueError`` (one line) when the two splits share a query id."""
    tune = set(tune_qids)
    shared = [q for q in dict.fromkeys(eval_qids) if q in tune]
    if shared:
        shown = ", ".join(repr(q) for q in shared[:5])
        more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
        raise ValueError(
            f"sweep refused: {len(shared)} query id(s) are in both the tuning and "
            f"the evaluation split ({shown}{more}); tune and evaluate on disjoint "
            f"queries (split_queries, or separate qrels files)"
        )


# =========================================================================== the grid


@dataclass(frozen=True)
class SweepGrid:
    """Which fusion variants to replay (see the module docstring).

    ``windows`` None = one window, the deepest candidate list fetched. ``tie_break`` is the
    :class:`~pytest_retrieval.measures.fusion.FusionConfig` tie rule for equal fused scores."""

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
            ws = tuple(self.windows)
            if not ws or any(
                isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1 for w in ws
            ):
                raise ValueError(f"sweep windows must be integers >= 1, got {self.windows!r}")
            set_(self, "windows", tuple(sorted(set(int(w) for w in ws))))
        for n in self.normalizations:
            if n not in NORMALIZATIONS:
                raise ValueError(f"sweep normalizations must be among {NORMALIZATIONS}, got {n!r}")
        for c in self.combinations:
            if c not in COMBINATIONS:
                raise ValueError(f"sweep combinations must be among {COMBINATIONS}, got {c!r}")
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
        ws = "equal" if config.weights is None else "[" + ", ".join(_fmt_w(w) for w in config.weights) + "]"
        return f"weighted {config.normalization} {config.combination} {ws} window={config.window}"
    return f"linear {config.normalization} window={config.window}"


def _fmt_w(w: float) -> str:
    return repr(float(w))  # shortest text that reads back as the same double


# =========================================================================== replay


class _Replayer:
    """Candidates of every sub-run for a set of queries, laid out for vectorised fusion.

    Per query ``q``, the union of the sub-rankings' top ``window`` documents in first-seen
    order (sub-ranking 1 first) is ``ids[q]``; arrays are ``(Q, U)`` padded to the largest
    union. Per sub-ranking ``j`` the raw scores are also kept in ranking order ``(Q, W)``,
    because the l2 norm sums squares in that order."""

    def __init__(self, runs: Sequence[Run], qids: Sequence[str], window: int, tie_break: str):
        n = self.n = len(runs)
        self.window = window
        self.tie_break = tie_break
        self.qids = list(qids)
        Q = len(self.qids)
        # ---- the cut sub-rankings, flattened in (query, sub-ranking, rank) order
        empty = Ranking()
        self.subs: List[List[Ranking]] = []  # per query, for the reference path
        flat_ids: List[str] = []
        flat_scores: List[Any] = []
        lengths = np.zeros((Q, n), dtype=np.int64)
        for qi, q in enumerate(self.qids):
            cut = []
            for j, run in enumerate(runs):
                r = run.get(q, empty)
                if len(r.doc_ids) > window:
                    r = r.top(window)
                cut.append(r)
                lengths[qi, j] = len(r.doc_ids)
                flat_ids.extend(r.doc_ids)
                flat_scores.extend(r.scores)
            self.subs.append(cut)
        total = len(flat_ids)
        vocab: Dict[str, int] = {d: i for i, d in enumerate(dict.fromkeys(flat_ids))}
        codes = np.fromiter(map(vocab.__getitem__, flat_ids), dtype=np.int64, count=total)
        names = list(vocab)
        V = max(len(names), 1)
        # rank of each doc id in string order (the "doc_id" tie rule)
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        seg = lengths.ravel()  # segments in (query, sub) order
        qf = np.repeat(np.repeat(np.arange(Q), n), seg)
        jf = np.repeat(np.tile(np.arange(n), Q), seg)
        starts = np.concatenate(([0], np.cumsum(seg)[:-1])) if len(seg) else np.zeros(0, np.int64)
        pf = np.arange(total) - np.repeat(starts, seg)  # 0-based rank in its sub-ranking
        if total:
            keys = np.sort((qf * n + jf) * V + codes)
            if (keys[1:] == keys[:-1]).any():
                self._raise_duplicate()
        # ---- the union of each query's candidates, in tie order
        doc_rank = rank[codes] if total else codes
        cell_keys, first, inverse = np.unique(qf * V + doc_rank, return_index=True, return_inverse=True)
        cell_q = cell_keys // V
        if tie_break == "doc_id":
            perm = np.arange(len(cell_keys))
        else:  # first seen: sub-ranking 1 first, then new documents of 2, ...
            perm = np.lexsort((first, cell_q))
        new_index = np.empty(len(perm), dtype=np.int64)
        new_index[perm] = np.arange(len(perm))
        cq = cell_q[perm]
        n_union = np.bincount(cq, minlength=Q).astype(np.int64)
        group_start = np.concatenate(([0], np.cumsum(n_union)[:-1])) if Q else n_union
        col_sorted = np.arange(len(cq)) - group_start[cq]  # column of each cell (perm order)
        self._cell_keys = cell_keys  # sorted (query, doc rank) keys
        self._cell_col = col_sorted[new_index]  # column, in cell_keys order
        self._vocab, self._rank, self._V = vocab, rank, V
        colf = self._cell_col[inverse.ravel()] if total else np.zeros(0, np.int64)
        U = int(n_union.max()) if Q else 0
        W = int(lengths.max()) if lengths.size else 0
        self.U, self.W = U, W
        self.n_union = n_union
        self.cols = np.arange(max(U, 1), dtype=np.int64)[None, :]
        self.valid = self.cols < n_union[:, None]
        self.ids = np.full((Q, max(U, 1)), None, dtype=object)
        if total:
            names_arr = np.empty(len(names), dtype=object)
            names_arr[:] = names
            self.ids[qf, colf] = names_arr[codes]
        self.pos = np.zeros((n, Q, max(U, 1)), dtype=np.int64)  # 1-based rank, 0 = absent
        self.pos[jf, qf, colf] = pf + 1
        self.raw_len = lengths.T.copy()
        self.raw_to_union = np.zeros((n, Q, max(W, 1)), dtype=np.int64)
        self.raw_to_union[jf, qf, pf] = colf
        # ---- scores: float32 as the engines use them; odd queries take the reference path
        self.raw = np.zeros((n, Q, max(W, 1)), dtype=np.float32)
        self.finite_error: Optional[str] = None
        fallback = np.zeros(Q, dtype=bool)
        if set(map(type, flat_scores)) <= _PLAIN_NUMBERS:
            vals = np.array(flat_scores, dtype=np.float64)
            ok = np.isfinite(vals)
        else:
            ok = np.array(
                [
                    isinstance(x, (int, float, np.integer, np.floating))
                    and not isinstance(x, bool)
                    and math.isfinite(x)
                    for x in flat_scores
                ],
                dtype=bool,
            )
            vals = np.array([float(x) if good else 0.0 for x, good in zip(flat_scores, ok)], dtype=np.float64)
        if total and not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            self.finite_error = (
                f"sub-ranking {int(jf[bad])}: document {flat_ids[bad]!r} has a "
                f"non-finite score {flat_scores[bad]!r}"
            )
            fallback[qf[~ok]] = True
            vals = np.where(ok, vals, 0.0)
        if total:
            fallback[qf[np.abs(vals) > _SAFE_ABS]] = True
            self.raw[jf, qf, pf] = vals.astype(np.float32)
        self.fallback_arr = fallback
        self._norm_cache: Dict[str, Any] = {}
        self._rrf_cache: Dict[Tuple[str, int], np.ndarray] = {}
        self._all_ge0: Dict[str, List[bool]] = {}
        self._floor: Optional[np.ndarray] = None

    def _raise_duplicate(self) -> None:
        for cut in self.subs:
            for j, r in enumerate(cut):
                if len(set(r.doc_ids)) != len(r.doc_ids):
                    dup = next(d for i, d in enumerate(r.doc_ids) if d in r.doc_ids[:i])
                    raise ValueError(f"sub-ranking {j} lists document {dup!r} twice")
        raise AssertionError("duplicate detection disagrees")  # pragma: no cover

    def columns_of(self, row: int, doc_ids: Sequence[str]) -> List[int]:
        """Column of each of ``doc_ids`` in ``row`` (-1 when not a candidate there)."""
        out = []
        for d in doc_ids:
            code = self._vocab.get(d)
            if code is None:
                out.append(-1)
                continue
            key = row * self._V + int(self._rank[code])
            i = int(np.searchsorted(self._cell_keys, key))
            out.append(
                int(self._cell_col[i]) if i < len(self._cell_keys) and self._cell_keys[i] == key else -1
            )
        return out

    # ---- normalisation (per sub-ranking, ranking order), scattered to the union layout

    def _normalized(self, technique: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(norm (n, Q, U) float32 with 0.0 where absent, None (see :meth:`_logs`),
        norm >= 0, norm > 0)."""
        if technique in self._norm_cache:
            return self._norm_cache[technique]
        n, Q, U = self.n, len(self.qids), max(self.U, 1)
        W = self.raw.shape[2]
        out = np.zeros((n, Q, U), dtype=np.float32)
        cols = np.arange(W)[None, :]
        with np.errstate(all="ignore"):
            for j in range(n):
                x = self.raw[j]  # (Q, W) float32
                live = cols < self.raw_len[j][:, None]  # (Q, W)
                if technique == "min_max":
                    lo = np.where(live, x, _F32(np.inf)).min(axis=1)
                    lo = np.minimum(lo, _F32(np.finfo(np.float32).max))
                    hi = np.maximum(np.where(live, x, _F32(-np.inf)).max(axis=1), _F32_MIN_VALUE)
                    lo_, hi_ = lo[:, None], hi[:, None]
                    v = ((x - lo_) / (hi_ - lo_)).astype(np.float32)
                    v = np.where(v == _F32(0.0), _OS_MIN_SCORE, v)
                    v = np.where((hi_ == lo_) & (hi_ == x), _F32(1.0), v)
                else:
                    sq = np.where(live, (x * x).astype(np.float32), _F32(0.0))
                    total = np.add.accumulate(sq, axis=1, dtype=np.float32)[:, -1]
                    norm = np.sqrt(total.astype(np.float64)).astype(np.float32)[:, None]
                    v = np.where(norm == _F32(0.0), _F32(0.0), (x / norm).astype(np.float32))
                v = v.astype(np.float32)
                qi, p = np.nonzero(live)
                u = self.raw_to_union[j][qi, p]
                vals = v[qi, p]
                out[j, qi, u] = vals
        ge0 = out >= _F32(0.0)
        self._all_ge0[technique] = [bool(ge0[j].all()) for j in range(n)]
        self._norm_cache[technique] = (out, None, ge0, out > _F32(0.0))
        return self._norm_cache[technique]

    def _logs(self, technique: str) -> np.ndarray:
        """log(norm) (n, Q, U) float64 where norm > 0, else 0.0 (geometric mean only).

        ``math.log``, not ``np.log``: fusion.combine_opensearch (and the engine,
        java.lang.Math.log) use the platform's libm; numpy's SIMD log may differ in the
        last bit of the double."""
        key = "log:" + technique
        if key not in self._norm_cache:
            norm, _, _, gt0 = self._normalized(technique)
            logs = np.zeros(norm.shape, dtype=np.float64)
            logs[gt0] = list(map(math.log, norm[gt0].astype(np.float64).tolist()))
            self._norm_cache[key] = logs
        return self._norm_cache[key]

    def _positive_masks(self, technique: str) -> Tuple[np.ndarray, np.ndarray]:
        key = "mask:" + technique
        if key not in self._norm_cache:
            norm, _, _, gt0 = self._normalized(technique)
            mask = gt0.astype(np.float32)
            safe = np.where(gt0, norm, _F32(1.0)).astype(np.float32)
            self._norm_cache[key] = (mask, safe)  # type: ignore[assignment]
        return self._norm_cache[key]  # type: ignore[return-value]

    def _rrf_table(self, semantics: str, k: int) -> np.ndarray:
        """float32 contribution of 1-based rank r (index r; index 0 = absent = 0.0)."""
        key = (semantics, k)
        if key not in self._rrf_cache:
            W = max(self.W, 1)
            table = np.zeros(W + 1, dtype=np.float32)
            if semantics == "opensearch":
                table[1:] = [opensearch_rrf_score(k, r) for r in range(1, W + 1)]
            else:  # elasticsearch: 1.0f / (float)(k + rank)
                table[1:] = _F32(1.0) / np.arange(k + 1, k + W + 1, dtype=np.float32)
            self._rrf_cache[key] = table
        return self._rrf_cache[key]

    # ---- fused scores (Q, U) for one configuration

    def _scores(self, cfg: FusionConfig) -> np.ndarray:
        if cfg.method == "rrf":
            table = self._rrf_table(cfg.semantics, cfg.rank_constant)
            total = np.zeros(self.pos.shape[1:], dtype=np.float32)
            for j in range(self.n):
                total = (total + table[self.pos[j]]).astype(np.float32)
            return total
        # weighted (neural-search 2.19 ScoreCombiner + *ScoreCombinationTechnique)
        if self.finite_error is not None:
            raise ValueError(self.finite_error)
        if cfg.weights is not None and len(cfg.weights) != self.n:
            raise ValueError(
                f"opensearch: number of weights [{len(cfg.weights)}] must match "
                f"number of sub-queries [{self.n}]"
            )
        norm, _, ge0, gt0 = self._normalized(cfg.normalization)
        ws = [_F32(w) for w in (cfg.weights or (1.0,) * self.n)]
        shape = norm.shape[1:]
        sum_w = np.zeros(shape, dtype=np.float32)
        out = np.zeros(shape, dtype=np.float32)
        # Every step is one float32 (or, for the logs, float64) IEEE operation per cell, in
        # sub-query order, exactly as fusion.combine_opensearch does it per document. Where
        # the engine skips a score, an exact 0.0 is added instead: the running sums start at
        # +0.0 and never become -0.0, so x + 0.0 == x bit for bit.
        zero = _F32(0.0)
        with np.errstate(all="ignore"):
            if cfg.combination == "arithmetic_mean":
                total = np.zeros(shape, dtype=np.float32)
                for j in range(self.n):
                    if self._all_ge0[cfg.normalization][j]:
                        total += norm[j] * ws[j]
                        sum_w += ws[j]
                    else:
                        total += np.where(ge0[j], norm[j] * ws[j], zero)
                        sum_w += np.where(ge0[j], ws[j], zero)
                np.divide(total, sum_w, out=out, where=sum_w != zero)
                return out
            # mask[j] is 1.0 where the score counts (> 0) and 0.0 where it is skipped; safe[j]
            # is the score there and 1.0 elsewhere: x * 1.0 == x and finite * 0.0 == +0.0.
            mask, safe = self._positive_masks(cfg.normalization)
            for j in range(self.n):
                sum_w += ws[j] * mask[j]
            if cfg.combination == "geometric_mean":
                logs = self._logs(cfg.normalization)
                ln_sum = np.zeros(shape, dtype=np.float32)
                for j in range(self.n):
                    # logs[j] is 0.0 where the score is skipped, so w * 0.0 adds nothing
                    ln_sum = (ln_sum.astype(np.float64) + np.float64(ws[j]) * logs[j]).astype(np.float32)
                live = sum_w != zero
                mean = ln_sum / np.maximum(sum_w, _F32_MIN_VALUE)  # 0/0 never computed
                np.multiply(_exp_to_f32(mean), live, out=out)
                return out
            harm = np.zeros(shape, dtype=np.float32)
            for j in range(self.n):
                harm += (ws[j] / safe[j]) * mask[j]
            np.divide(sum_w, harm, out=out, where=harm > zero)
            return out

    def _order(self, scores: np.ndarray, width: int) -> np.ndarray:
        """Per row, the columns of the ``width`` best fused scores: score descending, then
        column (= tie order).

        One int64 key per cell: the float32 ``-score`` (``-0.0`` turned into ``+0.0``, as
        Python's sort sees them equal) mapped to an order-preserving int32, shifted left 32
        bits, plus the column in the low bits. Keys are unique within a row, so the ``width``
        smallest keys, sorted, are the answer, and their low bits are the columns. Padding
        cells get a key above every real one (the NaN bit pattern 0x7FFFFFFF)."""
        Q, U = scores.shape
        if width <= 0:
            return np.zeros((Q, 0), dtype=np.int64)
        if self._floor is None:
            invalid = (np.int64(0x7FFFFFFF) << np.int64(32)) | self.cols
            self._floor = np.where(self.valid, np.iinfo(np.int64).min, invalid)
        with np.errstate(all="ignore"):
            key = (-scores) + _F32(0.0)
        bits = key.view(np.int32)
        bits = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))
        comp = (bits.astype(np.int64) << np.int64(32)) | self.cols
        np.maximum(comp, self._floor, out=comp)
        if width < U:
            comp = np.partition(comp, width - 1, axis=1)[:, :width]
        comp.sort(axis=1)
        return comp[:, :width] & np.int64(0xFFFFFFFF)

    def _vectorised(self, cfg: FusionConfig) -> bool:
        return cfg.method == "weighted" or (
            cfg.method == "rrf" and cfg.semantics in ("opensearch", "elasticsearch")
        )

    def top(
        self, cfg: FusionConfig, k: Optional[int]
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scores (Q, U), order (Q, width), keep (Q,), exact (Q,) bool): the fused scores,
        the columns of each row's best ``keep`` documents in fused order, and which rows the
        vectorised path got right (the others need :func:`fuse`)."""
        scores = self._scores(cfg)
        # padding cells always hold 0.0, so a non-finite score is a real one
        if np.isfinite(scores).all():
            exact = ~self.fallback_arr
        else:
            exact = np.isfinite(scores).all(axis=1) & ~self.fallback_arr
        keep = self.n_union.copy()
        if cfg.method == "rrf" and cfg.semantics == "elasticsearch":
            keep = np.minimum(keep, cfg.window)  # RRFRetrieverBuilder: top rank_window_size
        if k is not None:
            keep = np.minimum(keep, k)
        width = int(keep.max()) if len(keep) else 0
        return scores, self._order(scores, width), keep, exact

    def fuse(self, cfg: FusionConfig, k: Optional[int] = None) -> Run:
        if cfg.window != self.window or cfg.tie_break != self.tie_break:
            raise AssertionError("replayer built for another window / tie rule")
        out: Run = {}
        if not self._vectorised(cfg):
            for q, subs in zip(self.qids, self.subs):
                fused = fuse(subs, cfg)
                out[q] = fused.top(k) if k is not None else fused
            return out
        if not self.qids:
            return out
        scores, order, keep, exact = self.top(cfg, k)
        ids_rows = np.take_along_axis(self.ids, order, axis=1).tolist()
        sc_rows = np.take_along_axis(scores, order, axis=1).astype(np.float64).tolist()
        for qi, q in enumerate(self.qids):
            if not exact[qi]:
                fused = fuse(self.subs[qi], cfg)
                out[q] = fused.top(k) if k is not None else fused
                continue
            m = int(keep[qi])
            out[q] = Ranking(ids_rows[qi][:m], sc_rows[qi][:m])
        return out


def _exp_to_f32(x: np.ndarray) -> np.ndarray:
    """``(float) Math.exp((double) x)`` for a float32 array, bit-identical to
    ``np.float32(math.exp(float(x)))``: numpy's exp may differ from libm's in the last bit of
    the double, which only matters when the double lies within a few ulps of a float32
    rounding boundary; those elements are recomputed with ``math.exp``."""
    with np.errstate(all="ignore"):
        d = np.exp(x.astype(np.float64))
        out = d.astype(np.float32)
        # exp > 0: d * (1 -/+ 2**-49) brackets every double within ~8 ulps of d
        lo = (d * (1.0 - 2.0**-49)).astype(np.float32)
        hi = (d * (1.0 + 2.0**-49)).astype(np.float32)
        unsure = (lo != hi) | ~np.isfinite(d) | (d == 0.0)
    if unsure.any():
        idx = np.nonzero(unsure)
        vals = x[idx].astype(np.float64).tolist()
        exact = []
        for v in vals:
            try:
                exact.append(math.exp(v))
            except OverflowError:
                exact.append(math.inf)
        with np.errstate(over="ignore"):
            out[idx] = np.asarray(exact, dtype=np.float64).astype(np.float32)
    return out


def _query_order(runs: Sequence[Run]) -> List[str]:
    qids: Dict[str, None] = {}
    for run in runs:
        for q in run:
            qids.setdefault(q, None)
    return list(qids)


def replay(
    runs: Sequence[Run], config: FusionConfig, k: Optional[int] = None, qids: Optional[Sequence[str]] = None
) -> Run:
    """``fuse_runs(runs, config, k)``, vectorised: the same queries (first-seen order across
    ``runs``, or ``qids`` restricted to queries present in some run), the same documents in
    the same order, bit-identical scores. Vectorised for ``weighted`` and for ``rrf`` with
    ``opensearch`` / ``elasticsearch`` semantics; other methods go through
    :func:`~pytest_retrieval.measures.fusion.fuse` query by query."""
    if not isinstance(config, FusionConfig):
        raise ValueError(f"replay needs a FusionConfig, got {type(config).__name__}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"replay k must be an integer >= 1 or None, got {k!r}")
    present = _query_order(runs)
    if qids is not None:
        have = set(present)
        present = [q for q in dict.fromkeys(qids) if q in have]
    return _Replayer(list(runs), present, config.window, config.tie_break).fuse(config, k)


# =========================================================================== snippets


def yaml_block(config: FusionConfig, of: Sequence[str], name: str = "hybrid", comment: str = "") -> str:
    """The suite-file retriever block for ``config`` (``retrievers:`` entry)."""
    lines = [f"{name}:" + (f"  # {comment}" if comment else "")]
    if config.method == "rrf":
        lines += [
            "  type: rrf",
            f"  of: [{', '.join(of)}]",
            f"  rank_constant: {config.rank_constant}",
            f"  window: {config.window}",
        ]
        if config.semantics in ("opensearch", "elasticsearch"):
            lines.append(f"  semantics: {config.semantics}")
    elif config.method == "weighted":
        lines += [
            "  type: weighted",
            f"  of: [{', '.join(of)}]",
            f"  normalization: {config.normalization}",
            f"  combination: {config.combination}",
        ]
        if config.weights is not None:
            lines.append(f"  weights: [{', '.join(_fmt_w(w) for w in config.weights)}]")
        lines.append(f"  window: {config.window}")
    else:
        raise ValueError("yaml_block supports rrf and weighted configurations")
    return "\n".join(lines) + "\n"


def opensearch_pipeline(config: FusionConfig, description: Optional[str] = None) -> Dict[str, Any]:
    """The OpenSearch search pipeline body for ``config``: a ``normalization-processor``
    (weighted) or a ``score-ranker-processor`` with ``combination.technique: rrf``. The window
    is not part of the pipeline: it is the hybrid query's ``pagination_depth`` (OpenSearch
    3.0+) or each sub-query's ``size``/``k``. Weights follow the hybrid sub-query order."""
    from ..backends.opensearch import normalization_pipeline, rrf_pipeline

    body: Dict[str, Any] = {}
    if description:
        body["description"] = description
    if config.method == "rrf":
        body.update(rrf_pipeline(config.rank_constant))
    elif config.method == "weighted":
        body.update(normalization_pipeline(config.normalization, config.combination, config.weights))
    else:
        raise ValueError("opensearch_pipeline supports rrf and weighted configurations")
    return body


# =========================================================================== result


@dataclass
class VariantScore:
    config: FusionConfig
    label: str
    tune: float  # objective on the tuning split
    is_default: bool = False
    grid_index: int = 0  # position in grid order (defaults outside the grid come last)


@dataclass
class SweepResult:
    """Every variant's tuning score, the chosen one, and the evaluation-split comparison.

    ``evaluation[label]`` is the :class:`~pytest_retrieval.measures.metrics.Evaluation` on the
    evaluation split of the best variant and of each default (keys are :func:`describe`
    labels; ``best_label`` and ``default_labels`` name them). ``comparison[label]`` compares
    the best with that default on the objective, per evaluation query: mean difference,
    wins / losses / ties, and a two-sided paired sign-flip randomisation p-value
    (10,000 flips, seed 0)."""

    names: Tuple[str, ...]
    objective: str
    metrics: Tuple[str, ...]
    variants: List[VariantScore]
    best: VariantScore
    defaults: List[VariantScore]
    evaluation: Dict[str, Evaluation]
    comparison: Dict[str, Dict[str, float]]
    tune_queries: int
    eval_queries: int
    grid_size: int
    warnings: List[str] = field(default_factory=list)

    @property
    def best_label(self) -> str:
        return self.best.label

    @property
    def default_labels(self) -> List[str]:
        return [d.label for d in self.defaults]

    def ranked(self) -> List[VariantScore]:
        """All scored variants, best first, by the selection rule."""
        return sorted(self.variants, key=_selection_key)

    def eval_metrics(self, label: Optional[str] = None) -> Dict[str, float]:
        return dict(self.evaluation[label or self.best.label].aggregate)

    def yaml_block(self, name: str = "hybrid") -> str:
        comment = (
            f"sweep: best of {len(self.variants)} on {self.tune_queries} tuning queries, "
            f"{self.objective} {self.best.tune:.4f}"
        )
        return yaml_block(self.best.config, self.names, name=name, comment=comment)

    def opensearch_pipeline(self) -> Dict[str, Any]:
        return opensearch_pipeline(self.best.config)

    def summary(self, top: int = 10) -> str:
        """A plain-text report: top variants on the tuning split, then the evaluation split."""
        lines = [
            f"fusion sweep over {', '.join(self.names)}: {len(self.variants)} variants "
            f"({self.grid_size} in the grid), objective {self.objective}",
            f"  tuning split: {self.tune_queries} judged queries; evaluation split: "
            f"{self.eval_queries} judged queries (disjoint)",
            f"  top {min(top, len(self.variants))} on the tuning split:",
        ]
        for v in self.ranked()[:top]:
            mark = " (default)" if v.is_default else ""
            lines.append(f"    {v.tune:.4f}  {v.label}{mark}")
        lines.append("  evaluation split:")
        metrics = list(self.metrics)
        width = max(len(self.best.label), *(len(d.label) for d in self.defaults)) + 2
        lines.append("    " + "variant".ljust(width) + "  ".join(m.rjust(10) for m in metrics))
        for label, role in [(self.best.label, "best")] + [(d.label, "default") for d in self.defaults]:
            agg = self.evaluation[label].aggregate
            lines.append(
                "    "
                + f"{label}".ljust(width)
                + "  ".join(f"{agg[m]:10.4f}" for m in metrics)
                + f"   {role}"
            )
        for label, c in self.comparison.items():
            lines.append(
                f"  best vs {label}: {self.objective} {c['mean_delta']:+.4f} "
                f"(wins {int(c['wins'])}, losses {int(c['losses'])}, ties "
                f"{int(c['ties'])}; paired randomisation p = {c['p_value']:.4f})"
            )
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)

    def as_dict(self) -> Dict[str, Any]:
        """JSON-able: every variant's tuning score, the best, defaults, evaluation metrics,
        comparisons and the two snippets."""
        return {
            "sub_retrievers": list(self.names),
            "objective": self.objective,
            "tune_queries": self.tune_queries,
            "eval_queries": self.eval_queries,
            "grid_size": self.grid_size,
            "variants": [{"label": v.label, "tune": v.tune, "default": v.is_default} for v in self.variants],
            "best": self.best.label,
            "defaults": self.default_labels,
            "evaluation": {
                k: {m: _json_float(x) for m, x in ev.aggregate.items()} for k, ev in self.evaluation.items()
            },
            "comparison": self.comparison,
            "yaml": self.yaml_block(),
            "opensearch_pipeline": self.opensearch_pipeline(),
            "warnings": list(self.warnings),
        }


def _json_float(x: float) -> Optional[float]:
    return None if isinstance(x, float) and math.isnan(x) else x


def _selection_key(v: VariantScore) -> Tuple[float, int, int]:
    score = v.tune if not math.isnan(v.tune) else -math.inf
    return (-score, 0 if v.is_default else 1, v.grid_index)


def _paired(
    best: Mapping[str, float], other: Mapping[str, float], flips: int = 10_000, seed: int = 0
) -> Dict[str, float]:
    """Mean difference, wins/losses/ties and a two-sided paired sign-flip randomisation
    p-value ((hits + 1) / (flips + 1)) of ``best - other`` over their common queries."""
    qs = [q for q in best if q in other]
    d = np.array([best[q] - other[q] for q in qs], dtype=np.float64)
    if not len(d):
        return {"mean_delta": math.nan, "wins": 0, "losses": 0, "ties": 0, "p_value": math.nan}
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    rows = max(1, min(flips, 2_000_000 // len(d)))  # bounded memory per chunk
    hits = done = 0
    while done < flips:
        b = min(rows, flips - done)
        signs = rng.integers(0, 2, size=(b, len(d)), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += int((np.abs(signs @ d) / len(d) >= observed - 1e-12).sum())
        done += b
    return {
        "mean_delta": float(d.mean()),
        "wins": int((d > 0).sum()),
        "losses": int((d < 0).sum()),
        "ties": int((d == 0).sum()),
        "p_value": (hits + 1) / (flips + 1),
    }


# =========================================================================== sweep


def sweep(
    runs: Union[Mapping[str, Run], Sequence[Run]],
    tune_qrels: Qrels,
    eval_qrels: Qrels,
    *,
    grid: Optional[SweepGrid] = None,
    objective: str = "ndcg@10",
    metrics: Sequence[str] = ("ndcg@10", "mrr@10", "recall@100"),
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
    depth: int = 100,
    default_window: Optional[int] = None,
) -> SweepResult:
    """Replay the grid on the tuning queries, pick the best, report it on the evaluation ones.

    ``runs``: ``{name: Run}`` per sub-retriever (names go into the YAML ``of``; a plain
    sequence is named ``r1``, ``r2``, ...), each ranking its top candidates with scores, fetched
    at least as deep as the largest window. ``tune_qrels`` / ``eval_qrels``: the judgments of
    the two splits; their query ids must be disjoint (else ``ValueError``). ``objective``
    picks the best; ``metrics`` are reported on the evaluation split. Each fused ranking is
    cut to ``depth`` before evaluation (the suite's ``evaluation.depth``); ``gain``, ``ties``
    and ``relevance_threshold`` are passed to :func:`~pytest_retrieval.measures.metrics.evaluate`
    (``gain`` also takes the suite profile names ``exp`` / ``trec``). The defaults are scored
    with ``default_window`` (default: the largest grid window, i.e. the depth fetched)."""
    if isinstance(runs, Mapping):
        names = tuple(str(n) for n in runs)
        run_list = [runs[n] for n in runs]
    else:
        run_list = list(runs)
        names = tuple(f"r{i + 1}" for i in range(len(run_list)))
    if len(run_list) < 2:
        raise ValueError(f"a fusion sweep needs at least two sub-retriever runs, got {len(run_list)}")
    check_disjoint(tune_qrels, eval_qrels)
    grid = grid or SweepGrid()
    objective = str(parse_metric(objective))
    report = list(dict.fromkeys([objective] + [str(parse_metric(m)) for m in metrics]))
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"sweep depth must be an integer >= 1, got {depth!r}")
    if default_window is not None and (
        isinstance(default_window, bool) or not isinstance(default_window, int) or default_window < 1
    ):
        raise ValueError(f"sweep default_window must be an integer >= 1, got {default_window!r}")
    # the suite's evaluation.profile names are accepted too: exp, trec (= linear gain)
    eval_kwargs = dict(
        gain="linear" if gain == "trec" else gain, ties=ties, relevance_threshold=relevance_threshold
    )

    warnings: List[str] = []
    fetched = max((len(r) for run in run_list for r in run.values()), default=0)
    if fetched == 0:
        raise ValueError("the sub-retriever runs hold no candidates")
    windows = grid.windows or (fetched,)
    if max(windows) > fetched:
        warnings.append(
            f"window {max(windows)} exceeds the deepest candidate list fetched "
            f"({fetched}): larger windows see the same candidates"
        )

    def judged(qrels: Qrels) -> List[str]:
        return [q for q, js in qrels.items() if any(g > 0 for g in js.values())]

    tune_ids, eval_ids = judged(tune_qrels), judged(eval_qrels)
    if not tune_ids:
        raise ValueError("the tuning split has no query with a relevant judgment")
    if not eval_ids:
        raise ValueError("the evaluation split has no query with a relevant judgment")
    present = set(_query_order(run_list))
    for what, ids in (("tuning", tune_ids), ("evaluation", eval_ids)):
        absent = [q for q in ids if q not in present]
        if absent:
            warnings.append(
                f"{len(absent)} judged {what} query id(s) are in no run and score 0 "
                f"(e.g. {', '.join(repr(q) for q in absent[:3])})"
            )

    grid_configs = grid.configs(len(run_list), fetched)
    defaults = default_configs(
        len(run_list), default_window or max(windows), grid.rrf_semantics, grid.tie_break
    )
    variants: List[VariantScore] = []
    seen: Dict[FusionConfig, VariantScore] = {}
    for i, cfg in enumerate(grid_configs):
        v = VariantScore(cfg, describe(cfg), math.nan, False, i)
        variants.append(v)
        seen[cfg] = v
    default_scores: List[VariantScore] = []
    for cfg in defaults:
        if cfg in seen:
            seen[cfg].is_default = True
            default_scores.append(seen[cfg])
        else:
            v = VariantScore(cfg, describe(cfg), math.nan, True, len(variants))
            variants.append(v)
            seen[cfg] = v
            default_scores.append(v)

    replayers: Dict[Tuple[int, str, bool], _Replayer] = {}

    def replayer(cfg: FusionConfig, ids: Sequence[str], split: bool) -> _Replayer:
        key = (cfg.window, cfg.tie_break, split)
        if key not in replayers:
            replayers[key] = _Replayer(run_list, [q for q in ids if q in present], cfg.window, cfg.tie_break)
        return replayers[key]

    # With the engine's order, a metric @k reads only the top k of each ranking, so the
    # tuning pass fuses no deeper (same values as cutting at depth).
    obj = parse_metric(objective)
    tune_k = (
        min(depth, obj.k) if (ties == "engine" and obj.k is not None and obj.name != "r-precision") else depth
    )
    for v in variants:
        run = replayer(v.config, tune_ids, False).fuse(v.config, k=tune_k)
        v.tune = evaluate(tune_qrels, run, [objective], **eval_kwargs).aggregate[objective]

    best = min(variants, key=_selection_key)
    evaluation: Dict[str, Evaluation] = {}
    for v in [best] + default_scores:
        if v.label in evaluation:
            continue
        run = replayer(v.config, eval_ids, True).fuse(v.config, k=depth)
        evaluation[v.label] = evaluate(eval_qrels, run, report, **eval_kwargs)
    comparison: Dict[str, Dict[str, float]] = {}
    for d in default_scores:
        if d.label != best.label:
            comparison[d.label] = _paired(
                evaluation[best.label].per_query[objective], evaluation[d.label].per_query[objective]
            )
    return SweepResult(
        names=names,
        objective=objective,
        metrics=tuple(report),
        variants=variants,
        best=best,
        defaults=default_scores,
        evaluation=evaluation,
        comparison=comparison,
        tune_queries=len(tune_ids),
        eval_queries=len(eval_ids),
        grid_size=len(grid_configs),
        warnings=warnings,
    )
