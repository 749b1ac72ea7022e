"""Judging gates: measure what a floor names on a suite run, compare it, and write the failure
message a person can act on (pure, no I/O). :func:`evaluate` is the one entry point for every
gate kind."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import ConfigError, InfrastructureError
from ..measures.metrics import aggregate_of
from ..wording import word
from .floors import BaselineGate, Floor, GateKind, kind_of, lifted_of, percentile_of

__all__ = [
    "drops_first",
    "GateOutcome",
    "evaluate",
    "point_verdict",
    "measure",
    "metric_value",
    "check_floor",
    "latency_ci_outcome",
    "latency_ratio_outcome",
    "latency_sample_notes",
    "compare",
    "fmt",
]

Worst = List[Tuple[str, float, str]]  # (qid, per-query value, query text)
Before = Optional[Dict[str, float]]  # the baseline's per-query values of a floor's metric, if any


@dataclass
class GateOutcome:
    suite: str
    floor: Floor
    value: Optional[float]  # None: could not be measured (an error, never a pass)
    passed: bool
    message: str

    def as_dict(self) -> dict:
        f = self.floor
        out: Dict[str, Any] = {
            "retriever": f.retriever,
            "metric": f.metric,
            "stratum": f.stratum,
            "value": self.value,
            "op": f.op,
            "threshold": f.threshold,
            "passed": self.passed,
            "origin": f.origin,  # file:line where the floor was set, passed or not
        }
        if f.lowered:  # the stricter value a later file (an override, an including file) replaced
            out["lowered_from"] = f.lowered
        if f.team:
            out["team"] = f.team
        if f.owners:
            out.update(owners=list(f.owners), mention=f.mention)
        return out


# ------------------------------------------------------------------ entry points


def evaluate(result: Any, gate: Union[Floor, BaselineGate], *, baseline: Any = None) -> Any:
    """Judge one gate on a ``SuiteResult``: a :class:`GateOutcome` for a floor, a
    ``regression.RegressionOutcome`` for a baseline gate (``baseline``: the loaded
    ``baseline.Baseline``). Raises when the value cannot be measured (never a pass)."""
    if isinstance(gate, BaselineGate):
        from .regression import judge_against_baseline

        if baseline is None:
            raise ValueError(f"{gate.retriever} :: {gate.name}: a baseline gate needs the baseline")
        outcome = judge_against_baseline(result, baseline, gate.retriever, gate.metric, gate.max_drop)
        return outcome.stamped(gate)
    before = _baseline_values(baseline, gate)
    value, worst = measure(result, gate, before=before)
    return _VERDICTS[gate.kind](result, gate, value, worst, before)


def _baseline_values(baseline: Any, floor: Floor) -> Before:
    """The baseline's per-query values of a quality floor (the worst queries of its failure are
    then the largest drops against them), or None."""
    if baseline is None or floor.kind is not GateKind.QUALITY:
        return None
    values = baseline.per_query(floor.retriever, floor.metric) or {}
    left_out = getattr(baseline, "left_out", {}) or {}  # changed texts or judgments: not comparable
    return {q: v for q, v in values.items() if q not in left_out and v is not None} or None


def point_verdict(result: Any, floor: Floor) -> GateOutcome:
    """The floor judged on its measured value alone (no latency interval, no A/B bounds):
    what the ``assert_floor`` fixture checks."""
    value, worst = measure(result, floor)
    return check_floor(result.suite.name, floor, value, worst)


def _quality(result: Any, floor: Floor, value: float, worst: Worst, before: Before = None) -> GateOutcome:
    n = result.n_queries(floor.retriever, floor.stratum)
    return check_floor(result.suite.name, floor, value, worst, n_queries=n, before=before)


def _latency(result: Any, floor: Floor, value: float, worst: Worst, before: Before = None) -> GateOutcome:
    lat = result.suite.model.latency
    if lat.verdict == "ci":
        samples = result.retrievers[floor.retriever].latency.samples_ms
        return latency_ci_outcome(result.suite.name, floor, samples, confidence=lat.confidence)
    n = result.n_queries(floor.retriever, floor.stratum)
    return check_floor(result.suite.name, floor, value, worst, n_queries=n, unit=" ms")


def _latency_ratio(
    result: Any, floor: Floor, value: float, worst: Worst, before: Before = None
) -> GateOutcome:
    lat = result.suite.model.latency
    ab = result.retrievers[floor.retriever].ab
    return latency_ratio_outcome(result.suite.name, floor, ab, confidence=lat.confidence, verdict=lat.verdict)


def _sparse_cost(result: Any, floor: Floor, value: float, worst: Worst, before: Before = None) -> GateOutcome:
    """A sparse model's cost ceiling (``sparse_doc_nnz``, ``sparse_query_nnz``, ``flops``)."""
    return check_floor(result.suite.name, floor, value, worst)


