"""``pytest-retrieval history drift``: a sustained shift of a metric across stored runs whose
pipeline did not change (scheduled runs against a live index), with the fingerprint changes
around it as candidate causes (gates/drift.py, stats/changepoint.py). ``--fail`` makes it a gate:
exit 1 when a shift is flagged.

The false-alarm rate is the command's, not one series': ``--alpha`` is split evenly over the
series tested (Bonferroni), so on runs of an unchanged system the command flags anything with a
probability of at most ``--alpha`` (measured: tests/stats/test_changepoint.py,
benchmarks/history_slide.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List, Mapping, Tuple

from ...errors import HistoryError
from ..options import number
from .store import add_store_option, open_from_args

__all__ = ["NAME", "register", "run"]

NAME = "drift"

Key = Tuple[str, str, str]


def run(args: argparse.Namespace) -> int:
    from ...gates.drift import detect_drift

    store = open_from_args(args)
    try:
        entries = store.runs(suite=args.suite, branch=args.branch, include_partial=False, limit=args.last)
        points = store.points(
            suite=args.suite,
            retriever=args.retriever,
            branch=args.branch,
            include_partial=False,
            limit_runs=args.last,
        )
    finally:
        store.close()
    series = _series(points, args.metric)
    if not series:
        what = ", ".join(f"{k} {v!r}" for k, v in _filters(args).items()) or "any suite"
        metrics = ", ".join(repr(m) for m in args.metric) or "no gated metric"
        raise HistoryError(
            f"history {store.location}: no stored runs of {what} with {metrics} (name one with --metric)"
        )
    alpha = args.alpha / len(series)  # Bonferroni over the series: the command's false-alarm rate <= --alpha
    fingerprints = _fingerprints(entries)
    findings = [
        detect_drift(
            suite,
            retriever,
            metric,
            values,
            fingerprints.get(suite, {}),
            alpha=alpha,
            min_segment=args.min_segment,
            min_shift=args.min_shift,
            n_permutations=args.permutations,
            seed=args.seed,
        )
        for (suite, retriever, metric), values in series.items()
    ]
    flagged = [f for f in findings if f.flagged]
    if args.json:
        print(json.dumps({"alpha": args.alpha, "series": [f.as_dict() for f in findings]}, indent=2))
    else:
        print(
            f"history {store.location}: drift over {len(series)} series (CUSUM change-point, permutation test; "
            f"alpha {args.alpha:g} in all, {alpha:.3g} per series): {len(flagged)} flagged"
        )
        for f in findings:
            print(f.describe())
    return 1 if flagged and args.fail else 0


def _filters(args: argparse.Namespace) -> Dict[str, str]:
    return {k: str(getattr(args, k)) for k in ("suite", "retriever", "branch") if getattr(args, k)}


def _series(points: List[Any], metrics: List[str]) -> Dict[Key, List[Any]]:
    """(suite, retriever, metric) -> its points, oldest first: the metrics named, else the gated ones."""
    gated = {(p.suite, p.retriever, p.metric) for p in points if p.gated}
    out: Dict[Key, List[Any]] = {}
    for p in points:
        key = (p.suite, p.retriever, p.metric)
        if (p.metric in metrics) if metrics else (key in gated):
            out.setdefault(key, []).append(p)
    return out


def _fingerprints(entries: List[Any]) -> Dict[str, Dict[str, Mapping[str, Any]]]:
    """suite -> run id -> the suite's fingerprint in that run."""
    out: Dict[str, Dict[str, Mapping[str, Any]]] = {}
    for e in entries:
        for suite, fp in (e.fingerprints or {}).items():
            out.setdefault(suite, {})[e.id] = fp
    return out


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="flag a sustained shift of a metric across runs whose pipeline did not change",
        description=__doc__,
    )
    add_store_option(p)
    p.add_argument("--suite", default=None, help="only this suite")
    p.add_argument("--retriever", default=None, help="only this retriever")
    p.add_argument(
        "--metric", action="append", default=[], help="a metric to test (repeatable; default: the gated ones)"
    )
    p.add_argument("--branch", default=None, help="only the runs of this branch (e.g. the scheduled one's)")
    p.add_argument("--last", metavar="N", type=number(int, ge=2), default=None, help="only the newest N runs")
    p.add_argument(
        "--alpha",
        type=number(float, gt=0, lt=1),
        default=0.05,
        help="false-alarm rate of the whole command on an unchanged system (default 0.05)",
    )
    p.add_argument(
        "--min-shift",
        type=number(float, ge=0),
        default=0.0,
        help="never flag a shift smaller than this (default 0: any significant one)",
    )
    p.add_argument(
        "--min-segment",
        metavar="RUNS",
        type=number(int, ge=1),
        default=3,
        help="runs needed on each side of a shift for it to be sustained (default 3)",
    )
    p.add_argument(
        "--permutations",
        type=number(int, ge=99),
        default=2000,
        help="permutations of the test (default 2000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the permutations (default 0)")
    p.add_argument("--fail", action="store_true", help="a gate: exit 1 when a shift is flagged")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(func=run)
