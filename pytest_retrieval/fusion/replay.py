"""Vectorised replay of fusion variants from candidates fetched once.

:func:`replay` is ``fusion.fuse_runs`` on whole matrices: the same queries, the same documents
in the same order, bit-identical scores (checked against ``fuse_runs`` in
``tests/tuning/test_replay.py``). A :class:`Replayer` lays each query's candidate union out as
one row of a padded matrix (columns in tie order) and does every float32 step of the engine's
arithmetic on whole matrices; the top k per row come from one ``np.partition`` on an integer
key (float32 score order, then column). Queries whose scores fall outside the safe range
(non-finite, |score| > 1e18) and methods without a vectorised path (``linear``, ``rrf``
``reference`` / ``elasticsearch_legacy``) go through :func:`fusion.fuse` per query. On SciFact
(809 tuning + 300 evaluation queries, top 100 BM25 + kNN) the 74-variant sweep takes ~0.4-0.7 s
on 2 CPUs (``benchmarks/bench_sweep.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..types import Ranking, Run
from .semantics import FusionConfig, fuse, opensearch_rrf_score

if TYPE_CHECKING:
    from ..measures.columnar import QrelsColumns, RunColumns

__all__ = ["Replayer", "query_order", "replay"]

_F32 = np.float32
_F32_MIN_VALUE = _F32(2.0**-149)
_OS_MIN_SCORE = _F32(0.001)
# Raw scores beyond this (in float32) could overflow in normalisation arithmetic; such
# queries go through the reference implementation instead of the vectorised one.
_SAFE_ABS = 1e18
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


class Replayer:
    """Candidates of every sub-run for a set of queries, laid out for vectorised fusion.

    Per query ``q``, the union of the sub-rankings' top ``window`` documents in first-seen
    order (sub-ranking 1 first) is ``ids[q]``; arrays are ``(Q, U)`` padded to the largest
    union. Per sub-ranking ``j`` the raw scores are also kept in ranking order ``(Q, W)``,
    because the l2 norm sums squares in that order."""

    def __init__(self, runs: Sequence[Run], qids: Sequence[str], window: int, tie_break: str):
        self.n = len(runs)
        self.window = window
        self.tie_break = tie_break
        self.qids = list(qids)
        flat = _flatten(runs, self.qids, window)
        self.subs = flat.subs  # per query, the cut sub-rankings, for the reference path
        columns, n_union = _union_columns(flat, len(self.qids), tie_break)
        self._lay_out(flat, columns, n_union)
        self._load_scores(flat)
        self._norm_cache: Dict[str, Any] = {}
        self._rrf_cache: Dict[Tuple[str, int], np.ndarray] = {}
        self._all_ge0: Dict[str, List[bool]] = {}
        self._floor: Optional[np.ndarray] = None
        self._codes: np.ndarray = np.zeros((0, 0), dtype=np.int64)
        self._codes_for: Optional[QrelsColumns] = None  # the qrels _codes was built for

    def _lay_out(self, flat: _Flat, columns: np.ndarray, n_union: np.ndarray) -> None:
        """The (Q, U) union layout: the document ids, each sub-ranking's 1-based rank per cell,
        and the map from each sub-ranking's ranking order (Q, W) to the union columns."""
        n, Q = self.n, len(self.qids)
        U = int(n_union.max()) if Q else 0
        W = int(flat.lengths.max()) if flat.lengths.size else 0
        self.U, self.W = U, W
        self.n_union = n_union
        self.cols = np.arange(max(U, 1), dtype=np.int64)[None, :]
        self.valid = self.cols < n_union[:, None]
        self.ids = np.full((Q, max(U, 1)), None, dtype=object)
        if flat.total:
            names_arr = np.empty(len(flat.names), dtype=object)
            names_arr[:] = flat.names
            self.ids[flat.q, columns] = names_arr[flat.codes]
        self.pos = np.zeros((n, Q, max(U, 1)), dtype=np.int64)  # 1-based rank, 0 = absent
        self.pos[flat.j, flat.q, columns] = flat.p + 1
        self.raw_len = flat.lengths.T.copy()
        self.raw_to_union = np.zeros((n, Q, max(W, 1)), dtype=np.int64)
        self.raw_to_union[flat.j, flat.q, flat.p] = columns

    def _load_scores(self, flat: _Flat) -> None:
        """Raw scores (n, Q, W), float32 as the engines use them; queries with a non-finite or
        out-of-range score are marked for the reference path."""
        Q = len(self.qids)
        self.raw = np.zeros((self.n, Q, max(self.W, 1)), dtype=np.float32)
        self.finite_error: Optional[str] = None
        fallback = np.zeros(Q, dtype=bool)
        vals, ok = _finite_scores(flat.scores)
        if flat.total and not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            self.finite_error = (
                f"sub-ranking {int(flat.j[bad])}: document {flat.ids[bad]!r} has a "
                f"non-finite score {flat.scores[bad]!r}"
            )
            fallback[flat.q[~ok]] = True
            vals = np.where(ok, vals, 0.0)
        if flat.total:
            fallback[flat.q[np.abs(vals) > _SAFE_ABS]] = True
            self.raw[flat.j, flat.q, flat.p] = vals.astype(np.float32)
        self.fallback_arr = fallback

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
            assert cfg.semantics is not None and cfg.rank_constant is not None  # set for rrf
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
        technique = cfg.normalization
        assert isinstance(technique, str)  # FusionConfig sets it for weighted
        norm, _, ge0, gt0 = self._normalized(technique)
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
                    if self._all_ge0[technique][j]:
                        total += norm[j] * ws[j]
                        sum_w += ws[j]
                    else:
                        total += np.where(ge0[j], norm[j] * ws[j], zero)
                        sum_w += np.where(ge0[j], ws[j], zero)
                np.divide(total, sum_w, out=out, where=sum_w != zero)
                return out
            # mask[j] is 1.0 where the score counts (> 0) and 0.0 where it is skipped; safe[j]
            # is the score there and 1.0 elsewhere: x * 1.0 == x and finite * 0.0 == +0.0.
            mask, safe = self._positive_masks(technique)
            for j in range(self.n):
                sum_w += ws[j] * mask[j]
            if cfg.combination == "geometric_mean":
                logs = self._logs(technique)
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

    def columns(
        self, cfg: FusionConfig, qrels: QrelsColumns, *, ties: str, k: Optional[int] = None
    ) -> RunColumns:
        """The fused run as the metric engine's columns (``measures.columnar``), built straight
        from the fused order: no ``Ranking`` per query, no search for the judged documents per
        ranking (each union cell's document code is looked up once per replayer and qrels).
        Equal to ``RunColumns.from_run(self.fuse(cfg, k), qrels, ties=ties)``, which it falls
        back to when a query needs the reference path."""
        from ..measures.columnar import RunColumns

        if not self._vectorised(cfg) or not self.qids:
            return RunColumns.from_run(self.fuse(cfg, k), qrels, ties=ties)
        scores, order, keep, exact = self.top(cfg, k)
        if not exact.all():
            return RunColumns.from_run(self.fuse(cfg, k), qrels, ties=ties)
        rows_of = np.flatnonzero(keep > 0)  # queries with hits, in replayer order
        keep_of = keep[rows_of].astype(np.int64)
        offsets = np.zeros(len(rows_of) + 1, dtype=np.int64)
        np.cumsum(keep_of, out=offsets[1:])
        order = order[rows_of]
        in_top = np.arange(order.shape[1])[None, :] < keep_of[:, None]
        codes = np.take_along_axis(self._doc_codes(qrels)[rows_of], order, axis=1)
        seg, pos = np.nonzero(in_top & (codes >= 0))
        qids = [self.qids[i] for i in rows_of.tolist()]
        trec = ties == "trec"
        return RunColumns(
            qids=qids,
            offsets=offsets,
            judged_rows=offsets[seg] + pos,
            judged_codes=codes[seg, pos],
            # fused order is float32 score descending: what ties="trec" needs
            scores=np.take_along_axis(scores[rows_of], order, axis=1)[in_top].astype(np.float64)
            if trec
            else None,
            docs=_UnionDocs(self.ids, rows_of, order, offsets),
            trec_sorted=trec,
            unjudged=[q for q in qids if q not in qrels.qids],
        )

    def _doc_codes(self, qrels: QrelsColumns) -> np.ndarray:
        """(Q, U): the qrels document code of every union cell, -1 where not judged."""
        if self._codes_for is not qrels:
            if qrels.doc_index is None:
                raise ValueError("Replayer.columns needs QrelsColumns built with from_qrels")
            get = qrels.doc_index.get
            flat = self.ids.ravel()
            codes = np.fromiter(
                (-1 if d is None else get(d, -1) for d in flat), dtype=np.int64, count=len(flat)
            )
            self._codes, self._codes_for = codes.reshape(self.ids.shape), qrels
        return self._codes


