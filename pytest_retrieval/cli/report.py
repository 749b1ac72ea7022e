"""``pytest-retrieval report``: a JSON report (``--retrieval-report``) rendered as Markdown, HTML
or OpenMetrics, by the same code as the plugin's ``--retrieval-markdown``/``-html``/``-openmetrics``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .options import number
from .report_file import load_report

__all__ = ["load_report", "register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..output_paths import Output, check_outputs
    from ..reports.outputs import render_outputs

    check_outputs(  # a folder or FIFO: the writer's own line (a rendering not written)
        [
            Output("--markdown", args.markdown, "markdown"),
            Output("--html", args.html, "html"),
            Output("--openmetrics", args.openmetrics, "openmetrics"),
        ],
        [("the report", args.report)],
    )
    doc = load_report(args.report)
    if not (args.markdown or args.html or args.openmetrics):
        from ..reports.markdown import render_markdown

        sys.stdout.write(render_markdown(doc, limit=args.max_chars))
        return 0
    problems = render_outputs(
        doc,
        markdown=args.markdown and Path(args.markdown),
        html=args.html and Path(args.html),
        openmetrics=args.openmetrics and Path(args.openmetrics),
        say=lambda line: print(f"pytest-retrieval: {line}", file=sys.stderr),
        full_report=f"the JSON report ({Path(args.report).name})",
        limit=args.max_chars,
    )
    return 1 if problems else 0


def register(sub: Any) -> None:
    from ..reports.markdown import LIMIT

    r = sub.add_parser(
        "report",
        help="render a JSON report (--retrieval-report) as Markdown, HTML or OpenMetrics",
    )
    r.add_argument("report", help="the JSON report")
    r.add_argument(
        "--markdown", metavar="OUT.md", help="the Markdown summary (stdout when no output is named)"
    )
    r.add_argument("--html", metavar="OUT.html", help="the self-contained HTML report")
    r.add_argument("--openmetrics", metavar="OUT.txt", help="OpenMetrics text (GitLab metrics report)")
    r.add_argument(
        "--max-chars", type=number(int, ge=1), default=LIMIT, help=f"Markdown size limit (default {LIMIT:,})"
    )
    r.set_defaults(func=run)