_VERDICTS: Dict[GateKind, Callable[[Any, Floor, float, Worst, Before], GateOutcome]] = {
    GateKind.QUALITY: _quality,
    GateKind.LIFT: _quality,
    GateKind.ABSTENTION: _quality,
    GateKind.SPARSE: _sparse_cost,
    GateKind.LATENCY: _latency,
    GateKind.LATENCY_RATIO: _latency_ratio,
}


# ------------------------------------------------------------------ measuring


def metric_value(result: Any, retriever: str, metric: str) -> float:
    """A retriever's value of a floor key on a suite run (``SuiteResult.value``)."""
    value_of = _VALUE_OF.get(kind_of(metric))
    if value_of is not None:
        return value_of(result, retriever, metric)
    return result.retrievers[retriever].evaluation.aggregate[metric]


def _latency_value(result: Any, retriever: str, metric: str) -> float:
    latency = result.retrievers[retriever].latency
    if latency is None or not latency.samples_ms:
        raise InfrastructureError(
            f"{result.suite.name} :: {retriever} :: {metric}: no latency was measured "
            f"(latency pass disabled or no queries); a latency floor cannot pass"
        )
    return getattr(latency, metric[: -len("_ms")])


def _ratio_value(result: Any, retriever: str, metric: str) -> float:
    ab = result.retrievers[retriever].ab
    if ab is None or not ab.paired()[0]:
        raise InfrastructureError(
            f"{result.suite.name} :: {retriever} :: {metric}: no A/B latency was measured "
            f"(latency pass disabled or no queries); a latency ratio cannot pass"
        )
    return ab.result(percentile_of(metric)).ratio


def _lift_value(result: Any, retriever: str, metric: str) -> float:
    inner = lifted_of(metric)
    best = max(metric_value(result, i, inner) for i in result.inputs(retriever))
    return metric_value(result, retriever, inner) - best


def _abstention_value(result: Any, retriever: str, metric: str) -> float:
    ab = result.retrievers[retriever].abstention
    if ab is None or not ab.abstained:
        raise ConfigError(
            f"{result.suite.name} :: {retriever} :: abstention: no query is "
            f"tagged {result.suite.model.unanswerable.tag!r}"
        )
    return ab.rate


def _sparse_value(result: Any, retriever: str, metric: str) -> float:
    facts = result.retrievers[retriever].sparse
    value = facts.value(metric) if facts is not None else None
    if value is None:
        raise InfrastructureError(
            f"{result.suite.name} :: {retriever} :: {metric}: not measured (the documents' sparse "
            f"vectors were not available: an existing index without precomputed documents)"
        )
    return float(value)


_VALUE_OF: Dict[GateKind, Callable[[Any, str, str], float]] = {
    GateKind.SPARSE: _sparse_value,
    GateKind.LATENCY: _latency_value,
    GateKind.LATENCY_RATIO: _ratio_value,
    GateKind.LIFT: _lift_value,
    GateKind.ABSTENTION: _abstention_value,
}


