"""pytest plugin: the hooks, each delegating to ``pytest_plugin/`` (options, the session's suites,
collection of suite YAML files, fixtures, pytest-xdist). The ``pytest11`` entry point.

Kept thin and cheap to import: everything heavy (pydantic, numpy, engines) is imported when a
suite file is actually collected or a fixture is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import pytest

from .pytest_plugin.fixtures import (  # noqa: F401 - pytest finds the fixtures on the plugin module
    assert_floor,
    infrastructure_error_is_an_error,
    mark_retrieval_tests,
    retrieval_retriever,
    retrieval_suite,
)
from .pytest_plugin.ini import apply_ini
from .pytest_plugin.items import (
    RetrievalSuiteFile,
    collect_file,
    one_line_collection_error,
    record_report,
    redact_report,
)
from .pytest_plugin.options import add_options, check_output_paths
from .pytest_plugin.session import RetrievalSession
from .pytest_plugin.xdist import XdistHooks, hand_over, is_worker


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "retrieval: a pytest-retrieval gate item")
    apply_ini(config)  # the ini keys of options not given on the command line
    session = RetrievalSession.start(config)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(session), "pytest_retrieval.pytest_plugin.xdist")
    check_output_paths(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    RetrievalSession.stop(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[RetrievalSuiteFile]:
    return collect_file(file_path, parent)


def pytest_exception_interact(node: Any, call: pytest.CallInfo, report: Any) -> None:
    # pytest calls this for a collection error before the report is shown (runner.collect_one_node)
    if isinstance(node, pytest.Collector) and isinstance(report, pytest.CollectReport):
        one_line_collection_error(node, call, report)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    mark_retrieval_tests(items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    infrastructure_error_is_an_error(item, call, outcome.get_result())
    redact_report(outcome.get_result())  # before anything records or shows its message
    record_report(item, call, outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    redact_report(outcome.get_result())


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    RetrievalSession.of(config).write_summary(terminalreporter)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    retrieval = RetrievalSession.of(session.config)
    if is_worker(session.config):  # the controller reports, once, for every worker (xdist.py)
        hand_over(session.config, retrieval.states, retrieval.handed_coverage())
    else:
        retrieval.write_outputs(session)
    retrieval.close()
