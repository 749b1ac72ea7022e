"""The metric engine: parse metric names and score a run against judgments.

Hand-written, pure (no I/O) and checked against trec_eval (through pytrec_eval) by
``tests/measures/test_metrics_trec_eval.py``.

Metrics (case-insensitive; ``k`` is a positive integer cutoff):

==================  =========================================================
``ndcg[@k]``        nDCG; no ``k`` = the whole ranking
``mrr[@k]``         reciprocal rank of the first relevant doc; no ``k`` = whole
``recall@k``        relevant in the top k / relevant judged
``precision@k``     relevant in the top k / k (alias ``p@k``)
``map[@k]``         average precision; ``map@k`` counts only the top k, but
                    still divides by all relevant judged (trec_eval map_cut)
``r-precision``     relevant in the top R / R, R = relevant judged (``rprec``)
``hit@k``           1 if a relevant doc is in the top k (alias ``success@k``)
``judged@k``        share of the top k that has any judgment (denominator k)
``ann_recall@k``    share of the exact top k nearest neighbours in a kNN
                    retriever's approximate top k (scored against the exact
                    kNN run, not the judgments: :mod:`.ann`; ``evaluate`` skips it)
==================  =========================================================

Conventions (see :func:`evaluate`):

* Grades are ints: ``> 0`` gains in nDCG, ``0`` is judged non-relevant, negative
  grades are non-relevant (but judged). Binary metrics call a doc relevant when its
  grade is ``>= relevance_threshold`` (trec_eval ``-l``); nDCG ignores the threshold.
* nDCG: DCG@k = sum over the top k of gain(rel_i) / log2(i + 1) (i = 1-based rank),
  gain ``"exp"`` = 2^rel - 1 or ``"linear"`` = rel (trec_eval); IDCG@k from the ideal
  ordering of all judged docs with a grade > 0, cut at k; nDCG = 0 when IDCG = 0.
* A document id repeated inside one ranking counts once, at its first occurrence
  (later copies are dropped and the documents after them move up).
* Cutoffs larger than the ranking are padded with non-relevant docs (P@10 of a
  3-doc ranking divides by 10), as trec_eval does.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from operator import neg
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ..types import Ranking

if TYPE_CHECKING:
    import numpy as np
else:
    np = None  # numpy, imported by the first evaluate(): parsing metric names stays cheap

__all__ = ["Metric", "parse_metric", "evaluate", "Evaluation", "KNOWN_METRICS", "REFERENCE_METRICS"]


# --------------------------------------------------------------------------- names

# canonical name -> does it take a cutoff: "required", "optional" or "none"
_CUTOFF_RULE: Dict[str, str] = {
    "ndcg": "optional",
    "mrr": "optional",
    "recall": "required",
    "precision": "required",
    "map": "optional",
    "r-precision": "none",
    "hit": "required",
    "judged": "required",
    "ann_recall": "required",
}

#: Metrics scored against a reference run (the exact kNN top k), not against judgments.
REFERENCE_METRICS = ("ann_recall",)

_ALIASES: Dict[str, str] = {
    "p": "precision",
    "rprec": "r-precision",
    "success": "hit",
    # ir_measures spellings (matched case-insensitively): nDCG@10, RR@10, R@100, P@10, AP
    "rr": "mrr",
    "r": "recall",
    "ap": "map",
    # trec_eval measure names without a cutoff
    "recip_rank": "mrr",
}

# trec_eval names with the cutoff after an underscore: ndcg_cut_10, P_10, recall_100,
# map_cut_10, success_10 (trec_eval -m ndcg_cut.10 prints ndcg_cut_10)
_TREC_CUT_RE = re.compile(r"(ndcg_cut|map_cut|p|recall|success)_([0-9]+)")
_TREC_CUT: Dict[str, str] = {
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "p": "precision",
    "recall": "recall",
    "success": "hit",
}

#: The known metrics, as listed in error messages.
KNOWN_METRICS = (
    "ndcg[@k], mrr[@k] (rr, recip_rank), recall@k (r@k), precision@k (p@k), map[@k] (ap), "
    "r-precision (rprec), hit@k (success@k), judged@k, ann_recall@k (kNN retrievers on "
    "the engines); trec_eval names such as "
    "ndcg_cut_10, P_10, recall_100, map_cut_10"
)

_INT_RE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Metric:
    """A parsed metric: ``name`` is canonical (``"ndcg"``), ``k`` the cutoff or None.

    ``str(metric)`` is the canonical spelling used as key everywhere: ``ndcg@10``.
    """

    name: str
    k: Optional[int] = None

    def __post_init__(self) -> None:
        name = self.name.lower() if isinstance(self.name, str) else self.name
        name = _ALIASES.get(name, name)
        if name not in _CUTOFF_RULE:
            raise ValueError(_unknown_message(str(self.name)))
        object.__setattr__(self, "name", name)
        rule = _CUTOFF_RULE[name]
        if self.k is None:
            if rule == "required":
                raise ValueError(f"metric {name!r} needs a cutoff, e.g. {name}@10")
            return
        try:
            if isinstance(self.k, bool):
                raise TypeError
            k = operator.index(self.k)  # int, numpy integer; not float, not str
        except TypeError:
            raise ValueError(
                f"metric {name!r}: the cutoff k must be a positive integer, got {self.k!r}"
            ) from None
        if rule == "none":
            raise ValueError(f"metric {name!r} takes no cutoff (@k), got {name}@{k}")
        if k <= 0:
            raise ValueError(f"metric '{name}@{k}': the cutoff k must be a positive integer, got {k}")
        object.__setattr__(self, "k", k)

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"


def _unknown_message(text: str, name: Optional[str] = None) -> str:
    """One line: the unknown name, the closest known one, the known ones."""
    candidates = sorted(set(_CUTOFF_RULE) | set(_ALIASES))
    close = difflib.get_close_matches((name or text).lower(), candidates, n=1, cutoff=0.65)
    hint = f" (did you mean {_ALIASES.get(close[0], close[0])!r}?)" if close else ""
    return f"unknown metric {text!r}{hint}; known metrics: {KNOWN_METRICS}"


def parse_metric(text: Union[str, Metric]) -> Metric:
    """``"nDCG@10"`` -> ``Metric("ndcg", 10)``. Raises ``ValueError`` (one line).

    ir_measures and trec_eval spellings are aliases printed under the canonical name:
    ``nDCG@10``/``ndcg_cut_10`` -> ``ndcg@10``, ``RR@10`` -> ``mrr@10``, ``recip_rank`` ->
    ``mrr``, ``R@100``/``recall_100`` -> ``recall@100``, ``P@10``/``P_10`` ->
    ``precision@10``, ``AP`` -> ``map``, ``map_cut_10`` -> ``map@10``. The nDCG gain is the
    suite's ``evaluation.profile`` whatever the spelling (ir_measures and trec_eval use
    ``trec``: gain = grade)."""
    if isinstance(text, Metric):
        return text
    if not isinstance(text, str):
        raise ValueError(f"a metric is a string like 'ndcg@10', got {text!r}")
    spec = text.strip()
    trec = _TREC_CUT_RE.fullmatch(spec.lower())
    if trec:
        return Metric(_TREC_CUT[trec.group(1)], int(trec.group(2)))
    base, at, cutoff = spec.partition("@")
    name = base.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in _CUTOFF_RULE:
        raise ValueError(_unknown_message(spec, base.strip()))
    if not at:
        return Metric(name)
    cutoff = cutoff.strip()
    if not _INT_RE.fullmatch(cutoff):
        raise ValueError(f"metric {spec!r}: the cutoff k must be a positive integer, got {cutoff!r}")
    return Metric(name, int(cutoff))


# --------------------------------------------------------------------------- result


@dataclass
class Evaluation:
    """Scores of one run.

    ``per_query[str(metric)][qid]`` and ``aggregate[str(metric)]`` (arithmetic mean over
    ``evaluated``, unrounded; NaN when no query could be evaluated).

    * ``evaluated``: qrels queries with at least one grade > 0, in qrels order; the
      only queries in ``per_query`` and the averages.
    * ``missing``: evaluated queries absent from the run or with no hits; they score
      0 on every metric and count in the averages.
    * ``no_relevant``: qrels queries with no grade > 0; left out of the averages.
    * ``unjudged_queries``: run queries absent from the qrels; ignored.
    """

    metrics: Tuple[Metric, ...]
    per_query: Dict[str, Dict[str, float]]
    aggregate: Dict[str, float]
    evaluated: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    no_relevant: List[str] = field(default_factory=list)
    unjudged_queries: List[str] = field(default_factory=list)

    def worst(self, metric: Union[str, Metric], n: int = 5) -> List[Tuple[str, float]]:
        """The ``n`` lowest-scoring queries as ``(qid, value)``, lowest first; ties by qid."""
        key = str(parse_metric(metric))
        if key not in self.per_query:
            raise ValueError(f"metric {key!r} was not evaluated; evaluated: {', '.join(self.per_query)}")
        if n <= 0:
            return []
        items = sorted(self.per_query[key].items(), key=lambda kv: (kv[1], kv[0]))
        return items[:n]


# --------------------------------------------------------------------------- evaluate

_GAINS = ("exp", "linear")
_TIES = ("engine", "trec")


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Ranking],
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]],
    *,
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``metrics``.

    ``ties="engine"`` keeps each ranking's order as given; ``ties="trec"`` re-orders it
    as trec_eval does: score descending, then document id descending (trec_eval
    ``form_res_rels.c``: ``comp_sim_docno``). ``gain`` and ``relevance_threshold``: see
    the module docstring. Which queries count: see :class:`Evaluation`.
    """
    parsed = [
        m for m in _parse_options(metrics, gain, ties, relevance_threshold) if m.name not in REFERENCE_METRICS
    ]
    global np
    if np is None:
        import numpy as np

    # ---- which queries count
    evaluated: List[str] = []
    positives: List[List[int]] = []  # grades > 0 of each evaluated query
    no_relevant: List[str] = []
    for qid, judged in qrels.items():
        positive = [g for g in judged.values() if g > 0]
        if positive:
            evaluated.append(qid)
            positives.append(positive)
        else:
            no_relevant.append(qid)
    unjudged = [qid for qid in run if qid not in qrels]

    found = _Found.collect(qrels, run, parsed, evaluated, positives, ties == "trec", relevance_threshold)
    hits, ideal = found.arrays(ties == "trec", relevance_threshold)

    # ---- metrics, vectorised over all queries
    n_q = len(evaluated)
    per_query: Dict[str, Dict[str, float]] = {}
    aggregate: Dict[str, float] = {}
    for m in parsed:
        if m.name == "ndcg":
            values = _ndcg(hits, ideal, m.k, gain)
        else:
            values = _BINARY[m.name](hits, m.k)
        as_list = values.tolist()
        per_query[str(m)] = dict(zip(evaluated, as_list))
        aggregate[str(m)] = math.fsum(as_list) / n_q if n_q else math.nan

    return Evaluation(
        metrics=tuple(parsed),
        per_query=per_query,
        aggregate=aggregate,
        evaluated=evaluated,
        missing=found.missing,
        no_relevant=no_relevant,
        unjudged_queries=unjudged,
    )


