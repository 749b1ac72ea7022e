"""``judge import``: filled annotation files -> merged qrels; with ``--from``, one file a tool
exported (Quepid, RRE, Search Relevance Workbench, ``_rank_eval``) -> a folder of queries, qrels
and tags (``interchange.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ...errors import RetrievalError
from ..options import grade_range
from .console import say

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    if args.source_format:
        from .interchange import import_run

        return import_run(args)
    return _annotations(args)


def _annotations(args: argparse.Namespace) -> int:
    from ...io.qrels import load_qrels
    from ...judge.annotations import read_pooled_pairs
    from ...judge.files import write_qrels
    from ...judge.merge import import_annotations
    from ...output_paths import Output
    from ..options import check_output_files

    # --qrels is merged into in place by design (the default --out); the annotation files and
    # the pooled set are never written
    if not args.qrels:
        raise RetrievalError("judge import: --qrels is required (or --from FORMAT for a tool's export)")
    if args.grade_map or args.skip_placeholders:
        raise RetrievalError("--grade-map and --skip-placeholders go with --from FORMAT")
    inputs = [("the annotation file", f) for f in args.files] + [("--pool", p) for p in args.pool or []]
    check_output_files([Output("--out" if args.out else "--qrels", args.out or args.qrels, "qrels")], inputs)
    existing = {}
    qrels_path = Path(args.qrels)
    if qrels_path.exists() and qrels_path.stat().st_size > 0:
        existing = load_qrels(qrels_path)
        say(f"existing labels: {sum(len(d) for d in existing.values())} in {qrels_path}")
    else:
        say(f"{qrels_path} does not exist yet: starting from no labels")
    pooled = read_pooled_pairs(args.pool) if args.pool else None
    result = import_annotations(
        args.files, existing, policy=args.policy, grade_range=args.grades or (0, 3), pooled=pooled
    )
    say(result.summary())
    out = Path(args.out) if args.out else qrels_path
    if not any(result.qrels.values()):
        raise RetrievalError("no labels to write (every row blank?)")
    n = write_qrels(result.qrels, out)
    say(f"wrote {n} label(s) to {out}")
    return 0


def register(sub: Any) -> None:
    """``judge import``: filled annotation files -> merged qrels; with ``--from``, one file a tool
    exported (Quepid, RRE, Search Relevance Workbench, ``_rank_eval``) -> a folder of queries, qrels
    and tags (``interchange.py``)."""
    from .interchange import import_arguments

    i = sub.add_parser(
        "import", help="filled annotation files -> merged qrels; --from: a Quepid/RRE/SRW/_rank_eval file"
    )
    i.add_argument(
        "files",
        nargs="+",
        help="filled annotation files (.csv/.tsv/.jsonl) or qrels files (e.g. from `judge llm`); "
        "with --from, the one file the tool exported",
    )
    i.add_argument(
        "--qrels", help="existing qrels to merge into (created if missing); required without --from"
    )
    i.add_argument(
        "--out",
        help="where to write the merged qrels (default: --qrels, in place); with --from, the folder "
        "(default: the file's name without extensions)",
    )
    i.add_argument(
        "--policy",
        choices=("keep-existing", "prefer-new", "error"),
        default="keep-existing",
        help="when a new grade differs from an existing label, or (--from quepid, a book) two judges "
        "differ: keep-existing keeps the first (default), prefer-new the last, error refuses",
    )
    i.add_argument(
        "--grades",
        type=grade_range,
        metavar="MIN-MAX",
        help="allowed grades (default 0-3; with --from, checked only when given)",
    )
    i.add_argument(
        "--pool",
        action="append",
        metavar="FILE",
        help="the annotation file(s) as `judge pool` wrote them: ids that look like spreadsheet "
        "formulas (=, +, -, @) are accepted only for these pairs (repeatable)",
    )
    import_arguments(i)
    i.set_defaults(func=run)
