"""Declaring gates: what a floor or a baseline gate measures, its kind and its parameters, and the
suite file's ``floors`` block parsed into them (pure, no I/O). Judging them is :mod:`.verdicts`."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

__all__ = [
    "GateKind",
    "Floor",
    "BaselineGate",
    "ReferenceGate",
    "kind_of",
    "percentile_of",
    "lifted_of",
    "floor_key",
    "parse_floors",
    "ab_percentiles",
]

_LIFT = "lift@"
LATENCY_KEYS = ("p50_ms", "p95_ms", "p99_ms")
# pXX(retriever) / pXX(latency.baseline), timed interleaved in the same job (A/B)
LATENCY_RATIO_KEYS = ("p50_ratio", "p95_ratio", "p99_ratio")
# a sparse retriever's cost (issue #25): mean non-zero terms per document / per query, and the
# expected FLOPS per query (sparse.weights): value <= ceiling
SPARSE_KEYS = ("sparse_doc_nnz", "sparse_query_nnz", "flops")


class GateKind(str, Enum):
    """What a gate checks, and so how it is measured and compared."""

    QUALITY = "quality"  # a retrieval metric (ndcg@10, recall@100[tag], ...): value >= floor
    LATENCY = "latency"  # p50_ms / p95_ms / p99_ms: value <= ceiling, judged on its interval
    LATENCY_RATIO = "latency_ratio"  # p50/p95/p99_ratio against latency.baseline (A/B): <= ceiling
    LIFT = "lift"  # lift@metric: a stage's value minus its best input's: >= floor
    ABSTENTION = "abstention"  # share of unanswerable queries abstained on: >= floor
    SPARSE = "sparse"  # sparse_doc_nnz / sparse_query_nnz / flops of a sparse leaf: <= ceiling
    BASELINE = "baseline"  # per-query non-inferiority against the committed baseline


def kind_of(metric: str) -> GateKind:
    """The kind of a canonical floor key (``p95_ms``, ``p95_ratio``, ``lift@ndcg@10``,
    ``abstention`` or a retrieval metric). A latency key ends in ``_ms``, a ratio in ``_ratio``."""
    if metric.endswith("_ms"):
        return GateKind.LATENCY
    if metric.endswith("_ratio"):
        return GateKind.LATENCY_RATIO
    if metric.startswith(_LIFT):
        return GateKind.LIFT
    if metric == "abstention":
        return GateKind.ABSTENTION
    if metric in SPARSE_KEYS:
        return GateKind.SPARSE
    return GateKind.QUALITY


def percentile_of(metric: str) -> int:
    """``p95_ms`` / ``p95_ratio`` -> 95."""
    return int(metric[1:3])


def lifted_of(metric: str) -> str:
    """``lift@ndcg@10`` -> ``ndcg@10``."""
    return metric[len(_LIFT) :]


@dataclass(frozen=True)
class Floor:
    retriever: str
    metric: str  # canonical key: a metric, p95_ms, p95_ratio, lift@ndcg@10 or abstention
    op: str  # ">=" or "<="
    threshold: float
    origin: str = ""  # "file:line" where the floor was written
    stratum: Optional[str] = None  # a query tag: the floor holds on that stratum's mean
    team: str = ""  # the team threshold file's team (config/teams.py); "" for the suite's own
    owners: Tuple[str, ...] = ()  # who answers for its failure (CODEOWNERS names)
    mention: bool = False  # the Markdown comment writes the owners as live @mentions
    lowered: str = ""  # "0.75 at file:line": the stricter value a later file replaced

    @property
    def label(self) -> str:
        """``team :: retriever :: name`` (the team's only for a team floor), as messages head it."""
        return (
            f"{self.team} :: {self.retriever} :: {self.name}"
            if self.team
            else f"{self.retriever} :: {self.name}"
        )

    @property
    def name(self) -> str:
        return f"{self.metric}[{self.stratum}]" if self.stratum else self.metric

    @property
    def kind(self) -> GateKind:
        return kind_of(self.metric)

    @property
    def percentile(self) -> int:
        """50, 95 or 99 for latency and latency-ratio floors (``p95_ms`` -> 95)."""
        if self.kind not in (GateKind.LATENCY, GateKind.LATENCY_RATIO):
            raise ValueError(f"{self.metric} is not a latency floor")
        return percentile_of(self.metric)

    @property
    def lifted_metric(self) -> str:
        """``lift@ndcg@10`` -> ``ndcg@10``."""
        return lifted_of(self.metric)


class BaselineGate(NamedTuple):
    """A metric of a retriever that must not drop by more than ``max_drop`` against the
    committed baseline (the suite file's ``regression`` block)."""

    retriever: str
    metric: str
    max_drop: float
    origin: str = ""  # "file:line" where the max_drop was written
    team: str = ""  # a team threshold file's team (config/teams.py); "" for the suite's own
    owners: Tuple[str, ...] = ()  # who answers for its failure (CODEOWNERS names)
    mention: bool = False  # the Markdown comment writes the owners as live @mentions

    @property
    def kind(self) -> GateKind:
        return GateKind.BASELINE

    @property
    def name(self) -> str:
        return f"baseline:{self.metric}"


class ReferenceGate(NamedTuple):
    """A metric of a retriever that must not have dropped by more than ``max_drop`` (the suite's
    ``regression.reference.max_total_drop``) since the pinned reference run of the history."""

    retriever: str
    metric: str
    max_drop: float

    @property
    def kind(self) -> GateKind:
        return GateKind.BASELINE

    @property
    def name(self) -> str:
        return f"reference:{self.metric}"


def ab_percentiles(floors: List[Floor], retriever: str) -> List[int]:
    """The percentiles a retriever's A/B latency is reported at: those of its ratio floors
    (95 when it has none)."""
    gated = {f.percentile for f in floors if f.retriever == retriever and f.kind is GateKind.LATENCY_RATIO}
    return sorted(gated) or [95]


def floor_key(key: str) -> Tuple[str, str, Optional[str]]:
    """A floor's metric key -> (canonical key, op, stratum). ``p95_ms`` (<=), ``ndcg@10`` (>=),
    ``lift@ndcg@10`` (>=: the stage's value minus its best input's), ``ndcg@10[multi-hop]``
    (>=, on the queries tagged ``multi-hop`` only)."""
    from ..measures.metrics import gate_problem, parse_metric

    stratum = None
    if key.endswith("]") and "[" in key:
        key, _, stratum = key[:-1].partition("[")
        if not stratum.strip():
            raise ValueError("empty stratum in [...]: write metric[tag]")
        stratum = stratum.strip()
    if key in LATENCY_KEYS or key in LATENCY_RATIO_KEYS or key in SPARSE_KEYS:
        return key, "<=", stratum
    if key == "abstention":  # share of unanswerable queries the retriever abstained on
        return key, ">=", stratum
    lift = key.lower().startswith(_LIFT)
    metric = parse_metric(key[len(_LIFT) :] if lift else key)
    problem = gate_problem(metric)
    if problem:
        raise ValueError(problem)
    return (_LIFT if lift else "") + str(metric), ">=", stratum


# ------------------------------------------------------------------ the floors block


def parse_floors(
    model: Any, suite: Any, metrics: List[str], *, floors: Optional[Dict[str, Any]] = None
) -> List[Floor]:
    """The suite file's ``floors`` block (or a team file's, ``floors``; ``suite`` then answers
    ``error`` and ``positions`` for that file) -> typed floors (every mistake a one-line
    ConfigError). Metrics a floor needs are appended to ``metrics``."""
    parsed: List[Floor] = []
    for r_name, per_metric in (model.floors if floors is None else floors).items():
        if r_name not in model.retrievers:
            close = difflib.get_close_matches(r_name, list(model.retrievers), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise suite.error(("floors", r_name), f"floor for unknown retriever {r_name!r}{hint}")
        if not per_metric:
            raise suite.error(("floors", r_name), "no metric floors listed")
        seen: Dict[Tuple[str, Optional[str]], Any] = {}  # (canonical metric, stratum) -> the key that set it
        for m, value in per_metric.items():
            floor = _parse_floor(model, suite, metrics, r_name, m, value)
            if (floor.metric, floor.stratum) in seen:
                raise suite.error(
                    ("floors", r_name, m),
                    f"{m!r} and {seen[floor.metric, floor.stratum]!r} are the same floor ({floor.metric}): keep one",
                )
            seen[floor.metric, floor.stratum] = m
            parsed.append(floor)
    return parsed


def _parse_floor(model: Any, suite: Any, metrics: List[str], r_name: str, m: Any, value: Any) -> Floor:
    from ..config.yamlio import locate

    key = ("floors", r_name, m)
    if isinstance(value, bool) or not math.isfinite(value):
        raise suite.error(key, f"a floor is a finite number, got {value!r}")
    try:
        canon, op, stratum = floor_key(str(m))
    except ValueError as exc:
        raise suite.error(key, str(exc)) from None
    kind = kind_of(canon)
    if stratum and kind is not GateKind.QUALITY:
        raise suite.error(
            key, "latency, lift and sparse cost floors hold for the whole suite, not per stratum"
        )
    _CHECKS[kind](model, suite, key, r_name, canon, value)
    needed = _metric_needed(kind, canon)
    if needed is not None and needed not in metrics:
        metrics.append(needed)
    file, line = locate(suite.positions, key)
    return Floor(r_name, canon, op, float(value), origin=f"{file}:{line}" if file else "", stratum=stratum)


def _metric_needed(kind: GateKind, canon: str) -> Optional[str]:
    """The retrieval metric a floor needs evaluated: its own, or the one a lift is of."""
    if kind is GateKind.QUALITY:
        return canon
    return lifted_of(canon) if kind is GateKind.LIFT else None


_Key = Tuple[Any, ...]


def _check_abstention(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    if model.unanswerable is None:
        raise suite.error(
            key,
            "an abstention floor needs an 'unanswerable' section (which tag marks unanswerable queries)",
        )
    if not 0.0 <= float(value) <= 1.0:
        raise suite.error(key, f"abstention is a rate in [0, 1]; got {value!r}")


def _check_ratio(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    base = model.latency.baseline
    if not model.latency.enabled:
        raise suite.error(key, "latency ratio given but latency.enabled is false")
    if base is None:
        raise suite.error(
            key,
            f"{canon} compares with an A/B baseline: name it in latency.baseline (a retriever of this suite)",
        )
    if base == r_name:
        raise suite.error(key, f"{r_name!r} is latency.baseline itself: its ratio is 1")
    if value <= 0:
        raise suite.error(key, f"a latency ratio must be > 0, got {value!r}")


def _check_latency(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    if value <= 0:
        raise suite.error(key, f"latency floor must be > 0 ms, got {value!r}")
    if not model.latency.enabled:
        raise suite.error(key, "latency floor given but latency.enabled is false")


def _check_lift(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    retriever = model.retrievers[r_name]
    if not getattr(retriever, "of", None):
        raise suite.error(
            key,
            f"{canon} needs a retriever built on others (with 'of'); {r_name!r} is a {retriever.type} leaf",
        )
    if not -1.0 <= float(value) <= 1.0:
        raise suite.error(key, f"a lift lies in [-1, 1]; floor {value!r} can never be met")


def _check_quality(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    if canon.startswith("ann_recall@"):
        _check_ann_recall(model, suite, key, r_name, canon)
    if not 0.0 <= float(value) <= 1.0:
        raise suite.error(
            key,
            f"{canon} lies in [0, 1]; floor {value!r} can never be met"
            if value > 1
            else f"floor {value!r} is below 0",
        )


def _check_ann_recall(model: Any, suite: Any, key: _Key, r_name: str, canon: str) -> None:
    """ann_recall@k compares a kNN retriever's approximate (HNSW) top k with the exact one:
    only a knn retriever on an engine has both."""
    kind = model.retrievers[r_name].type
    if kind != "knn":
        raise suite.error(
            key, f"{canon} measures a knn retriever's HNSW search; {r_name!r} is a {kind} retriever"
        )
    if model.backend.type == "embedded":
        raise suite.error(
            key, f"{canon} needs an elasticsearch or opensearch backend (the embedded engine's kNN is exact)"
        )


def _check_sparse(model: Any, suite: Any, key: _Key, r_name: str, canon: str, value: Any) -> None:
    kind = model.retrievers[r_name].type
    if kind != "sparse":
        raise suite.error(
            key, f"{canon} measures a sparse retriever's vectors; {r_name!r} is a {kind} retriever"
        )
    if value < 0:
        raise suite.error(
            key, f"{canon} is a count or an expectation, >= 0; ceiling {value:g} can never be met"
        )


_CHECKS: Dict[GateKind, Callable[[Any, Any, _Key, str, str, Any], None]] = {
    GateKind.QUALITY: _check_quality,
    GateKind.LATENCY: _check_latency,
    GateKind.LATENCY_RATIO: _check_ratio,
    GateKind.LIFT: _check_lift,
    GateKind.ABSTENTION: _check_abstention,
    GateKind.SPARSE: _check_sparse,
}