class _UnionDocs:
    """Document ids of fused rows (``RunColumns.docs``), read from the union layout on demand
    (only trec tie groups holding a judged document ask)."""

    def __init__(self, ids: np.ndarray, rows_of: np.ndarray, order: np.ndarray, offsets: np.ndarray):
        self.ids, self.rows_of, self.order, self.offsets = ids, rows_of, order, offsets

    def between(self, seg: int, lo: int, hi: int) -> List[str]:
        base = int(self.offsets[seg])
        cols = self.order[seg, lo - base : hi - base]
        return self.ids[int(self.rows_of[seg]), cols].tolist()


@dataclass
class _Flat:
    """The sub-rankings cut to the window, flattened in (query, sub-ranking, rank) order: per
    entry its document id and score, query row ``q``, sub-ranking ``j``, 0-based rank ``p`` and
    document code (index into ``names``, the distinct ids in first-seen order)."""

    subs: List[List[Ranking]]
    ids: List[str]
    scores: List[Any]
    lengths: np.ndarray  # (Q, n) entries per query and sub-ranking
    q: np.ndarray
    j: np.ndarray
    p: np.ndarray
    codes: np.ndarray
    names: List[str]

    @property
    def total(self) -> int:
        return len(self.ids)

    @property
    def n_codes(self) -> int:
        return max(len(self.names), 1)


