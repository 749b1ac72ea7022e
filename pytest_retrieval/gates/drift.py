"""Drift on scheduled runs (issue #37): a sustained shift of a metric across stored runs whose
pipeline did not change, and the fingerprint components that changed around it. Pure, no I/O:
``pytest-retrieval history drift`` (cli/history_drift.py) reads the store and prints this.

A nightly run against a live index sees the corpus, the index or the engine move while the
pipeline (its retrievers, metric profile, embedder and search settings) stays the same. Over
the newest stretch of runs with the same pipeline, a change-point test
(:func:`..stats.changepoint.change_point`: CUSUM with a permutation p-value, its false-alarm rate
at most ``alpha`` per series) says whether the metric shifted; when it did, the fingerprint
changes between consecutive runs around the shift (:func:`.fingerprint.compare_fingerprints`:
corpus size, index mapping, engine version, judgments...) are named as candidate causes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..stats.changepoint import ChangePoint, change_point
from .fingerprint import compare_fingerprints, sha256_json

__all__ = ["PIPELINE", "DriftFinding", "pipeline_stretch", "detect_drift"]

#: the fingerprint components that make "the pipeline": a change of one ends a stretch (it is a
#: change of the system under test, judged by the baseline gate, not drift)
PIPELINE = ("retrievers", "metric_profile", "embedder", "search")


@dataclass
class DriftFinding:
    """The change-point test of one (suite, retriever, metric) over one stretch of runs."""

    suite: str
    retriever: str
    metric: str
    runs: List[str]  # run ids of the stretch tested, oldest first
    values: List[float]
    test: ChangePoint
    causes: List[str] = field(default_factory=list)  # fingerprint changes around the shift
    left_before: int = 0  # older runs not tested: their pipeline differs

    @property
    def flagged(self) -> bool:
        return self.test.flagged

    @property
    def shift_run(self) -> Optional[str]:
        """The first run after the shift."""
        return self.runs[self.test.index] if self.test.index is not None else None

    def describe(self) -> str:
        t = self.test
        head = f"{self.suite} :: {self.retriever} :: {self.metric}: {len(self.runs)} runs with an unchanged pipeline"
        if t.index is None:
            return f"{head}: too few to test (a sustained shift needs {2 * t.min_segment} at least)"
        p = f"p={t.p_value:.3g} over {t.permutations} permutations"
        if not self.flagged:
            small = abs(t.shift) < t.min_shift and t.p_value <= t.alpha
            why = f"shift {t.shift:+.4f} below min-shift {t.min_shift:g}" if small else "no sustained shift"
            return f"{head}: {why} ({p}; alpha {t.alpha:g})"
        lines = [
            f"{head}: DRIFT {t.before:.4f} -> {t.after:.4f} ({t.shift:+.4f}) from run {str(self.shift_run)[:12]} "
            f"on ({t.n - t.index} runs after, {t.index} before; {p}; alpha {t.alpha:g})"
        ]
        if self.causes:
            lines.append("  candidate causes (fingerprint changes around the shift):")
            lines += [f"    {c}" for c in self.causes]
        else:
            lines.append(
                "  no fingerprint component changed around the shift (the engine's own state or the data?)"
            )
        return "\n".join(lines)

    def as_dict(self) -> Dict[str, Any]:
        return {
            "suite": self.suite,
            "retriever": self.retriever,
            "metric": self.metric,
            "runs": list(self.runs),
            "values": list(self.values),
            "shift_run": self.shift_run,
            "causes": list(self.causes),
            "test": self.test.as_dict(),
        }


def pipeline_key(fingerprint: Mapping[str, Any]) -> str:
    """One hash of the fingerprint's pipeline components."""
    return sha256_json({k: fingerprint.get(k) for k in PIPELINE})


def pipeline_stretch(run_ids: Sequence[str], fingerprints: Mapping[str, Mapping[str, Any]]) -> int:
    """Index of the first run of the newest stretch of ``run_ids`` (oldest first) whose
    pipeline is the newest run's."""
    if not run_ids:
        return 0
    newest = pipeline_key(fingerprints.get(run_ids[-1]) or {})
    start = len(run_ids) - 1
    while start > 0 and pipeline_key(fingerprints.get(run_ids[start - 1]) or {}) == newest:
        start -= 1
    return start


def detect_drift(
    suite: str,
    retriever: str,
    metric: str,
    series: Sequence[Any],
    fingerprints: Mapping[str, Mapping[str, Any]],
    *,
    alpha: float = 0.05,
    min_segment: int = 3,
    min_shift: float = 0.0,
    n_permutations: int = 2000,
    seed: int = 0,
    window: int = 1,
) -> DriftFinding:
    """The change-point test of ``series`` (``(run_id, value)`` pairs, or objects with ``run_id``
    and ``value``: history/store.py ``MetricPoint``, oldest first) over its newest stretch of runs
    with an unchanged pipeline (``fingerprints``: run id -> the suite's fingerprint)."""
    pairs = [(p.run_id, float(p.value)) if hasattr(p, "run_id") else (str(p[0]), float(p[1])) for p in series]
    ids = [r for r, _ in pairs]
    start = pipeline_stretch(ids, fingerprints)
    runs, values = ids[start:], [v for _, v in pairs[start:]]
    test = change_point(
        values,
        alpha=alpha,
        min_segment=min_segment,
        min_shift=min_shift,
        n_permutations=n_permutations,
        seed=seed,
    )
    finding = DriftFinding(suite, retriever, metric, runs, values, test, left_before=start)
    if finding.flagged and test.index is not None:
        finding.causes = _causes(runs, fingerprints, test.index, window)
    return finding


def _causes(
    runs: Sequence[str], fingerprints: Mapping[str, Mapping[str, Any]], index: int, window: int
) -> List[str]:
    """The fingerprint changes between consecutive runs within ``window`` runs of the shift
    (the split is an estimate), each with the run it appeared in."""
    out: List[str] = []
    for i in range(max(1, index - window), min(len(runs), index + window + 1)):
        old, new = fingerprints.get(runs[i - 1]), fingerprints.get(runs[i])
        if old is None or new is None:
            continue
        diff = compare_fingerprints(old, new)
        out += [f"run {runs[i][:12]}: {line}" for line in diff.lines]
    return out
