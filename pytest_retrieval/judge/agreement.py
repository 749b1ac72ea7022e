"""Trust in the labels: agreement between two label sources on the pairs both graded.

:func:`compare_qrels` takes two qrels (e.g. people and an LLM judge, or clicks and people)
and reports, on their overlap: Cohen's kappa, weighted kappa (linear and quadratic), exact
agreement, adjacent agreement (``|a - b| <= 1``), the confusion matrix, and a bootstrap 95%
interval of the linear-weighted kappa.

Kappa is ``1 - sum(w * observed) / sum(w * expected)`` over the confusion matrix, with
``expected`` the product of the two sources' marginals and the disagreement weight ``w``
between grades ``i`` and ``j``: ``0 if i == j else 1`` (Cohen), ``|i - j|`` (linear) or
``(i - j) ** 2`` (quadratic). Weights use the grade *values*, over the contiguous range of
grades (observed ones, or ``labels``): a 0 against a 3 is three steps of disagreement even
when no 1 or 2 was given. (scikit-learn's ``cohen_kappa_score`` weights by the index in its
``labels`` list; the two agree when the labels are a contiguous range, which is how the
tests compare them.) With no variation at all (both sources one and the same grade)
kappa is undefined: ``nan``.

The design's rule: an LLM judge's labels are backstopped with human labels. Grade a shared
sample both ways, and below a linear-weighted kappa of 0.6 (``min_kappa``) do not gate on
the LLM labels alone (:meth:`Agreement.recommendation`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["Agreement", "cohen_kappa", "compare_qrels"]

WEIGHTS = (None, "linear", "quadratic")


def _weight(kind: Optional[str], a: int, b: int) -> float:
    if kind is None:
        return 0.0 if a == b else 1.0
    if kind == "linear":
        return float(abs(a - b))
    if kind == "quadratic":
        return float((a - b) ** 2)
    raise ValueError(f"weights {kind!r}: expected None, 'linear' or 'quadratic'")


def _kappa_from_matrix(
    matrix: Sequence[Sequence[int]], labels: Sequence[int], weights: Optional[str]
) -> float:
    k = len(labels)
    n = sum(sum(r) for r in matrix)
    if n == 0:
        return float("nan")
    rows = [sum(matrix[i]) for i in range(k)]
    cols = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    observed = expected = 0.0
    for i in range(k):
        for j in range(k):
            w = _weight(weights, labels[i], labels[j])
            if w:
                observed += w * matrix[i][j] / n
                expected += w * rows[i] * cols[j] / (n * n)
    if expected == 0:
        return float("nan")
    return 1.0 - observed / expected


def _labels(values: Sequence[int], labels: Optional[Sequence[int]]) -> List[int]:
    if labels is not None:
        out = sorted(set(int(x) for x in labels))
        missing = sorted(set(values) - set(out))
        if missing:
            raise ValueError(f"grades {missing} are outside the given labels {out}")
        return out
    if not values:
        return []
    return list(range(min(values), max(values) + 1))


def _matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int]) -> List[List[int]]:
    index = {g: i for i, g in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for x, y in zip(a, b):
        m[index[x]][index[y]] += 1
    return m


def cohen_kappa(
    a: Sequence[int],
    b: Sequence[int],
    *,
    weights: Optional[str] = None,
    labels: Optional[Sequence[int]] = None,
) -> float:
    """Cohen's kappa of two equally long label sequences (weights: None, linear, quadratic)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels against {len(b)}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights {weights!r}: expected None, 'linear' or 'quadratic'")
    labs = _labels(list(a) + list(b), labels)
    return _kappa_from_matrix(_matrix(a, b, labs), labs, weights)


