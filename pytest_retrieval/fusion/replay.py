"""Vectorised replay of fusion variants from candidates fetched once.

:func:`replay` is ``fusion.fuse_runs`` on whole matrices: the same queries, the same documents
in the same order, the same scores (both read them from :class:`~pytest_retrieval.fusion.scores.FusedScores`;
``tests/fusion/test_replay.py`` checks the rankings). A :class:`Replayer` lays each query's
candidate union out as one row of a padded matrix (columns in tie order,
:func:`~pytest_retrieval.fusion.candidates.candidates_of_runs`) and ranks whole matrices: the
top k per row come from one ``np.partition`` on an integer key (float32 score order, then
column). Rows with a non-finite fused score, and rrf ``reference`` / ``elasticsearch_legacy``
(exact rationals; a tie rule on the original scores), are ranked by
:func:`~pytest_retrieval.fusion.semantics.fuse` query by query. On SciFact (809 tuning + 300
evaluation queries, top 100 BM25 + kNN) the 74-variant sweep takes ~0.4-0.7 s on 2 CPUs
(``benchmarks/bench_sweep.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import numpy as np

from ..types import Ranking, Run
from .candidates import candidates_of_runs, query_order
from .config import FusionConfig
from .scores import FusedScores
from .semantics import fuse

if TYPE_CHECKING:
    from ..measures.columnar import QrelsColumns, RunColumns

__all__ = ["Replayer", "replay"]


class Replayer:
    """Candidates of every sub-run for a set of queries, laid out for vectorised fusion
    (:class:`~pytest_retrieval.fusion.candidates.Candidates`), ranked per configuration."""

    def __init__(self, runs: Sequence[Run], qids: Sequence[str], window: int, tie_break: str):
        self.window = window
        self.tie_break = tie_break
        self.qids = list(qids)
        self.candidates, self.subs = candidates_of_runs(runs, self.qids, window, tie_break)
        self.fused = FusedScores(self.candidates)
        self.ids = self.candidates.ids
        self.n_union = self.candidates.n_union
        self.cols = np.arange(self.ids.shape[1], dtype=np.int64)[None, :]
        self.valid = self.cols < self.n_union[:, None]
        self._floor: Optional[np.ndarray] = None
        self._codes: np.ndarray = np.zeros((0, 0), dtype=np.int64)
        self._codes_for: Optional[QrelsColumns] = None  # the qrels _codes was built for

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
            key = (-scores) + np.float32(0.0)
        bits = key.view(np.int32)
        bits = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))
        comp = (bits.astype(np.int64) << np.int64(32)) | self.cols
        np.maximum(comp, self._floor, out=comp)
        if width < U:
            comp = np.partition(comp, width - 1, axis=1)[:, :width]
        comp.sort(axis=1)
        return comp[:, :width] & np.int64(0xFFFFFFFF)

    def _vectorised(self, cfg: FusionConfig) -> bool:
        return cfg.method != "rrf" or cfg.semantics in ("opensearch", "elasticsearch")

    def top(
        self, cfg: FusionConfig, k: Optional[int]
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scores (Q, U), order (Q, width), keep (Q,), exact (Q,) bool): the fused scores,
        the columns of each row's best ``keep`` documents in fused order, and which rows the
        vectorised path got right (the others need :func:`fuse`)."""
        scores = self.fused.of(cfg)
        # padding cells always hold 0.0, so a non-finite score is a real one; its row is
        # ordered by fuse (Python's sort of NaN is not a total order)
        exact = np.isfinite(scores).all(axis=1)
        keep = self.n_union.copy()
        if cfg.method == "linear" or cfg.semantics == "elasticsearch":
            # RRFRetrieverBuilder / LinearRetrieverBuilder: top rank_window_size
            keep = np.minimum(keep, cfg.window)
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
        back to when a query needs :func:`fuse`."""
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


#: Queries laid out at once by :func:`replay`: the union matrices stay bounded (a 10,000-query
#: run of 100 hits fused in blocks of this size took the same time as in one block).
REPLAY_BLOCK = 2000


def replay(
    runs: Sequence[Run], config: FusionConfig, k: Optional[int] = None, qids: Optional[Sequence[str]] = None
) -> Run:
    """``fuse_runs(runs, config, k)``, vectorised: the same queries (first-seen order across
    ``runs``, or ``qids`` restricted to queries present in some run), the same documents in
    the same order, bit-identical scores. Vectorised for ``weighted``, ``linear`` and ``rrf``
    with ``opensearch`` / ``elasticsearch`` semantics; the other rrf semantics go through
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
