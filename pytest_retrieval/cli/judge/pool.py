"""``judge pool``: the unjudged top-k of suites' retrievers, for annotation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ...errors import RetrievalError
from ..options import add_progress_option, check_output_files, number, plain_text
from .console import say

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ...judge.pool import pool_suites
    from ...output_paths import Output
    from ...progress import progress_bar

    outs = [Path(o) for o in args.out]
    for o in outs:
        if o.suffix.lower() not in (".csv", ".tsv", ".jsonl"):
            raise RetrievalError(f"--out {o}: annotation files are .csv, .tsv or .jsonl")
    _check_sources(args)
    inputs = [("the suite", s) for s in args.suites] + [("--corpus", args.corpus)]
    inputs += [("--judged", j) for j in args.judged or []] + [("--from-diff", args.from_diff)]
    check_output_files([Output("--out", str(o), "annotations") for o in outs], inputs)
    if args.from_diff:
        return _write(_from_diff(args), outs, args)
    bar = progress_bar(None, "pooling", unit="step", enabled=None if args.progress else False)

    def progress(msg: str) -> None:
        bar.set_description(msg[:60])
        bar.update(1)
        if args.verbose:
            say(msg)

    retrievers = [r.strip() for r in args.retrievers.split(",") if r.strip()] if args.retrievers else None
    try:
        pool = pool_suites(
            args.suites,
            depth=args.depth or 20,
            retrievers=retrievers,
            judged=args.judged,
            corpus=args.corpus,
            include_judged=args.include_judged,
            shuffle=args.shuffle,
            progress=progress,
        )
    finally:
        bar.close()
    return _write(pool, outs, args)


def _write(pool: Any, outs: list, args: argparse.Namespace) -> int:
    from ...judge.annotations import write_annotation_file

    say(pool.summary())
    for o in outs:
        n = write_annotation_file(pool, o)
        say(
            f"wrote {n} pair(s) to {o}: fill the 'grade' column "
            f"(integers {args.scale}; leave blank to skip), then `pytest-retrieval judge import {o} "
            f"--qrels QRELS`"
        )
    _say_formula_ids(pool, outs)
    return 0


def _check_sources(args: argparse.Namespace) -> None:
    """Suite files or ``--from-diff``, one of them; the options of the other refused."""
    if bool(args.suites) == bool(args.from_diff):
        raise RetrievalError("judge pool: give suite files to pool, or --from-diff REPORT (one of them)")
    given = [o for o, v in (("--depth", args.depth), ("--shuffle", args.shuffle)) if v is not None]
    given += ["--include-judged"] if args.include_judged else []
    if args.from_diff and given:
        raise RetrievalError(
            f"judge pool --from-diff: {', '.join(given)} applies to pooling suites (the report's "
            "diff holds the documents that entered each top 10)"
        )
    if not args.from_diff and args.queries is not None:
        raise RetrievalError("judge pool: --queries applies to --from-diff (the most changed queries)")


def _from_diff(args: argparse.Namespace) -> Any:
    """The pool of the report's most changed queries (``judge.diff_pool``)."""
    from ...judge.diff_pool import pool_from_diff
    from ...judge.pool import documents_of, labels_of
    from ..report_file import load_report

    doc = load_report(args.from_diff)
    if not any(isinstance(s, dict) and s.get("stability") for s in doc["suites"]):
        raise RetrievalError(
            f"--from-diff {args.from_diff}: no suite of the report compared rankings with a baseline "
            "(set judgments.canary or a stability gate, and write a baseline)"
        )
    retrievers = [r.strip() for r in args.retrievers.split(",") if r.strip()] if args.retrievers else None
    return pool_from_diff(
        doc,
        queries=args.queries or 20,
        retrievers=retrievers,
        judged=labels_of(args.judged or []),
        documents=documents_of(args.corpus) if args.corpus else None,
    )


def _say_formula_ids(pool: Any, outs: list) -> None:
    """Ids a spreadsheet would run as formulas are written with a leading quote; a
    spreadsheet may drop it on save, so import then needs the pooled set (issue #11 item 5)."""
    from ...judge.files import is_formula_shaped

    shaped = {i for p in pool.pairs for i in (p.query_id, p.doc_id) if is_formula_shaped(i)}
    if not shaped or not any(o.suffix.lower() in (".csv", ".tsv") for o in outs):
        return
    keep = next((o for o in outs if o.suffix.lower() == ".jsonl"), None)
    say(
        f"note: {len(shaped)} id(s) start like a spreadsheet formula (e.g. {sorted(shaped)[0]!r}); "
        f"they are written with a leading ' . Keep {keep or 'an untouched copy of the file'} and pass "
        f"it to `judge import --pool` so those ids are accepted back"
    )


def register(sub: Any) -> None:
    """``judge pool``: the unjudged top-k of suites' retrievers, for annotation."""
    p = sub.add_parser("pool", help="pool the unjudged top-k of suites' retrievers for annotation")
    p.add_argument("suites", nargs="*", help="suite files (candidate systems); or --from-diff")
    p.add_argument(
        "--from-diff",
        metavar="REPORT",
        help="pool the unjudged documents that entered the top 10 of the most changed canary and "
        "judged queries of a JSON report (--retrieval-report of a run with canary queries or "
        "stability gates), instead of running suites",
    )
    p.add_argument(
        "--queries",
        type=number(int, ge=1),
        default=None,
        help="with --from-diff: the most changed queries pooled per retriever (default 20, at most 50)",
    )
    p.add_argument(
        "-o",
        "--out",
        action="append",
        required=True,
        help="annotation file to write: .csv, .tsv or .jsonl (repeatable)",
    )
    p.add_argument("--depth", type=number(int, ge=1), default=None, help="top-k per retriever (default 20)")
    p.add_argument(
        "--retrievers",
        help="comma-separated retrievers to pool (default: all; suite:name picks from one suite)",
    )
    p.add_argument(
        "--judged",
        action="append",
        metavar="QRELS",
        help="more labels counting as judged (beyond the suites' own qrels)",
    )
    p.add_argument("--corpus", help="corpus JSONL for document texts (suites on an existing index)")
    p.add_argument(
        "--include-judged", action="store_true", help="export judged pairs too (to measure agreement on them)"
    )
    p.add_argument(
        "--shuffle",
        type=int,
        metavar="SEED",
        help="shuffle documents within each query (default: best rank first)",
    )
    p.add_argument("--scale", type=plain_text, default="0-3", help="grade scale shown in the instructions")
    p.add_argument("-v", "--verbose", action="store_true")
    add_progress_option(p, run)