@dataclass
class Agreement:
    a_name: str
    b_name: str
    n: int  # pairs graded by both
    only_a: int
    only_b: int
    labels: List[int]
    confusion: List[List[int]]  # rows: a's grade, columns: b's grade
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    exact: float
    adjacent: float
    ci_linear: Optional[Tuple[float, float]] = None
    binarized_at: Optional[int] = None
    distribution_a: Dict[int, int] = field(default_factory=dict)
    distribution_b: Dict[int, int] = field(default_factory=dict)

    def recommendation(self, min_kappa: float = 0.6, min_pairs: int = 50) -> str:
        if self.n == 0:
            return (
                "RECOMMENDATION: the two sources share no graded pair, so nothing can be said "
                "about agreement. Have both grade a common sample (e.g. `judge pool "
                "--include-judged`, grade it with the LLM, compare here)."
            )
        k = self.kappa_linear
        ci = (
            f", 95% CI [{self.ci_linear[0]:.2f}, {self.ci_linear[1]:.2f}]"
            if self.ci_linear and not any(map(math.isnan, self.ci_linear))
            else ""
        )
        if math.isnan(k):
            return (
                "RECOMMENDATION: kappa is undefined (no variation in the grades on the "
                "overlap); compare on a sample that includes relevant and non-relevant pairs."
            )
        parts = []
        if k < min_kappa:
            parts.append(
                f"RECOMMENDATION: agreement is too low to gate on {self.b_name} alone "
                f"(linear-weighted kappa {k:.2f} < {min_kappa:.2f}{ci}). Backstop these labels "
                f"with human labels: have people grade the pairs the gates depend on, keep human "
                f"grades where both exist (`judge import --policy keep-existing`), and improve "
                f"the prompt or model before relying on it; re-check agreement after every "
                f"change of judge or prompt."
            )
        else:
            parts.append(
                f"OK: linear-weighted kappa {k:.2f} >= {min_kappa:.2f}{ci}; keep "
                f"spot-checking a human-graded sample when the judge or prompt changes."
            )
        if self.n < min_pairs:
            parts.append(
                f"Only {self.n} shared pairs: the estimate is uncertain; aim for at least {min_pairs}-100."
            )
        return "\n".join(parts)

    def format(self) -> str:
        binarized = "" if self.binarized_at is None else f", binarized at grade >= {self.binarized_at}"
        out = [
            f"agreement of {self.a_name} (rows) and {self.b_name} (columns){binarized}",
            f"  {self.n} pairs graded by both; {self.only_a} only in {self.a_name}, "
            f"{self.only_b} only in {self.b_name}",
        ]
        if self.n:
            out.extend(self._measure_lines())
            out.extend(self._confusion_lines())
        return "\n".join(out)

    def _measure_lines(self) -> List[str]:
        ci = (
            f"  (95% CI {self.ci_linear[0]:.3f} .. {self.ci_linear[1]:.3f})"
            if self.ci_linear and not any(map(math.isnan, self.ci_linear))
            else ""
        )
        return [
            f"  {name:<27}{value:.3f}{extra}"
            for name, value, extra in (
                ("Cohen's kappa", self.kappa, ""),
                ("weighted kappa, linear", self.kappa_linear, ci),
                ("weighted kappa, quadratic", self.kappa_quadratic, ""),
                ("exact agreement", self.exact, ""),
                ("adjacent (|a-b| <= 1)", self.adjacent, ""),
            )
        ]

    def _confusion_lines(self) -> List[str]:
        width = max(4, *(len(str(g)) for g in self.labels)) if self.labels else 4
        out = [f"  confusion matrix (rows {self.a_name}, columns {self.b_name}):"]
        out.append("    " + " " * width + "".join(f"{g:>{width + 2}}" for g in self.labels))
        for g, row in zip(self.labels, self.confusion):
            out.append(f"    {g:>{width}}" + "".join(f"{c:>{width + 2}}" for c in row))
        return out

    def to_dict(self) -> Dict[str, object]:
        def num(x: float) -> Optional[float]:
            return None if x is None or math.isnan(x) else x

        return {
            "a": self.a_name,
            "b": self.b_name,
            "n": self.n,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "labels": self.labels,
            "confusion": self.confusion,
            "kappa": num(self.kappa),
            "kappa_linear": num(self.kappa_linear),
            "kappa_quadratic": num(self.kappa_quadratic),
            "exact": num(self.exact),
            "adjacent": num(self.adjacent),
            "ci_linear": [num(x) for x in self.ci_linear] if self.ci_linear else None,
            "binarized_at": self.binarized_at,
        }


