"""``pytest-retrieval`` command: trec_eval-like evaluation, run fusion, the JSON Schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

from .errors import RetrievalError


def _evaluate(args: argparse.Namespace) -> int:
    from .judgments import load_qrels, load_trec_run
    from .metrics import evaluate, parse_metric

    metrics = [str(parse_metric(m)) for m in (args.metric or ["ndcg@10", "mrr@10", "recall@100", "map"])]
    qrels = load_qrels(Path(args.qrels))
    run = load_trec_run(Path(args.run))
    ev = evaluate(qrels, run, metrics, gain="exp" if args.profile == "exp" else "linear",
                  ties=args.ties, relevance_threshold=args.relevance_threshold)
    if args.json:
        per_query = {}
        if args.per_query:
            for m, values in ev.per_query.items():
                for q, v in values.items():
                    per_query.setdefault(q, {})[m] = v
        print(json.dumps({"aggregate": ev.aggregate, "per_query": per_query,
                          "queries": {"evaluated": len(ev.evaluated), "missing": ev.missing,
                                      "no_relevant": ev.no_relevant}}, indent=2))
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


def _fuse(args: argparse.Namespace) -> int:
    from .fusion import FusionConfig, fuse_runs
    from .judgments import load_trec_run, write_trec_run

    if len(args.runs) < 2:
        raise RetrievalError("fuse needs at least two run files")
    weights = None
    if args.weights:
        try:
            weights = tuple(float(w) for w in args.weights.split(","))
        except ValueError:
            raise RetrievalError(f"--weights: {args.weights!r} is not a comma-separated list of numbers") from None
        if len(weights) != len(args.runs):
            raise RetrievalError(f"--weights: {len(weights)} weight(s) for {len(args.runs)} runs")
    try:
        if args.method == "rrf":
            cfg = FusionConfig(method="rrf", semantics=args.semantics or "elasticsearch",
                               window=args.window,
                               rank_constant=args.rank_constant or 60)
        elif args.method == "weighted":
            cfg = FusionConfig(method="weighted", semantics="opensearch", window=args.window,
                               normalization=args.norm or "min_max",
                               combination=args.combine or "arithmetic_mean", weights=weights)
        else:
            cfg = FusionConfig(method="linear", semantics="elasticsearch", window=args.window,
                               normalization=args.norm or "minmax", weights=weights)
        for opt, value, allowed in (("--rank-constant", args.rank_constant, "rrf"),
                                    ("--combine", args.combine, "weighted")):
            if value is not None and args.method != allowed:
                raise RetrievalError(f"{opt} applies to --method {allowed} only")
        if args.method == "weighted" and args.semantics not in (None, "opensearch"):
            raise RetrievalError("weighted fusion is OpenSearch's normalization-processor: "
                                 "use --semantics opensearch")
    except ValueError as exc:
        raise RetrievalError(str(exc)) from None
    runs = [load_trec_run(Path(p)) for p in args.runs]
    fused = fuse_runs(runs, cfg, k=args.k)
    write_trec_run(fused, sys.stdout, tag=args.tag)
    return 0


def _schema(args: argparse.Namespace) -> int:
    from .config import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pytest-retrieval", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("evaluate", help="evaluate a TREC run against qrels (like trec_eval)")
    e.add_argument("qrels", help="TREC qrels (qid 0 docid grade) or BEIR qrels TSV")
    e.add_argument("run", help="TREC run (qid Q0 docid rank score tag)")
    e.add_argument("-m", "--metric", action="append", help="e.g. ndcg@10 (repeatable)")
    e.add_argument("--per-query", action="store_true", help="also print per-query values")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.add_argument("--profile", choices=("exp", "trec"), default="exp",
                   help="nDCG gain: exp = 2^rel-1 (default), trec = rel (trec_eval)")
    e.add_argument("--ties", choices=("engine", "trec"), default="trec",
                   help="trec (default for run files, as trec_eval: score desc, docid desc) or "
                        "engine (the file's rank order)")
    e.add_argument("--relevance-threshold", type=int, default=1, help="like trec_eval -l")
    e.set_defaults(func=_evaluate)

    f = sub.add_parser("fuse", help="fuse TREC runs (RRF or weighted) into a TREC run on stdout")
    f.add_argument("runs", nargs="+")
    f.add_argument("--method", choices=("rrf", "weighted", "linear"), default="rrf")
    f.add_argument("--semantics", choices=("elasticsearch", "opensearch"), default=None,
                   help="whose exact semantics (rrf default: elasticsearch)")
    f.add_argument("--rank-constant", type=int, default=None, help="rrf only (default 60)")
    f.add_argument("--window", type=int, default=100)
    f.add_argument("--norm", default=None, help="min_max | l2 (weighted); minmax | l2_norm | none (linear)")
    f.add_argument("--combine", default=None,
                   choices=("arithmetic_mean", "geometric_mean", "harmonic_mean"))
    f.add_argument("--weights", default=None, help="comma-separated, one per run")
    f.add_argument("-k", type=int, default=None, help="hits per query in the output (default: window)")
    f.add_argument("--tag", default="fused")
    f.set_defaults(func=_fuse)

    s = sub.add_parser("schema", help="print the JSON Schema of suite files")
    s.set_defaults(func=_schema)

    from .judge.cli import register as register_judge
    register_judge(sub)  # pytest-retrieval judge clicks|llm|pool|import|agree
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RetrievalError, ValueError) as exc:
        print(f"pytest-retrieval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