def measure(result: Any, floor: Floor, n_worst: int = 5, *, before: Before = None) -> Tuple[float, Worst]:
    """(value, worst queries as (qid, per-query value, text)) for a floor.

    For a lift, the per-query values are the stage's minus its best input's; for abstention,
    the unanswerable queries it answered, highest score first. With a stratum, the mean and
    the worst queries are over the queries carrying that tag. With the baseline's per-query
    values (``before``), the worst are the largest drops against them first, then the lowest
    values (not a run of queries tied at 0 that scored 0 in the baseline too; issue #26)."""
    if floor.stratum:
        return _measure_stratum(result, floor, n_worst, before)
    if floor.kind in (GateKind.LATENCY, GateKind.LATENCY_RATIO):
        check_latency_samples(result, floor)  # before a percentile is taken of too few
        return metric_value(result, floor.retriever, floor.metric), []
    value = metric_value(result, floor.retriever, floor.metric)
    texts = result.judgments.queries
    if before and floor.kind is GateKind.QUALITY:
        now = result.retrievers[floor.retriever].evaluation.per_query[floor.metric]
        return value, [(q, now[q], texts.get(q, "")) for q in drops_first(now, before, n_worst)]
    worst_of = _WORST_OF.get(floor.kind, _worst_quality)
    return value, [(q, v, texts.get(q, "")) for q, v in worst_of(result, floor, n_worst)]


def drops_first(now: Dict[str, float], before: Dict[str, float], n: int) -> List[str]:
    """Up to ``n`` query ids: those below their baseline value, largest drop first, then the
    others lowest first (ties by id)."""
    dropped = sorted((now[q] - before[q], q) for q in now if q in before and now[q] < before[q])
    picked = [q for _, q in dropped[:n]]
    rest = sorted((v, q) for q, v in now.items() if q not in set(picked))
    return picked + [q for _, q in rest[: max(0, n - len(picked))]]


def check_latency_samples(result: Any, floor: Floor) -> None:
    """A latency gate judged on fewer samples than its percentile needs is an error, never a
    pass (``stats.latency.min_samples_to_judge``)."""
    why = _too_few_samples(result, floor)
    if why:
        raise InfrastructureError(why)


def _too_few_samples(result: Any, floor: Floor) -> Optional[str]:
    """Why a latency floor's samples cannot judge it (a ratio counts its paired samples)."""
    from ..stats.latency import not_enough_samples

    r = result.retrievers[floor.retriever]
    if floor.kind is GateKind.LATENCY_RATIO:
        n = len(r.ab.paired()[0]) if r.ab is not None else 0
    else:
        n = len(r.latency.samples_ms) if r.latency is not None else 0
    why = not_enough_samples(n, floor.percentile) if n else None  # none at all: its own error
    return f"{result.suite.name} :: {floor.label}: {why}" if why else None


def latency_sample_notes(result: Any) -> List[str]:
    """The summary's line for every latency gate of a run timed too few times to judge it."""
    out = []
    for f in result.suite.floors:
        if f.kind in (GateKind.LATENCY, GateKind.LATENCY_RATIO) and f.retriever in result.retrievers:
            why = _too_few_samples(result, f)
            if why:
                out.append(why)
    return out


def _worst_abstained(result: Any, floor: Floor, n_worst: int) -> List[Tuple[str, float]]:
    """The unanswerable queries answered, highest top score first."""
    ab = result.retrievers[floor.retriever].abstention
    answered = sorted(ab.answered, key=lambda q: -(ab.top_scores[q] or 0.0))[:n_worst]
    return [(q, ab.top_scores[q] or 0.0) for q in answered]


def _worst_lift(result: Any, floor: Floor, n_worst: int) -> List[Tuple[str, float]]:
    """The queries where the stage gains least over its best input."""
    retriever, inner = floor.retriever, floor.lifted_metric
    best = max(result.inputs(retriever), key=lambda i: metric_value(result, i, inner))
    mine = result.retrievers[retriever].evaluation.per_query[inner]
    base = result.retrievers[best].evaluation.per_query[inner]
    diffs = sorted((mine[q] - base[q], q) for q in mine)[:n_worst]
    return [(q, d) for d, q in diffs]


