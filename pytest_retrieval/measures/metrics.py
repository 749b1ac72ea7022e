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
import operator
import re
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Union,
)

from ..types import Ranking

if TYPE_CHECKING:
    import numpy as np

    from .columnar import QrelsColumns, RunColumns
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
    qrels: Union[Mapping[str, Mapping[str, int]], QrelsColumns],
    run: Union[Mapping[str, Ranking], RunColumns, Iterable[RunColumns]],
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]],
    *,
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``metrics``.

    ``ties="engine"`` keeps each ranking's order as given; ``ties="trec"`` re-orders it
    as trec_eval does: score descending, then document id descending (trec_eval
    ``form_res_rels.c``: ``comp_sim_docno``), scores compared as 32-bit floats as trec_eval
    9.x and pytrec_eval do (see :mod:`~pytest_retrieval.measures.columnar`). ``gain`` and
    ``relevance_threshold``: see the module docstring. Which queries count: see
    :class:`Evaluation`.

    ``qrels`` and ``run`` may also be :class:`~pytest_retrieval.measures.columnar.QrelsColumns`
    and :class:`~pytest_retrieval.measures.columnar.RunColumns` built beforehand (the run
    built against those qrels, with the same ``ties``), or an iterable of ``RunColumns``
    batches (each query in one batch): nothing is converted then.
    """
    parsed = [
        m for m in _parse_options(metrics, gain, ties, relevance_threshold) if m.name not in REFERENCE_METRICS
    ]
    from .columnar import QrelsColumns, RunColumns, evaluate_columns

    # Columns (measures/columnar.py): qrels keyed by one document dictionary, the run's
    # judged hits found per ranking at C level, every metric vectorised over all queries.
    qc = qrels if isinstance(qrels, QrelsColumns) else QrelsColumns.from_qrels(qrels)
    batches: Iterable[RunColumns]
    if isinstance(run, RunColumns):
        batches = [run]
    elif isinstance(run, Mapping):
        positive_only = not any(m.name == "judged" for m in parsed)
        batches = [RunColumns.from_run(run, qc, ties=ties, positive_only=positive_only)]
    else:  # batches of columns, each query in one batch (suite.runfiles streams a file so)
        batches = run
    return evaluate_columns(
        qc, batches, parsed, gain=gain, ties=ties, relevance_threshold=relevance_threshold
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
