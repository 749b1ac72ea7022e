"""Regression gates against a committed baseline: a suite run's per-query values against the
baseline's, judged by the paired statistics (``stats.paired``), per stratum with Holm's
correction (pure: reading and writing the baseline file is :mod:`.baseline`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List

from ..errors import ConfigError


@dataclass
class RegressionOutcome:
    suite: str
    retriever: str
    metric: str
    max_drop: float
    overall: Any  # stats.paired.PairedResult
    strata: Dict[str, Any] = field(default_factory=dict)  # tag -> StratumVerdict (below)
    passed: bool = True
    message: str = ""

    def as_dict(self) -> Dict[str, Any]:
        return {
            "retriever": self.retriever,
            "metric": self.metric,
            "max_drop": self.max_drop,
            "passed": self.passed,
            "comparison": self.overall.as_dict(),
            "strata": {
                t: {"passed": v.passed, "p_drop_holm": v.p_adjusted, "comparison": v.result.as_dict()}
                for t, v in self.strata.items()
            },
        }


@dataclass
class StratumVerdict:
    result: Any  # stats.paired.PairedResult over the stratum's queries
    p_adjusted: float  # Holm-adjusted one-sided p of "this stratum dropped"
    passed: bool


def _strata(
    before: Dict[str, float], now: Dict[str, float], tags: Dict[str, Any], kw: Dict[str, Any]
) -> Dict[str, StratumVerdict]:
    """Per-stratum gates. The aggregate gate asks for non-inferiority (a drop beyond the
    margin must be ruled out), which a stratum of a few dozen queries can never show: a
    stratum instead fails when it shows a drop beyond the margin that is significant after
    Holm's correction across the strata (one-sided randomization p of a drop)."""
    from ..stats.multiple_testing import holm

    alpha = 1.0 - kw["confidence"]
    results = _paired_by_stratum(before, now, tags, kw)
    p_drop = {t: _p_drop(r) for t, r in results.items()}
    adjusted = holm(p_drop, alpha) if p_drop else {}
    return {
        t: StratumVerdict(r, adjusted[t][0], passed=not (r.mean_diff < -kw["max_drop"] and adjusted[t][1]))
        for t, r in results.items()
    }


def _paired_by_stratum(
    before: Dict[str, float], now: Dict[str, float], tags: Dict[str, Any], kw: Dict[str, Any]
) -> Dict[str, Any]:
    """The paired comparison of each stratum of at least two queries measured in both runs."""
    from ..stats.paired import paired_comparison
    from ..stats.strata import strata_from_tags

    strata = strata_from_tags(tags, qids=[q for q in now if q in before])
    return {
        tag: paired_comparison({q: before[q] for q in qids}, {q: now[q] for q in qids}, **kw)
        for tag, qids in strata.items()
        if len(qids) >= 2
    }


def _p_drop(r: Any) -> float:
    """The one-sided randomization p of "this stratum dropped"."""
    return r.p_randomization / 2.0 if r.mean_diff < 0 else 1.0


def judge_against_baseline(
    result: Any, baseline: Any, retriever: str, metric: str, max_drop: float
) -> RegressionOutcome:
    from ..stats.paired import paired_comparison

    reg = result.suite.model.regression
    suite_name = result.suite.name
    label = f"{suite_name} :: {retriever} :: {metric} vs baseline"
    before = baseline.per_query(retriever, metric)
    if before is None:
        raise ConfigError(
            f"{label}: the baseline has no {metric} for {retriever} (added since?); "
            f"update it with --retrieval-baseline-update"
        )
    now = result.retrievers[retriever].evaluation.per_query[metric]
    texts = result.judgments.queries
    kw = dict(max_drop=max_drop, confidence=reg.confidence, n_resamples=reg.resamples, seed=reg.seed)
    overall = paired_comparison(before, now, **kw)
    out = RegressionOutcome(suite_name, retriever, metric, max_drop, overall)
    lines: List[str] = []
    failed = overall.regressed
    if reg.strata and result.judgments.tags:
        out.strata = _strata(before, now, result.judgments.tags, kw)
        for tag, verdict in sorted(out.strata.items()):
            if not verdict.passed:
                failed = True
                lines.append(
                    verdict.result.describe(f"  stratum {tag}", query_text=texts).split("\n")[0]
                    + f" (Holm-adjusted p of a drop {verdict.p_adjusted:.3g})"
                )
    out.passed = not failed
    head = overall.describe(label, query_text=texts, passed=not overall.regressed, improved=overall.improved)
    if failed:  # what moved in the rankings of the largest drops
        from .rankings import message_lines

        lines += message_lines(
            baseline.top(retriever),
            result.retrievers[retriever].run,
            result.judgments.qrels,
            overall.worst(3),
            metric,
        )
    out.message = "\n".join([head] + lines)
    return out
