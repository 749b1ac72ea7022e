"""``pytest-retrieval judge clicks|llm|sample|synth|pool|import|export|agree``: author and check judgments.

``register(subparsers)`` adds the ``judge`` command family to the ``pytest-retrieval``
parser (``pytest_retrieval.cli.app``), one module per command. Every command reports to stderr and writes files atomically; mistakes in input files are
one line naming the file and line.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import agree, clicks, importing, interchange, llm, pool, sample, synth

__all__ = ["register"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``judge`` and its commands to a ``pytest-retrieval`` subparsers object."""

    j = subparsers.add_parser(
        "judge",
        help="author judgments: clicks, LLM grading, pooling, import, agreement",
        description="Author judgment sets: grade from click logs (clicks), with an LLM judge "
        "(llm), build query sets from a query log (sample) or with an LLM (synth), pool the top-k of your retrievers for people to grade (pool, "
        "import), bring judgments in from and out to Quepid, RRE, OpenSearch's Search Relevance "
        "Workbench and _rank_eval (import --from, export), and measure agreement between two label sources (agree).",
    )
    sub = j.add_subparsers(
        dest="judge_command", required=True, metavar="{clicks,llm,sample,synth,pool,import,export,agree}"
    )
    clicks.register(sub)
    llm.register(sub)
    sample.register(sub)
    synth.register(sub)
    pool.register(sub)
    importing.register(sub)
    interchange.register_export(sub)
    agree.register(sub)
    return j
