"""How much two rankings of one query differ, without judgments (issue #33): rank-biased overlap
(RBO), Jaccard and overlap at k, whether the top 1 / the top k changed, Kendall's tau on the
shared documents and the rank change of the documents that stayed. Pure (no I/O), vectorised
over many queries at once: two rankings per query as padded integer arrays
(:class:`RankingPairs`), one float64 value per query out, never rounded.

The measures are declared in :mod:`.comparison_registry` (``rbo@10``, ``rbo_min@10``,
``rbo_res@10``, ``jaccard@10``, ``overlap@10``, ``top1_changed``, ``topk_changed@10``,
``kendall_tau@10``, ``rank_change@10``); :func:`compare` scores parsed metrics, the functions
below one measure each.

RBO (W. Webber, A. Moffat, J. Zobel, "A similarity measure for indefinite rankings", ACM TOIS
28(4), 2010). With ``X_d`` the overlap of the two rankings' first d documents and persistence p,
RBO = (1 - p) sum_{d >= 1} p^(d-1) X_d / d over the whole (indefinite) rankings. On the compared
depth k only the first k documents of each ranking are seen (s <= l of them: a ranking shorter
than k is an uneven list, the paper's section 4.3, ``X_d`` for d > s the overlap of the shorter
list's s documents with the longer one's first d):

* ``rbo_min`` (eq. 11 at depth l): the lower bound, every unseen document assumed disjoint:
  (1 - p)/p (sum_{d=1..l} (X_d - X_l) p^d / d - X_l ln(1 - p)).
* ``rbo_res`` (eq. 30): the residual, RBO_max - RBO_min, how much the unseen documents could
  still add: p^s + p^l - p^f - (1 - p)/p (s sum_{d=s+1..f} p^d/d + l sum_{d=l+1..f} p^d/d +
  X_l (ln(1/(1 - p)) - sum_{d=1..f} p^d/d)), f = l + s - X_l. The true RBO of the full rankings
  lies in [rbo_min, rbo_min + rbo_res].
* ``rbo`` (RBO_ext, eq. 32; eq. 23 for lists of one length): the point estimate, the agreement
  seen at the compared depth extrapolated past it: (1 - p)/p (sum_{d=1..l} X_d p^d / d +
  sum_{d=s+1..l} X_s (d - s) p^d / (s d)) + ((X_l - X_s)/l + X_s/s) p^l. Two identical top k
  give 1 (their rbo_min at p = 0.9, k = 10 is 0.856).

Computed per shared document, not per depth: a document at rank i in one ranking and j in the
other (0-based, both within the compared depth) is in ``X_d`` for every d > max(i, j), so
sum_d X_d p^d/d = sum over the shared documents of (W(l) - W(max(i, j))), W(t) = sum_{d=1..t}
p^d/d. Empty rankings (the paper has none): two empty rankings are identical (every RBO 1,
residual 0); one empty and one not share nothing (0, residual 0).

Kendall's tau is tau over the documents in both top k (their two ranks; ids are never tied, so
tau-a = tau-b = scipy's ``kendalltau``): (concordant - discordant) / (m (m - 1) / 2), NaN when
fewer than 2 documents are shared. ``rank_change`` is the mean |rank now - rank before| of the
documents in both top k, NaN when none is shared. :func:`mean_defined` averages such values
and counts the undefined ones.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain, count
from typing import Any, Callable, Dict, Hashable, Iterable, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "PAD",
    "DEFAULT_P",
    "RankingPairs",
    "RBO",
    "rbo",
    "jaccard",
    "overlap",
    "top1_changed",
    "topk_changed",
    "kendall_tau",
    "rank_change",
    "compare",
    "mean_defined",
    "COMPARISONS",
]

#: The padding of a ranking row shorter than the array.
PAD = -1
#: The persistence of ``rbo@k`` when none is given: the first 10 ranks carry 86% of the weight
#: (Webber et al. 2010, eq. 21).
DEFAULT_P = 0.9


@dataclass(frozen=True)
class RankingPairs:
    """Two rankings per query: ``reference`` (before: the baseline's, a stored run's) and
    ``current`` (this run's), int64 arrays of shape (queries, depth), each row the document ids
    (>= 0) best first, padded at the end with :data:`PAD`. An id means the same document in
    both arrays of a row (ids need not agree across rows). ``reference_len``/``current_len``:
    each row's ranking length. ``reference_in_current``: for each reference rank, the 0-based
    rank of that document in the current row, -1 when it is not there (or the rank is padding).

    Build with :meth:`from_lists` (document ids of any hashable kind, numbered once over all
    queries) or :meth:`from_arrays` (ints already). A document twice in one ranking is refused by name.

    >>> pairs = RankingPairs.from_lists([["a", "b", "c"]], [["b", "a", "d"]])
    >>> pairs.reference_in_current.tolist()
    [[1, 0, -1]]
    """

    reference: np.ndarray
    current: np.ndarray
    reference_len: np.ndarray
    current_len: np.ndarray
    reference_in_current: np.ndarray
    #: the cuts at each depth k, made once and shared by the measures (:func:`_cut`)
    cuts: Dict[int, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.reference.shape[0])

    @property
    def depth(self) -> int:
        """The deepest rank either array holds."""
        return int(max(self.reference.shape[1], self.current.shape[1]))

    @classmethod
    def from_lists(
        cls,
        reference: Sequence[Sequence[Hashable]],
        current: Sequence[Sequence[Hashable]],
        *,
        depth: Optional[int] = None,
        names: Optional[Sequence[str]] = None,
    ) -> RankingPairs:
        """Rankings as lists of document ids (``reference[q]``, ``current[q]`` for the same query
        q), each cut to its first ``depth`` documents when given. ``names`` (the query ids) name a
        query in an error; without them its position does. ``ValueError`` for rankings of
        different counts or a document twice in one ranking."""
        if len(reference) != len(current):
            raise ValueError(f"{len(reference)} reference rankings but {len(current)} current ones")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
        ref_ids, cur_ids = _encode(reference, current, depth, names)
        try:
            return cls._build(ref_ids, cur_ids)
        except ValueError:  # a document twice in one ranking: named by its query and id
            raise ValueError(_first_duplicate(reference, current, depth, names)) from None

    @classmethod
    def from_arrays(cls, reference: Any, current: Any) -> RankingPairs:
        """Rankings as 2-D integer arrays (one row per query, ids >= 0, :data:`PAD` after the
        last document). ``ValueError`` for a negative id, padding before a document, rows of
        different counts or a document twice in one row (named by its row)."""
        ref, cur = _as_rows(reference, "reference"), _as_rows(current, "current")
        if ref.shape[0] != cur.shape[0]:
            raise ValueError(f"{ref.shape[0]} reference rankings but {cur.shape[0]} current ones")
        return cls._build(ref, cur)

    @classmethod
    def _build(cls, ref: np.ndarray, cur: np.ndarray) -> RankingPairs:
        ref_len = (ref != PAD).sum(axis=1).astype(np.int64)
        cur_len = (cur != PAD).sum(axis=1).astype(np.int64)
        return cls(ref, cur, ref_len, cur_len, _match_sorted(ref, cur))


# --------------------------------------------------------------------------- building


def _encode(
    reference: Sequence[Sequence[Hashable]],
    current: Sequence[Sequence[Hashable]],
    depth: Optional[int],
    names: Optional[Sequence[str]],
) -> Tuple[np.ndarray, np.ndarray]:
    """Both sides as padded int arrays, every document numbered once over all queries (in order
    of first sight) in one pass that runs in C: a ``defaultdict`` whose missing key takes the
    next number, read through ``map`` (no Python loop per document, one hash lookup each). A
    document twice in one ranking is found by the matching (:func:`_match_sorted`) and named
    then (:func:`_first_duplicate`)."""
    refs = reference if depth is None else [r[:depth] for r in reference]
    curs = current if depth is None else [c[:depth] for c in current]
    ref_lens = np.fromiter(map(len, refs), dtype=np.int64, count=len(refs))
    cur_lens = np.fromiter(map(len, curs), dtype=np.int64, count=len(curs))
    n_ref, n_cur = int(ref_lens.sum()), int(cur_lens.sum())
    numbers: Dict[Hashable, int] = defaultdict(count().__next__)
    every = chain(chain.from_iterable(refs), chain.from_iterable(curs))
    codes = np.fromiter(map(numbers.__getitem__, every), dtype=np.int64, count=n_ref + n_cur)
    return _padded(codes[:n_ref], ref_lens), _padded(codes[n_ref:], cur_lens)


def _first_duplicate(
    reference: Sequence[Sequence[Hashable]],
    current: Sequence[Sequence[Hashable]],
    depth: Optional[int],
    names: Optional[Sequence[str]],
) -> str:
    """The message naming the first ranking (in query order, the reference's first) that holds
    a document twice: read only once the matching found one."""
    for q, (r, c) in enumerate(zip(reference, current)):
        for side, docs in (("reference", r), ("current", c)):
            docs = list(docs if depth is None else docs[:depth])
            if len(set(docs)) != len(docs):
                return _duplicate_message(docs, side, names[q] if names is not None else q)
    raise AssertionError("no ranking holds a document twice")  # pragma: no cover - the matching found one


def _duplicate_message(docs: Sequence[Hashable], side: str, query: Any) -> str:
    seen: set = set()
    twice = next(d for d in docs if d in seen or seen.add(d))  # type: ignore[func-returns-value]
    where = f"query {query!r}" if isinstance(query, str) else f"ranking {query}"
    return f"{where}: document {twice!r} is twice in the {side} ranking (a ranking holds each document once)"


def _padded(flat: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Rows of ``lengths`` ids taken in turn from ``flat``, padded at the end with :data:`PAD`."""
    n = len(lengths)
    width = int(lengths.max()) if n else 0
    out = np.full((n, width), PAD, dtype=np.int64)
    if flat.size:
        out[np.arange(width) < lengths[:, None]] = flat  # row-major: each row's ids in order
    return out


def _as_rows(value: Any, side: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 2:
        raise ValueError(f"{side}: expected a 2-D array (queries, ranks), got {arr.ndim} dimensions")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{side}: expected integer document ids, got {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and int(arr.min()) < PAD:
        row = int(np.flatnonzero((arr < PAD).any(axis=1))[0])
        raise ValueError(f"{side}: row {row} holds a negative document id (ids are >= 0, {PAD} pads)")
    pad = arr == PAD
    if arr.shape[1] > 1 and bool((pad[:, :-1] & ~pad[:, 1:]).any()):
        row = int(np.flatnonzero((pad[:, :-1] & ~pad[:, 1:]).any(axis=1))[0])
        raise ValueError(f"{side}: row {row} has a document after its padding ({PAD} ends a ranking)")
    return arr


def _match_sorted(ref: np.ndarray, cur: np.ndarray) -> np.ndarray:
    """``reference_in_current`` for any ids: each row's documents of both rankings as one sort
    key (id, side, rank) sorted per row; equal ids side by side are a document in both (the
    reference's first); a document twice in one ranking is refused by row."""
    n, a = ref.shape
    width = max(a, cur.shape[1], 1)
    bits = int(width - 1).bit_length() or 1
    top = int(max(ref.max(initial=0), cur.max(initial=0)))
    if top >= 1 << (62 - bits):  # the key would overflow int64: sort the ids, then find the ranks
        return _match_argsort(ref, cur)
    kind = np.int32 if top < 1 << (30 - bits) else np.int64  # int32 keys sort twice as fast
    rank_ref = np.arange(a, dtype=kind)
    rank_cur = np.arange(cur.shape[1], dtype=kind) | kind(1 << bits)
    keys = np.concatenate(
        [(ref.astype(kind) << (bits + 1)) | rank_ref, (cur.astype(kind) << (bits + 1)) | rank_cur], axis=1
    )
    keys[np.concatenate([ref == PAD, cur == PAD], axis=1)] = -1
    keys.sort(axis=1)
    ids = keys >> (bits + 1)
    same = (ids[:, 1:] == ids[:, :-1]) & (keys[:, :-1] >= 0)
    out = np.full(ref.shape, PAD, dtype=np.int64)
    rows, t = np.nonzero(same)
    left, right = keys[rows, t], keys[rows, t + 1]
    side = 1 << bits
    bad = ((left & side) != 0) | ((right & side) == 0)
    if bad.any():
        where = "current" if (left[bad][0] & side) else "reference"
        raise ValueError(
            f"{where}: row {int(rows[bad][0])} holds document {int(ids[rows[bad][0], t[bad][0]])} twice"
        )
    mask = side - 1
    out[rows, left & mask] = right & mask
    return out


def _match_argsort(ref: np.ndarray, cur: np.ndarray) -> np.ndarray:
    """:func:`_match_sorted` for ids too large to share an int64 with a rank: a stable argsort."""
    n, a = ref.shape
    both = np.concatenate([np.where(ref == PAD, -2, ref), np.where(cur == PAD, -3, cur)], axis=1)
    order = np.argsort(both, axis=1, kind="stable")
    ordered = np.take_along_axis(both, order, axis=1)
    same = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    out = np.full(ref.shape, PAD, dtype=np.int64)
    rows, t = np.nonzero(same)
    left, right = order[rows, t], order[rows, t + 1]
    bad = (left >= a) | (right < a)
    if bad.any():
        side = "reference" if right[bad][0] < a else "current"
        raise ValueError(
            f"{side}: row {int(rows[bad][0])} holds document {int(ordered[rows[bad][0], t[bad][0]])} twice"
        )
    out[rows, left] = right - a
    return out


# --------------------------------------------------------------------------- the measures


def _check_k(k: Any, name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{name}: the cutoff k must be a positive integer, got {k!r}")
    return int(k)


class _Cut:
    """The two rankings cut at depth k: lengths, and each shared document's two ranks."""

    def __init__(self, pairs: RankingPairs, k: int):
        self.k = k
        self.ref_n = np.minimum(pairs.reference_len, k)
        self.cur_n = np.minimum(pairs.current_len, k)
        j = pairs.reference_in_current[:, :k]
        self.i = np.broadcast_to(np.arange(j.shape[1]), j.shape)  # reference ranks
        self.j = j
        self.shared = (j >= 0) & (j < k)
        self.count = self.shared.sum(axis=1)


def _cut(pairs: RankingPairs, k: int) -> _Cut:
    """The pairs cut at depth ``k``, made once per pairs and k (every measure reads it)."""
    if k not in pairs.cuts:
        pairs.cuts[k] = _Cut(pairs, k)
    return pairs.cuts[k]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class RBO:
    """Per query: ``min`` (the lower bound on the compared depth), ``res`` (the residual: the
    full rankings' RBO lies in [min, min + res]) and ``ext`` (the extrapolated point estimate)."""

    min: np.ndarray
    res: np.ndarray
    ext: np.ndarray


def rbo(pairs: RankingPairs, k: int, p: float = DEFAULT_P) -> RBO:
    """RBO_min, RBO_res and RBO_ext of every query's two rankings cut at depth ``k`` (Webber,
    Moffat and Zobel 2010, eqs. 11, 30, 32; see the module docstring).

    >>> pairs = RankingPairs.from_lists([list("abcd")], [list("abcd")])
    >>> r = rbo(pairs, 4, 0.9)
    >>> round(float(r.ext[0]), 12), round(float(r.min[0] + r.res[0]), 12)
    (1.0, 1.0)
    """
    k = _check_k(k, "rbo")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p < 1.0:
        raise ValueError(f"rbo: the persistence p must be in (0, 1), got {p!r}")
    cut = _cut(pairs, k)
    c = (1.0 - p) / p
    d = np.arange(2 * k + 1, dtype=np.float64)
    w = np.zeros(2 * k + 1)
    w[1:] = p ** d[1:] / d[1:]
    W = np.cumsum(w)  # W[t] = sum_{d=1..t} p^d / d
    G = np.concatenate([[0.0], np.cumsum(p ** d[1:])])  # G[t] = sum_{d=1..t} p^d
    tail = -math.log1p(-p) - W  # sum_{d > t} p^d / d
    s = np.minimum(cut.ref_n, cut.cur_n)
    l_ = np.maximum(cut.ref_n, cut.cur_n)
    m = np.where(cut.shared, np.maximum(cut.i, cut.j), 0)
    x_l = cut.count
    x_s = (cut.shared & (m < s[:, None])).sum(axis=1)
    sum_w = np.where(cut.shared, W[m], 0.0).sum(axis=1)
    sum_tail = np.where(cut.shared, tail[m], 0.0).sum(axis=1)
    r_min = c * sum_tail
    safe_s, safe_l = np.maximum(s, 1), np.maximum(l_, 1)
    xw = x_l * W[l_] - sum_w  # sum_{d=1..l} X_d p^d / d
    uneven = x_s * ((G[l_] - G[s]) / safe_s - (W[l_] - W[s]))  # sum_{d=s+1..l} X_s (d-s) p^d/(s d)
    r_ext = c * (xw + uneven) + ((x_l - x_s) / safe_l + x_s / safe_s) * p**l_
    f = l_ + s - x_l
    r_res = (
        p**s + p**l_ - p**f - c * (s * (W[f] - W[s]) + l_ * (W[f] - W[l_]) + x_l * (-math.log1p(-p) - W[f]))
    )
    empty = s == 0  # both empty: identical (1); one empty: nothing shared (0); residual 0
    both = l_ == 0
    for arr, value in ((r_min, 1.0), (r_ext, 1.0)):
        arr[empty] = np.where(both[empty], value, 0.0)
    r_res[empty] = 0.0
    return RBO(min=r_min, res=r_res, ext=r_ext)


def jaccard(pairs: RankingPairs, k: int) -> np.ndarray:
    """|A n B| / |A u B| of the two top-k sets; 1 for two empty rankings."""
    cut = _cut(pairs, _check_k(k, "jaccard"))
    union = cut.ref_n + cut.cur_n - cut.count
    return np.where(union > 0, cut.count / np.maximum(union, 1), 1.0)


def overlap(pairs: RankingPairs, k: int) -> np.ndarray:
    """Documents in both top k / the longer top k (k when both hold k: the paper's agreement
    A_k = X_k / k); 1 for two empty rankings."""
    cut = _cut(pairs, _check_k(k, "overlap"))
    longer = np.maximum(cut.ref_n, cut.cur_n)
    return np.where(longer > 0, cut.count / np.maximum(longer, 1), 1.0)


def top1_changed(pairs: RankingPairs, k: Optional[int] = None) -> np.ndarray:
    """1.0 where the first document differs (one ranking empty and the other not included), else
    0.0; the mean is the share of queries whose top 1 changed."""
    first_ref = pairs.reference[:, 0] if pairs.reference.shape[1] else np.full(len(pairs), PAD)
    first_cur = pairs.current[:, 0] if pairs.current.shape[1] else np.full(len(pairs), PAD)
    return (first_ref != first_cur).astype(np.float64)


def topk_changed(pairs: RankingPairs, k: int) -> np.ndarray:
    """1.0 where the top k differ as ordered lists (a document came, went or moved), else 0.0."""
    k = _check_k(k, "topk_changed")
    return (_top(pairs.reference, k) != _top(pairs.current, k)).any(axis=1).astype(np.float64)


def _top(arr: np.ndarray, k: int) -> np.ndarray:
    top = arr[:, :k]
    if top.shape[1] < k:
        top = np.concatenate([top, np.full((arr.shape[0], k - top.shape[1]), PAD, dtype=arr.dtype)], axis=1)
    return top


def kendall_tau(pairs: RankingPairs, k: int) -> np.ndarray:
    """Kendall's tau between the two ranks of the documents in both top k; NaN where fewer than
    two are shared. Discordant pairs are counted with a bitset per query of the current ranks
    seen so far (O(queries x k x k/64))."""
    cut = _cut(pairs, _check_k(k, "kendall_tau"))
    n, width = cut.j.shape
    words = max(1, -(-k // 64))
    ranks = np.arange(k + 1)
    above = np.zeros((k + 1, words), dtype=np.uint64)  # bits of the ranks > t (none for t = k)
    bit = np.zeros((k + 1, words), dtype=np.uint64)
    for t in range(k):
        bit[t, t // 64] = np.uint64(1) << np.uint64(t % 64)
    for t in range(k):
        higher = ranks[t + 1 : k]
        np.bitwise_or.at(above[t], higher // 64, np.left_shift(np.uint64(1), (higher % 64).astype(np.uint64)))
    seen = [np.zeros(n, dtype=np.uint64) for _ in range(words)]
    above_w = [np.ascontiguousarray(above[:, w]) for w in range(words)]
    bit_w = [np.ascontiguousarray(bit[:, w]) for w in range(words)]
    columns = np.ascontiguousarray(np.where(cut.shared, cut.j, k).T)  # one row per reference rank
    discordant = np.zeros(n, dtype=np.int64)
    for at in columns:
        for w in range(words):
            discordant += _popcount(seen[w] & above_w[w][at])
            seen[w] |= bit_w[w][at]
    m = cut.count
    pairs_n = m * (m - 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (pairs_n - 2.0 * discordant) / pairs_n
    return np.where(m >= 2, tau, np.nan)


_BYTE_COUNTS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of each uint64 of a 1-D array."""
    count = getattr(np, "bitwise_count", None)  # numpy >= 2.0
    if count is not None:
        return count(x)
    return _BYTE_COUNTS[x.view(np.uint8)].reshape(x.shape[0], 8).sum(axis=1)


def rank_change(pairs: RankingPairs, k: int) -> np.ndarray:
    """The mean |rank now - rank before| of the documents in both top k; NaN where none is."""
    cut = _cut(pairs, _check_k(k, "rank_change"))
    moved = np.where(cut.shared, np.abs(cut.i - cut.j), 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cut.count > 0, moved / np.maximum(cut.count, 1), np.nan)


# --------------------------------------------------------------------------- by metric


def _rbo_part(part: str) -> Callable[[RankingPairs, Optional[int], Optional[float]], np.ndarray]:
    def measure(pairs: RankingPairs, k: Optional[int], p: Optional[float]) -> np.ndarray:
        return getattr(rbo(pairs, k, DEFAULT_P if p is None else p), part)  # type: ignore[arg-type]

    return measure


#: measure name -> its function ``(pairs, k, param) -> one float64 per query``; the names are
#: those of :data:`.comparison_registry.COMPARISON_MEASURES` (a test checks they agree).
COMPARISONS: Dict[str, Callable[[RankingPairs, Optional[int], Optional[float]], np.ndarray]] = {
    "rbo": _rbo_part("ext"),
    "rbo_min": _rbo_part("min"),
    "rbo_res": _rbo_part("res"),
    "jaccard": lambda pairs, k, _: jaccard(pairs, k),  # type: ignore[arg-type]
    "overlap": lambda pairs, k, _: overlap(pairs, k),  # type: ignore[arg-type]
    "top1_changed": lambda pairs, k, _: top1_changed(pairs),
    "topk_changed": lambda pairs, k, _: topk_changed(pairs, k),  # type: ignore[arg-type]
    "kendall_tau": lambda pairs, k, _: kendall_tau(pairs, k),  # type: ignore[arg-type]
    "rank_change": lambda pairs, k, _: rank_change(pairs, k),  # type: ignore[arg-type]
}


def compare(pairs: RankingPairs, metrics: Iterable[Any]) -> Dict[str, np.ndarray]:
    """``{str(metric): one float64 per query}`` for comparison metrics (``"rbo@10"``,
    ``"top1_changed"``, parsed :class:`~.metrics.Metric` s); RBO's three parts are computed once
    per (k, p). ``ValueError`` for a metric that is scored against judgments instead.

    >>> pairs = RankingPairs.from_lists([["a", "b"], ["a"]], [["b", "a"], ["a"]])
    >>> {m: v.tolist() for m, v in compare(pairs, ["top1_changed", "jaccard@10"]).items()}
    {'top1_changed': [1.0, 0.0], 'jaccard@10': [1.0, 1.0]}
    """
    from .metrics import parse_metric
    from .registry import BY_NAME

    out: Dict[str, np.ndarray] = {}
    done: Dict[Tuple[int, float], RBO] = {}
    for text in metrics:
        m = parse_metric(text)
        if not BY_NAME[m.name].compares_rankings:
            raise ValueError(f"{m} is scored against judgments, not by comparing two rankings")
        if m.name in ("rbo", "rbo_min", "rbo_res"):
            key = (int(m.k), float(m.param))  # type: ignore[arg-type]
            if key not in done:
                done[key] = rbo(pairs, *key)
            part = {"rbo": "ext", "rbo_min": "min", "rbo_res": "res"}[m.name]
            out[str(m)] = getattr(done[key], part)
        else:
            out[str(m)] = COMPARISONS[m.name](pairs, m.k, m.param)
    return out


def mean_defined(values: Any) -> Tuple[float, int, int]:
    """(the mean of the defined values, how many are defined, how many are NaN): Kendall's tau
    and the rank change are undefined where too few documents are shared; the mean is NaN when
    none is defined."""
    arr = np.asarray(values, dtype=np.float64)
    defined = ~np.isnan(arr)
    n = int(defined.sum())
    return (math.fsum(arr[defined].tolist()) / n if n else math.nan), n, int(arr.size - n)
