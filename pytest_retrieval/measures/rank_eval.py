"""The engines' own ``_rank_eval`` API beside the plugin's measures (pure: no I/O).

Which of the plugin's measures ``_rank_eval`` also computes, the metric and the ratings a
request carries, and how its per-query answer maps onto the plugin's value. The definitions,
read in OpenSearch's module (``modules/rank-eval``, ``org.opensearch.index.rankeval``: the
same classes as Elasticsearch's, forked at 7.10), and where they differ from the plugin's
(``docs/how-to/rank-eval.md`` has the table):

* hits and ratings are joined on (``_index``, ``_id``) (``EvaluationMetric.joinHitsWithRatings``):
  a rating names the concrete index the hit comes from, not an alias;
* every metric fetches exactly ``k`` hits (``forcedSearchSize``) and keeps the engine's order
  (score, then the shard's document order): the plugin's ``ties: engine``;
* ``precision`` (``PrecisionAtK``): relevant retrieved / hits returned (``ignore_unlabeled:
  false`` counts unrated hits as retrieved, as the plugin counts unjudged documents as
  non-relevant), where the plugin divides by ``k`` (trec_eval ``P_k``, a short ranking padded):
  the plugin's value is ``relevant_docs_retrieved / k`` of its detail;
* ``recall`` (``RecallAtK``), ``mean_reciprocal_rank`` (``MeanReciprocalRank``): a rating
  ``>= relevant_rating_threshold`` is relevant, the plugin's ``judgments.relevance_threshold``;
  equal values;
* ``dcg`` with ``normalize: true`` (``DiscountedCumulativeGain``): gain ``2^rating - 1`` over
  ``log2(rank + 1)``, unrated hits gain 0 (no ``unknown_doc_rating``), as the plugin's nDCG under
  profile ``exp``; the ideal DCG is cut at the hits returned where the plugin's is cut at ``k``:
  the plugin's value is the detail's ``dcg`` over the ideal DCG at ``k``. Profile ``trec``
  (linear gain) and ``judgments.gains`` have no ``_rank_eval`` form;
* ``expected_reciprocal_rank`` (``ExpectedReciprocalRank``): ``R = (2^rating - 1) /
  2^maximum_relevance``, ``maximum_relevance`` required; the plugin's gmax is the highest grade
  of the judgments, sent as ``maximum_relevance``;
* a rating is a non-negative int there: a negative grade (judged non-relevant here) is sent as
  0, which every measure above treats the same (``2^-1 - 1`` would be a negative gain);
* ``ndcg'`` (judged documents only) and a measure without ``@k`` have no ``_rank_eval`` form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "MEASURES",
    "RankEvalOptions",
    "metric_body",
    "ratings",
    "request_body",
    "plugin_value",
    "ranked_ids",
    "ideal_dcg",
    "SEARCH_KEYS_REFUSED",
]

#: the plugin's measure -> ``_rank_eval``'s metric
MEASURES: Dict[str, str] = {
    "precision": "precision",
    "recall": "recall",
    "mrr": "mean_reciprocal_rank",
    "ndcg": "dcg",
    "err": "expected_reciprocal_rank",
}

#: the parts of a search body ``_rank_eval`` refuses (``RatedRequest.validateEvaluatedQuery``)
#: or sets itself (``size``: the metric's ``k``)
SEARCH_KEYS_REFUSED = ("aggs", "aggregations", "suggest", "highlight")


@dataclass(frozen=True)
class RankEvalOptions:
    """How the suite scores (``Suite.scoring()``) and the highest grade of its judgments."""

    relevance_threshold: int = 1
    gain: str = "exp"
    max_grade: int = 1
    custom_gains: bool = False  # judgments.gains: a per-grade nDCG gain


def metric_body(metric: Any, options: RankEvalOptions) -> Tuple[Optional[Dict[str, Any]], str]:
    """(the ``metric`` object of a ``_rank_eval`` request for ``metric`` (a parsed
    ``measures.metrics.Metric``), why there is none): one of the two is empty."""
    why = _no_form(metric, options)
    if why:
        return None, why
    k, t = metric.k, max(0, int(options.relevance_threshold))
    bodies: Dict[str, Dict[str, Any]] = {
        "precision": {"precision": {"k": k, "relevant_rating_threshold": t, "ignore_unlabeled": False}},
        "recall": {"recall": {"k": k, "relevant_rating_threshold": t}},
        "mrr": {"mean_reciprocal_rank": {"k": k, "relevant_rating_threshold": t}},
        "ndcg": {"dcg": {"k": k, "normalize": True}},
        "err": {"expected_reciprocal_rank": {"k": k, "maximum_relevance": int(options.max_grade)}},
    }
    return bodies[metric.name], ""


def _no_form(metric: Any, options: RankEvalOptions) -> str:
    """Why ``metric`` has no ``_rank_eval`` form under ``options``, or ''."""
    name = metric.name
    if name not in MEASURES:
        return f"{metric}: _rank_eval has no such measure"
    if metric.k is None:
        return f"{metric}: _rank_eval always cuts at k (name one, e.g. {name}@10)"
    if metric.condensed:
        return f"{metric}: _rank_eval has no judged-documents-only form"
    if name == "ndcg" and (options.gain != "exp" or options.custom_gains):
        why = "judgments.gains" if options.custom_gains else "profile trec (linear gain)"
        return f"{metric}: _rank_eval's dcg has the gain 2^rating - 1 only, not {why}"
    if name == "err" and options.max_grade < 1:
        return f"{metric}: no grade above 0 in the judgments (ERR's maximum_relevance)"
    return ""


def ratings(index: str, grades: Mapping[str, int]) -> List[Dict[str, Any]]:
    """A query's judgments as ``_rank_eval`` ratings on ``index`` (negative grades sent as 0)."""
    return [{"_index": index, "_id": d, "rating": max(0, int(g))} for d, g in grades.items()]


