"""``pytest-retrieval history trend``: per suite, retriever and metric, the values of the stored
runs with a terminal sparkline (ASCII when stdout cannot write the block characters), and with
``--html PATH`` one self-contained page with a chart per gated metric
(``reports/history_page.py``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, List

from ..options import metric_name
from .filters import add_filters, filters_of
from .store import add_store_option, open_from_args

__all__ = ["NAME", "register", "run"]

NAME = "trend"
DEFAULT_RUNS = 30  # the newest runs a trend reads unless --limit says otherwise
GATED_FROM = 10  # the default metrics: those gated in the newest 10 runs


def run(args: argparse.Namespace) -> int:
    from ...history.views import series_of
    from ...output_paths import Output

    store = open_from_args(args, [Output("--html", args.html, "html")])
    try:
        runs = store.runs(**filters_of(args), include_partial=args.include_partial, limit=args.limit)
        points = _points(store, args, {r.id for r in runs})
    finally:
        store.close()
    series = series_of(points, gated_only=not (args.all or args.metric))
    _print_table(store.location, runs, series, ascii=args.ascii or _ascii_stdout())
    if args.html:
        from ...fileio import atomic_write
        from ...reports.history_page import render_history_page

        page = render_history_page(store.location, runs, series, commit_url=args.commit_url)
        atomic_write(args.html, lambda fh: fh.write(page), fsync=False)
        print(f"history page written: {args.html}")
    return 0


def _points(store: Any, args: argparse.Namespace, ids: Any) -> List[Any]:
    """The points of the runs ``ids``: of the ``--metric`` ones, of every metric (``--all``), or
    of the metrics gated in the newest ``GATED_FROM`` runs, each metric read on its own (a
    store reads one metric of 1,000 runs much faster than every metric of them)."""
    kw = dict(
        suite=args.suite,
        retriever=args.retriever,
        branch=args.branch,
        since=args.since,
        include_partial=args.include_partial,
    )
    metrics: List[Any] = list(args.metric or [])
    if not metrics and not args.all:
        newest = store.points(**kw, limit_runs=GATED_FROM)
        metrics = list(dict.fromkeys(p.metric for p in newest if p.gated))
    # without --until, the newest --limit runs of the same filters are the runs listed
    limit = args.limit if args.until is None else None
    out = []
    for metric in metrics or [None]:
        out += [p for p in store.points(**kw, metric=metric, limit_runs=limit) if p.run_id in ids]
    if len(metrics) > 1:
        out.sort(key=lambda p: p.time)  # stable: oldest run first, each run's points as stored
    return out


def _ascii_stdout() -> bool:
    from ...history.views import wants_ascii

    return wants_ascii(getattr(sys.stdout, "encoding", None))


def _print_table(location: str, runs: List[Any], series: List[Any], *, ascii: bool) -> None:
    from ...history.views import sparkline
    from ...reports.formats import text_table
    from ...safe_names import one_line

    if not runs:
        print(one_line(f"history {location}: no run to show a trend of"))
        return
    span = f"{runs[0].time:%Y-%m-%d} .. {runs[-1].time:%Y-%m-%d}"
    print(one_line(f"history {location}: {len(runs)} run{'s' if len(runs) != 1 else ''}, {span}"))
    if not series:
        print("no metric of these runs matches")
        return
    head = [
        "suite",
        "retriever",
        "metric",
        "runs",
        "first",
        "last",
        "change",
        "min",
        "max",
        "trend",
        "verdict",
    ]
    rows = []
    for s in series:
        values = s.values
        change = s.change()
        rows.append(
            [
                s.suite,
                s.retriever,
                s.metric + ("" if s.gated else " (not gated)"),
                str(len(values)),
                _num(values[0]),
                _num(values[-1]),
                "-" if change is None else f"{change:+.4f}",
                _num(min(values)),
                _num(max(values)),
                sparkline(values, ascii=ascii),
                s.points[-1].verdict or "-",
            ]
        )
    for line in text_table(head, rows, left=(0, 1, 2, 9, 10)):
        print(line.rstrip())


def _num(x: float) -> str:
    return f"{x:.4f}" if abs(x) < 1000 else f"{x:.1f}"


def commit_url(text: str) -> str:
    """An http(s) URL template holding ``{commit}`` once (no other braces)."""
    from string import Formatter

    try:
        fields = [f for _, f, _, _ in Formatter().parse(text) if f is not None]
    except ValueError:
        fields = ["?"]
    if not text.lower().startswith(("http://", "https://")) or fields != ["commit"]:
        raise argparse.ArgumentTypeError(
            "not an http(s) URL with {commit} once (e.g. https://github.com/ORG/REPO/commit/{commit})"
        )
    return text


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME, help="per suite, retriever and metric: the stored runs' values with a sparkline; --html a page"
    )
    add_store_option(p)
    add_filters(p, limit_default=DEFAULT_RUNS, limit_help=f"the newest N runs (default {DEFAULT_RUNS})")
    p.add_argument("--retriever", metavar="NAME", default=None, help="only this retriever")
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        type=metric_name,
        help="only these metrics (default: the gated ones)",
    )
    p.add_argument("--all", action="store_true", help="every stored metric, not only the gated ones")
    p.add_argument(
        "--include-partial", action="store_true", help="also partial runs (some gates got no verdict)"
    )
    p.add_argument(
        "--ascii", action="store_true", help="an ASCII sparkline (default: when stdout is not UTF-8)"
    )
    p.add_argument(
        "--html", metavar="PATH", default=None, help="also write one self-contained page of charts"
    )
    p.add_argument(
        "--commit-url",
        metavar="TEMPLATE",
        type=commit_url,
        default=None,
        help="a point of the page links to this URL, {commit} replaced by the run's commit "
        "(e.g. https://github.com/ORG/REPO/commit/{commit}; default: the run's row on the page)",
    )
    p.set_defaults(func=run)