def _bootstrap_ci(
    xs: Sequence[int], ys: Sequence[int], labels: Sequence[int], rounds: int, seed: int
) -> Optional[Tuple[float, float]]:
    """Percentile 95% interval of the linear-weighted kappa over ``rounds`` resamples."""
    import numpy as np

    k = len(labels)
    index = {g: i for i, g in enumerate(labels)}
    cells = np.array([index[x] * k + index[y] for x, y in zip(xs, ys)], dtype=np.int64)
    n = len(cells)
    lab = np.asarray(labels, dtype=float)
    w = np.abs(lab[:, None] - lab[None, :])
    rng = np.random.default_rng(seed)
    values = []
    batch = max(1, min(rounds, 2_000_000 // max(n, 1)))
    done = 0
    while done < rounds:
        b = min(batch, rounds - done)
        sample = cells[rng.integers(0, n, size=(b, n))] + (np.arange(b) * k * k)[:, None]
        m = np.bincount(sample.ravel(), minlength=b * k * k).reshape(b, k, k) / n
        expected = m.sum(axis=2)[:, :, None] * m.sum(axis=1)[:, None, :]
        denom = (w * expected).sum(axis=(1, 2))
        num = (w * m).sum(axis=(1, 2))
        ok = denom > 0
        values.append(1.0 - num[ok] / denom[ok])
        done += b
    v = np.concatenate(values)
    if not len(v):
        return None
    lo, hi = np.quantile(v, [0.025, 0.975])
    return float(lo), float(hi)


def compare_qrels(
    a: Mapping[str, Mapping[str, int]],
    b: Mapping[str, Mapping[str, int]],
    *,
    a_name: str = "A",
    b_name: str = "B",
    labels: Optional[Sequence[int]] = None,
    binarize: Optional[int] = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Agreement:
    """Agreement of two label sources on the (query, doc) pairs both graded.

    ``binarize=t`` compares relevant (grade >= t) against not, e.g. a 0-3 LLM scale against
    binary human labels. ``bootstrap`` resamples the pairs for a 95% interval of the
    linear-weighted kappa (0 to skip)."""
    xs, ys, only_a, only_b = _overlap(a, b)
    if binarize is not None:
        xs = [int(x >= binarize) for x in xs]
        ys = [int(y >= binarize) for y in ys]
        labels = [0, 1]
    labs = _labels(xs + ys, labels)
    matrix = _matrix(xs, ys, labs)
    n = len(xs)
    exact = _share_within(xs, ys, 0)
    adjacent = _share_within(xs, ys, 1)
    ci = _bootstrap_ci(xs, ys, labs, bootstrap, seed) if bootstrap and n >= 2 else None
    return Agreement(
        a_name,
        b_name,
        n,
        only_a,
        only_b,
        labs,
        matrix,
        _kappa_from_matrix(matrix, labs, None),
        _kappa_from_matrix(matrix, labs, "linear"),
        _kappa_from_matrix(matrix, labs, "quadratic"),
        exact,
        adjacent,
        ci,
        binarize,
        _distribution(xs),
        _distribution(ys),
    )


def _overlap(
    a: Mapping[str, Mapping[str, int]], b: Mapping[str, Mapping[str, int]]
) -> Tuple[List[int], List[int], int, int]:
    """(a's grades, b's grades) of the pairs both graded, in a's order, and the number of
    pairs only a and only b graded."""
    xs: List[int] = []
    ys: List[int] = []
    only_a = only_b = 0
    for q, docs in a.items():
        other = b.get(q, {})
        for d, g in docs.items():
            if d in other:
                xs.append(int(g))
                ys.append(int(other[d]))
            else:
                only_a += 1
    for q, docs in b.items():
        mine = a.get(q, {})
        only_b += sum(1 for d in docs if d not in mine)
    return xs, ys, only_a, only_b


def _share_within(xs: Sequence[int], ys: Sequence[int], steps: int) -> float:
    """The share of pairs whose grades differ by at most ``steps`` (NaN without pairs)."""
    n = len(xs)
    return sum(abs(x - y) <= steps for x, y in zip(xs, ys)) / n if n else float("nan")


def _distribution(grades: Sequence[int]) -> Dict[int, int]:
    """grade -> how many times it was given, by grade."""
    counts: Dict[int, int] = {}
    for g in grades:
        counts[g] = counts.get(g, 0) + 1
    return dict(sorted(counts.items()))
