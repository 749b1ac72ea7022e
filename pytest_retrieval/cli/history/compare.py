"""``pytest-retrieval history compare RUN_A RUN_B``: ``pytest-retrieval compare`` on two stored
runs' records (a run id or a unique prefix of one, a tag, or a commit)."""

from __future__ import annotations

import argparse
from typing import Any

from .store import add_store_option, open_from_args

__all__ = ["NAME", "register", "run"]

NAME = "compare"


def run(args: argparse.Namespace) -> int:
    from ...output_paths import Output
    from ...safe_names import one_line
    from ..compare import compare_documents
    from ..report_file import check_report

    store = open_from_args(args, [Output("--markdown", args.markdown, "markdown")])
    try:
        ids = [store.resolve(ref) for ref in (args.run_a, args.run_b)]
        docs = [store.load(i) for i in ids]
    finally:
        store.close()
    names = tuple(one_line(f"run {i[:12]}") for i in ids)
    for doc, name in zip(docs, names):
        check_report(doc, f"history {store.location} {name}")  # as a report file is checked
    return compare_documents(args, docs[0], docs[1], names)


def register(sub: Any) -> None:
    from ..compare import add_compare_options

    p = sub.add_parser(NAME, help="two stored runs side by side, as pytest-retrieval compare")
    add_store_option(p)
    p.add_argument("run_a", metavar="RUN_A", help="the reference run: a run id (or prefix), tag or commit")
    p.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    add_compare_options(p)
    p.set_defaults(func=run)
