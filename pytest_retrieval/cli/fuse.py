"""``pytest-retrieval fuse``: RRF / weighted / linear fusion of run files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import RetrievalError
from .options import number, number_list, run_tag

__all__ = ["register", "run"]


def run(args: argparse.Namespace) -> int:
    from ..fusion.replay import replay
    from ..io.runfiles import read_run
    from ..io.trec import write_trec_run

    if len(args.runs) < 2:
        raise RetrievalError("fuse needs at least two run files")
    if args.weights is not None and len(args.weights) != len(args.runs):
        raise RetrievalError(f"--weights: {len(args.weights)} weight(s) for {len(args.runs)} runs")
    try:
        cfg = _fusion_config(args)
        _check_method_options(args)
    except ValueError as exc:
        raise RetrievalError(str(exc)) from None
    runs = [read_run(Path(p)) for p in args.runs]  # pyarrow-parsed, load_trec_run's rules
    # fusion.fuse_runs, vectorised (bit-identical, tests/tuning/test_replay.py): 3.2x faster
    # for weighted fusion of a 10,000-query run, the same time for rrf
    fused = replay(runs, cfg, k=args.k)
    write_trec_run(fused, sys.stdout, tag=args.tag)
    return 0


def _fusion_config(args: argparse.Namespace) -> Any:
    """The ``FusionConfig`` of ``--method`` (its own checks raise ValueError)."""
    from ..fusion.config import FusionConfig

    if args.method == "rrf":
        return FusionConfig(
            method="rrf",
            semantics=args.semantics or "elasticsearch",
            window=args.window,
            rank_constant=args.rank_constant,  # None: the engines' default (60); 0 is refused
            weights=args.weights,  # rrf has none: given ones are refused, not ignored
        )
    if args.method == "weighted":
        return FusionConfig(
            method="weighted",
            semantics="opensearch",
            window=args.window,
            normalization=args.norm or "min_max",
            combination=args.combine or "arithmetic_mean",
            weights=args.weights,
        )
    return FusionConfig(
        method="linear",
        semantics="elasticsearch",
        window=args.window,
        normalization=args.norm or "minmax",
        weights=args.weights,
    )


def _check_method_options(args: argparse.Namespace) -> None:
    """An option of another method is refused, not ignored."""
    for opt, value, allowed in (
        ("--rank-constant", args.rank_constant, "rrf"),
        ("--combine", args.combine, "weighted"),
        ("--norm", args.norm, "weighted or linear"),
    ):
        if value is not None and args.method not in allowed.split(" or "):
            raise RetrievalError(f"{opt} applies to --method {allowed} only")
    if args.method == "weighted" and args.semantics not in (None, "opensearch"):
        raise RetrievalError(
            "weighted fusion is OpenSearch's normalization-processor: use --semantics opensearch"
        )


def _norm(value: str) -> str:
    """A ``--norm`` value is one of the spellings fusion knows, whatever ``--method`` is (the
    method's own check then refuses one it does not take)."""
    from ..fusion.config import NORMALIZATION_ALIASES

    if value not in NORMALIZATION_ALIASES:
        raise argparse.ArgumentTypeError(
            f"{value!r} is no normalization (one of: {', '.join(NORMALIZATION_ALIASES)})"
        )
    return value


def register(sub: Any) -> None:
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
    f.add_argument(
        "--norm", type=_norm, default=None, help="min_max | l2 (weighted); minmax | l2_norm | none (linear)"
    )
    f.add_argument("--combine", default=None, choices=("arithmetic_mean", "geometric_mean", "harmonic_mean"))
    f.add_argument(
        "--weights", type=number_list(float, ge=0), default=None, help="comma-separated, one per run"
    )
    f.add_argument(
        "-k", type=number(int, ge=1), default=None, help="hits per query in the output (default: window)"
    )
    f.add_argument("--tag", type=run_tag, default="fused")
    f.set_defaults(func=run)
