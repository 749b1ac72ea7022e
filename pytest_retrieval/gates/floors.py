"""Floors -> verdicts, and the failure message a person can act on (pure, no I/O)."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, List, Optional, Tuple

from ..suite.schema import LATENCY_KEYS, LATENCY_RATIO_KEYS


class GateKind(str, Enum):
    """What a floor gates, and so how it is measured and compared."""

    QUALITY = "quality"  # a retrieval metric (ndcg@10, recall@100[tag], ...): value >= floor
    LATENCY = "latency"  # p50_ms / p95_ms / p99_ms: value <= ceiling, judged on its interval
    LATENCY_RATIO = "latency_ratio"  # p50/p95/p99_ratio against latency.baseline (A/B): <= ceiling
    LIFT = "lift"  # lift@metric: a stage's value minus its best input's: >= floor
    ABSTENTION = "abstention"  # share of unanswerable queries abstained on: >= floor


@dataclass(frozen=True)
class Floor:
    retriever: str
    metric: str  # canonical key: a metric, p95_ms, p95_ratio, lift@ndcg@10 or abstention
    op: str  # ">=" or "<="
    threshold: float
    origin: str = ""  # "file:line" where the floor was written
    stratum: Optional[str] = None  # a query tag: the floor holds on that stratum's mean

    @property
    def name(self) -> str:
        return f"{self.metric}[{self.stratum}]" if self.stratum else self.metric

    @property
    def kind(self) -> GateKind:
        if self.metric in LATENCY_KEYS:
            return GateKind.LATENCY
        if self.metric in LATENCY_RATIO_KEYS:
            return GateKind.LATENCY_RATIO
        if self.metric.startswith("lift@"):
            return GateKind.LIFT
        if self.metric == "abstention":
            return GateKind.ABSTENTION
        return GateKind.QUALITY

    @property
    def percentile(self) -> int:
        """50, 95 or 99 for latency and latency-ratio floors (``p95_ms`` -> 95)."""
        if self.kind not in (GateKind.LATENCY, GateKind.LATENCY_RATIO):
            raise ValueError(f"{self.metric} is not a latency floor")
        return int(self.metric[1:3])

    @property
    def lifted_metric(self) -> str:
        """``lift@ndcg@10`` -> ``ndcg@10``."""
        return self.metric[len("lift@") :]

    @property
    def is_latency(self) -> bool:
        return self.kind is GateKind.LATENCY

    @property
    def is_latency_ratio(self) -> bool:
        return self.kind is GateKind.LATENCY_RATIO


def parse_floors(model: Any, suite: Any, metrics: List[str]) -> List[Floor]:
    """The suite file's ``floors`` block -> typed floors (every mistake a one-line ConfigError).
    Metrics a floor needs are appended to ``metrics``."""
    from ..suite.yamlio import locate

    retrievers, positions = model.retrievers, suite.positions
    floors: List[Floor] = []
    for r_name, per_metric in model.floors.items():
        if r_name not in retrievers:
            close = difflib.get_close_matches(r_name, list(retrievers), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise suite.error(("floors", r_name), f"floor for unknown retriever {r_name!r}{hint}")
        if not per_metric:
            raise suite.error(("floors", r_name), "no metric floors listed")
        seen: dict = {}  # (canonical metric, stratum) -> the key that set it
        for m, value in per_metric.items():
            key = ("floors", r_name, m)
            if isinstance(value, bool) or not math.isfinite(value):
                raise suite.error(key, f"a floor is a finite number, got {value!r}")
            try:
                canon, op, stratum = floor_key(str(m))
            except ValueError as exc:
                raise suite.error(key, str(exc)) from None
            if (canon, stratum) in seen:
                raise suite.error(
                    key, f"{m!r} and {seen[canon, stratum]!r} are the same floor ({canon}): keep one"
                )
            seen[canon, stratum] = m
            if stratum and (
                canon in LATENCY_KEYS + LATENCY_RATIO_KEYS
                or canon.startswith("lift@")
                or canon == "abstention"
            ):
                raise suite.error(key, "latency and lift floors hold for the whole suite, not per stratum")
            if canon == "abstention":
                if model.unanswerable is None:
                    raise suite.error(
                        key,
                        "an abstention floor needs an 'unanswerable' section "
                        "(which tag marks unanswerable queries)",
                    )
                if not 0.0 <= float(value) <= 1.0:
                    raise suite.error(key, f"abstention is a rate in [0, 1]; got {value!r}")
            elif canon in LATENCY_RATIO_KEYS:
                base = model.latency.baseline
                if not model.latency.enabled:
                    raise suite.error(key, "latency ratio given but latency.enabled is false")
                if base is None:
                    raise suite.error(
                        key,
                        f"{canon} compares with an A/B baseline: name it in "
                        f"latency.baseline (a retriever of this suite)",
                    )
                if base == r_name:
                    raise suite.error(key, f"{r_name!r} is latency.baseline itself: its ratio is 1")
                if value <= 0:
                    raise suite.error(key, f"a latency ratio must be > 0, got {value!r}")
            elif canon in LATENCY_KEYS:
                if value <= 0:
                    raise suite.error(key, f"latency floor must be > 0 ms, got {value!r}")
                if not model.latency.enabled:
                    raise suite.error(key, "latency floor given but latency.enabled is false")
            elif canon.startswith("lift@"):
                if not getattr(retrievers[r_name], "of", None):
                    raise suite.error(
                        key,
                        f"{canon} needs a retriever built on others (with 'of'); "
                        f"{r_name!r} is a {retrievers[r_name].type} leaf",
                    )
                if not -1.0 <= float(value) <= 1.0:
                    raise suite.error(key, f"a lift lies in [-1, 1]; floor {value!r} can never be met")
                inner = canon[len("lift@") :]
                if inner not in metrics:
                    metrics.append(inner)
            else:
                if not 0.0 <= float(value) <= 1.0:
                    raise suite.error(
                        key,
                        f"{canon} lies in [0, 1]; floor {value!r} can never be met"
                        if value > 1
                        else f"floor {value!r} is below 0",
                    )
                if canon not in metrics:
                    metrics.append(canon)
            file, line = locate(positions, key)
            floors.append(
                Floor(
                    r_name, canon, op, float(value), origin=f"{file}:{line}" if file else "", stratum=stratum
                )
            )
    return floors


def floor_key(key: str) -> Tuple[str, str, Optional[str]]:
    """A floor's metric key -> (canonical key, op, stratum). ``p95_ms`` (<=), ``ndcg@10`` (>=),
    ``lift@ndcg@10`` (>=: the stage's value minus its best input's), ``ndcg@10[multi-hop]``
    (>=, on the queries tagged ``multi-hop`` only)."""
    from ..measures.metrics import parse_metric

    stratum = None
    if key.endswith("]") and "[" in key:
        key, _, stratum = key[:-1].partition("[")
        if not stratum.strip():
            raise ValueError("empty stratum in [...]: write metric[tag]")
        stratum = stratum.strip()
    if key in LATENCY_KEYS or key in LATENCY_RATIO_KEYS:
        return key, "<=", stratum
    if key == "abstention":  # share of unanswerable queries the retriever abstained on
        return key, ">=", stratum
    if key.lower().startswith("lift@"):
        return "lift@" + str(parse_metric(key[len("lift@") :])), ">=", stratum
    return str(parse_metric(key)), ">=", stratum


@dataclass
class GateOutcome:
    suite: str
    floor: Floor
    value: Optional[float]  # None: could not be measured (an error, never a pass)
    passed: bool
    message: str

    def as_dict(self) -> dict:
        return {
            "retriever": self.floor.retriever,
            "metric": self.floor.metric,
            "stratum": self.floor.stratum,
            "value": self.value,
            "op": self.floor.op,
            "threshold": self.floor.threshold,
            "passed": self.passed,
        }


def fmt(x: float, other: Optional[float] = None) -> str:
    """4 decimals, or as many as it takes to show that two different numbers differ."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    s = f"{x:.4f}"
    if other is not None and x != other and s == f"{other:.4f}":
        return repr(float(x))
    return s


