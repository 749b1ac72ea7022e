"""``pytest-retrieval evaluate``: trec_eval-like scoring of a run file."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..errors import RetrievalError
from ..measures.aggregate import AVERAGE_OVER
from .options import number

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..io.grades import GradeScale, parse_grade_map
    from ..io.run_reader import RunFileFacts
    from ..io.runfiles import evaluate_files
    from ..measures.metrics import parse_metric

    metrics = [
        _run_file_metric(parse_metric(m)) for m in (args.metric or ["ndcg@10", "mrr@10", "recall@100", "map"])
    ]
    mapping = parse_grade_map(args.grade_map) if args.grade_map else None
    # trec_eval takes any grade; a negative one (judged non-relevant in some collections, or
    # an inverted scale) needs an explicit --grade-map so nobody is scored on it by accident
    # a negative grade the map names as its target is kept (-1:-1): trec_eval reads it as judged
    # "unjudged in pool", never relevant, which -l0 (--relevance-threshold 0) needs kept apart from 0
    low = min([0] + list((mapping or {}).values()))
    scale = GradeScale(low=low, high=sys.maxsize, mapping=mapping, option="--grade-map")
    facts = RunFileFacts()
    # the run is streamed from the file in columns (suite/runfiles.py): memory O(qrels + a block);
    # a run sharing no query id with the qrels is an error there
    ev = evaluate_files(
        Path(args.qrels),
        Path(args.run),
        metrics,
        gain="exp" if args.profile == "exp" else "linear",
        ties=args.ties,
        relevance_threshold=args.relevance_threshold,
        grades=scale,
        ignore_identical_ids=args.ignore_identical_ids,
        facts=facts,
        average_over=_average_over(args),
        depth=args.depth,
        gains=args.gains,
    )
    if facts.self_hits_removed:
        print(f"# {facts.self_hits_removed} hits whose doc id equals the query id removed", file=sys.stderr)
    if not ev.evaluated:
        raise RetrievalError(
            f"{args.qrels}: no query to average over (average_over: {ev.average_over}; "
            f"{len(ev.no_relevant)} of {ev.judged} judged queries without a relevant document, "
            f"{len(ev.not_in_run)} absent from the run): every metric is undefined"
        )
    if args.json:
        _print_json(ev, per_query=args.per_query)
    else:
        _print_table(ev, metrics, per_query=args.per_query)
    return 0


def _average_over(args: argparse.Namespace) -> str:
    """``--average-over`` (default ``run``, trec_eval's), ``-c`` its ``judged``."""
    if args.complete:
        if args.average_over not in (None, "judged"):
            raise RetrievalError(
                f"-c (--complete) is --average-over judged; it contradicts --average-over {args.average_over}"
            )
        return "judged"
    return args.average_over or "run"


def _run_file_metric(metric: Any) -> str:
    """A metric a run file and qrels can score; one scored against a reference run (the exact kNN
    top k of ``ann_recall``) is refused in one line, not a KeyError after the scoring."""
    from ..measures.registry import COMPARISON_METRICS, REFERENCE_METRICS

    if metric.name in REFERENCE_METRICS:
        raise RetrievalError(
            f"-m {metric}: {metric.name} is scored against the exact kNN top k of a knn retriever on "
            "an engine (in a suite), not against qrels: it cannot be computed from a run file"
        )
    if metric.name in COMPARISON_METRICS:
        raise RetrievalError(
            f"-m {metric}: {metric.name} compares two rankings of each query (a reference's and this "
            "run's), not a run against qrels: it cannot be computed from one run file and qrels"
        )
    return str(metric)


def _print_json(ev: Any, *, per_query: bool) -> None:
    values: Dict[str, Dict[str, Optional[float]]] = {}
    if per_query:
        for m, by_query in ev.per_query.items():
            for q, v in by_query.items():
                values.setdefault(q, {})[m] = _finite(v)
    print(
        json.dumps(
            {
                "aggregate": {m: _finite(v) for m, v in ev.aggregate.items()},
                "per_query": values,
                "queries": {
                    "average_over": ev.average_over,
                    "judged": ev.judged,
                    "evaluated": len(ev.evaluated),
                    "missing": ev.missing,
                    "not_in_run": ev.not_in_run,
                    "no_relevant": ev.no_relevant,
                },
            },
            indent=2,
            allow_nan=False,  # NaN is not JSON: an undefined value is null
        )
    )


def _print_table(ev: Any, metrics: List[str], *, per_query: bool) -> None:
    """trec_eval's layout (metric, query, value), then what was left out, on stderr."""
    if per_query:
        for q in ev.evaluated:
            for m in metrics:
                print(f"{m}\t{q}\t{ev.per_query[m][q]:.4f}")
    for m in metrics:
        print(f"{m}\tall\t{ev.aggregate[m]:.4f}")
    print(f"num_q\tall\t{len(ev.evaluated)}")
    from ..measures.aggregate import averaging_note

    note = averaging_note(ev, default="run")
    if note:
        print(f"# {note}", file=sys.stderr)
    absent = set(ev.not_in_run)
    empty = [q for q in ev.missing if q not in absent]
    if empty:
        print(f"# {len(empty)} judged queries have no hits in the run (scored 0)", file=sys.stderr)


def _finite(value: Any) -> Any:
    """A JSON-safe number: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _gains(text: str) -> Dict[int, float]:
    from ..measures.gains import parse_gains

    try:
        return parse_gains(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: Any) -> None:
    """``pytest-retrieval evaluate``: trec_eval-like scoring of a run file."""
    e = sub.add_parser("evaluate", help="evaluate a TREC run against qrels (like trec_eval)")
    e.add_argument("qrels", help="TREC qrels (qid 0 docid grade) or BEIR qrels TSV")
    e.add_argument("run", help="TREC run (qid Q0 docid rank score tag)")
    e.add_argument("-m", "--metric", action="append", help="e.g. ndcg@10 (repeatable)")
    e.add_argument("--per-query", action="store_true", help="also print per-query values")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.add_argument(
        "--profile",
        choices=("exp", "trec"),
        default="exp",
        help="nDCG gain: exp = 2^rel-1 (default), trec = rel (trec_eval)",
    )
    e.add_argument(
        "--ties",
        choices=("engine", "trec"),
        default="trec",
        help="trec (default for run files, as trec_eval: score desc, docid desc) or "
        "engine (the file's rank order)",
    )
    e.add_argument(
        "--relevance-threshold",
        type=number(int, ge=0),
        default=1,
        help="like trec_eval -l: a grade >= this is relevant (0: every judged doc with a grade >= 0)",
    )
    e.add_argument(
        "--grade-map",
        metavar="RAW:GRADE,...",
        help="map grades as they are read, e.g. -1:0 (judged non-relevant) or 1:3,2:2,3:1 "
        "(inverted scale); a negative grade without a map is an error",
    )
    e.add_argument(
        "--ignore-identical-ids",
        action="store_true",
        help="drop hits whose doc id equals the query id (BEIR's ignore_identical_ids)",
    )
    _trec_eval_options(e)
    e.set_defaults(func=run)


def _trec_eval_options(e: Any) -> None:
    """The options named after trec_eval's: -c, -M, ndcg gains (and which queries to average)."""
    e.add_argument(
        "--average-over",
        choices=AVERAGE_OVER,
        default=None,
        help="queries the means are over: run (default, trec_eval's: judged queries in the run), "
        "judged (every qrels query, one absent from the run scores 0: trec_eval -c), relevant "
        "(queries with a relevant judgment, absent ones scoring 0: the plugin's default)",
    )
    e.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="trec_eval -c (--complete_rel_info_wanted): --average-over judged",
    )
    e.add_argument(
        "--depth",
        type=number(int, ge=1),
        default=None,
        metavar="N",
        help="like trec_eval -M: only the first N documents of each (ordered) ranking count",
    )
    e.add_argument(
        "--gains",
        type=_gains,
        default=None,
        metavar="GRADE:GAIN,...",
        help="per-grade nDCG gains, e.g. 0:0,1:1,2:3 (trec_eval -m ndcg.1=1,2=3; ir_measures "
        "nDCG(gains=...)); an unlisted grade gains what --profile gives it",
    )