def request_body(
    requests: Sequence[Tuple[str, Mapping[str, Any], Mapping[str, int]]], index: str, metric: Dict[str, Any]
) -> Dict[str, Any]:
    """The ``_rank_eval`` body of ``requests`` (query id, search body, grades) for one metric.
    The search body goes as it is, but for ``size`` (the metric's ``k`` wins)."""
    return {
        "requests": [
            {
                "id": qid,
                "request": {key: v for key, v in body.items() if key != "size"},
                "ratings": ratings(index, grades),
            }
            for qid, body, grades in requests
        ],
        "metric": metric,
    }


def ranked_ids(detail: Mapping[str, Any]) -> List[str]:
    """The document ids of one query's ``details.<id>.hits``, in the engine's order."""
    return [str((h.get("hit") or {}).get("_id")) for h in detail.get("hits") or () if isinstance(h, Mapping)]


def ideal_dcg(grades: Mapping[str, int], k: int) -> float:
    """The ideal DCG at ``k`` with the gain ``2^g - 1`` (the plugin's, profile ``exp``)."""
    best = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum((2.0**g - 1.0) / math.log2(i + 2) for i, g in enumerate(best))


def plugin_value(metric: Any, detail: Mapping[str, Any], grades: Mapping[str, int]) -> Optional[float]:
    """The plugin's value of ``metric`` for one query, from ``_rank_eval``'s answer for it
    (``details.<id>``); None when the answer lacks what the mapping needs."""
    score = detail.get("metric_score")
    details = detail.get("metric_details") or {}
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        return None
    k = int(metric.k)
    if metric.name == "precision":
        found = _detail_number(details, "precision", "relevant_docs_retrieved")
        return None if found is None else found / k  # _rank_eval divides by the hits returned
    if metric.name == "ndcg":
        dcg = _detail_number(details, "dcg", "dcg")
        if dcg is None:
            return None
        ideal = ideal_dcg(grades, k)  # _rank_eval's ideal stops at the hits returned
        return dcg / ideal if ideal > 0 else 0.0
    return float(score)


def _detail_number(details: Mapping[str, Any], metric: str, key: str) -> Optional[float]:
    value = (details.get(metric) or {}).get(key) if isinstance(details.get(metric), Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