def _worst_quality(result: Any, floor: Floor, n_worst: int) -> List[Tuple[str, float]]:
    return list(result.retrievers[floor.retriever].evaluation.worst(floor.metric, n_worst))


_WORST_OF: Dict[GateKind, Callable[[Any, Floor, int], List[Tuple[str, float]]]] = {
    GateKind.SPARSE: lambda result, floor, n_worst: [],  # a corpus-wide figure: no worst queries
    GateKind.ABSTENTION: _worst_abstained,
    GateKind.LIFT: _worst_lift,
}


def _measure_stratum(result: Any, floor: Floor, n_worst: int, before: Before = None) -> Tuple[float, Worst]:
    retriever, stratum = floor.retriever, floor.stratum
    assert stratum is not None
    qids = result.stratum_queries(retriever, stratum)
    if not qids:
        raise _no_stratum(result, floor)
    per_query = result.retrievers[retriever].evaluation.per_query[floor.metric]
    mine = {q: per_query[q] for q in qids}
    texts = result.judgments.queries
    chosen = drops_first(mine, before or {}, n_worst)
    return aggregate_of(floor.metric, mine.values()), [(q, mine[q], texts.get(q, "")) for q in chosen]


def _no_stratum(result: Any, floor: Floor) -> ConfigError:
    tags = sorted({t for ts in result.judgments.tags.values() for t in ts})
    return ConfigError(
        f"{result.suite.name} :: {floor.retriever} :: {floor.metric}[{floor.stratum}]: no "
        f"judged query is tagged {floor.stratum!r}; tags seen: {', '.join(tags) or 'none'}"
    )


# ------------------------------------------------------------------ verdicts and messages