def _parse_options(
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]], gain: str, ties: str, relevance_threshold: int
) -> List[Metric]:
    """The metrics parsed (repeats dropped); ``ValueError`` for a bad metric or option."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    parsed: List[Metric] = []
    for m in metrics:
        m = parse_metric(m)
        if m not in parsed:
            parsed.append(m)
    if not parsed:
        raise ValueError("no metrics to evaluate")
    if gain not in _GAINS:
        raise ValueError(f"gain must be one of {', '.join(_GAINS)}; got {gain!r}")
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {', '.join(_TIES)}; got {ties!r}")
    if (
        isinstance(relevance_threshold, bool)
        or not isinstance(relevance_threshold, int)
        or relevance_threshold < 1
    ):
        raise ValueError(f"relevance_threshold must be an integer >= 1, got {relevance_threshold!r}")
    return parsed


@dataclass
class _Found:
    """The judged docs found in every evaluated query's ranking, as flat (query, rank, grade),
    the ideal ranking of each query (nDCG only), R per query, and the evaluated queries with
    no ranking."""

    n_q: int
    hit_q: List[int] = field(default_factory=list)
    hit_rank: List[int] = field(default_factory=list)
    hit_grade: List[int] = field(default_factory=list)
    num_rel: List[int] = field(default_factory=list)
    ideal_q: List[int] = field(default_factory=list)
    ideal_rank: List[int] = field(default_factory=list)
    ideal_grade: List[int] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)

    @classmethod
    def collect(
        cls,
        qrels: Mapping[str, Mapping[str, int]],
        run: Mapping[str, Ranking],
        parsed: List[Metric],
        evaluated: List[str],
        positives: List[List[int]],
        trec: bool,
        relevance_threshold: int,
    ) -> _Found:
        # how deep each ranking must be read, and which docs must be found in it
        full_depth = any(m.k is None and m.name in ("ndcg", "mrr", "map") for m in parsed)
        fixed_depth = max((m.k for m in parsed if m.k is not None), default=0)
        wants_rprec = any(m.name == "r-precision" for m in parsed)
        wants_ndcg = any(m.name == "ndcg" for m in parsed)
        # Only judged@k needs docs graded <= 0; without it, look up the (fewer) docs > 0.
        wants_all_judged = any(m.name == "judged" for m in parsed)
        out = cls(len(evaluated))
        for qi, (qid, positive) in enumerate(zip(evaluated, positives)):
            n_rel = len([g for g in positive if g >= relevance_threshold])
            out.num_rel.append(n_rel)
            if wants_ndcg:
                positive.sort(reverse=True)
                out.ideal_q.extend([qi] * len(positive))
                out.ideal_rank.extend(range(len(positive)))
                out.ideal_grade.extend(positive)
            ranking = run.get(qid)
            if ranking is None or len(ranking.doc_ids) == 0:
                out.missing.append(qid)
                continue
            if full_depth:
                depth = len(ranking.doc_ids)
            else:
                depth = max(fixed_depth, n_rel) if wants_rprec else fixed_depth
            ranks, grades = _judged_hits(
                ranking.doc_ids,
                ranking.scores if trec else None,
                qrels[qid],
                depth,
                positive_only=not wants_all_judged,
            )
            if ranks:
                out.hit_q.extend([qi] * len(ranks))
                out.hit_rank.extend(ranks)
                out.hit_grade.extend(grades)
        return out

    def arrays(self, trec: bool, relevance_threshold: int) -> Tuple[_Hits, Tuple[Any, Any, Any]]:
        """(the hits sorted by (query, rank), the ideal rankings as (query, rank, grade) arrays)."""
        q = np.asarray(self.hit_q, dtype=np.intp)
        r = np.asarray(self.hit_rank, dtype=np.intp)
        g = np.asarray(self.hit_grade, dtype=np.float64)
        if trec and len(q):  # tie-breaking may have swapped ranks inside a query
            order = np.lexsort((r, q))
            q, r, g = q[order], r[order], g[order]
        hits = _Hits(q, r, g, self.n_q, np.asarray(self.num_rel, dtype=np.float64), relevance_threshold)
        ideal = (
            np.asarray(self.ideal_q, dtype=np.intp),
            np.asarray(self.ideal_rank, dtype=np.intp),
            np.asarray(self.ideal_grade, dtype=np.float64),
        )
        return hits, ideal


# --------------------------------------------------------------------------- one ranking


def _judged_hits(
    doc_ids: Sequence[str],
    scores: Optional[Sequence[float]],
    judged: Mapping[str, int],
    depth: int,
    positive_only: bool = False,
    unique: bool = False,
) -> Tuple[List[int], List[int]]:
    """Ranks (0-based) and grades of the judged docs ranked above ``depth`` (only
    those graded > 0 with ``positive_only``: no metric but judged@k needs the others).

    ``scores is None``: the ranking's own order. Otherwise trec_eval's order (score
    descending, then doc id descending). Duplicated ids keep their first occurrence.
    The result may also hold a few ranks >= depth (docs tied at the boundary); the
    metrics cut by rank themselves.

    Hot path. Per ranking: one ``set`` (finds repeats, and the judged docs present by
    intersecting with the few judged ids), ``sorted`` to check the score order, then
    ``list.index`` per judged doc found. All C-level; Python runs per judged doc only.
    """
    n = len(doc_ids)
    if depth <= 0:
        return [], []
    if scores is not None and not _non_increasing(scores):
        # Rare: the engine did not return its hits by descending score. Sort like
        # trec_eval; the tuple order (score, doc id) reversed is exactly comp_sim_docno.
        if not unique and len(set(doc_ids)) != n:
            doc_ids, scores = _first_occurrences(doc_ids, scores)
        ordered = sorted(zip(scores, doc_ids), reverse=True)
        return _judged_hits([d for _, d in ordered], None, judged, depth, positive_only, unique=True)

    # Only the head of the ranking can reach the top `depth`; with sorted scores a
    # doc's trec rank stays inside its tie group, so the head ends with a whole group.
    if depth >= n:
        end = n
    elif scores is None:
        end = depth
    else:
        end = _group_end(scores, depth - 1)
    head = doc_ids if end == n else doc_ids[:end]
    present = set(head)
    if not unique and len(present) != end:
        # A repeated id moves the docs after it up a rank (and may pull a doc from
        # below the head into it): drop the repeats and start again.
        doc_ids, scores = _first_occurrences(doc_ids, scores)
        return _judged_hits(doc_ids, scores, judged, depth, positive_only, unique=True)
    found = present.intersection(judged)
    if positive_only and found:
        found = {d for d in found if judged[d] > 0}
    if not found:
        return [], []
    positions = _positions(head, found)
    grades = [judged[head[p]] for p in positions]
    if scores is None:
        return positions, grades
    return [_trec_rank(doc_ids, scores, p) for p in positions], grades


def _positions(ids: Sequence[str], found: set) -> List[int]:
    """Sorted positions in ``ids`` (no repeats) of the ids in ``found``."""
    if len(found) <= 5:
        # One list.index scan per doc (~half the ranking each, at C speed).
        return sorted(map(ids.index, found))
    # Many: one pass to get them in ranking order, then one index scan for all.
    index = ids.index
    out: List[int] = []
    p = -1
    for d in filter(found.__contains__, ids):
        p = index(d, p + 1)
        out.append(p)
    return out


def _non_increasing(scores: Sequence[float]) -> bool:
    # sorted() on an already ordered list is one C-level pass (timsort finds the run),
    # and == then meets the very same objects (identity short-cut).
    return sorted(scores, reverse=True) == (scores if isinstance(scores, list) else list(scores))


def _group_end(scores: Sequence[float], p: int) -> int:
    """End (exclusive) of the run of scores equal to scores[p] in a non-increasing list."""
    s = scores[p]
    if p + 1 == len(scores) or scores[p + 1] != s:
        return p + 1
    return bisect_right(scores, -s, lo=p, key=neg)


def _trec_rank(doc_ids: Sequence[str], scores: Sequence[float], p: int) -> int:
    """trec_eval rank of the doc at position p of a score-sorted, duplicate-free list."""
    s = scores[p]
    n = len(scores)
    if (p == 0 or scores[p - 1] != s) and (p + 1 == n or scores[p + 1] != s):
        return p  # no tie
    lo = bisect_left(scores, -s, hi=p, key=neg)
    hi = _group_end(scores, p)
    d = doc_ids[p]
    # Inside a tie group trec_eval puts the larger doc id first (strcmp on UTF-8 bytes
    # orders like Python's code-point comparison of str).
    return lo + sum(1 for j in range(lo, hi) if doc_ids[j] > d)


def _first_occurrences(doc_ids: Sequence[str], scores: Optional[Sequence[float]]):
    """Drop repeated doc ids, keeping each id's first occurrence (and its score)."""
    seen = set()
    keep = []
    for i, d in enumerate(doc_ids):
        if d not in seen:
            seen.add(d)
            keep.append(i)
    ids = [doc_ids[i] for i in keep]
    return ids, (None if scores is None else [scores[i] for i in keep])


