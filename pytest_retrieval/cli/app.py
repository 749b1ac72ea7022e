"""``pytest-retrieval`` command: trec_eval-like evaluation, run fusion, fusion sweeps, the JSON
Schema, judgment authoring (``judge``), and reports (``report``, ``compare``)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from ..errors import RetrievalError
from ..version import __version__
from . import compare, evaluate, fuse, history, judge, report, schema, sweep
from .options import Parser, join_negative_values


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="pytest-retrieval", description=__doc__)
    p.add_argument("--version", action="version", version=f"pytest-retrieval {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    evaluate.register(sub)
    fuse.register(sub)
    sweep.register(sub)
    schema.register(sub)
    judge.register(sub)  # pytest-retrieval judge clicks|llm|pool|import|agree
    report.register(sub)
    compare.register(sub)
    history.register(sub)  # pytest-retrieval history prune|...
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        return _closed_pipe()
    except (RetrievalError, ValueError) as exc:
        print(f"pytest-retrieval: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be written or read: its name and why, one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"pytest-retrieval: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def _closed_pipe() -> int:
    """The reader of stdout went away (``| head``): stop quietly, as a command killed by SIGPIPE
    does (exit 141), with no traceback and no second error when Python flushes stdout at exit
    (the recipe of the Python docs, ``signal``: "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
