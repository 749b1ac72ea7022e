"""``pytest-retrieval history ...``: the run history (issue #37), one module per command.

``register(subparsers)`` adds the ``history`` command family to the ``pytest-retrieval`` parser
(``pytest_retrieval.cli.app``). A command module has ``register(sub)``; every command takes the
store as ``--store PATH|URL`` (``store.py``: default the ``retrieval_history`` ini key of the
pytest configuration in the current folder). To add a command: a module here, listed in
:data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import compare, drift, prune, runs, trend

__all__ = ["COMMANDS", "register"]

#: the history commands, each a module with ``register(sub)`` (``NAME``: its name)
COMMANDS = (runs, trend, compare, drift, prune)


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``history`` and its commands to a ``pytest-retrieval`` subparsers object."""
    h = subparsers.add_parser(
        "history",
        help="the run history (--retrieval-history): list, trends, compare, prune",
        description="Read and maintain the run history the plugin writes with --retrieval-history "
        "(a SQLite file, or an Elasticsearch/OpenSearch index).",
    )
    names = ",".join(m.NAME for m in COMMANDS)
    sub = h.add_subparsers(dest="history_command", required=True, metavar="{" + names + "}")
    for module in COMMANDS:
        module.register(sub)
    return h
