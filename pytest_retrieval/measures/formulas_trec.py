"""trec_eval's further measures, vectorised as :mod:`.formulas` is (same signature).

Each follows the C source of usnistgov/trec_eval (the ``m_*.c`` file named on it; release
9.0.8, which pytrec_eval-terrier 0.5.11 bundles, where 10.0 differs it is said). The
relevance values trec_eval gives a retrieved document (form_res_rels.c): its grade when it
is judged >= 0, ``RELVALUE_UNJUDGED`` for a negative grade ("in the pool but unjudged"),
``RELVALUE_NONPOOL`` without a judgment; ``num_rel`` counts grades >= the relevance level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from .formulas import average_precision, divide, gain_of, nth_in_query, segment_cumsum

if TYPE_CHECKING:
    import numpy as np

    from .formulas import JudgedHits

__all__ = [
    "bpref",
    "infap",
    "gm_map",
    "iprec",
    "iprec_11pt_avg",
    "rprec_mult",
    "bin_g",
    "ndcg_rel",
    "r_ndcg",
    "normalized_g",
]

#: trec_eval.h INFAP_EPSILON
INFAP_EPSILON = 0.00001
#: m_11pt_avg.c: the recall levels (C double literals)
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _before(q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per hit: how many hits of its query ranked above it are in ``mask`` (exact ints)."""
    import numpy as np

    return segment_cumsum(q, mask.astype(np.int64), inclusive=False)


def bpref(h: JudgedHits, k: None) -> np.ndarray:
    """m_bpref.c: for each relevant retrieved document, 1 - min(n, R) / min(N, R) with n the
    judged non-relevant documents above it (1 when n = 0), N all judged non-relevant ones
    (grades 0 .. level - 1); summed and divided by R. Negative grades and documents without
    a judgment are skipped."""
    import numpy as np

    judged = h.g >= 0
    q, g = h.q[judged], h.g[judged]
    nonrel = g < h.threshold
    n = _before(q, nonrel)[~nonrel].astype(np.float64)
    qr = q[~nonrel]
    r_, n_all = h.num_rel[qr], h.num_nonrel[qr]
    part = np.ones(len(qr))
    above = n > 0  # then N >= n > 0
    part[above] = 1.0 - np.minimum(n[above], r_[above]) / np.minimum(n_all[above], r_[above])
    return h.per_rel(np.bincount(qr, weights=part, minlength=h.n_q))


def infap(h: JudgedHits, k: None) -> np.ndarray:
    """m_infap.c: for a relevant document at 0-based rank j > 0, with r relevant, n judged
    non-relevant and u pooled-unjudged (negative grade) documents above it,
    1/(j+1) + (j/(j+1)) * ((r + n + u) / j) * ((r + eps) / (r + n + 2 eps)); 1 at rank 0;
    summed and divided by R."""
    import numpy as np

    q, g = h.q, h.g
    rel = g >= h.threshold
    counts = [_before(q, m)[rel].astype(np.float64) for m in (rel, (g >= 0) & ~rel, g < 0)]
    r_, n, u = counts
    j = h.r[rel].astype(np.float64)
    safe_j = np.maximum(j, 1.0)
    eps = INFAP_EPSILON
    value = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r_ + n + u) / safe_j) * ((r_ + eps) / (r_ + n + 2 * eps))
    value[j == 0] = 1.0
    return h.per_rel(np.bincount(q[rel], weights=value, minlength=h.n_q))


def gm_map(h: JudgedHits, k: None) -> np.ndarray:
    """m_gm_map.c: AP per query (trec_eval stores log(max(AP, MIN_GEO_MEAN)) and prints it per
    query); the geometric mean over the queries is the registry's ``aggregate``."""
    return average_precision(h, None)


