"""A suite's ``regression`` block (issues #28, #37): the baseline gates (``max_drop``: each
retriever's metric against the committed baseline) and the reference gates
(``reference.max_total_drop``: against a pinned run of the history), one per (retriever, metric),
each metric refused in one line when no paired mean difference can gate it."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..gates.floors import BaselineGate, ReferenceGate
from .yamlio import KeyPath, locate

__all__ = ["baseline_gates", "parse_regression", "parse_reference"]


def _regression_metric(suite: Any, m: Any, key: KeyPath = ()) -> str:
    """The canonical name of a ``regression.max_drop`` key."""
    return _gate_metric(suite, m, key or ("regression", "max_drop", m))


def _gate_metric(suite: Any, m: Any, key: KeyPath) -> str:
    """The canonical name of a paired gate's metric key (``regression.max_drop``,
    ``regression.reference.max_total_drop``), refused in one line when it is no metric or no
    score a paired mean difference can gate."""
    from ..measures.metrics import gate_problem, parse_metric

    try:
        canon = str(parse_metric(str(m)))
    except ValueError as exc:
        raise suite.error(key, str(exc)) from None
    problem = gate_problem(canon, regression=True)
    if problem:
        raise suite.error(key, problem)
    return canon


def parse_regression(suite: Any, metrics: List[str]) -> List[BaselineGate]:
    """(retriever, canonical metric, max drop) of every baseline comparison, each with the
    file:line of its ``max_drop``; metrics compared are appended to ``metrics``."""
    reg = suite.model.regression
    if reg is None:
        return []
    return baseline_gates(suite, suite, reg.max_drop, reg.retrievers, metrics)


def baseline_gates(
    suite: Any, scope: Any, max_drop: Dict[str, float], retrievers: Optional[List[str]], metrics: List[str]
) -> List[BaselineGate]:
    """The baseline gates of a ``regression`` block: the suite's, or a team file's (``scope``
    names the file its mistakes and its origins point at: ``error`` and ``positions``)."""
    names = retrievers or list(suite.model.retrievers)
    for i, r_name in enumerate(names):
        if r_name not in suite.model.retrievers:
            raise scope.error(("regression", "retrievers", i), f"unknown retriever {suite.shown(r_name)}")
    out: List[BaselineGate] = []
    seen: Dict[str, str] = {}
    for m, margin in max_drop.items():
        key = ("regression", "max_drop", m)
        canon = _regression_metric(scope, m, key)
        if canon in seen:
            raise scope.error(key, f"{m!r} and {seen[canon]!r} are the same metric: keep one")
        seen[canon] = str(m)
        if canon not in metrics:
            metrics.append(canon)
        file, line = locate(scope.positions, key)
        origin = f"{file}:{line}" if file else ""
        out += [BaselineGate(r_name, canon, float(margin), origin=origin) for r_name in names]
    return out


def parse_reference(suite: Any, metrics: List[str]) -> List[ReferenceGate]:
    """(retriever, canonical metric, max total drop) of every comparison with the pinned
    reference run (``regression.reference``), for the retrievers the baseline gates compare."""
    reg = suite.model.regression
    if reg is None or reg.reference is None:
        return []
    run = reg.reference.run
    if not run.strip() or not run.isprintable():
        raise suite.error(
            ("regression", "reference", "run"), "name the reference run: a tag, a commit or a run id"
        )
    names = reg.retrievers or list(suite.model.retrievers)
    out: List[ReferenceGate] = []
    seen: Dict[str, str] = {}
    for m, margin in reg.reference.max_total_drop.items():
        key = ("regression", "reference", "max_total_drop", m)
        canon = _gate_metric(suite, m, key)
        if canon in seen:
            raise suite.error(key, f"{m!r} and {seen[canon]!r} are the same metric: keep one")
        seen[canon] = str(m)
        if canon not in metrics:
            metrics.append(canon)
        out += [ReferenceGate(r_name, canon, float(margin)) for r_name in names]
    return out