# --------------------------------------------------------------------------- formulas


class _Hits:
    """Judged docs found in the rankings, sorted by (query, rank), plus per-query R."""

    def __init__(self, q, r, g, n_q, num_rel, threshold):
        self.q, self.r, self.g = q, r, g
        self.n_q = n_q
        self.num_rel = num_rel
        self.rel = g >= threshold

    def cut(self, k: Optional[int]) -> np.ndarray:
        return np.ones(len(self.r), dtype=bool) if k is None else self.r < k

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.q[mask], minlength=self.n_q).astype(np.float64)

    def per_rel(self, values: np.ndarray) -> np.ndarray:
        """values / R, 0 where R = 0 (threshold above every grade of the query)."""
        out = np.zeros(self.n_q)
        np.divide(values, self.num_rel, out=out, where=self.num_rel > 0)
        return out


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    return np.exp2(grades) - 1.0 if gain == "exp" else grades


def _ndcg(h: _Hits, ideal, k: Optional[int], gain: str) -> np.ndarray:
    mask = (h.g > 0) & h.cut(k)
    r = h.r[mask]
    dcg = np.bincount(h.q[mask], weights=_gain(h.g[mask], gain) / np.log2(r + 2.0), minlength=h.n_q)
    iq, ir, ig = ideal
    imask = slice(None) if k is None else ir < k
    idcg = np.bincount(iq[imask], weights=_gain(ig[imask], gain) / np.log2(ir[imask] + 2.0), minlength=h.n_q)
    out = np.zeros(h.n_q)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def _mrr(h: _Hits, k: Optional[int]) -> np.ndarray:
    mask = h.rel & h.cut(k)
    q, r = h.q[mask], h.r[mask]
    out = np.zeros(h.n_q)
    queries, first = np.unique(q, return_index=True)  # q is sorted: first = best rank
    out[queries] = 1.0 / (r[first] + 1.0)
    return out