def fmt(x: Optional[float], other: Optional[float] = None) -> str:
    """4 decimals, or as many as it takes to show that two different numbers differ."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    s = f"{x:.4f}"
    if other is not None and x != other and s == f"{other:.4f}":
        return repr(float(x))
    return s


def compare(value: Optional[float], op: str, threshold: float) -> bool:
    """Exact comparison: nothing is rounded before a verdict. NaN never passes."""
    if value is None or math.isnan(value):
        return False
    return value >= threshold if op == ">=" else value <= threshold


def check_floor(
    suite_name: str,
    floor: Floor,
    value: float,
    worst: Sequence[Tuple[str, float, str]] = (),
    n_queries: Optional[int] = None,
    unit: str = "",
    before: Before = None,
) -> GateOutcome:
    passed = compare(value, floor.op, floor.threshold)
    head = f"{suite_name} :: {floor.label}"
    in_ms = floor.kind is GateKind.LATENCY
    if in_ms:
        v, t = f"{value:.2f}", f"{floor.threshold:g}"
    else:
        v, t = fmt(value, floor.threshold), fmt(floor.threshold, value)
    if passed:
        return GateOutcome(
            suite_name, floor, value, passed, f"{head} = {v}{unit} ({floor.op} {t}{unit}: {word('met')})"
        )
    verdict = word("below_floor" if floor.op == ">=" else "above_ceiling")
    gap = abs(value - floor.threshold) if not math.isnan(value) else math.nan
    by = f"{gap:.2f}" if in_ms else fmt(gap)
    lines = [f"{head} = {v}{unit}, {verdict} {floor.op} {t}{unit} (off by {by}{unit})"]
    lines += _floor_context(floor, worst, None if in_ms else n_queries, before)
    return GateOutcome(suite_name, floor, value, passed, "\n".join(lines))


def _floor_context(
    floor: Floor, worst: Sequence[Tuple[str, float, str]], n_queries: Optional[int], before: Before = None
) -> List[str]:
    """The lines under a failed floor: where it was set, the queries averaged, the worst ones."""
    lines = []
    if floor.origin:
        lines.append(f"  floor set at {floor.origin}{_lowered(floor)}")
    if n_queries is not None:
        tagged = f" tagged {floor.stratum!r}" if floor.stratum else ""
        lines.append(f"  averaged over {n_queries} judged queries{tagged}")
    if worst:
        lines += _worst_lines(floor, worst, before or {})
    return lines


def _lowered(floor: Floor) -> str:
    """``, lowered from 0.75 at file:line`` for a floor a later file loosened, else ""."""
    return f", lowered from {floor.lowered}" if floor.lowered else ""


def _worst_lines(
    floor: Floor, worst: Sequence[Tuple[str, float, str]], before: Dict[str, float]
) -> List[str]:
    """The worst queries of a failed floor, each with its baseline value when it moved."""
    was_of = {q: before[q] for q, v, _ in worst if q in before and before[q] != v}
    dropped = any(was_of[q] > v for q, v, _ in worst if q in was_of)
    order = " (largest drops against the baseline first)" if dropped else ""
    lines = [f"  worst {len(worst)} queries for {floor.name}{order}:"]
    for qid, val, text in worst:
        t_ = (text[:77] + "...") if len(text) > 80 else text
        was = f" (baseline {fmt(was_of[qid], val)})" if qid in was_of else ""
        lines.append(f"    {fmt(val)}{was}  {qid}  {t_}")
    return lines


def latency_ci_outcome(
    suite_name: str, floor: Floor, samples_ms: Sequence[float], *, confidence: float = 0.95
) -> GateOutcome:
    """A latency ceiling judged on the percentile's confidence interval: fails only when the
    lower bound is above the ceiling (noise alone rarely fails it; see stats.latency)."""
    from ..stats.latency import latency_verdict

    q = floor.percentile
    v = latency_verdict(samples_ms, floor.threshold, q=q, confidence=confidence)
    head = f"{suite_name} :: {floor.label}"
    msg = (
        f"{head} = {v.point:.2f} ms ({confidence:.0%} lower bound {v.lo:.2f} ms, upper "
        f"{v.hi:.2f} ms, n={v.n}) {'<=' if v.passed else '>'} ceiling {floor.threshold:g} ms"
    )
    if not v.passed:
        msg = msg.replace(" = ", f" is {word('above_ceiling')}: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}{_lowered(floor)}"
    if not v.enough_samples:
        msg += (
            f"\n  note: {v.n} samples; p{q} wants {v.needed} (20 above the percentile) "
            f"for a tight interval: raise latency.repetitions"
        )
    return GateOutcome(suite_name, floor, v.point, v.passed, msg)


def latency_ratio_outcome(
    suite_name: str, floor: Floor, ab: Any, *, confidence: float = 0.95, verdict: str = "ci"
) -> GateOutcome:
    """An A/B latency ceiling: the retriever's percentile over the baseline's, both timed
    interleaved in this job and paired by (query, round) (``suite.ABLatency``). ``ci`` fails only
    when the ratio's lower confidence bound is above the allowed ratio; ``point`` compares
    the estimate."""
    q = floor.percentile
    r = ab.result(q, confidence=confidence, max_ratio=floor.threshold)
    passed = bool(r.passed) if verdict == "ci" else compare(r.ratio, "<=", floor.threshold)
    head = f"{suite_name} :: {floor.label}"
    n = len(ab.paired()[0])
    msg = (
        f"{head} = {r.ratio:.3f} (p{q} {r.current:.2f} ms vs {ab.baseline} {r.baseline:.2f} ms, "
        f"interleaved, {ab.repetitions} rounds, n={n} paired samples; {confidence:.0%} "
        f"bounds {r.lo:.3f} .. {r.hi:.3f}) {'<=' if passed else '>'} allowed {floor.threshold:g}"
    )
    if not passed:
        msg = msg.replace(" = ", f" is {word('above_ceiling')} its baseline allows: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}{_lowered(floor)}"
    return GateOutcome(suite_name, floor, r.ratio, passed, msg)
