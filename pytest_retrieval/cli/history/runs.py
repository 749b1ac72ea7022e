"""``pytest-retrieval history list``: the stored runs, newest last, filtered by suite, branch
and date."""

from __future__ import annotations

import argparse
import json
from typing import Any, List

from .filters import add_filters, filters_of
from .store import add_store_option, open_from_args

__all__ = ["NAME", "register", "run", "run_rows"]

NAME = "list"


def run_rows(runs: List[Any]) -> List[List[str]]:
    """One row per ``RunEntry``: id (12 characters), time, branch, commit, pull request,
    verdict, suites, tags."""
    from ...history.views import run_verdict

    return [
        [
            r.id[:12],
            r.time.strftime("%Y-%m-%d %H:%M"),
            r.branch or "-",
            (r.commit or "-")[:12],
            r.pull_request or "-",
            run_verdict(r),
            ", ".join(r.suites) or "-",
            ", ".join(r.tags) or "-",
        ]
        for r in runs
    ]


def run(args: argparse.Namespace) -> int:
    from ...reports.formats import text_table
    from ...safe_names import one_line

    store = open_from_args(args)
    try:
        runs = store.runs(**filters_of(args), limit=args.limit)
    finally:
        store.close()
    if args.json:
        print(json.dumps([_entry_dict(r) for r in runs], indent=2))
        return 0
    if not runs:
        print(one_line(f"history {store.location}: no run{_filtered(args)}"))
        return 0
    head = ["run", "time (UTC)", "branch", "commit", "PR", "verdict", "suites", "tags"]
    print(
        one_line(f"history {store.location}: {len(runs)} run{'s' if len(runs) != 1 else ''}{_filtered(args)}")
    )
    for line in text_table(head, run_rows(runs), left=range(8)):
        print(line.rstrip())
    return 0


def _filtered(args: argparse.Namespace) -> str:
    parts = [f"{k} {v}" for k, v in (("suite", args.suite), ("branch", args.branch)) if v is not None]
    parts += [f"{k} {v:%Y-%m-%d %H:%M}" for k, v in (("since", args.since), ("until", args.until)) if v]
    return f" ({', '.join(parts)})" if parts else ""


def _entry_dict(r: Any) -> Any:
    from ...history.record import format_time
    from ...history.views import run_verdict

    return {
        "id": r.id,
        "time": format_time(r.time),
        "commit": r.commit,
        "branch": r.branch,
        "ci_job": r.ci_job,
        "pull_request": r.pull_request,
        "host": r.host,
        "partial": r.partial,
        "exitstatus": r.exitstatus,
        "verdict": run_verdict(r),
        "suites": list(r.suites),
        "tags": list(r.tags),
    }


def register(sub: Any) -> None:
    p = sub.add_parser(NAME, help="the stored runs (filter by suite, branch, date)")
    add_store_option(p)
    add_filters(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
