"""``pytest-retrieval`` command: trec_eval-like evaluation, run fusion, fusion sweeps, the JSON
Schema, judgment authoring (``judge``), and reports (``report``, ``compare``)."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional

from ..errors import RetrievalError


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line (``prog: error: ...``), not the usage block too."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def number(
    kind: type = float,
    *,
    ge: Optional[float] = None,
    gt: Optional[float] = None,
    le: Optional[float] = None,
    lt: Optional[float] = None,
) -> Any:
    """An argparse ``type=`` that validates a number option like its YAML twin: ``kind`` (int
    or float), finite, within the bounds. Used by every numeric option of the command."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        for bound, ok, word in (
            (ge, lambda b: value >= b, ">="),
            (gt, lambda b: value > b, ">"),
            (le, lambda b: value <= b, "<="),
            (lt, lambda b: value < b, "<"),
        ):
            if bound is not None and not ok(bound):
                raise argparse.ArgumentTypeError(f"{text!r}: must be {word} {bound:g}")
        return value

    parse.__name__ = "integer" if kind is int else "number"
    return parse


def number_list(kind: type = float, *, ge: Optional[float] = None) -> Any:
    """A comma-separated list of ``number(kind, ge=...)`` (``--weights 0.3,0.7``)."""
    one = number(kind, ge=ge)

    def parse(text: str) -> tuple:
        parts = [p.strip() for p in text.split(",")]
        if not parts or any(not p for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
        return tuple(one(p) for p in parts)

    parse.__name__ = "list"
    return parse


# options whose value may start with "-" (a negative number or a list of them): argparse would
# read "--weights -1,1" as two options, so such a value is joined to its option first
_NUMERIC_VALUE_OPTIONS = ("--weights", "--rank-constants", "--windows", "--rank-constant", "--window", "-k")
_NEGATIVE = re.compile(r"-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _join_negative_values(argv: List[str]) -> List[str]:
    out: List[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _NUMERIC_VALUE_OPTIONS and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def _evaluate(args: argparse.Namespace) -> int:
    from ..io.judgments import GradeScale, parse_grade_map
    from ..io.runfiles import RunFileFacts, evaluate_files
    from ..measures.metrics import parse_metric

    metrics = [str(parse_metric(m)) for m in (args.metric or ["ndcg@10", "mrr@10", "recall@100", "map"])]
    mapping = parse_grade_map(args.grade_map) if args.grade_map else None
    # trec_eval takes any grade; a negative one (judged non-relevant in some collections, or
    # an inverted scale) needs an explicit --grade-map so nobody is scored on it by accident
    scale = GradeScale(low=0, high=sys.maxsize, mapping=mapping, option="--grade-map")
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
    )
    if facts.self_hits_removed:
        print(f"# {facts.self_hits_removed} hits whose doc id equals the query id removed", file=sys.stderr)
    if not ev.evaluated:
        raise RetrievalError(
            f"{args.qrels}: no judged query has a relevant document (grade >= "
            f"{args.relevance_threshold}): every metric is undefined"
        )
    if args.json:
        per_query: Dict[str, Dict[str, Optional[float]]] = {}
        if args.per_query:
            for m, values in ev.per_query.items():
                for q, v in values.items():
                    per_query.setdefault(q, {})[m] = _finite(v)
        print(
            json.dumps(
                {
                    "aggregate": {m: _finite(v) for m, v in ev.aggregate.items()},
                    "per_query": per_query,
                    "queries": {
                        "evaluated": len(ev.evaluated),
                        "missing": ev.missing,
                        "no_relevant": ev.no_relevant,
                    },
                },
                indent=2,
                allow_nan=False,  # NaN is not JSON: an undefined value is null
            )
        )
        return 0
    if args.per_query:
        for q in ev.evaluated:
            for m in metrics:
                print(f"{m}\t{q}\t{ev.per_query[m][q]:.4f}")
    for m in metrics:
        print(f"{m}\tall\t{ev.aggregate[m]:.4f}")
    print(f"num_q\tall\t{len(ev.evaluated)}")
    if ev.missing:
        print(f"# {len(ev.missing)} judged queries have no hits in the run (scored 0)", file=sys.stderr)
    if ev.no_relevant:
        print(f"# {len(ev.no_relevant)} queries without relevant judgments left out", file=sys.stderr)
    return 0


def _finite(value: Any) -> Any:
    """A JSON-safe number: NaN and infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _fuse(args: argparse.Namespace) -> int:
    from ..fusion.config import FusionConfig
    from ..io.judgments import write_trec_run
    from ..io.runfiles import read_run

    if len(args.runs) < 2:
        raise RetrievalError("fuse needs at least two run files")
    weights = args.weights
    if weights is not None:
        if len(weights) != len(args.runs):
            raise RetrievalError(f"--weights: {len(weights)} weight(s) for {len(args.runs)} runs")
    try:
        if args.method == "rrf":
            cfg = FusionConfig(
                method="rrf",
                semantics=args.semantics or "elasticsearch",
                window=args.window,
                rank_constant=args.rank_constant,  # None: the engines' default (60); 0 is refused
                weights=weights,  # rrf has none: given ones are refused, not ignored
            )
        elif args.method == "weighted":
            cfg = FusionConfig(
                method="weighted",
                semantics="opensearch",
                window=args.window,
                normalization=args.norm or "min_max",
                combination=args.combine or "arithmetic_mean",
                weights=weights,
            )
        else:
            cfg = FusionConfig(
                method="linear",
                semantics="elasticsearch",
                window=args.window,
                normalization=args.norm or "minmax",
                weights=weights,
            )
        for opt, value, allowed in (
            ("--rank-constant", args.rank_constant, "rrf"),
            ("--combine", args.combine, "weighted"),
        ):
            if value is not None and args.method != allowed:
                raise RetrievalError(f"{opt} applies to --method {allowed} only")
        if args.method == "weighted" and args.semantics not in (None, "opensearch"):
            raise RetrievalError(
                "weighted fusion is OpenSearch's normalization-processor: use --semantics opensearch"
            )
    except ValueError as exc:
        raise RetrievalError(str(exc)) from None
    runs = [read_run(Path(p)) for p in args.runs]  # pyarrow-parsed, load_trec_run's rules
    from ..fusion.replay import replay

    # fusion.fuse_runs, vectorised (bit-identical, tests/tuning/test_replay.py): 3.2x faster
    # for weighted fusion of a 10,000-query run, the same time for rrf
    fused = replay(runs, cfg, k=args.k)
    write_trec_run(fused, sys.stdout, tag=args.tag)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from ..config.load import load_suite
    from ..tuning.grid import DEFAULT_RANK_CONSTANTS, SweepGrid
    from ..tuning.run import fusion_inputs, run_sweep

    cli = {"backend.type": args.backend} if args.backend else None
    suite = load_suite(Path(args.suite), overrides=tuple(Path(o) for o in args.override or ()), cli=cli)
    try:
        grid = SweepGrid(
            weight_step=args.weight_step,
            rank_constants=args.rank_constants or DEFAULT_RANK_CONSTANTS,
            windows=args.windows,
        )
    except ValueError as exc:
        raise RetrievalError(str(exc)) from None
    say = (lambda msg: None) if args.json else (lambda msg: print(f"# {msg}", file=sys.stderr))
    result, how, check = run_sweep(
        suite,
        retriever=args.retriever,
        tune_split=args.tune_split,
        tune_fraction=args.tune_fraction,
        seed=args.seed,
        grid=grid,
        objective=args.objective,
        check=args.check,
        check_variants=args.check_variants,
        say=say,
    )
    name = fusion_inputs(suite, args.retriever)[0]  # the block replaces the retriever it tuned
    if args.json:
        out = result.as_dict()
        out["split"] = how
        out["yaml"] = result.yaml_block(name)
        if check is not None:
            out["check"] = {
                "ok": check.ok,
                "k": check.k,
                "queries": check.queries,
                "variants": check.variants,
            }
        print(json.dumps(out, indent=2))
    else:
        print(result.summary(top=args.top))
        print(f"  split: {how}")
        print("\nsuite file (retrievers:):\n")
        print(result.yaml_block(name))
        print("OpenSearch search pipeline (PUT _search/pipeline/<name>):\n")
        print(json.dumps(result.opensearch_pipeline(), indent=2))
        if check is not None:
            print()
            print(check.summary())
    return 0 if check is None or check.ok else 1


def _schema(args: argparse.Namespace) -> int:
    from ..config.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pytest-retrieval", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    _add_evaluate(sub)
    _add_fuse(sub)
    _add_sweep(sub)
    s = sub.add_parser("schema", help="print the JSON Schema of suite files")
    s.set_defaults(func=_schema)

    from .judge import register as register_judge

    register_judge(sub)  # pytest-retrieval judge clicks|llm|pool|import|agree
    from ..reports.outputs import register as register_reports

    register_reports(sub)  # pytest-retrieval report | compare
    return p


def _add_evaluate(sub: Any) -> None:
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
    e.add_argument("--relevance-threshold", type=number(int, ge=1), default=1, help="like trec_eval -l")
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
    e.set_defaults(func=_evaluate)


def _add_fuse(sub: Any) -> None:
    """``pytest-retrieval fuse``: RRF / weighted / linear fusion of run files."""
    f = sub.add_parser("fuse", help="fuse TREC runs (RRF or weighted) into a TREC run on stdout")
    f.add_argument("runs", nargs="+")
    f.add_argument("--method", choices=("rrf", "weighted", "linear"), default="rrf")
    f.add_argument(
        "--semantics",
        choices=("elasticsearch", "opensearch"),
        default=None,
        help="whose exact semantics (rrf default: elasticsearch)",
    )
    f.add_argument("--rank-constant", type=number(int, ge=1), default=None, help="rrf only (default 60)")
    f.add_argument("--window", type=number(int, ge=1), default=100)
    f.add_argument("--norm", default=None, help="min_max | l2 (weighted); minmax | l2_norm | none (linear)")
    f.add_argument("--combine", default=None, choices=("arithmetic_mean", "geometric_mean", "harmonic_mean"))
    f.add_argument(
        "--weights", type=number_list(float, ge=0), default=None, help="comma-separated, one per run"
    )
    f.add_argument(
        "-k", type=number(int, ge=1), default=None, help="hits per query in the output (default: window)"
    )
    f.add_argument("--tag", default="fused")
    f.set_defaults(func=_fuse)


def _add_sweep(sub: Any) -> None:
    """``pytest-retrieval sweep``: tune a suite's fusion retriever offline."""
    w = sub.add_parser(
        "sweep",
        help="tune a suite's fusion retriever: fetch candidates once, replay every fusion variant offline",
    )
    w.add_argument("suite", help="suite YAML file")
    w.add_argument("--retriever", help="the fusion retriever to tune (default: the first)")
    w.add_argument(
        "--tune-split",
        help="tune on this BEIR qrels split (e.g. train, dev) and evaluate on the suite's split",
    )
    w.add_argument(
        "--tune-fraction",
        type=number(float, gt=0, lt=1),
        default=0.5,
        help="otherwise: share of the suite's judged queries to tune on (default 0.5)",
    )
    w.add_argument("--seed", type=number(int), default=0, help="seed of the random split")
    w.add_argument("--objective", default="ndcg@10", help="metric maximised on the tuning split")
    w.add_argument(
        "--weight-step", type=number(float, gt=0, le=1), default=0.1, help="weighted grid step (0.1)"
    )
    w.add_argument(
        "--rank-constants",
        type=number_list(int, ge=1),
        help="RRF rank constants (default 1,5,10,20,40,60,80,100)",
    )
    w.add_argument(
        "--windows", type=number_list(int, ge=1), help="candidate windows to sweep (default: the retriever's)"
    )
    w.add_argument(
        "--backend",
        choices=("embedded", "elasticsearch", "opensearch"),
        help="override the suite's backend type",
    )
    w.add_argument("--override", action="append", help="team override YAML (repeatable)")
    w.add_argument(
        "--check",
        action="store_true",
        help="replay a few variants on the OpenSearch server too; exit 1 if any "
        "ranking differs from the offline replay",
    )
    w.add_argument("--check-variants", type=number(int, ge=1), default=7, help="variants checked (default 7)")
    w.add_argument("--top", type=number(int, ge=1), default=10, help="tuning-split variants listed")
    w.add_argument("--json", action="store_true", help="print JSON")
    w.set_defaults(func=_sweep)


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(_join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        return args.func(args)
    except (RetrievalError, ValueError) as exc:
        print(f"pytest-retrieval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