def _recall(h: _Hits, k: int) -> np.ndarray:
    return h.per_rel(h.count(h.rel & h.cut(k)))


def _precision(h: _Hits, k: int) -> np.ndarray:
    return h.count(h.rel & h.cut(k)) / k


def _hit(h: _Hits, k: int) -> np.ndarray:
    return (h.count(h.rel & h.cut(k)) > 0).astype(np.float64)


def _judged(h: _Hits, k: int) -> np.ndarray:
    return h.count(h.cut(k)) / k


def _map(h: _Hits, k: Optional[int]) -> np.ndarray:
    mask = h.rel & h.cut(k)
    q, r = h.q[mask], h.r[mask]
    # i-th relevant doc of its query (1-based) = position - first position of the query
    nth = np.arange(1, len(q) + 1) - np.searchsorted(q, q, side="left")
    return h.per_rel(np.bincount(q, weights=nth / (r + 1.0), minlength=h.n_q))


def _r_precision(h: _Hits, k: None) -> np.ndarray:
    mask = h.rel & (h.r < h.num_rel[h.q])
    return h.per_rel(h.count(mask))


_BINARY: Dict[str, Callable[[_Hits, Any], np.ndarray]] = {
    "mrr": _mrr,
    "recall": _recall,
    "precision": _precision,
    "hit": _hit,
    "judged": _judged,
    "map": _map,
    "r-precision": _r_precision,
}