def _iprec_levels(h: JudgedHits, levels: Sequence[float]) -> np.ndarray:
    """m_iprec_at_recall.c, one column per level: the level is c = (long)(level * R + 0.9)
    relevant documents (trec_eval 9.x; 10.0 rounds with lround), the value the highest
    precision at any rank at or below the c-th relevant document (the first one for c = 0),
    0 when fewer than c relevant documents are retrieved."""
    import numpy as np

    q, r = h.q[h.rel], h.r[h.rel]
    precision = nth_in_query(q) / (r + 1.0)
    # running max from the bottom of each query: offset each query above the ones after it
    offset = 2.0 * (h.n_q - q)
    best = (np.maximum.accumulate((precision + offset)[::-1]) - offset[::-1])[::-1]
    rel_ret = h.count(h.rel)
    start = np.searchsorted(q, np.arange(h.n_q))
    out = np.zeros((h.n_q, len(levels)))
    for col, level in enumerate(levels):
        c = np.maximum(np.floor(level * h.num_rel + 0.9), 1.0)
        ok = (c <= rel_ret) & (rel_ret > 0)
        out[ok, col] = best[start[ok] + c[ok].astype(np.int64) - 1]
    return out


def iprec(h: JudgedHits, k: None, level: float) -> np.ndarray:
    return _iprec_levels(h, [level])[:, 0]


def iprec_11pt_avg(h: JudgedHits, k: None) -> np.ndarray:
    """m_11pt_avg.c: the mean of iprec at the 11 levels 0.0 .. 1.0."""
    return _iprec_levels(h, ELEVEN_POINTS).sum(axis=1) / len(ELEVEN_POINTS)


def rprec_mult(h: JudgedHits, k: None, mult: float) -> np.ndarray:
    """m_Rprec_mult.c: precision at c = (long)(mult * R + 0.9) documents (past the end of the
    ranking: relevant retrieved / c; 0 for c = 0)."""
    import numpy as np

    c = np.floor(mult * h.num_rel + 0.9)
    return divide(h.count(h.rel & (h.r < c[h.q])), c)


def bin_g(h: JudgedHits, k: None) -> np.ndarray:
    """m_binG.c: sum over the relevant retrieved documents of 1 / log2(3 + i - rel_so_far)
    (i the 0-based rank, rel_so_far counting the document), divided by R."""
    import numpy as np

    q, r = h.q[h.rel], h.r[h.rel]
    value = 1.0 / np.log2(3.0 + r - nth_in_query(q))
    return h.per_rel(np.bincount(q, weights=value, minlength=h.n_q))


