"""Stability gates (issue #33): how far each query's ranking moved from the baseline's stored one,
gated per retriever and measure, with no judgments needed. Pure, no I/O.

A stability gate is what a team sets when a change should not touch ranking (a refactor, an
engine upgrade, a replica change): ``stability: {rrf: {rbo@10: 0.90, top1_changed: 0.05}}``.
A similarity (``rbo@k``, ``rbo_ext@k``, ``jaccard@k``, ``overlap@k``, ``kendall_tau@k``) is a
floor: the mean over the compared queries must be at least the threshold. A share of changed
queries (``top1_changed``, ``topk_changed@k``) or a rank change (``rank_change@k``) is a
ceiling. The compared queries are the canary queries (``judgments.canary``: unlabelled, scored
by these measures only) and the judged ones, each against its ranking in the baseline; their
figures are reported apart.

The never-silent rules are the baseline gate's (:mod:`.comparable`): a changed corpus, index or
engine is the system under test, compared and named; a query whose text changed since the
baseline, or that left the set, is left out and counted; a query added since is not compared
and counted; a baseline without stored rankings for the gate's retriever, or stored shallower
than the gate's k, is an error that says to rewrite the baseline, never a pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..errors import ConfigError
from .stability_measures import per_query_values

__all__ = [
    "MAX_STABILITY_DEPTH",
    "StabilityGate",
    "StabilityOutcome",
    "Compared",
    "parse_stability_measure",
    "stability_depth",
    "compare_rankings",
    "judge_stability",
    "entered_unjudged",
    "REWRITE_HINT",
]

#: the deepest ranking a stability measure may ask for (the baseline stores at most this much)
MAX_STABILITY_DEPTH = 100
#: what to do about a baseline that cannot serve a stability gate
REWRITE_HINT = "rewrite the baseline with pytest --retrieval-baseline-update"

#: the comparison measures gated as ceilings (a share of changed queries, a rank change, RBO's
#: residual); every other one is a similarity, gated as a floor
CEILINGS = ("top1_changed", "topk_changed", "rank_change", "rbo_res")


def parse_stability_measure(text: str) -> Tuple[str, str, int]:
    """``rbo@10`` -> (its name as shown, op, k): a comparison measure of the registry
    (measures/comparison_registry.py); ``ValueError`` for another metric or none. The name
    shown drops a default persistence (``rbo@10``, not ``rbo(0.9)@10``); ``top1_changed`` has
    k 1."""
    from ..measures.metrics import parse_metric
    from ..measures.registry import BY_NAME

    m = parse_metric(str(text).strip())
    measure = BY_NAME[m.name]
    if not measure.compares_rankings:
        raise ValueError(
            f"{m} is scored against judgments: gate it under floors or regression.max_drop; a "
            f"stability measure compares two rankings ({', '.join(_comparison_names())})"
        )
    k = int(m.k) if m.k is not None else 1
    if k > MAX_STABILITY_DEPTH:
        raise ValueError(f"{m}: the cut-off lies in 1..{MAX_STABILITY_DEPTH}")
    shown = str(m)
    default = measure.param.default if measure.param is not None else None
    if m.param is not None and m.param == default:
        shown = f"{m.name}@{m.k}" if m.k is not None else m.name
    return shown, ("<=" if m.name in CEILINGS else ">="), k


def _comparison_names() -> List[str]:
    from ..measures.registry import MEASURES

    return [f"{m.name}@k" if m.cutoff == "required" else m.name for m in MEASURES if m.compares_rankings]


@dataclass(frozen=True)
class StabilityGate:
    """A retriever's stability measure against the baseline's stored rankings (``stability``)."""

    retriever: str
    measure: str  # canonical: rbo@10, top1_changed, ...
    op: str  # ">=" (a similarity) or "<=" (a share of changed queries, a rank change)
    threshold: float
    k: int
    origin: str = ""  # "file:line" where it was written

    @property
    def name(self) -> str:
        return f"stability:{self.measure}"


def stability_depth(gates: Sequence[StabilityGate], canary: bool = False) -> int:
    """How deep the baseline keeps each ranking for the stability gates: their deepest k (10
    when the suite has canary queries but no gate: the summary's top 10)."""
    ks = [g.k for g in gates]
    if canary:
        ks.append(10)
    return min(max(ks, default=0), MAX_STABILITY_DEPTH)


@dataclass
class Compared:
    """The rankings of one retriever compared with the baseline's: ``before``/``now`` per
    compared query, which are canaries, and what was not compared and why."""

    before: Dict[str, List[str]]
    now: Dict[str, List[str]]
    canary: Set[str]
    left_out: Dict[str, str] = field(default_factory=dict)  # qid -> why (text changed, ...)
    new: int = 0  # queries of this run the baseline has no ranking of
    depth: int = 0  # how deep the baseline stored them
    system: List[str] = field(default_factory=list)  # the system changes, compared and named
    against: str = "the baseline"  # what the rankings are compared with: the baseline, a stored run
    hint: str = REWRITE_HINT  # what to do when it cannot serve a gate

    @property
    def judged(self) -> List[str]:
        return [q for q in self.before if q not in self.canary]


def compare_rankings(
    stored: Mapping[str, Sequence[str]],
    current: Mapping[str, Sequence[str]],
    *,
    canary: Set[str],
    old_texts: Mapping[str, str],
    new_texts: Mapping[str, str],
    depth: int,
    system: Sequence[str] = (),
    against: str = "the baseline",
    hint: str = REWRITE_HINT,
) -> Compared:
    """The queries ranked both in the baseline (``stored``: qid -> its top ``depth``) and now
    (``current``), whose text hash is the same in both (``old_texts``/``new_texts``: qid ->
    hash); the others counted: left out (text changed, no longer in the set) or new."""
    out = Compared(
        before={}, now={}, canary=set(), depth=depth, system=list(system), against=against, hint=hint
    )
    for q, before in stored.items():
        if q not in current:
            out.left_out[q] = "no longer in the set"
        elif q in old_texts and old_texts.get(q) != new_texts.get(q):
            out.left_out[q] = "text changed"
        else:
            out.before[q] = list(map(str, before))
            out.now[q] = list(map(str, current[q]))
            if q in canary:
                out.canary.add(q)
    out.new = sum(1 for q in current if q not in stored)
    return out


@dataclass
class StabilityOutcome:
    suite: str
    gate: StabilityGate
    value: float
    passed: bool
    message: str
    canary_value: Optional[float] = None  # the mean over the canary queries alone
    judged_value: Optional[float] = None  # over the judged queries alone
    canary: int = 0
    judged: int = 0
    left_out: int = 0
    new: int = 0
    against: str = "the baseline"  # what the rankings were compared with

    def as_dict(self) -> Dict[str, Any]:
        g = self.gate
        return {
            "retriever": g.retriever,
            "measure": g.measure,
            "op": g.op,
            "threshold": g.threshold,
            "value": self.value,
            "passed": self.passed,
            "canary": {"queries": self.canary, "value": self.canary_value},
            "judged": {"queries": self.judged, "value": self.judged_value},
            "left_out": self.left_out,
            "new": self.new,
            "against": self.against,
            "origin": g.origin,
        }


def _mean(values: Sequence[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None


def judge_stability(
    suite: str,
    gate: StabilityGate,
    compared: Compared,
    *,
    texts: Mapping[str, str],
    titles: Mapping[str, str],
    judged_docs: Mapping[str, Mapping[str, int]],
    n_worst: int = 5,
) -> StabilityOutcome:
    """The gate's verdict over the compared queries; ``ConfigError`` when the baseline's
    rankings cannot serve it (none compared, stored shallower than k)."""
    head = f"{suite} :: {gate.retriever} :: {gate.name}"
    if compared.depth < gate.k and compared.before:
        raise ConfigError(
            f"{head}: {compared.against} stores each ranking's top {compared.depth}, {gate.measure} needs "
            f"the top {gate.k}; {compared.hint}"
        )
    if not compared.before:
        raise ConfigError(
            f"{head}: no query of this run has a ranking in {compared.against} to compare with; {compared.hint}"
        )
    every = per_query_values(gate.measure, compared.before, compared.now)
    values = {q: v for q, v in every.items() if not math.isnan(v)}  # tau, rank change: undefined
    if not values:
        raise ConfigError(
            f"{head}: undefined for every compared query (fewer than 2 documents of the top {gate.k} "
            "shared with the baseline's): gate rbo or jaccard instead"
        )
    value = math.fsum(values.values()) / len(values)
    passed = value >= gate.threshold if gate.op == ">=" else value <= gate.threshold
    can = [values[q] for q in compared.canary if q in values]
    jud = [values[q] for q in compared.judged if q in values]
    out = StabilityOutcome(
        suite,
        gate,
        value,
        passed,
        "",
        _mean(can),
        _mean(jud),
        len(can),
        len(jud),
        len(compared.left_out),
        compared.new,
    )
    out.against = compared.against
    out.message = _message(head, out, compared, values, texts, titles, judged_docs, n_worst)
    return out


def _message(
    head: str,
    out: StabilityOutcome,
    compared: Compared,
    values: Mapping[str, float],
    texts: Mapping[str, str],
    titles: Mapping[str, str],
    judged_docs: Mapping[str, Mapping[str, int]],
    n_worst: int,
) -> str:
    g = out.gate
    if out.passed:
        return f"{head} = {out.value:.4f} ({g.op} {g.threshold:.4f}: ok); {_scope(out)}"
    word = "below the floor" if g.op == ">=" else "above the ceiling"
    lines = [
        f"{head} = {out.value:.4f}, {word} {g.op} {g.threshold:.4f} (off by {abs(out.value - g.threshold):.4f})"
    ]
    if g.origin:
        lines.append(f"  set at {g.origin}")
    lines.append(f"  against {out.against}'s rankings: {_scope(out)}")
    lines += [f"  system changes, compared: {s}" for s in compared.system]
    worst = most_changed(values, g.op, n_worst, compared, max(g.k, 10))
    if worst:
        lines.append(
            f"  the {len(worst)} most changed queries (top {min(g.k, compared.depth) if g.k > 1 else 10}):"
        )
    for q in worst:
        kind = "canary" if q in compared.canary else "judged"
        text = _clip(texts.get(q, ""), 70)
        lines.append(f"    {values[q]:.4f}  {q} ({kind})  {text}")
        lines += [
            f"      {line}"
            for line in diff_lines(
                compared.before[q], compared.now[q], max(g.k, 10), titles, judged_docs.get(q, {})
            )
        ]
    return "\n".join(lines)


def _scope(out: StabilityOutcome) -> str:
    parts = []
    if out.canary:
        parts.append(f"{out.canary:,} canary queries {out.canary_value:.4f}")
    if out.judged:
        parts.append(f"{out.judged:,} judged queries {out.judged_value:.4f}")
    text = ", ".join(parts) or "no query"
    if out.left_out:
        text += f"; {out.left_out:,} left out (text changed or no longer in the set)"
    if out.new:
        text += f"; {out.new:,} new since {out.against}, not compared"
    return text


def most_changed(values: Mapping[str, float], op: str, n: int, compared: Compared, k: int) -> List[str]:
    """The ``n`` queries that moved most (the lowest similarity, or the highest change) among
    those whose top ``k`` differs from the baseline's."""
    sign = 1.0 if op == ">=" else -1.0
    moved = sorted((sign * v, q) for q, v in values.items() if compared.before[q][:k] != compared.now[q][:k])
    return [q for _, q in moved[:n]]


def diff_lines(
    before: Sequence[str],
    now: Sequence[str],
    k: int,
    titles: Mapping[str, str],
    judged: Mapping[str, int],
    limit: int = 5,
) -> List[str]:
    """``left: d1 "title" (was #2), ...`` and ``entered: d9 "title" (#1, unjudged)``."""
    b, n = list(before[:k]), list(now[:k])
    if b == n:
        return [f"top {k} unchanged"]
    rank_b = {d: i for i, d in enumerate(b, 1)}
    rank_n = {d: i for i, d in enumerate(n, 1)}
    left = [f"{_named(d, titles)} (was #{r})" for d, r in rank_b.items() if d not in rank_n]
    entered = [
        f"{_named(d, titles)} (#{r}, {_grade(judged.get(d))})" for d, r in rank_n.items() if d not in rank_b
    ]
    out = []
    if left:
        out.append(
            f"left the top {k}: "
            + ", ".join(left[:limit])
            + (f", {len(left) - limit} more" if len(left) > limit else "")
        )
    if entered:
        out.append(
            "entered: "
            + ", ".join(entered[:limit])
            + (f", {len(entered) - limit} more" if len(entered) > limit else "")
        )
    if not left and not entered:
        out.append(f"same documents, reordered: {' '.join(n[:limit])}")
    return out


def _grade(grade: Optional[int]) -> str:
    return "unjudged" if grade is None else f"grade {grade}"


def _named(doc: str, titles: Mapping[str, str]) -> str:
    t = titles.get(doc)
    return f'{doc} "{_clip(t, 50)}"' if t else doc


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def entered_unjudged(
    compared: Compared, judged_docs: Mapping[str, Mapping[str, int]], k: int = 10
) -> Dict[str, List[Tuple[str, int]]]:
    """Per compared query, the documents that entered its top ``k`` since the baseline and have
    no judgment: (doc id, rank now)."""
    out: Dict[str, List[Tuple[str, int]]] = {}
    for q, before in compared.before.items():
        had = set(before[:k])
        judged = judged_docs.get(q, {})
        new = [(d, r) for r, d in enumerate(compared.now[q][:k], 1) if d not in had and d not in judged]
        if new:
            out[q] = new
    return out
