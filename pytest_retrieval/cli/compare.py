"""``pytest-retrieval compare``: two JSON reports side by side (values, difference, paired test,
won/lost/tied), optionally failing on a regression."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .options import metric_name, number
from .report_file import load_report

__all__ = ["add_compare_options", "compare_documents", "register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..output_paths import Output, check_outputs

    check_outputs(  # a folder or FIFO: the writer's own line (a rendering not written)
        [Output("--markdown", args.markdown, "markdown")], [("the report", args.a), ("the report", args.b)]
    )
    a, b = load_report(args.a), load_report(args.b)
    return compare_documents(args, a, b, (Path(args.a).name, Path(args.b).name))


def compare_documents(args: argparse.Namespace, a: Any, b: Any, names: Any) -> int:
    """Compare two report documents (files, or two stored runs' records: ``history
    compare``) with the options of :func:`add_compare_options`; the exit status."""
    from ..reports.compare import compare_reports, render_compare_markdown, render_compare_text

    cmp = compare_reports(
        a,
        b,
        metrics=args.metric,
        max_drop=args.max_drop,
        confidence=args.confidence,
        resamples=args.resamples,
        names=names,
    )
    if args.json:
        print(json.dumps(cmp.as_dict(), indent=2))
    else:
        print(render_compare_text(cmp))
    if args.markdown:
        from ..fileio import atomic_write

        markdown = render_compare_markdown(cmp)
        atomic_write(args.markdown, lambda fh: fh.write(markdown), fsync=False)
    if not args.fail_on_regression:
        return 0
    if cmp.regressions:
        return 1
    return 2 if cmp.unchecked() else 0  # not checked is not passed: an error, distinct from a regression


def register(sub: Any) -> None:
    c = sub.add_parser(
        "compare",
        help="two JSON reports side by side: values, difference, paired test, won/lost/tied",
    )
    c.add_argument("a", help="the reference JSON report (e.g. main)")
    c.add_argument("b", help="the JSON report compared with it (e.g. the pull request)")
    add_compare_options(c)
    c.set_defaults(func=run)


def add_compare_options(c: argparse.ArgumentParser) -> None:
    """The options of a comparison (metrics, margin, test, exit status, outputs)."""
    c.add_argument(
        "-m", "--metric", action="append", type=metric_name, help="metrics compared (default: the gated ones)"
    )
    c.add_argument(
        "--max-drop",
        type=number(float, ge=0),
        default=None,
        help="largest tolerated mean drop (default: B's regression.max_drop, else 0.01)",
    )
    c.add_argument(
        "--confidence",
        type=number(float, gt=0, lt=1),
        default=None,
        help="of the paired test (default: B's regression.confidence, else 0.95)",
    )
    c.add_argument(
        "--resamples",
        type=number(int, ge=1),
        default=None,
        help="of the paired test (default: B's regression.resamples, else 10000)",
    )
    c.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a gated metric regressed beyond its margin (non-inferiority not shown); "
        "exit 2 when something gated could not be checked (a suite errored, missing or unpaired, "
        "no per-query values)",
    )
    c.add_argument("--markdown", metavar="OUT.md", help="also write the comparison as Markdown")
    c.add_argument("--json", action="store_true", help="print JSON")