def compare(value: float, op: str, threshold: float) -> bool:
    """Exact comparison: nothing is rounded before a verdict. NaN never passes."""
    if value is None or math.isnan(value):
        return False
    return value >= threshold if op == ">=" else value <= threshold


def check_floor(
    suite_name: str,
    floor: Floor,
    value: float,
    worst: List[Tuple[str, float, str]] = (),
    n_queries: Optional[int] = None,
    unit: str = "",
) -> GateOutcome:
    passed = compare(value, floor.op, floor.threshold)
    head = f"{suite_name} :: {floor.retriever} :: {floor.name}"
    if floor.is_latency:
        v, t = f"{value:.2f}", f"{floor.threshold:g}"
    else:
        v, t = fmt(value, floor.threshold), fmt(floor.threshold, value)
    if passed:
        msg = f"{head} = {v}{unit} ({floor.op} {t}{unit}: ok)"
    else:
        word = "below the floor" if floor.op == ">=" else "above the ceiling"
        gap = abs(value - floor.threshold) if not math.isnan(value) else math.nan
        by = f"{gap:.2f}" if floor.is_latency else fmt(gap)
        lines = [f"{head} = {v}{unit}, {word} {floor.op} {t}{unit} (off by {by}{unit})"]
        if floor.origin:
            lines.append(f"  floor set at {floor.origin}")
        if n_queries is not None and not floor.is_latency:
            tagged = f" tagged {floor.stratum!r}" if floor.stratum else ""
            lines.append(f"  averaged over {n_queries} judged queries{tagged}")
        if worst:
            lines.append(f"  worst {len(worst)} queries for {floor.name}:")
            for qid, val, text in worst:
                t_ = (text[:77] + "...") if len(text) > 80 else text
                lines.append(f"    {fmt(val)}  {qid}  {t_}")
        msg = "\n".join(lines)
    return GateOutcome(suite_name, floor, value, passed, msg)


