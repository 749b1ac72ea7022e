"""Columnar runs and qrels: the representation the metric engine evaluates.

A run is held as columns, grouped by query: ``offsets`` (the rows of query ``i`` are
``offsets[i]:offsets[i+1]``, in the engine's order), ``scores`` (float64, one per row), the
document ids (a list or an Arrow array, only read to break score ties), and, for the few
rows whose document is judged, ``judged_rows`` and ``judged_codes``: the document's code
in the one document dictionary shared with the qrels (:class:`QrelsColumns`). The grade of
a hit is then a lookup of ``query * n_docs + doc`` in the qrels' sorted keys, vectorised
over every judged hit at once; no per-query Python walks the rankings.

Where the columns come from:

* :meth:`RunColumns.from_run`: a ``Run`` held in memory (suites, sweeps, ``fuse``); one
  ``set`` per ranking finds repeated ids and the judged docs present (C level, per ranking).
* ``io.run_columns.stream_run_columns``: a TREC run file, parsed by pyarrow's CSV reader
  and evaluated batch by batch (memory O(qrels + one batch)).

:func:`gather_judged_hits` collects the judged hits of any number of run batches, which
:func:`~pytest_retrieval.measures.metrics.evaluate_columns` scores with the measures'
formulas (:mod:`~pytest_retrieval.measures.formulas`), computed once over every judged hit.

Tie rule ``ties="trec"`` (trec_eval ``form_res_rels.c``, ``comp_sim_docno``): score
descending, then document id descending by ``strcmp``. Scores are compared as 32-bit
floats: trec_eval up to 9.0.8 keeps the score in a C ``float`` (``trec_format.h``:
``float sim;``; ``get_trec_results.c``: ``sim = atof(...)``, the double parsed from the
file rounded to float on assignment; ``form_res_rels.c``: ``DOCNO_INFO.sim`` is a
``float`` and ``comp_sim_docno`` compares those floats), and so does pytrec_eval-terrier
0.5.11, the reference of our parity tests (``{"a": 1.0000000001, "b": 1.0}`` with ``a``
relevant gives ``recip_rank`` 0.5: a and b are tied, ``b`` goes first). trec_eval 10.0
changed ``sim`` to ``double`` (usnistgov/trec_eval commit dc0c991, "Convert float to
double", 2023); we follow the released 9.x behaviour that pytrec_eval ships. The
rounding is numpy's float64 -> float32 (round to nearest, ties to even), which is C's
double -> float conversion under the default rounding mode.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import chain
from operator import neg
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..types import Ranking

__all__ = ["QrelsColumns", "RunColumns", "GatheredHits", "gather_judged_hits", "judged_hits"]


# --------------------------------------------------------------------------- qrels


@dataclass
class QrelsColumns:
    """Qrels as columns. ``evaluated``: the queries scored, every query of the qrels (qrels
    order; which are averaged: ``measures.aggregate``), ``no_relevant`` those without a grade
    > 0; their judgments (any grade) are keyed ``query * n_docs + doc`` in ``keys`` (sorted) with
    the grade in ``grades``. ``docs``/``doc_index``: the document dictionary (every doc
    judged for an evaluated query), shared with the runs' ``judged_codes``."""

    qids: Dict[str, None]  # every qrels query, in qrels order
    evaluated: List[str]
    no_relevant: List[str]
    eval_index: Dict[str, int]
    docs: Sequence[Any]  # list of str, or an Arrow binary array (files)
    doc_index: Optional[Dict[str, int]]  # doc -> code; in-memory qrels only
    keys: np.ndarray
    grades: np.ndarray
    judged_q: np.ndarray  # evaluated index of each judgment (aligned with keys)
    # per evaluated query: its judgments (doc -> grade); for in-memory runs only
    judged: Optional[List[Mapping[str, int]]] = None
    cache: Dict[str, Any] = field(default_factory=dict, repr=False)  # readers' derived data

    @property
    def n_docs(self) -> int:
        return len(self.docs)

    @classmethod
    def from_qrels(cls, qrels: Mapping[str, Mapping[str, int]]) -> QrelsColumns:
        evaluated: List[str] = []
        no_relevant: List[str] = []
        judged: List[Mapping[str, int]] = []
        counts: List[int] = []
        for qid, per_q in qrels.items():  # every query is scored (measures.aggregate: which are averaged)
            if not per_q:  # no judgment (a qrels file cannot name it): listed, not scored
                no_relevant.append(qid)
                continue
            evaluated.append(qid)
            judged.append(per_q)
            counts.append(len(per_q))
            if not any(g > 0 for g in per_q.values()):
                no_relevant.append(qid)
        doc_ids = list(chain.from_iterable(judged))
        grade_list = list(chain.from_iterable(j.values() for j in judged))
        doc_index = {d: i for i, d in enumerate(dict.fromkeys(doc_ids))}  # first-seen order
        codes = np.fromiter(map(doc_index.__getitem__, doc_ids), dtype=np.int64, count=len(doc_ids))
        q = np.repeat(np.arange(len(evaluated), dtype=np.int64), counts)
        g = np.asarray(grade_list, dtype=np.int64)
        return cls._build(
            dict.fromkeys(qrels), evaluated, no_relevant, list(doc_index), doc_index, q, codes, g, judged
        )

    @classmethod
    def _build(cls, qids, evaluated, no_relevant, docs, doc_index, q, codes, g, judged=None) -> QrelsColumns:
        keys = q * max(len(docs), 1) + codes
        order = np.argsort(keys, kind="stable")
        return cls(
            qids=qids,
            evaluated=evaluated,
            no_relevant=no_relevant,
            eval_index={qid: i for i, qid in enumerate(evaluated)},
            docs=docs,
            doc_index=doc_index,
            keys=keys[order],
            grades=g[order],
            judged_q=q[order],
            judged=judged,
        )

    def positive_judged(self) -> List[Mapping[str, int]]:
        """Per evaluated query, its judgments graded > 0."""
        if "positive" not in self.cache:
            self.cache["positive"] = [{d: g for d, g in j.items() if g > 0} for j in self.judged or []]
        return self.cache["positive"]

    def num_rel(self, threshold: int) -> np.ndarray:
        """R of every evaluated query: judged docs graded ``>= threshold``."""
        return np.bincount(self.judged_q[self.grades >= threshold], minlength=len(self.evaluated)).astype(
            np.float64
        )

    def num_nonrel(self, threshold: int) -> np.ndarray:
        """Per evaluated query: judged docs graded 0 .. ``threshold - 1`` (trec_eval's judged
        non-relevant; a negative grade is "in the pool but unjudged", form_res_rels.c)."""
        nonrel = (self.grades >= 0) & (self.grades < threshold)
        return np.bincount(self.judged_q[nonrel], minlength=len(self.evaluated)).astype(np.float64)

    def max_grade(self) -> float:
        """The highest grade of the evaluated queries' judgments (ERR's gmax)."""
        return float(self.grades.max()) if len(self.grades) else 0.0

    def ideal(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, 0-based rank, grade) of the ideal ranking: grades > 0, best first."""
        if "ideal" not in self.cache:
            pos = self.grades > 0
            iq, ig = self.judged_q[pos], self.grades[pos]
            order = np.lexsort((-ig, iq))
            iq, ig = iq[order], ig[order]
            ir = np.arange(len(iq), dtype=np.int64) - np.searchsorted(iq, iq, side="left")
            self.cache["ideal"] = (iq.astype(np.intp), ir.astype(np.intp), ig.astype(np.float64))
        return self.cache["ideal"]


# --------------------------------------------------------------------------- runs


class _ListDocs:
    """Document ids of an in-memory run: one list per query."""

    def __init__(self, lists: List[Sequence[str]], offsets: np.ndarray):
        self.lists = lists
        self.offsets = offsets

    def between(self, seg: int, lo: int, hi: int) -> List[str]:
        base = int(self.offsets[seg])
        return list(self.lists[seg][lo - base : hi - base])


@dataclass
class RunColumns:
    """One batch of a run, grouped by query (see the module docstring).

    Rows of a query are in the engine's order (``ties="engine"``), or, with
    ``trec_sorted``, in non-increasing float32 score order (what ``ties="trec"`` needs;
    equal scores in any order: the doc-id tie-break is applied by :func:`judged_hits`).
    ``unjudged``: queries of the run absent from the qrels (in run order)."""

    qids: List[str]
    offsets: np.ndarray
    judged_rows: np.ndarray
    judged_codes: np.ndarray
    scores: Optional[np.ndarray] = None
    docs: Any = None  # .between(seg, lo, hi) -> the ids of rows lo:hi (of query seg)
    trec_sorted: bool = False
    unjudged: List[str] = field(default_factory=list)
    # trec_eval ranks of the judged rows, when the builder computed them (in-memory runs:
    # cheaper per judged doc than flattening every score)
    judged_trec_ranks: Optional[np.ndarray] = None
    positive_only: bool = False  # only docs graded > 0 were looked for (no judged@k then)

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1]) if len(self.offsets) else 0

    @classmethod
    def from_run(
        cls,
        run: Mapping[str, Ranking],
        qrels: QrelsColumns,
        *,
        ties: str = "engine",
        positive_only: bool = False,
    ) -> RunColumns:
        """Columns of the rankings of ``qrels.evaluated`` queries in ``run`` (the others
        cannot change a number). A repeated doc id keeps its first occurrence. With
        ``positive_only`` only the docs graded > 0 are looked for (every metric but
        judged@k: fewer docs to find)."""
        if qrels.judged is None:
            raise ValueError("RunColumns.from_run needs QrelsColumns built with from_qrels")
        builder = _RunBuilder(qrels, trec=ties == "trec", positive_only=positive_only)
        for qid, ranking in run.items():
            builder.add(qid, ranking)
        return builder.columns()


class _RunBuilder:
    """The columns of an in-memory run (see :meth:`RunColumns.from_run`): one pass over the
    rankings keeps their lists (a ``set`` per ranking finds repeated ids and the judged docs
    present, at C level), then the scores are flattened into one array, trec_eval's order is
    checked for every query at once, and the judged rows are found by C-level scans."""

    def __init__(self, qrels: QrelsColumns, *, trec: bool, positive_only: bool):
        assert qrels.doc_index is not None and qrels.judged is not None  # built by from_qrels
        self.qrels = qrels
        self.doc_index = qrels.doc_index
        self.judged = qrels.positive_judged() if positive_only else qrels.judged
        self.trec = trec
        self.positive_only = positive_only
        self.qids: List[str] = []
        self.lengths: List[int] = []
        self.id_lists: List[Sequence[str]] = []
        self.score_lists: List[Sequence[float]] = []
        self.found: List[set] = []  # per kept ranking: its judged docs
        self.unjudged: List[str] = []

    def add(self, qid: str, ranking: Ranking) -> None:
        """Add the ranking of ``qid`` if the query is evaluated and the ranking has hits."""
        ei = self.qrels.eval_index.get(qid)
        if ei is None:
            if qid not in self.qrels.qids:
                self.unjudged.append(qid)
            return
        ids: Sequence[str] = ranking.doc_ids
        if len(ids) == 0:
            return
        present = set(ids)
        scores: Sequence[float] = ranking.scores
        if len(present) != len(ids):
            ids, scores = _first_occurrences(ids, scores)
        if self.trec and not _non_increasing(scores):
            ids, scores = _trec_sorted(ids, scores)
        self.qids.append(qid)
        self.lengths.append(len(ids))
        self.id_lists.append(ids)
        self.score_lists.append(scores)
        self.found.append(present.intersection(self.judged[ei]))

    def columns(self) -> RunColumns:
        offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        rows, codes, ranks = self._judged_rows(offsets)
        return RunColumns(
            qids=self.qids,
            offsets=offsets,
            judged_rows=rows,
            judged_codes=codes,
            docs=_ListDocs(self.id_lists, offsets),
            trec_sorted=self.trec,
            unjudged=self.unjudged,
            judged_trec_ranks=ranks,
            positive_only=self.positive_only,
        )

    def _judged_rows(self, offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """Row, document code and (trec) trec_eval rank of every judged doc of the run."""
        rows: List[int] = []
        docs: List[str] = []
        near: List[float] = []  # trec: score before, at and after each judged row
        for ids, scores, found, base in zip(self.id_lists, self.score_lists, self.found, offsets.tolist()):
            if found:
                ps = _positions(ids, found)
                rows.extend([base + p for p in ps])
                docs.extend(found)
                if self.trec:
                    near.extend(_neighbours(scores, ps))
        codes = np.fromiter(map(self.doc_index.__getitem__, docs), dtype=np.int64, count=len(docs))
        row_arr = np.asarray(rows, dtype=np.int64)
        if not self.trec:
            return row_arr, codes, None
        return row_arr, codes, self._trec_ranks(row_arr, offsets, near)

    def _trec_ranks(self, rows: np.ndarray, offsets: np.ndarray, near: List[float]) -> np.ndarray:
        """trec_eval ranks of ``rows``: the position, unless the float32 score is shared
        with a neighbour (rare: then the tie group, ordered by doc id, in Python)."""
        seg = np.searchsorted(offsets, rows, side="right") - 1
        ranks = rows - offsets[seg]
        with np.errstate(over="ignore"):  # C's double -> float conversion: +-inf
            s32 = np.asarray(near, dtype=np.float64).astype(np.float32).reshape(-1, 3)
        tied = (s32[:, 0] == s32[:, 1]) | (s32[:, 2] == s32[:, 1])  # NaN (no neighbour) ties nothing
        for j in np.flatnonzero(tied).tolist():
            i = int(seg[j])
            ranks[j] = _trec_rank(self.id_lists[i], self.score_lists[i], int(ranks[j]))
        return ranks


def _positions(ids: Sequence[str], found: set) -> List[int]:
    """The positions in ``ids`` (no repeats) of the ids in ``found``, in ``found``'s
    iteration order."""
    if len(found) <= 32:
        return list(map(ids.index, found))  # one C-level scan per doc
    where = {d: p for p, d in enumerate(ids) if d in found}
    return [where[d] for d in found]


def _neighbours(scores: Sequence[float], ps: List[int]) -> List[float]:
    """For each position: the scores before, at and after it (NaN past either end)."""
    last = len(scores) - 1
    out: List[float] = []
    for p in ps:
        out += (scores[p - 1] if p else math.nan, scores[p], scores[p + 1] if p < last else math.nan)
    return out


def _non_increasing(scores: Sequence[float]) -> bool:
    # sorted() of an ordered list is one C-level pass; == then meets the same objects
    return sorted(scores, reverse=True) == (scores if isinstance(scores, list) else list(scores))


_F32 = struct.Struct("f")
_F32_CLOSE = 2.0**-22  # two doubles further apart than this (relative) differ as float32


def _f32(x: float) -> float:
    """``x`` rounded to float32 (C's double -> float conversion), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _same_f32(a: float, b: float) -> bool:
    if a == b:
        return True
    if abs(a - b) > _F32_CLOSE * max(abs(a), abs(b)) + 3e-45:
        return False
    return _f32(a) == _f32(b)


def _trec_rank(doc_ids: Sequence[str], scores: Sequence[float], p: int) -> int:
    """trec_eval rank (0-based) of position ``p`` of a ranking sorted by non-increasing
    score, ``p`` sharing its float32 score with a neighbour: the start of its group of
    float32-equal scores, plus the members of the group with a larger doc id."""
    lo, hi = _float32_tie_group(scores, p)
    d = doc_ids[p]
    return lo + sum(1 for j in range(lo, hi) if doc_ids[j] > d)


def _float32_tie_group(scores: Sequence[float], p: int) -> Tuple[int, int]:
    """``lo, hi``: the positions whose score equals position ``p``'s as float32."""
    s = scores[p]
    lo = bisect_left(scores, -s, hi=p, key=neg)  # the run of equal doubles, then float32 ties
    while lo > 0 and _same_f32(scores[lo - 1], s):
        lo -= 1
    hi = bisect_right(scores, -s, lo=p, key=neg)
    while hi < len(scores) and _same_f32(scores[hi], s):
        hi += 1
    return lo, hi


def _first_occurrences(doc_ids: Sequence[str], scores: Sequence[float]):
    """Drop repeated doc ids, keeping each id's first occurrence (and its score)."""
    seen: set = set()
    keep = []
    for i, d in enumerate(doc_ids):
        if d not in seen:
            seen.add(d)
            keep.append(i)
    return [doc_ids[i] for i in keep], [scores[i] for i in keep]


def _trec_sorted(doc_ids: Sequence[str], scores: Sequence[float]):
    """A ranking in trec_eval's order: float32 score descending, then doc id descending."""
    s32 = np.asarray(scores, dtype=np.float64).astype(np.float32).tolist()
    order = sorted(range(len(doc_ids)), key=lambda i: (s32[i], doc_ids[i]), reverse=True)
    # the float32 scores: what the order (and _trec_rank's tie groups) is made of
    return [doc_ids[i] for i in order], [s32[i] for i in order]


# --------------------------------------------------------------------------- judged hits


def judged_hits(
    qrels: QrelsColumns, run: RunColumns, *, trec: bool, positive_only: bool
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query, rank, grade)`` of the judged docs of ``run``: ``query`` indexes
    ``qrels.evaluated``, ``rank`` is 0-based (the engine's order, or trec_eval's with
    ``trec``). Only grades > 0 with ``positive_only`` (no metric but judged@k needs the
    others)."""
    empty = np.zeros(0, dtype=np.int64)
    if run.positive_only and not positive_only:
        raise ValueError("judged@k needs RunColumns built with positive_only=False")
    if not len(run.judged_rows) or not len(qrels.keys):
        return empty, empty, empty
    offsets = run.offsets
    seg_eval = np.fromiter(
        (qrels.eval_index.get(q, -1) for q in run.qids), dtype=np.int64, count=len(run.qids)
    )
    rows = run.judged_rows
    seg = np.searchsorted(offsets, rows, side="right") - 1
    qi = seg_eval[seg]
    key = qi * max(qrels.n_docs, 1) + run.judged_codes
    at = np.searchsorted(qrels.keys, key)
    np.minimum(at, len(qrels.keys) - 1, out=at)
    keep = (qi >= 0) & (qrels.keys[at] == key)
    grade = qrels.grades[at]
    if positive_only:
        keep &= grade > 0
    rows, seg, qi, grade = rows[keep], seg[keep], qi[keep], grade[keep]
    if not trec:
        return qi, rows - offsets[seg], grade
    if not run.trec_sorted:
        raise ValueError("ties='trec' needs columns sorted by score (RunColumns.trec_sorted)")
    if run.judged_trec_ranks is not None:
        return qi, run.judged_trec_ranks[keep], grade
    return qi, _trec_ranks(run, rows, seg), grade


def _trec_ranks(run: RunColumns, rows: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """trec_eval rank (0-based) of ``rows`` in score-sorted columns: the start of the row's
    group of equal float32 scores, plus the group members with a larger doc id."""
    offsets = run.offsets
    if run.scores is None:
        raise ValueError("ties='trec' needs the run's scores (RunColumns.scores)")
    s32 = run.scores.astype(np.float32)
    n = len(s32)
    new_group = np.ones(n, dtype=bool)
    if n > 1:
        np.not_equal(s32[1:], s32[:-1], out=new_group[1:])
        new_group[offsets[1:-1]] = True  # a query starts a group
    starts = np.flatnonzero(new_group)
    group = np.searchsorted(starts, rows, side="right") - 1  # the group that starts last at or before
    lo = starts[group]
    hi = np.append(starts, n)[group + 1]
    rank = lo - offsets[seg]
    tied = np.flatnonzero(hi - lo > 1)
    if len(tied):
        # Rare: a judged doc shares its score with others; order the group by doc id.
        by_group: Dict[int, List[int]] = {}
        for j in tied.tolist():
            by_group.setdefault(int(group[j]), []).append(j)
        for js in by_group.values():
            j0 = js[0]
            g_lo, g_hi, s = int(lo[j0]), int(hi[j0]), int(seg[j0])
            ids = run.docs.between(s, g_lo, g_hi)
            ascending = sorted(ids)
            for j in js:
                mine = ids[int(rows[j]) - g_lo]
                rank[j] += len(ascending) - bisect_right(ascending, mine)
    return rank


# --------------------------------------------------------------------------- all batches


@dataclass
class GatheredHits:
    """The judged hits of every batch of a run, sorted by (query, rank): ``q`` (index in
    ``qrels.evaluated``), ``r`` (0-based rank), ``g`` (grade, float64). ``has_hits``: per
    evaluated query, whether the run has a ranking with hits for it; ``n_ret``: how many
    (float64, repeats counted once). ``unjudged``: the run's queries absent from the qrels,
    in run order."""

    q: np.ndarray
    r: np.ndarray
    g: np.ndarray
    has_hits: np.ndarray
    unjudged: List[str]
    n_ret: Optional[np.ndarray] = None


def gather_judged_hits(
    qrels: QrelsColumns, batches: Iterable[RunColumns], *, trec: bool, positive_only: bool
) -> GatheredHits:
    """:func:`judged_hits` of every batch (each query in one batch), in one sorted table."""
    n_ret = np.zeros(len(qrels.evaluated))
    parts: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    unjudged: Dict[str, None] = {}
    for batch in batches:
        unjudged.update(dict.fromkeys(batch.unjudged))  # a repeat keeps its first place
        at = [(i, qrels.eval_index[q]) for i, q in enumerate(batch.qids) if q in qrels.eval_index]
        if at:
            seg, ev = np.array(at, dtype=np.int64).T
            n_ret[ev] = (batch.offsets[seg + 1] - batch.offsets[seg]).astype(np.float64)
        parts.append(judged_hits(qrels, batch, trec=trec, positive_only=positive_only))
    if parts:
        q, r, g = (np.concatenate([p[i] for p in parts]) for i in range(3))
    else:
        q = r = g = np.zeros(0, dtype=np.int64)
    order = np.lexsort((r, q))
    return GatheredHits(
        q=q[order].astype(np.intp),
        r=r[order].astype(np.intp),
        g=g[order].astype(np.float64),
        has_hits=n_ret > 0,
        unjudged=list(unjudged),
        n_ret=n_ret,
    )
