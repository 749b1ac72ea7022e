"""``judge sample``: a query set from a query log (queries file + tags file)."""

from __future__ import annotations

import argparse
from typing import Any, Dict, Optional, Sequence

from ...errors import RetrievalError
from ..options import add_progress_option, check_output_files, number, plain_text
from .console import say

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ...judge.querytext import Normalisation
    from ...judge.sample import SampleSpec, sample_queries, write_sample
    from ...output_paths import Output

    check_output_files(
        [Output("--out", args.out, "queries"), Output("--tags-out", args.tags_out, "tags")],
        [("the log", args.log)],
    )
    quotas = _quotas(args.quota)
    spec = SampleSpec(
        size=_size(args.size, quotas),
        method=args.method,
        seed=args.seed,
        weight=args.weight,
        pii=args.pii,
        min_digits=args.min_digits,
        stratify=args.stratify,
        quotas=quotas,
        min_count=args.min_count,
        since=args.since,
        until=args.until,
        normalisation=Normalisation(
            nfkc="nfkc" not in args.keep,
            case="case" not in args.keep,
            punctuation="punctuation" not in args.keep,
        ),
    )
    sample = sample_queries(args.log, spec, columns=_columns(args.column))
    say(sample.summary())
    if not sample.queries:
        raise RetrievalError(f"{args.log}: no query left to sample; nothing written")
    write_sample(sample, args.out, args.tags_out)
    say(
        f"wrote {len(sample.queries)} queries to {args.out}"
        + (f", tags to {args.tags_out}" if args.tags_out else "")
    )
    return 0


def _columns(specs: Optional[Sequence[str]]) -> Dict[str, str]:
    """``--column ROLE=NAME`` options as {role: column name}."""
    from ...judge.sample import COLUMN_ALIASES

    columns = {}
    for spec in specs or []:
        role, eq, name = spec.partition("=")
        if not eq or not role.strip() or not name.strip():
            raise RetrievalError(f"--column {spec!r}: expected ROLE=NAME, e.g. query=search_term")
        if role.strip() not in COLUMN_ALIASES:
            raise RetrievalError(f"--column {spec!r}: unknown role (roles: {', '.join(COLUMN_ALIASES)})")
        columns[role.strip()] = name.strip()
    return columns


def _quotas(specs: Optional[Sequence[str]]) -> Optional[Dict[str, int]]:
    """``--quota VALUE=N`` options as {stratum value: n}."""
    if not specs:
        return None
    out: Dict[str, int] = {}
    for spec in specs:
        value, eq, n = spec.rpartition("=")
        if not eq or not value.strip() or not n.strip().isdigit():
            raise RetrievalError(f"--quota {spec!r}: expected VALUE=N with N a whole number, e.g. de=100")
        out[value.strip()] = int(n)
    return out


def _size(n: Optional[int], quotas: Optional[Dict[str, int]]) -> int:
    """The sample size: ``-n`` (default 200); with ``--quota`` the quotas' sum, which ``-n``, if
    given, must equal (the quotas are exact: a different ``-n`` was silently ignored)."""
    if quotas is None:
        return 200 if n is None else n
    total = sum(quotas.values())
    if n is not None and n != total:
        raise RetrievalError(
            f"-n {n} with --quota: the quotas set the sample size ({total} in all); "
            f"give -n {total} or leave -n out"
        )
    return total


def _time(text: str) -> Any:
    from ...judge.sample import parse_time

    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date or time") from None


def register(sub: Any) -> None:
    """``judge sample``: a query set from a query log."""
    p = sub.add_parser("sample", help="query log -> a sampled query set (queries + tags files)")
    p.add_argument("log", help="query log: .csv, .tsv or .jsonl, one row per search (or a count column)")
    p.add_argument("--out", required=True, help="queries file to write (.jsonl, or .tsv)")
    p.add_argument("--tags-out", help="tags file to write (.tsv qid<TAB>tags, or .jsonl)")
    p.add_argument(
        "-n",
        "--size",
        type=number(int, ge=1),
        default=None,
        help="queries to sample (default 200; with --quota: the quotas' sum, which -n must equal)",
    )
    p.add_argument(
        "--method",
        choices=("random", "top-n", "pps"),
        default="pps",
        help="pps: probability proportional to size (default); random: uniform; top-n: most frequent",
    )
    p.add_argument("--seed", type=number(int, ge=0), default=0, help="random seed (default 0)")
    _add_population_options(p)
    add_progress_option(p, run)


def _add_population_options(p: argparse.ArgumentParser) -> None:
    """Which queries make the population: size, PII, strata, time window, folding, columns."""
    p.add_argument(
        "--weight",
        choices=("count", "users", "sessions"),
        default="count",
        help="a query's size: searches (default), or distinct users / sessions",
    )
    p.add_argument(
        "--pii",
        choices=("drop", "mask", "keep"),
        default="drop",
        help="queries with an e-mail address, phone number or long digit run: drop (default), mask, keep",
    )
    p.add_argument(
        "--min-digits", type=number(int, ge=3), default=7, help="a digit run this long is PII (default 7)"
    )
    p.add_argument(
        "--stratify", type=plain_text, metavar="COLUMN", help="sample each value of this column apart"
    )
    p.add_argument(
        "--quota",
        action="append",
        metavar="VALUE=N",
        help="with --stratify: N queries of this value (repeatable)",
    )
    p.add_argument(
        "--min-count",
        type=number(float, ge=0),
        default=1,
        help="leave out queries of smaller size (default 1)",
    )
    p.add_argument("--since", type=_time, help="only rows at or after this ISO 8601 time (needs a timestamp)")
    p.add_argument("--until", type=_time, help="only rows before this ISO 8601 time")
    p.add_argument(
        "--keep",
        action="append",
        default=[],
        choices=("case", "punctuation", "nfkc"),
        help="do not fold this when de-duplicating (repeatable; default: fold case, punctuation, NFKC, spaces)",
    )
    p.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="name a column: roles query, count, timestamp, user, session",
    )