def _flatten(runs: Sequence[Run], qids: Sequence[str], window: int) -> _Flat:
    """Cut every sub-ranking of every query to ``window`` and flatten them (see :class:`_Flat`);
    ``ValueError`` when a sub-ranking lists a document twice."""
    n, Q = len(runs), len(qids)
    empty = Ranking()
    subs: List[List[Ranking]] = []
    flat_ids: List[str] = []
    flat_scores: List[Any] = []
    lengths = np.zeros((Q, n), dtype=np.int64)
    for qi, q in enumerate(qids):
        cut = []
        for j, run in enumerate(runs):
            r = run.get(q, empty)
            if len(r.doc_ids) > window:
                r = r.top(window)
            cut.append(r)
            lengths[qi, j] = len(r.doc_ids)
            flat_ids.extend(r.doc_ids)
            flat_scores.extend(r.scores)
        subs.append(cut)
    total = len(flat_ids)
    vocab: Dict[str, int] = {d: i for i, d in enumerate(dict.fromkeys(flat_ids))}
    codes = np.fromiter(map(vocab.__getitem__, flat_ids), dtype=np.int64, count=total)
    seg = lengths.ravel()  # segments in (query, sub) order
    qf = np.repeat(np.repeat(np.arange(Q), n), seg)
    jf = np.repeat(np.tile(np.arange(n), Q), seg)
    starts = np.concatenate(([0], np.cumsum(seg)[:-1])) if len(seg) else np.zeros(0, np.int64)
    pf = np.arange(total) - np.repeat(starts, seg)  # 0-based rank in its sub-ranking
    flat = _Flat(subs, flat_ids, flat_scores, lengths, qf, jf, pf, codes, list(vocab))
    if total:
        keys = np.sort((qf * n + jf) * flat.n_codes + codes)
        if (keys[1:] == keys[:-1]).any():
            _raise_duplicate(subs)
    return flat


