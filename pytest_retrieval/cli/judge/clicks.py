"""``judge clicks``: a click log -> graded qrels and a queries file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from ...errors import RetrievalError
from ..options import add_progress_option, fraction, number
from .console import say

__all__ = ["register", "run"]

# the ClickGrading settings named as their options
_SAME_AS_OPTIONS = (
    "long_dwell",
    "position_bias",
    "click_rate",
    "long_click_rate",
    "min_impressions",
    "min_examinations",
)


def run(args: argparse.Namespace) -> int:
    from ...io.queries import load_queries
    from ...judge.clicks import grade_clicks, write_click_judgments
    from ...output_paths import Output
    from ..options import check_output_files

    check_output_files(
        [
            Output("--qrels-out", args.qrels_out, "qrels"),
            Output("--queries-out", args.queries_out, "queries"),
            Output("--stats-out", args.stats_out, "tsv"),
        ],
        [("the log", args.log), ("--query-texts", args.query_texts)],
    )
    grades = _grades(args.grades)
    columns = _columns(args.column)
    grading = _grading(args, grades)
    texts = load_queries(Path(args.query_texts)) if args.query_texts else None
    result = grade_clicks(
        args.log, grading, columns=columns, query_texts=texts, progress=None if args.progress else False
    )
    if not result.qrels:
        raise RetrievalError(f"{args.log}: no (query, doc) pair was graded; nothing written")
    if result.generated_ids and not args.queries_out:
        raise RetrievalError(
            "the log names queries by text: give --queries-out FILE for the "
            "queries file with the generated ids"
        )
    write_click_judgments(result, args.qrels_out, args.queries_out, args.stats_out)
    say(result.summary())
    wrote = [f"qrels {args.qrels_out}"]
    wrote += [f"queries {args.queries_out}"] if args.queries_out else []
    wrote += [f"evidence {args.stats_out}"] if args.stats_out else []
    say("wrote " + ", ".join(wrote))
    return 0


def _grading(args: argparse.Namespace, grades: Tuple[int, int, int]) -> Any:
    """The ``ClickGrading`` of the command line."""
    from ...judge.clicks import ClickGrading

    g0, g1, g2 = grades
    return ClickGrading(
        grade_impression=g0,
        grade_click=g1,
        grade_long_click=g2,
        position_base=0 if args.positions_from_zero else 1,
        **{name: getattr(args, name) for name in _SAME_AS_OPTIONS},
    )


def _grades(text: str) -> Tuple[int, int, int]:
    """``--grades impression,click,long-click``."""
    try:
        g0, g1, g2 = (int(x) for x in text.split(","))
    except ValueError:
        raise RetrievalError(
            f"--grades {text!r}: expected three integers 'impression,click,long-click' such as 0,1,2"
        ) from None
    return g0, g1, g2


def _columns(specs: Optional[Sequence[str]]) -> Dict[str, str]:
    """``--column ROLE=NAME`` options as {role: column name}."""
    columns = {}
    for spec in specs or []:
        role, eq, name = spec.partition("=")
        if not eq or not role.strip() or not name.strip():
            raise RetrievalError(f"--column {spec!r}: expected ROLE=NAME, e.g. query=search_term")
        columns[role.strip()] = name.strip()
    return columns


def register(sub: Any) -> None:
    """``judge clicks``: a click log -> graded qrels and a queries file."""
    c = sub.add_parser("clicks", help="click log -> graded qrels + queries file")
    c.add_argument(
        "log", help="click log: .csv, .tsv, .jsonl or .parquet (needs pyarrow), one row per impression"
    )
    c.add_argument("--qrels-out", required=True, help="qrels to write (TREC; .tsv/.jsonl by extension)")
    c.add_argument("--queries-out", help='queries JSONL to write ({"_id", "text"})')
    c.add_argument(
        "--query-texts", metavar="FILE", help="queries file giving the texts when the log has query ids only"
    )
    c.add_argument("--stats-out", metavar="FILE", help="per-pair evidence TSV (impressions, clicks, rates)")
    c.add_argument(
        "--long-dwell",
        type=number(float, ge=0),
        default=30.0,
        help="seconds; a click with dwell above this is a long click (default 30)",
    )
    c.add_argument(
        "--grades", default="0,1,2", help="grades for impression-only, click, long click (default 0,1,2)"
    )
    c.add_argument(
        "--position-bias",
        type=number(float, ge=0),
        metavar="ETA",
        help="correct for position bias with examination propensity (1/position)^ETA (try 1.0)",
    )
    c.add_argument(
        "--click-rate",
        type=fraction,
        help="minimum (corrected) click rate for the click grade (default 0, or 0.2 with --position-bias)",
    )
    c.add_argument(
        "--long-click-rate",
        type=fraction,
        help="minimum (corrected) long-click rate for the top grade (default 0, or 0.2 with --position-bias)",
    )
    c.add_argument(
        "--min-impressions", type=int, default=1, help="pairs shown fewer times stay unjudged (default 1)"
    )
    c.add_argument(
        "--min-examinations",
        type=number(float, ge=0),
        default=1.0,
        help="with --position-bias: unclicked pairs with fewer expected examinations "
        "stay unjudged (default 1.0)",
    )
    c.add_argument("--positions-from-zero", action="store_true", help="the log's positions start at 0")
    c.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="name a column: roles query_id, query, doc_id, clicked, dwell, position",
    )
    add_progress_option(c, run)
