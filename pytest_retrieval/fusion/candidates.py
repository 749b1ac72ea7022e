"""The candidates of a fusion laid out as arrays: one row per query, one column per document
of the query's candidate union (the sub-rankings' top ``window`` documents), so that every
fusion step is a whole-array operation (:mod:`~pytest_retrieval.fusion.scores`).

Built for one query (:meth:`Candidates.of_query`: columns in first-seen order, what
:func:`~pytest_retrieval.fusion.semantics.fuse` sorts) or for many
(:func:`candidates_of_runs`: columns in tie order, what the replay of a sweep ranks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..types import Ranking, Run
from .javafloat import checked_float32_scores, float32_scores

__all__ = ["Candidates", "candidates_of_runs", "query_order"]


@dataclass
class Candidates:
    """Sub-rankings ``j`` (n of them) of Q queries on a padded (Q, U) union layout.

    ``ids`` (Q, U) object: each query's candidates, one per column (None = padding);
    ``n_union`` (Q,): how many. ``rank`` (n, Q, U): the 1-based rank of the cell's document in
    sub-ranking j, 0 = absent. Per sub-ranking the raw scores also stay in ranking order,
    because the l2 norms sum in that order: ``raw`` (n, Q, W) float32 (0.0 on padding),
    ``live`` (n, Q, W) the real entries, ``to_union`` (n, Q, W) their columns.
    ``score_error``: the first score that is not a finite number (weighted and linear fusion
    refuse it, rrf ignores scores), None when there is none."""

    ids: np.ndarray
    n_union: np.ndarray
    rank: np.ndarray
    raw: np.ndarray
    live: np.ndarray
    to_union: np.ndarray
    score_error: Optional[str] = None

    @property
    def n(self) -> int:
        return int(self.rank.shape[0])

    def to_columns(self, values: np.ndarray) -> np.ndarray:
        """(n, Q, W) values in ranking order -> (n, Q, U) on the union layout, 0.0 where absent."""
        out = np.zeros(self.rank.shape, dtype=np.float32)
        for j in range(self.n):
            qi, p = np.nonzero(self.live[j])
            out[j, qi, self.to_union[j][qi, p]] = values[j][qi, p]
        return out

    @classmethod
    def of_query(cls, rankings: Sequence[Ranking], scored: bool) -> Candidates:
        """One query's sub-rankings (already cut to the window, no document twice in one), the
        columns in first-seen order (sub-ranking 1 first). ``scored``: the scores are numbers
        to load (else, as for rrf, they are left at 0.0 unread)."""
        columns: Dict[str, int] = {}
        cols = [[columns.setdefault(d, len(columns)) for d in r.doc_ids] for r in rankings]
        n, U = len(rankings), max(len(columns), 1)
        W = max((len(c) for c in cols), default=0) or 1
        rank = np.zeros((n, 1, U), dtype=np.int64)
        raw = np.zeros((n, 1, W), dtype=np.float32)
        live = np.zeros((n, 1, W), dtype=bool)
        to_union = np.zeros((n, 1, W), dtype=np.int64)
        for j, (r, c) in enumerate(zip(rankings, cols)):
            rank[j, 0, c] = np.arange(1, len(c) + 1)
            live[j, 0, : len(c)] = True
            to_union[j, 0, : len(c)] = c
            if scored and c:
                raw[j, 0, : len(c)] = float32_scores(r.scores)
        ids = np.full((1, U), None, dtype=object)
        ids[0, : len(columns)] = list(columns)
        return cls(ids, np.array([len(columns)], dtype=np.int64), rank, raw, live, to_union)


def query_order(runs: Sequence[Run]) -> List[str]:
    """The query ids of ``runs`` in first-seen order."""
    qids: Dict[str, None] = {}
    for run in runs:
        for q in run:
            qids.setdefault(q, None)
    return list(qids)


def candidates_of_runs(
    runs: Sequence[Run], qids: Sequence[str], window: int, tie_break: str
) -> Tuple[Candidates, List[List[Ranking]]]:
    """(the candidates of ``qids``, columns in tie order; per query its sub-rankings cut to
    ``window``). ``ValueError`` when a sub-ranking lists a document twice."""
    flat = _flatten(runs, qids, window)
    columns, n_union = _union_columns(flat, len(qids), tie_break)
    n, Q = len(runs), len(qids)
    U = max(int(n_union.max()) if Q else 0, 1)
    W = max(int(flat.lengths.max()) if flat.lengths.size else 0, 1)
    ids = np.full((Q, U), None, dtype=object)
    rank = np.zeros((n, Q, U), dtype=np.int64)
    raw = np.zeros((n, Q, W), dtype=np.float32)
    live = np.arange(W)[None, None, :] < flat.lengths.T[:, :, None]
    to_union = np.zeros((n, Q, W), dtype=np.int64)
    score_error = None
    if flat.total:
        names = np.empty(len(flat.names), dtype=object)
        names[:] = flat.names
        ids[flat.q, columns] = names[flat.codes]
        rank[flat.j, flat.q, columns] = flat.p + 1
        to_union[flat.j, flat.q, flat.p] = columns
        scores, ok = checked_float32_scores(flat.scores)
        raw[flat.j, flat.q, flat.p] = scores
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            score_error = (
                f"sub-ranking {int(flat.j[bad])}: document {flat.ids[bad]!r} has a "
                f"non-finite score {flat.scores[bad]!r}"
            )
    return Candidates(ids, n_union, rank, raw, live, to_union, score_error), flat.subs


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
