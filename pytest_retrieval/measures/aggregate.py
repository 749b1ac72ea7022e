"""Which queries a metric is averaged over, and the average: one mechanism for every mean
of per-query metric values (``evaluate``, ``ann_recall@k``, ``pytest-retrieval evaluate``,
the terminal summary's note).

Every query of the qrels is scored (:func:`.metrics.evaluate_columns`); ``average_over``
decides which of them make the mean (``Evaluation.evaluated``):

* ``relevant`` (the plugin's default under ``profile: exp``): the queries with a relevant
  judgment (a grade > 0, or >= the relevance threshold when it is 0); a query absent from the
  run or with no hits scores 0 and counts. A query judged without a relevant document is left
  out: every metric but judged@k is 0 for it whatever the ranking, so it only dilutes the mean.
* ``judged`` (trec_eval ``-c``, ``--complete_rel_info_wanted``): every query of the qrels; one
  absent from the run scores 0 and counts (trec_eval 9.0.8 ``meas_avg.c``: the sums are
  divided by ``num_q_rels``, the number of qrels topics, which ``num_q`` prints).
* ``run`` (trec_eval's default, pytrec_eval, BEIR; the default under ``profile: trec``): the
  queries both judged and in the run (trec_eval 9.0.8 ``trec_eval.c`` loops over the run's
  topics and skips those without qrels); a judged query without a relevant document counts
  (as 0 on the usual measures). A query in an in-memory run with an empty ranking is in the
  run (pytrec_eval scores it 0); a file cannot hold one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "AVERAGE_OVER",
    "average_over_of",
    "default_average_over",
    "check_average_over",
    "averaged",
    "mean",
    "averaging_note",
    "averaging_note_of",
]

AVERAGE_OVER = ("relevant", "judged", "run")


def default_average_over(profile: str) -> str:
    """``run`` (trec_eval's default) under ``profile: trec``, else ``relevant``."""
    return "run" if profile == "trec" else "relevant"


def average_over_of(evaluation: Any) -> str:
    """A suite's ``evaluation.average_over``, its default resolved from ``evaluation.profile``."""
    return evaluation.average_over or default_average_over(evaluation.profile)


def check_average_over(value: Any) -> str:
    if value not in AVERAGE_OVER:
        raise ValueError(f"average_over must be one of {', '.join(AVERAGE_OVER)}; got {value!r}")
    return value


def averaged(mode: str, has_relevant: np.ndarray, in_run: np.ndarray) -> np.ndarray:
    """The scored queries averaged under ``mode`` (a boolean mask over them)."""
    import numpy as np

    if mode == "relevant":
        return has_relevant.copy()
    if mode == "run":
        return in_run.copy()
    return np.ones(len(has_relevant), dtype=bool)


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean (``math.fsum``: exactly rounded), NaN for no values."""
    values = list(values)
    return math.fsum(values) / len(values) if values else math.nan


def averaging_note(ev: Any, default: Optional[str] = None) -> str:
    """One line: over which of the judged queries the means were taken, and why the others
    were not (or why some count as 0). Empty when every judged query is averaged from a
    ranking of its own and ``average_over`` is ``default``."""
    return averaging_note_of(
        ev.average_over, len(ev.evaluated), ev.judged, ev.no_relevant, ev.not_in_run, default=default
    )


def averaging_note_of(
    mode: str,
    n: int,
    judged: int,
    no_relevant: Sequence[str],
    not_in_run: Iterable[str],
    default: Optional[str] = None,
) -> str:
    """:func:`averaging_note` from the values the JSON report keeps (``queries``: the mode, the
    queries averaged, those judged, those without a relevant judgment; a retriever's
    ``queries_not_in_run``), so the terminal summary renders it from the report."""
    parts = _reasons(mode, no_relevant, not_in_run)
    if not parts and mode == default:
        return ""
    head = (
        f"averaged over all {n} judged queries"
        if n == judged
        else f"averaged over {n} of {judged} judged queries"
    )
    return head + (": " + ", ".join(parts) if parts else "") + f" (average_over: {mode}{_like(mode)})"


def _reasons(mode: str, no_rel: Sequence[str], not_in_run: Iterable[str]) -> List[str]:
    """Why queries were left out of the means, or count as 0 there."""
    parts: List[str] = []
    if no_rel:
        how = "left out" if mode == "relevant" else "averaged in (as 0)"
        parts.append(f"{len(no_rel)} judged without a relevant document {how}")
    skipped = set(no_rel) if mode == "relevant" else set()
    absent = [q for q in not_in_run if q not in skipped]
    if absent:
        parts.append(f"{len(absent)} absent from the run " + ("left out" if mode == "run" else "scored 0"))
    return parts


def _like(mode: str) -> str:
    return {"judged": ", as trec_eval -c", "run": ", as trec_eval, pytrec_eval and BEIR"}.get(mode, "")
