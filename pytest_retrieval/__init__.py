"""pytest-retrieval: put a retrieval pipeline under a regression gate.

The public Python API (everything else is internal and may move):

- run a suite: :func:`load_suite` then :func:`run_suite` (or ``SuiteRunner(suite).run()``), giving a
  :class:`SuiteResult` (per retriever its :class:`Run`, its :class:`Evaluation` and its latency);
- evaluate rankings like trec_eval: :func:`evaluate` with metrics parsed by :func:`parse_metric`
  (``"ndcg@10"`` -> :class:`Metric`), on qrels and runs read by :func:`load_qrels` / :func:`load_trec_run`;
- fuse rankings with Elasticsearch's or OpenSearch's exact semantics: :func:`fuse` / :func:`fuse_runs`
  with a :class:`FusionConfig`;
- the data types: :class:`Ranking`, :class:`Run`, :class:`Query`, :class:`Document`;
- ask one retriever of a suite from a test (the ``retrieval_retriever`` fixture gives a
  :class:`Retriever`, whose ``search`` returns :class:`Hits`) and check golden queries with
  :func:`assert_in_top`, :func:`assert_not_in_top`, :func:`assert_ranked_above`; parametrize
  per-query tests over :func:`retrieval_queries`;
- plug in another search engine: implement the :class:`Backend` protocol and register it
  (``backends.registry``, or the ``pytest_retrieval.backends`` entry point group);
- the errors: :class:`RetrievalError`, with :class:`ConfigError` (bad input: file, line, key) and
  :class:`InfrastructureError` (an engine or model that failed: never a pass).

Importing this package stays cheap: each name is imported on first use (PEP 562), so heavy
libraries (numpy, bm25s, engine clients, model runtimes) load only when needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

# public name -> module that defines it
_EXPORTS = {
    "load_suite": "config.load",
    "Suite": "config.load",
    "SuiteRunner": "execution.runner",
    "run_suite": "execution.runner",
    "SuiteResult": "execution.results",
    "RetrieverResult": "execution.results",
    "evaluate": "measures.metrics",
    "parse_metric": "measures.metrics",
    "Metric": "measures.metrics",
    "Evaluation": "measures.metrics",
    "fuse": "fusion.semantics",
    "fuse_runs": "fusion.semantics",
    "FusionConfig": "fusion.config",
    "load_qrels": "io.qrels",
    "load_trec_run": "io.trec",
    "write_trec_run": "io.trec",
    "Ranking": "types",
    "Run": "types",
    "Query": "types",
    "Document": "types",
    "RetrievalError": "errors",
    "ConfigError": "errors",
    "InfrastructureError": "errors",
    "assert_in_top": "gates.expectations",
    "assert_not_in_top": "gates.expectations",
    "assert_ranked_above": "gates.expectations",
    "ExpectationFailed": "gates.expectations",
    "Retriever": "execution.retriever",
    "Hits": "execution.hits",
    "Hit": "execution.hits",
    "retrieval_queries": "execution.queries",
    "JudgedQuery": "execution.queries",
    "Backend": "backends.base",
}

__all__ = [
    "Backend",
    "ConfigError",
    "Document",
    "Evaluation",
    "ExpectationFailed",
    "Hit",
    "Hits",
    "JudgedQuery",
    "Retriever",
    "FusionConfig",
    "InfrastructureError",
    "Metric",
    "Query",
    "Ranking",
    "RetrievalError",
    "RetrieverResult",
    "Run",
    "Suite",
    "SuiteResult",
    "SuiteRunner",
    "assert_in_top",
    "assert_not_in_top",
    "assert_ranked_above",
    "evaluate",
    "fuse",
    "fuse_runs",
    "load_qrels",
    "load_suite",
    "load_trec_run",
    "parse_metric",
    "retrieval_queries",
    "run_suite",
    "write_trec_run",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # cache: the next access is a plain attribute
    return value


def __dir__() -> list:
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs; at run time names load lazily above
    from .backends.base import Backend
    from .config.load import Suite, load_suite
    from .errors import ConfigError, InfrastructureError, RetrievalError
    from .execution.hits import Hit, Hits
    from .execution.queries import JudgedQuery, retrieval_queries
    from .execution.results import RetrieverResult, SuiteResult
    from .execution.retriever import Retriever
    from .execution.runner import SuiteRunner, run_suite
    from .fusion.config import FusionConfig
    from .fusion.semantics import fuse, fuse_runs
    from .gates.expectations import ExpectationFailed, assert_in_top, assert_not_in_top, assert_ranked_above
    from .io.qrels import load_qrels
    from .io.trec import load_trec_run, write_trec_run
    from .measures.metrics import Evaluation, Metric, evaluate, parse_metric
    from .types import Document, Query, Ranking, Run
