"""Regression gates against a committed baseline: a suite run's per-query values against the
baseline's, judged by the paired statistics (``stats.paired``), per stratum with Holm's
correction (pure: reading and writing the baseline file is :mod:`.baseline`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ConfigError
from .comparable import left_out_summary, too_few_remain
from .judged import JudgedChange, baseline_judged, current_judged, judged_change
from .judged_only import JudgedOnlyChange, judged_only_change, judged_only_metric


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
    judged: Optional[JudgedChange] = None  # judged@10 over the compared queries, then and now
    judged_only: Optional[JudgedOnlyChange] = None  # the metric on judged documents, when judged@10 fell
    left_out: Dict[str, str] = field(default_factory=dict)  # baseline query -> why not compared
    reference: Optional[Dict[str, Any]] = None  # the stored run compared with (gates/reference.py)
    origin: str = ""  # file:line of the max_drop (floors.BaselineGate)
    team: str = ""  # a team threshold file's gate: its team and owners
    owners: Tuple[str, ...] = ()
    mention: bool = False

    def as_dict(self) -> Dict[str, Any]:
        out = self._as_dict()
        if self.reference is not None:
            out["reference"] = dict(self.reference)
        if self.origin:
            out["origin"] = self.origin
        if self.team:
            out["team"] = self.team
        if self.owners:
            out.update(owners=list(self.owners), mention=self.mention)
        return out

    def stamped(self, gate: Any) -> RegressionOutcome:
        """The outcome with its gate's origin, team and owners (floors.BaselineGate), the team in
        the message's head and where the max_drop was set under it."""
        self.origin, self.team, self.owners, self.mention = (
            gate.origin,
            gate.team,
            tuple(gate.owners),
            gate.mention,
        )
        head, _, rest = self.message.partition("\n")
        if gate.team:
            head = head.replace(f"{self.suite} :: ", f"{self.suite} :: {gate.team} :: ", 1)
        lines = (
            [head] + ([f"  max_drop set at {gate.origin}"] if gate.origin else []) + ([rest] if rest else [])
        )
        self.message = "\n".join(lines)
        return self

    def _as_dict(self) -> Dict[str, Any]:
        return {
            "retriever": self.retriever,
            "metric": self.metric,
            "max_drop": self.max_drop,
            "passed": self.passed,
            "judged@10": None if self.judged is None else self.judged.as_dict(),
            "judged_only": None if self.judged_only is None else self.judged_only.as_dict(),
            "left_out": dict(self.left_out),
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


def baseline_gate_refusal(
    result: Any, baseline: Any, retriever: str, metric: str, max_drop: float
) -> Optional[str]:
    """Why this baseline gate is skipped (the baseline has no values for it yet, or too few of
    its queries are unchanged: :func:`.comparable.too_few_remain`), or None to judge it. Raises
    ``ConfigError`` for too few unchanged queries when the suite says
    ``on_fingerprint_mismatch: error``."""
    before = baseline.per_query(retriever, metric)
    if before is None:
        what = (
            f"retriever {retriever!r}"
            if retriever not in baseline.retrievers
            else f"{metric} of {retriever!r}"
        )
        return (
            f"the baseline has no {what} yet (added since it was written): floors only. Write it with "
            f"`pytest --retrieval-baseline-update`, review the diff, commit it"
        )
    reg = result.suite.model.regression
    why = too_few_remain(
        before, baseline.left_out, min_compared=reg.min_compared, max_drop=max_drop, confidence=reg.confidence
    )
    if why is None:
        return None
    why = f"the queries' texts or judgments changed since the baseline: {why}"
    if reg.on_fingerprint_mismatch == "error":
        raise ConfigError(f"{why}; update it with --retrieval-baseline-update")
    return f"{why}: floors only"


def judge_against_baseline(
    result: Any, baseline: Any, retriever: str, metric: str, max_drop: float, *, against: str = "baseline"
) -> RegressionOutcome:
    """The paired comparison over the baseline's queries that did not change (``baseline.left_out``
    are not compared), with the change of judged@10 beside it. ``baseline`` is a
    :class:`.baseline.Baseline`: the committed file, or a stored run of the history read into one
    (gates/reference.py, ``against="reference run <id>"``)."""
    from ..stats.paired import paired_comparison

    reg = result.suite.model.regression
    suite_name = result.suite.name
    label = f"{suite_name} :: {retriever} :: {metric} vs {against}"
    before = baseline.per_query(retriever, metric)
    if before is None:
        raise ConfigError(
            f"{label}: the baseline has no {metric} for {retriever} (added since?); "
            f"update it with --retrieval-baseline-update"
        )
    left_out = {q: why for q, why in baseline.left_out.items() if q in before}
    now = _without(result.retrievers[retriever].evaluation.per_query[metric], left_out)
    kept = _without(before, left_out)
    texts = result.judgments.queries
    kw = dict(max_drop=max_drop, confidence=reg.confidence, n_resamples=reg.resamples, seed=reg.seed)
    overall = paired_comparison(kept, now, **kw)
    out = RegressionOutcome(suite_name, retriever, metric, max_drop, overall, left_out=left_out)
    out.judged = _judged(result, baseline, retriever, kept, now)
    out.judged_only = _judged_only(result, baseline, out, kept, now)
    lines = _context_lines(out, len(before), against)
    if reg.strata and result.judgments.tags:
        out.strata = _strata(kept, now, result.judgments.tags, kw)
        lines += _failed_strata_lines(out.strata, texts)
    failed = overall.regressed or not all(v.passed for v in out.strata.values())
    out.passed = not failed
    head = overall.describe(label, query_text=texts, passed=not overall.regressed, improved=overall.improved)
    if failed:
        lines += _ranking_lines(result, baseline, out)
    out.message = "\n".join([head] + lines)
    return out


def _judged(
    result: Any, baseline: Any, retriever: str, kept: Dict[str, float], now: Dict[str, float]
) -> Optional[JudgedChange]:
    """judged@10 over the queries compared, in the baseline and now."""
    compared = [q for q in kept if q in now]
    before = baseline_judged(baseline, retriever, result.judgments.qrels)
    return judged_change(before, current_judged(result, retriever), compared)


def _judged_only(
    result: Any, baseline: Any, out: RegressionOutcome, kept: Dict[str, float], now: Dict[str, float]
) -> Optional[JudgedOnlyChange]:
    """The metric on judged documents only, baseline and now, when judged@10 fell (new unjudged
    documents in the top 10) and the metric has a condensed form (information: the verdict is
    the metric's)."""
    condensed = judged_only_metric(out.metric)
    if out.judged is None or not out.judged.diff < 0 or condensed is None:
        return None
    compared = [q for q in kept if q in now]
    return judged_only_change(result, baseline, out.retriever, condensed, compared, out.overall)


def _ranking_lines(result: Any, baseline: Any, out: RegressionOutcome) -> List[str]:
    """What moved in the rankings of the largest drops."""
    from .rankings import message_lines

    return message_lines(
        baseline.top(out.retriever),
        result.retrievers[out.retriever].run,
        result.judgments.qrels,
        out.overall.worst(3),
        out.metric,
    )


def _without(values: Dict[str, float], left_out: Dict[str, str]) -> Dict[str, float]:
    return {q: v for q, v in values.items() if q not in left_out}


def _failed_strata_lines(strata: Dict[str, StratumVerdict], texts: Any) -> List[str]:
    return [
        verdict.result.describe(f"  stratum {tag}", query_text=texts).split("\n")[0]
        + f" (Holm-adjusted p of a drop {verdict.p_adjusted:.3g})"
        for tag, verdict in sorted(strata.items())
        if not verdict.passed
    ]


def _context_lines(out: RegressionOutcome, total: int, against: str) -> List[str]:
    """The queries left out of the comparison and the judged@10 change, under the verdict."""
    lines = []
    if out.left_out:
        lines.append("  " + left_out_summary(out.left_out, total, of=against.split(" ")[0]))
    if out.judged is not None:
        lines.append("  " + out.judged.describe())
        if out.judged_only is not None:
            lines.append("  " + out.judged_only.describe())
    else:
        lines.append(f"  judged@10: not in the {against.split(' ')[0]} (written before it was recorded)")
    return lines
