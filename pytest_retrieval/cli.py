"""``pytest-retrieval`` command: trec_eval-like evaluation, run fusion, fusion sweeps, the JSON
Schema, judgment authoring (``judge``), and reports (``report``, ``compare``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from .errors import RetrievalError


def _evaluate(args: argparse.Namespace) -> int:
    from .measures.metrics import evaluate, parse_metric
    from .suite.judgments import load_qrels, load_trec_run

    metrics = [str(parse_metric(m)) for m in (args.metric or ["ndcg@10", "mrr@10", "recall@100", "map"])]
    qrels = load_qrels(Path(args.qrels))
    run = load_trec_run(Path(args.run))
    ev = evaluate(
        qrels,
        run,
        metrics,
        gain="exp" if args.profile == "exp" else "linear",
        ties=args.ties,
        relevance_threshold=args.relevance_threshold,
    )
    if args.json:
        per_query: Dict[str, Dict[str, float]] = {}
        if args.per_query:
            for m, values in ev.per_query.items():
                for q, v in values.items():
                    per_query.setdefault(q, {})[m] = v
        print(
            json.dumps(
                {
                    "aggregate": ev.aggregate,
                    "per_query": per_query,
                    "queries": {
                        "evaluated": len(ev.evaluated),
                        "missing": ev.missing,
                        "no_relevant": ev.no_relevant,
                    },
                },
                indent=2,
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


def _fuse(args: argparse.Namespace) -> int:
    from .measures.fusion import FusionConfig, fuse_runs
    from .suite.judgments import load_trec_run, write_trec_run

    if len(args.runs) < 2:
        raise RetrievalError("fuse needs at least two run files")
    weights = None
    if args.weights:
        try:
            weights = tuple(float(w) for w in args.weights.split(","))
        except ValueError:
            raise RetrievalError(
                f"--weights: {args.weights!r} is not a comma-separated list of numbers"
            ) from None
        if len(weights) != len(args.runs):
            raise RetrievalError(f"--weights: {len(weights)} weight(s) for {len(args.runs)} runs")
    try:
        if args.method == "rrf":
            cfg = FusionConfig(
                method="rrf",
                semantics=args.semantics or "elasticsearch",
                window=args.window,
                rank_constant=args.rank_constant or 60,
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
    runs = [load_trec_run(Path(p)) for p in args.runs]
    fused = fuse_runs(runs, cfg, k=args.k)
    write_trec_run(fused, sys.stdout, tag=args.tag)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from .suite.load import load_suite
    from .tuning.grid import DEFAULT_RANK_CONSTANTS, SweepGrid
    from .tuning.run import fusion_inputs, run_sweep

    def ints(text: Optional[str], what: str) -> Optional[tuple]:
        if text is None:
            return None
        try:
            return tuple(int(x) for x in text.split(","))
        except ValueError:
            raise RetrievalError(f"{what}: {text!r} is not a comma-separated list of integers") from None

    cli = {"backend.type": args.backend} if args.backend else None
    suite = load_suite(Path(args.suite), overrides=tuple(Path(o) for o in args.override or ()), cli=cli)
    try:
        grid = SweepGrid(
            weight_step=args.weight_step,
            rank_constants=ints(args.rank_constants, "--rank-constants") or DEFAULT_RANK_CONSTANTS,
            windows=ints(args.windows, "--windows"),
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
    from .suite.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pytest-retrieval", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    _add_evaluate(sub)
    _add_fuse(sub)
    _add_sweep(sub)
    s = sub.add_parser("schema", help="print the JSON Schema of suite files")
    s.set_defaults(func=_schema)

    from .judge.cli import register as register_judge

    register_judge(sub)  # pytest-retrieval judge clicks|llm|pool|import|agree
    from .reports.outputs import register as register_reports

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
    e.add_argument("--relevance-threshold", type=int, default=1, help="like trec_eval -l")
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
    f.add_argument("--rank-constant", type=int, default=None, help="rrf only (default 60)")
    f.add_argument("--window", type=int, default=100)
    f.add_argument("--norm", default=None, help="min_max | l2 (weighted); minmax | l2_norm | none (linear)")
    f.add_argument("--combine", default=None, choices=("arithmetic_mean", "geometric_mean", "harmonic_mean"))
    f.add_argument("--weights", default=None, help="comma-separated, one per run")
    f.add_argument("-k", type=int, default=None, help="hits per query in the output (default: window)")
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
        type=float,
        default=0.5,
        help="otherwise: share of the suite's judged queries to tune on (default 0.5)",
    )
    w.add_argument("--seed", type=int, default=0, help="seed of the random split")
    w.add_argument("--objective", default="ndcg@10", help="metric maximised on the tuning split")
    w.add_argument("--weight-step", type=float, default=0.1, help="weighted grid step (0.1)")
    w.add_argument("--rank-constants", help="RRF rank constants (default 1,5,10,20,40,60,80,100)")
    w.add_argument("--windows", help="candidate windows to sweep (default: the retriever's)")
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
    w.add_argument("--check-variants", type=int, default=7, help="variants checked (default 7)")
    w.add_argument("--top", type=int, default=10, help="tuning-split variants listed")
    w.add_argument("--json", action="store_true", help="print JSON")
    w.set_defaults(func=_sweep)


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RetrievalError, ValueError) as exc:
        print(f"pytest-retrieval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
