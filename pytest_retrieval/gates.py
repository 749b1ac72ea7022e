"""Floors -> verdicts, and the failure message a person can act on (pure, no I/O)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

from .config import Floor


@dataclass
class GateOutcome:
    suite: str
    floor: Floor
    value: Optional[float]  # None: could not be measured (an error, never a pass)
    passed: bool
    message: str

    def as_dict(self) -> dict:
        return {"retriever": self.floor.retriever, "metric": self.floor.metric,
                "stratum": self.floor.stratum,
                "value": self.value, "op": self.floor.op, "threshold": self.floor.threshold,
                "passed": self.passed}


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


def check_floor(suite_name: str, floor: Floor, value: float,
                worst: List[Tuple[str, float, str]] = (), n_queries: Optional[int] = None,
                unit: str = "") -> GateOutcome:
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


def latency_ci_outcome(suite_name: str, floor: Floor, samples_ms, *,
                       confidence: float = 0.95) -> GateOutcome:
    """A latency ceiling judged on the percentile's confidence interval: fails only when the
    lower bound is above the ceiling (noise alone rarely fails it; see significance)."""
    from .significance import latency_verdict

    q = int(floor.metric[1:3])
    v = latency_verdict(samples_ms, floor.threshold, q=q, confidence=confidence)
    head = f"{suite_name} :: {floor.retriever} :: {floor.name}"
    msg = (f"{head} = {v.point:.2f} ms ({confidence:.0%} lower bound {v.lo:.2f} ms, upper "
           f"{v.hi:.2f} ms, n={v.n}) {'<=' if v.passed else '>'} ceiling {floor.threshold:g} ms")
    if not v.passed:
        msg = msg.replace(" = ", " is slower than its ceiling: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}"
    if not v.enough_samples:
        msg += (f"\n  note: {v.n} samples; p{q} wants {v.needed} (20 above the percentile) "
                f"for a tight interval: raise latency.repetitions")
    return GateOutcome(suite_name, floor, v.point, v.passed, msg)


def latency_ratio_outcome(suite_name: str, floor: Floor, ab, *, confidence: float = 0.95,
                          verdict: str = "ci") -> GateOutcome:
    """An A/B latency ceiling: the retriever's percentile over the baseline's, both timed
    interleaved in this job and paired by (query, round) (``suite.ABLatency``). ``ci`` fails only
    when the ratio's lower confidence bound is above the allowed ratio; ``point`` compares
    the estimate."""
    q = int(floor.metric[1:3])
    r = ab.result(q, confidence=confidence, max_ratio=floor.threshold)
    passed = bool(r.passed) if verdict == "ci" else compare(r.ratio, "<=", floor.threshold)
    head = f"{suite_name} :: {floor.retriever} :: {floor.name}"
    n = len(ab.paired()[0])
    msg = (f"{head} = {r.ratio:.3f} (p{q} {r.current:.2f} ms vs {ab.baseline} {r.baseline:.2f} ms, "
           f"interleaved, {ab.repetitions} rounds, n={n} paired samples; {confidence:.0%} "
           f"bounds {r.lo:.3f} .. {r.hi:.3f}) {'<=' if passed else '>'} allowed {floor.threshold:g}")
    if not passed:
        msg = msg.replace(" = ", " is slower than its baseline allows: ", 1)
        if floor.origin:
            msg += f"\n  floor set at {floor.origin}"
    return GateOutcome(suite_name, floor, r.ratio, passed, msg)