def ndcg_rel(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    """m_ndcg_rel.c: over the P documents with a gain > 0, the nDCG at the rank of each one
    retrieved (the ideal DCG at that rank, or the whole ideal DCG below rank P) and the
    nDCG of the whole ranking for each one not retrieved; their sum / P (0 when the sum is 0)."""
    import numpy as np

    n_q = h.n_q
    pos = h.g > 0
    q, r = h.q[pos], h.r[pos]
    contrib = gain_of(h.g[pos], h.gain) / np.log2(r + 2.0)
    dcg_at = segment_cumsum(q, contrib)
    dcg_end = np.bincount(q, weights=contrib, minlength=n_q)
    iq, ir, ig = h.ideal
    icontrib = gain_of(ig, h.gain) / np.log2(ir + 2.0)
    idcg_at = segment_cumsum(iq, icontrib)
    idcg_end = np.bincount(iq, weights=icontrib, minlength=n_q)
    n_pos = np.bincount(iq, minlength=n_q)
    at = np.searchsorted(iq, np.arange(n_q))[q] + np.minimum(r, n_pos[q] - 1)
    total = np.bincount(q, weights=dcg_at / idcg_at[at], minlength=n_q)
    total += (n_pos - np.bincount(q, minlength=n_q)) * divide(dcg_end, idcg_end)
    return divide(total, n_pos * (total > 0))


def _ideal_running(h: JudgedHits):
    """Per ideal position: the running gain and DCG of its query's ideal ranking; per query:
    where its ideal ranking starts and how many documents with a gain > 0 it has (P)."""
    import numpy as np

    iq, ir, ig = h.ideal
    gains = gain_of(ig, h.gain)
    running_gain = segment_cumsum(iq, gains)
    running_dcg = segment_cumsum(iq, gains / np.log2(ir + 2.0))
    start = np.searchsorted(iq, np.arange(h.n_q))
    return running_gain, running_dcg, start, np.bincount(iq, minlength=h.n_q)


def normalized_g(h: JudgedHits, k: None) -> np.ndarray:
    """m_G.c: a document of gain g > 0 at 0-based rank i adds g / log2(2 + cost(i) - got(i)),
    got(i) = the gains retrieved down to i, cost(i) = sum_{j <= i} max(ideal gain at j, 1)
    (ideal gain 0 past the P judged documents with a gain); the sum / the total ideal gain."""
    import numpy as np

    pos = h.g > 0
    q, r = h.q[pos], h.r[pos]
    gains = gain_of(h.g[pos], h.gain)
    got = segment_cumsum(q, gains)
    ideal_gain, _, start, n_pos = _ideal_running(h)
    within = np.minimum(r, n_pos[q] - 1)
    cost = ideal_gain[start[q] + within] + np.maximum(0, r + 1 - n_pos[q])
    total = np.bincount(q, weights=gains / np.log2(2.0 + cost - got), minlength=h.n_q)
    ends = start + np.maximum(n_pos - 1, 0)
    return divide(total, np.where(n_pos > 0, ideal_gain[np.minimum(ends, len(ideal_gain) - 1)], 0.0))


def r_ndcg(h: JudgedHits, k: None) -> np.ndarray:
    """m_Rndcg.c: the mean of nDCG@b over the R levels b (the ranks where the ideal gain
    drops: the running count of the judged documents of each grade > 0, best grade first),
    with DCG@b read at min(b, ranking length), plus the nDCG of the whole ranking when it
    is longer than P + 1 (P = documents with a gain > 0). 0 when no document reaches the
    relevance level (``if (res_rels.num_rel == 0) return (0)``)."""
    import numpy as np

    iq, ir, ig = h.ideal
    _, ideal_dcg, _, n_pos = _ideal_running(h)
    last = np.ones(len(iq), dtype=bool)  # an ideal position where the grade drops next
    if len(iq) > 1:
        last[:-1] = (iq[1:] != iq[:-1]) | (ig[1:] != ig[:-1])
    bq, b = iq[last], ir[last] + 1
    pos = h.g > 0
    q, r = h.q[pos], h.r[pos]
    contrib = gain_of(h.g[pos], h.gain) / np.log2(r + 2.0)
    dcg_at_b = _dcg_above(q, r, contrib, bq, np.minimum(b, h.n_ret[bq]))
    total = np.bincount(bq, weights=dcg_at_b / ideal_dcg[last], minlength=h.n_q)
    points = np.bincount(bq, minlength=h.n_q).astype(np.float64)
    whole = h.n_ret > n_pos + 1
    dcg_end = np.bincount(q, weights=contrib, minlength=h.n_q)
    idcg_end = np.bincount(iq, weights=gain_of(ig, h.gain) / np.log2(ir + 2.0), minlength=h.n_q)
    total[whole] += divide(dcg_end, idcg_end)[whole]
    points[whole] += 1
    return divide(total, points * (h.num_rel > 0))


def _dcg_above(
    q: np.ndarray, r: np.ndarray, contrib: np.ndarray, at_q: np.ndarray, at_rank: np.ndarray
) -> np.ndarray:
    """The DCG of query ``at_q`` over its ranks < ``at_rank`` (hits sorted by query, rank)."""
    import numpy as np

    width = int(max(r.max(initial=0), at_rank.max(initial=0))) + 2
    keys = q.astype(np.int64) * width + r
    running = np.concatenate(([0.0], np.cumsum(contrib)))
    upto = np.searchsorted(keys, at_q.astype(np.int64) * width + at_rank.astype(np.int64), side="left")
    first = np.searchsorted(keys, at_q.astype(np.int64) * width, side="left")
    return running[upto] - running[first]
