"""``judge agree``: agreement of two label sources."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Tuple

from ...errors import RetrievalError
from ..options import grade_range, number, plain_text

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ...judge.agreement import compare_qrels
    from ...judge.annotations import load_labels

    lo_hi = args.labels or (0, 3)
    big = (min(lo_hi[0], -(10**6)), max(lo_hi[1], 10**6))
    a = load_labels(args.a, grade_range=big)
    b = load_labels(args.b, grade_range=big)
    a_grades, b_grades, scope = _only_tagged(args, a.grades, b.grades)
    names = args.names.split(",", 1) if args.names else [Path(args.a).name, Path(args.b).name]
    if len(names) != 2:
        raise RetrievalError("--names: expected two names, e.g. human,llm")
    labels = list(range(args.labels[0], args.labels[1] + 1)) if args.labels else None
    try:
        ag = compare_qrels(
            a_grades, b_grades, a_name=names[0], b_name=names[1], labels=labels, binarize=args.binarize
        )
    except ValueError as exc:
        raise RetrievalError(f"--labels: {exc}") from None
    rec = ag.recommendation(args.min_kappa)
    if args.json:
        d = ag.to_dict()
        d["recommendation"] = rec
        d["tag"] = args.tag
        print(json.dumps(d, indent=2))
    else:
        if scope:
            print(scope)
        print(ag.format())
        print(rec)
    below = ag.n == 0 or not (ag.kappa_linear >= args.min_kappa)
    return 1 if (args.strict and below) else 0


def _only_tagged(args: argparse.Namespace, a: Any, b: Any) -> Tuple[Any, Any, str]:
    """Both label sources cut to the queries carrying ``--tag`` in ``--tags`` (e.g. the
    synthetic queries: their synthetic labels against people's), and a line saying so."""
    if (args.tag is None) != (args.tags is None):
        raise RetrievalError("--tag and --tags go together: --tags FILE --tag synthetic")
    if args.tag is None:
        return a, b, ""
    from ...io.tags import load_tags

    tags = load_tags(Path(args.tags))
    keep = {q for q, ts in tags.items() if args.tag in ts}
    scope = f"on the {len(keep)} queries tagged {args.tag!r} in {args.tags} (of {len(tags)})"
    return {q: d for q, d in a.items() if q in keep}, {q: d for q, d in b.items() if q in keep}, scope


def register(sub: Any) -> None:
    """``judge agree``: agreement of two label sources."""
    a = sub.add_parser("agree", help="agreement of two label sources (kappa, confusion matrix)")
    a.add_argument("a", help="qrels or filled annotation file (e.g. people)")
    a.add_argument("b", help="qrels or filled annotation file (e.g. the LLM judge)")
    a.add_argument("--names", type=plain_text, help="names for the two sources, e.g. human,llm")
    a.add_argument(
        "--labels",
        type=grade_range,
        metavar="MIN-MAX",
        help="the grade scale (default: the observed range)",
    )
    a.add_argument(
        "--binarize", type=number(int, ge=1), metavar="T", help="compare relevant (grade >= T) against not"
    )
    a.add_argument(
        "--min-kappa",
        type=number(float, ge=-1, le=1),
        default=0.6,
        help="recommend human backstopping below this linear-weighted kappa (default 0.6)",
    )
    a.add_argument("--strict", action="store_true", help="exit 1 when below --min-kappa")
    a.add_argument(
        "--tags", metavar="FILE", help="tags file (with --tag): compare only the queries with that tag"
    )
    a.add_argument(
        "--tag",
        type=plain_text,
        help="e.g. synthetic: how the synthetic labels agree with a human-labelled subset of those queries",
    )
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=run)