def latency_ci_outcome(suite_name: str, floor: Floor, samples_ms, *, confidence: float = 0.95) -> GateOutcome:
    """A latency ceiling judged on the percentile's confidence interval: fails only when the
    lower bound is above the ceiling (noise alone rarely fails it; see significance)."""
    from ..stats.significance import latency_verdict

    q = floor.percentile
    v = latency_verdict(samples_ms, floor.threshold, q=q, confidence=confidence)
    head = f"{suite_name} :: {floor.retriever} :: {floor.name}"
    msg = (
        f"{head} = {v.point:.2f} ms ({confidence:.0%} lower bound {v.lo:.2f} ms, upper "
        f"{v.hi:.2f} ms, n={v.n}) {'<=' if v.passed else '>'} ceiling {floor.threshold:g} ms"
    )
    if not v.passed:
        msg = msg.replace(" = ", " is slower than its ceiling: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}"
    if not v.enough_samples:
        msg += (
            f"\n  note: {v.n} samples; p{q} wants {v.needed} (20 above the percentile) "
            f"for a tight interval: raise latency.repetitions"
        )
    return GateOutcome(suite_name, floor, v.point, v.passed, msg)


def latency_ratio_outcome(
    suite_name: str, floor: Floor, ab, *, confidence: float = 0.95, verdict: str = "ci"
) -> GateOutcome:
    """An A/B latency ceiling: the retriever's percentile over the baseline's, both timed
    interleaved in this job and paired by (query, round) (``suite.ABLatency``). ``ci`` fails only
    when the ratio's lower confidence bound is above the allowed ratio; ``point`` compares
    the estimate."""
    q = floor.percentile
    r = ab.result(q, confidence=confidence, max_ratio=floor.threshold)
    passed = bool(r.passed) if verdict == "ci" else compare(r.ratio, "<=", floor.threshold)
    head = f"{suite_name} :: {floor.retriever} :: {floor.name}"
    n = len(ab.paired()[0])
    msg = (
        f"{head} = {r.ratio:.3f} (p{q} {r.current:.2f} ms vs {ab.baseline} {r.baseline:.2f} ms, "
        f"interleaved, {ab.repetitions} rounds, n={n} paired samples; {confidence:.0%} "
        f"bounds {r.lo:.3f} .. {r.hi:.3f}) {'<=' if passed else '>'} allowed {floor.threshold:g}"
    )
    if not passed:
        msg = msg.replace(" = ", " is slower than its baseline allows: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}"
    return GateOutcome(suite_name, floor, r.ratio, passed, msg)
