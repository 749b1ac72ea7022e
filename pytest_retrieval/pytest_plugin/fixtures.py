"""The fixtures of the plugin (``retrieval_suite``, ``retrieval_retriever``, ``assert_floor``)
and the rule that an engine fault in a test using them is an ERROR."""

from __future__ import annotations

import inspect
from types import FrameType
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from .session import RetrievalSession

__all__ = [
    "assert_floor",
    "infrastructure_error_is_an_error",
    "mark_retrieval_tests",
    "retrieval_retriever",
    "retrieval_suite",
]

_RETRIEVAL_FIXTURES = ("retrieval_retriever", "retrieval_suite")


def _caller_file(frame: Optional[FrameType]) -> str:
    """The file of the code that called the function running in ``frame``: a suite path is
    looked up beside that test file."""
    caller = frame.f_back if frame is not None else None
    return caller.f_code.co_filename if caller is not None else ""


@pytest.fixture(scope="session")
def retrieval_suite(pytestconfig: pytest.Config) -> Callable[[Any], Any]:
    """Load and run a suite file once per session: ``result = retrieval_suite("retrieval_x.yaml")``.

    Returns a ``SuiteResult``: ``result.value("bm25", "ndcg@10")``,
    ``result.retrievers["bm25"].evaluation.per_query["ndcg@10"]``, ``result.query("bm25", qid)``
    (one query's metrics, ranking and grades).
    """
    session = RetrievalSession.of(pytestconfig)

    def load(path: Any) -> Any:
        return session.for_test(path, _caller_file(inspect.currentframe())).ensure_run(pytestconfig)

    return load


@pytest.fixture(scope="session")
def retrieval_retriever(pytestconfig: pytest.Config) -> Callable[[Any, str], Any]:
    """A suite's retriever, to ask it questions: ``r = retrieval_retriever("retrieval_x.yaml", "rrf")``
    then ``hits = r.search("iphone 15 case", k=10)`` or ``r.search_many(texts, k)``.

    Bound to the suite's own backend: the same index as the suite's YAML items (a throwaway
    index is built once per session), the same embedder, fusion and rerank stages."""
    from ..execution.retriever import Retriever

    session = RetrievalSession.of(pytestconfig)
    made: Dict[Tuple[str, str], Any] = {}

    def get(path: Any, name: str) -> Any:
        state = session.for_test(path, _caller_file(inspect.currentframe()))
        key = (str(state.suite.path), name)
        if key not in made:
            made[key] = Retriever(state.shared, name)
        return made[key]

    return get


@pytest.fixture
def assert_floor() -> Callable[[Any, str, str, float], None]:
    """``assert_floor(result, "bm25", "ndcg@10", 0.6)``: fails with the gate's full message."""

    def check(result: Any, retriever: str, metric: str, floor: float) -> None:
        from ..gates.floors import Floor, floor_key
        from ..gates.verdicts import point_verdict

        canon, op, stratum = floor_key(metric)
        outcome = point_verdict(result, Floor(retriever, canon, op, float(floor), stratum=stratum))
        if not outcome.passed:
            pytest.fail(outcome.message, pytrace=False)

    return check


def infrastructure_error_is_an_error(
    item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport
) -> None:
    """An engine fault inside a test that searches a suite: an ERROR, never a failed (or
    passed) test; pytest counts failed reports outside the call phase as errors."""
    if call.when == "call" and call.excinfo is not None and _uses_retrieval_fixture(item):
        from ..errors import InfrastructureError

        if call.excinfo.errisinstance(InfrastructureError):
            report.when = "setup"
            report.longrepr = _one_line(item, call.excinfo)


def _one_line(item: pytest.Item, excinfo: Any) -> str:
    """The engine fault as one line, with where the test asked for it (``test_x.py:12``): not
    the trace through the plugin and the client down to the socket (issue #28 section 5)."""
    where = ""
    for entry in reversed(excinfo.traceback):
        if str(entry.path) == str(item.path):
            where = f" (at {item.path.name}:{entry.lineno + 1})"
            break
    message = " ".join(str(excinfo.value).split())
    return f"{excinfo.type.__name__}: {message}{where}"


def mark_retrieval_tests(items: List[pytest.Item]) -> None:
    """A Python test that searches a suite (``retrieval_retriever``, ``retrieval_suite``, directly
    or through a fixture) is marked ``retrieval`` like the YAML gates, so ``-m retrieval`` (the
    pre-commit hooks, a CI job of the gates alone) runs the golden-query tests too (issue #26)."""
    for item in items:
        if _uses_retrieval_fixture(item) and item.get_closest_marker("retrieval") is None:
            item.add_marker("retrieval")


def _uses_retrieval_fixture(item: pytest.Item) -> bool:
    return any(f in _RETRIEVAL_FIXTURES for f in getattr(item, "fixturenames", ()))