def _raise_duplicate(subs: List[List[Ranking]]) -> None:
    for cut in subs:
        for j, r in enumerate(cut):
            if len(set(r.doc_ids)) != len(r.doc_ids):
                dup = next(d for i, d in enumerate(r.doc_ids) if d in r.doc_ids[:i])
                raise ValueError(f"sub-ranking {j} lists document {dup!r} twice")
    raise AssertionError("duplicate detection disagrees")  # pragma: no cover


def _union_columns(flat: _Flat, n_queries: int, tie_break: str) -> Tuple[np.ndarray, np.ndarray]:
    """(column of every flat entry in its query's candidate union, size of each union). A union
    is in tie order: doc id (string order), or first seen (sub-ranking 1 first, then the new
    documents of 2, ...)."""
    names, V = flat.names, flat.n_codes
    # rank of each doc id in string order (the "doc_id" tie rule)
    rank = np.empty(len(names), dtype=np.int64)
    rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    doc_rank = rank[flat.codes] if flat.total else flat.codes
    cell_keys, first, inverse = np.unique(flat.q * V + doc_rank, return_index=True, return_inverse=True)
    cell_q = cell_keys // V
    if tie_break == "doc_id":
        perm = np.arange(len(cell_keys))
    else:  # first seen: sub-ranking 1 first, then new documents of 2, ...
        perm = np.lexsort((first, cell_q))
    new_index = np.empty(len(perm), dtype=np.int64)
    new_index[perm] = np.arange(len(perm))
    cq = cell_q[perm]
    n_union = np.bincount(cq, minlength=n_queries).astype(np.int64)
    group_start = np.concatenate(([0], np.cumsum(n_union)[:-1])) if n_queries else n_union
    col_sorted = np.arange(len(cq)) - group_start[cq]  # column of each cell (perm order)
    cell_col = col_sorted[new_index]  # column, in cell_keys order
    columns = cell_col[inverse.ravel()] if flat.total else np.zeros(0, np.int64)
    return columns, n_union


def _finite_scores(scores: List[Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(the scores as float64, 0.0 where not a finite number; which ones are)."""
    if set(map(type, scores)) <= _PLAIN_NUMBERS:
        vals = np.array(scores, dtype=np.float64)
        return vals, np.isfinite(vals)
    ok = np.array(
        [
            isinstance(x, (int, float, np.integer, np.floating))
            and not isinstance(x, bool)
            and math.isfinite(x)
            for x in scores
        ],
        dtype=bool,
    )
    vals = np.array([float(x) if good else 0.0 for x, good in zip(scores, ok)], dtype=np.float64)
    return vals, ok


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


def query_order(runs: Sequence[Run]) -> List[str]:
    qids: Dict[str, None] = {}
    for run in runs:
        for q in run:
            qids.setdefault(q, None)
    return list(qids)


#: Queries laid out at once by :func:`replay`: the union matrices stay bounded (a 10,000-query
#: run of 100 hits fused in blocks of this size took the same time as in one block).
REPLAY_BLOCK = 2000


def replay(
    runs: Sequence[Run], config: FusionConfig, k: Optional[int] = None, qids: Optional[Sequence[str]] = None
) -> Run:
    """``fuse_runs(runs, config, k)``, vectorised: the same queries (first-seen order across
    ``runs``, or ``qids`` restricted to queries present in some run), the same documents in
    the same order, bit-identical scores. Vectorised for ``weighted`` and for ``rrf`` with
    ``opensearch`` / ``elasticsearch`` semantics; other methods go through
    :func:`~pytest_retrieval.fusion.semantics.fuse` query by query. Queries are fused
    ``REPLAY_BLOCK`` at a time (fusion is per query), so memory does not grow with the run."""
    if not isinstance(config, FusionConfig):
        raise ValueError(f"replay needs a FusionConfig, got {type(config).__name__}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"replay k must be an integer >= 1 or None, got {k!r}")
    present = query_order(runs)
    if qids is not None:
        have = set(present)
        present = [q for q in dict.fromkeys(qids) if q in have]
    out: Run = {}
    for start in range(0, max(len(present), 1), REPLAY_BLOCK):
        block = present[start : start + REPLAY_BLOCK]
        out.update(Replayer(list(runs), block, config.window, config.tie_break).fuse(config, k))
    return out
