"""``pytest-retrieval sweep``: tune a suite's fusion retriever offline."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import RetrievalError
from .options import number, number_list

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..config.load import load_suite
    from ..tuning.run import fusion_inputs, run_sweep

    cli = {"backend.type": args.backend} if args.backend else None
    suite = load_suite(Path(args.suite), overrides=tuple(Path(o) for o in args.override or ()), cli=cli)
    grid = _grid(args)
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
        _print_json(result, how, check, name)
    else:
        _print_text(result, how, check, name, top=args.top)
    return 0 if check is None or check.ok else 1


def _grid(args: argparse.Namespace) -> Any:
    from ..tuning.grid import DEFAULT_RANK_CONSTANTS, SweepGrid

    try:
        return SweepGrid(
            weight_step=args.weight_step,
            rank_constants=args.rank_constants or DEFAULT_RANK_CONSTANTS,
            windows=args.windows,
        )
    except ValueError as exc:
        raise RetrievalError(str(exc)) from None


def _print_json(result: Any, how: str, check: Any, name: str) -> None:
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


def _print_text(result: Any, how: str, check: Any, name: str, *, top: int) -> None:
    print(result.summary(top=top))
    print(f"  split: {how}")
    print("\nsuite file (retrievers:):\n")
    print(result.yaml_block(name))
    print("OpenSearch search pipeline (PUT _search/pipeline/<name>):\n")
    print(json.dumps(result.opensearch_pipeline(), indent=2))
    if check is not None:
        print()
        print(check.summary())


def register(sub: Any) -> None:
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
    w.set_defaults(func=run)
