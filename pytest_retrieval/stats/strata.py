"""The baseline gate per stratum (query tag): one paired comparison per stratum,
Holm-corrected across strata (pure: numpy, no I/O).

Strata (:func:`stratified_comparison`)
    One paired comparison (:func:`.paired.paired_comparison`) per stratum; the strata's
    non-inferiority p-values are Holm-adjusted (:func:`.multiple_testing.holm`) and a
    stratum passes when its adjusted p-value is ``< alpha``. This bounds by ``alpha`` the
    chance of passing *any* stratum whose true drop exceeds its margin (family-wise). With
    one stratum it is exactly the CI verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from .multiple_testing import holm
from .paired import PairedResult, format_p, paired_comparison
from .resampling import alpha_of

__all__ = ["StratumVerdict", "strata_from_tags", "stratified_comparison"]


@dataclass
class StratumVerdict:
    stratum: str
    result: Optional[PairedResult]  # None: no query of the stratum is in both runs
    p_adjusted: float  # Holm-adjusted p_noninferiority across the strata (NaN if no result)
    passed: bool  # p_adjusted < alpha
    p_improvement_adjusted: float
    improved: bool
    error: str = ""

    def describe(self, label: str = "", **kw) -> str:
        if self.result is None:
            return f"{label}: {self.error}" if label else self.error
        head = self.result.describe(label, passed=self.passed, improved=self.improved, **kw).split("\n")
        head.insert(
            1,
            f"  Holm-adjusted p(drop > {self.result.max_drop:g}) across strata "
            f"{format_p(self.p_adjusted, self.result.n_resamples)}, pass when < "
            f"{self.result.alpha:g}",
        )
        return "\n".join(head)


def strata_from_tags(
    tags: Mapping[str, Iterable[str]], qids: Optional[Iterable[str]] = None
) -> Dict[str, List[str]]:
    """``{qid: (tag, ...)}`` -> ``{tag: [qid, ...]}`` (tags sorted, qids sorted), optionally
    only over ``qids``."""
    keep = None if qids is None else set(qids)
    out: Dict[str, List[str]] = {}
    for qid, ts in tags.items():
        if keep is not None and qid not in keep:
            continue
        for t in ts:
            out.setdefault(str(t), []).append(qid)
    return {t: sorted(set(v)) for t, v in sorted(out.items())}


def stratified_comparison(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    strata: Mapping[str, Iterable[str]],
    *,
    max_drop: Union[float, Mapping[str, float]],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    ci_method: str = "percentile",
) -> Dict[str, StratumVerdict]:
    """One :func:`paired_comparison` per stratum, Holm-corrected across strata.

    A stratum passes when its Holm-adjusted non-inferiority p-value is ``< alpha``
    (``alpha = 1 - confidence``); ``improved`` likewise from the Holm-adjusted
    improvement p-values. ``max_drop`` may be one number or ``{stratum: margin}``. A
    stratum with no query in both runs gets ``result=None``, ``passed=False`` and an
    ``error``, and is not part of the Holm family."""
    alpha = alpha_of(confidence)
    results, errors = _compare_strata(
        baseline,
        current,
        strata,
        max_drop,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        ci_method=ci_method,
    )
    return _holm_verdicts(results, errors, alpha)


def _compare_strata(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    strata: Mapping[str, Iterable[str]],
    max_drop: Union[float, Mapping[str, float]],
    **settings: Any,
) -> Tuple[Dict[str, Optional[PairedResult]], Dict[str, str]]:
    """One paired comparison per stratum (None, with an error, for a stratum that has no
    query in both runs)."""
    results: Dict[str, Optional[PairedResult]] = {}
    errors: Dict[str, str] = {}
    for name, members in strata.items():
        members = set(members)
        margin = max_drop[name] if isinstance(max_drop, Mapping) else max_drop
        b = {q: v for q, v in baseline.items() if q in members}
        c = {q: v for q, v in current.items() if q in members}
        try:
            results[name] = paired_comparison(b, c, max_drop=margin, **settings)
        except ValueError as exc:
            results[name] = None
            errors[name] = f"stratum {name!r}: {exc}"
    return results, errors


def _holm_verdicts(
    results: Mapping[str, Optional[PairedResult]], errors: Mapping[str, str], alpha: float
) -> Dict[str, StratumVerdict]:
    """The verdict of every stratum from its Holm-adjusted p-values (the family: the
    strata with a result)."""
    adj = holm({k: r.p_noninferiority for k, r in results.items() if r is not None}, alpha)
    adj_imp = holm({k: r.p_improvement for k, r in results.items() if r is not None}, alpha)
    out: Dict[str, StratumVerdict] = {}
    for name, r in results.items():
        if r is None:
            out[name] = StratumVerdict(name, None, math.nan, False, math.nan, False, errors[name])
            continue
        pa, pi = adj[name][0], adj_imp[name][0]
        out[name] = StratumVerdict(name, r, pa, pa < alpha, pi, pi < alpha)
    return out
