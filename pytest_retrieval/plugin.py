"""pytest plugin: options, collection of suite YAML files, fixtures, terminal summary.

Kept thin and cheap to import: everything heavy (pydantic, numpy, engines) is
imported when a suite file is actually collected or a fixture is used.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

SUITE_PATTERNS = ("retrieval_*.yaml", "retrieval_*.yml", "*.retrieval.yaml", "*.retrieval.yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("retrieval", "retrieval regression gates (pytest-retrieval)")
    g.addoption("--retrieval-report", metavar="PATH", default=None,
                help="write a JSON report of every suite (metrics, per-query values, gates)")
    g.addoption("--retrieval-profile", choices=("exp", "trec"), default=None,
                help="nDCG gain for every suite: exp (2^rel-1, default) or trec (trec_eval, linear)")
    g.addoption("--retrieval-backend", choices=("embedded", "elasticsearch", "opensearch"),
                default=None, help="run every suite on this backend instead of the file's")
    g.addoption("--retrieval-override", metavar="FILE", action="append", default=[],
                help="a YAML file merged over every suite (e.g. a team's floors); repeatable")
    g.addoption("--retrieval-no-latency", action="store_true", default=False,
                help="skip the latency pass (latency floors then error, they never pass)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "retrieval: a pytest-retrieval gate item")
    config.stash[_STATE] = {}


_STATE = pytest.StashKey[Dict[str, "SuiteState"]]()


def _is_suite_file(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, p) for p in SUITE_PATTERNS)


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if _is_suite_file(file_path):
        return RetrievalSuiteFile.from_parent(parent, path=file_path)
    return None


# -------------------------------------------------------------------- state

class SuiteState:
    """One suite per file per session: loaded once, run once, shared by its items."""

    def __init__(self, suite: Any):
        self.suite = suite
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.outcomes: List[Any] = []
        self.warned: set = set()

    def ensure_run(self, config: pytest.Config) -> Any:
        if self.result is None and self.error is None:
            from .suite import SuiteRunner

            verbose = config.getoption("verbose") > 0
            tr = config.pluginmanager.get_plugin("terminalreporter")

            def progress(msg: str) -> None:
                if verbose and tr is not None:
                    tr.write_line(f"[retrieval] {self.suite.name}: {msg}")

            try:
                self.result = SuiteRunner(self.suite, progress=progress).run()
            except Exception as exc:  # cached so every item of the suite reports it
                self.error = exc
        if self.error is not None:
            raise self.error
        return self.result


def _cli_overrides(config: pytest.Config) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if config.getoption("retrieval_profile"):
        out["evaluation.profile"] = config.getoption("retrieval_profile")
    if config.getoption("retrieval_backend"):
        out["backend.type"] = config.getoption("retrieval_backend")
    if config.getoption("retrieval_no_latency"):
        out["latency.enabled"] = False
    return out


def load_suite_for(config: pytest.Config, path: Path) -> SuiteState:
    from .config import load_suite

    key = str(Path(path).resolve())
    states = config.stash[_STATE]
    if key not in states:
        overrides = tuple(Path(p) for p in config.getoption("retrieval_override"))
        states[key] = SuiteState(load_suite(Path(path), overrides=overrides,
                                            cli=_cli_overrides(config)))
    return states[key]


# --------------------------------------------------------------- collection

def _one_line(excinfo: pytest.ExceptionInfo) -> Optional[str]:
    from .errors import RetrievalError

    if excinfo.errisinstance(RetrievalError):
        kind = type(excinfo.value).__name__
        return f"{kind}: {excinfo.value}"
    return None


class RetrievalSuiteFile(pytest.File):
    def collect(self):
        state = load_suite_for(self.config, self.path)
        by_retriever: Dict[str, List[Any]] = {}
        for floor in state.suite.floors:
            by_retriever.setdefault(floor.retriever, []).append(floor)
        for name in state.suite.order:
            if name in by_retriever:
                yield RetrieverNode.from_parent(self, name=name, floors=by_retriever[name],
                                                state=state)

    def repr_failure(self, excinfo):  # type: ignore[override]
        return _one_line(excinfo) or super().repr_failure(excinfo)


class RetrieverNode(pytest.Collector):
    def __init__(self, *, floors: List[Any], state: SuiteState, **kw: Any):
        super().__init__(**kw)
        self.floors = floors
        self.state = state

    def collect(self):
        for floor in self.floors:
            yield GateItem.from_parent(self, name=floor.metric, floor=floor, state=self.state)


class GateFailed(AssertionError):
    """A floor that was not met. Its message is the whole report."""


class GateItem(pytest.Item):
    def __init__(self, *, floor: Any, state: SuiteState, **kw: Any):
        super().__init__(**kw)
        self.floor = floor
        self.state = state
        self.add_marker("retrieval")

    def setup(self) -> None:
        # Retrieval happens here, so an engine or data problem is a pytest ERROR, not a
        # failed gate (and never a pass).
        self.state.ensure_run(self.config)

    def runtest(self) -> None:
        from .gates import check_floor

        result = self.state.result
        floor = self.floor
        r = result.retrievers[floor.retriever]
        value, worst = result.gate_value(floor.retriever, floor.metric)
        outcome = check_floor(result.suite.name, floor, value, worst,
                              n_queries=len(r.evaluation.evaluated),
                              unit=" ms" if floor.is_latency else "")
        self.state.outcomes.append(outcome)
        self.user_properties.extend([
            ("retrieval_suite", result.suite.name), ("retrieval_retriever", floor.retriever),
            ("retrieval_metric", floor.metric), ("retrieval_value", repr(value)),
            ("retrieval_op", floor.op), ("retrieval_threshold", repr(floor.threshold))])
        if floor.retriever not in self.state.warned:  # once per retriever, not per item
            self.state.warned.add(floor.retriever)
            for w in r.warnings:
                self.warn(pytest.PytestWarning(f"{result.suite.name} :: {floor.retriever}: {w}"))
        if not outcome.passed:
            raise GateFailed(outcome.message)

    def repr_failure(self, excinfo, style=None):  # type: ignore[override]
        if excinfo.errisinstance(GateFailed):
            return str(excinfo.value)
        return _one_line(excinfo) or super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):  # setup/teardown errors
        return _one_line(excinfo) or super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        origin = self.floor.origin
        line = None
        if origin and ":" in origin:
            try:
                line = int(origin.rsplit(":", 1)[1]) - 1
            except ValueError:
                line = None
        return self.path, line, f"{self.parent.name}::{self.name}"


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="session")
def retrieval_suite(pytestconfig: pytest.Config):
    """Load and run a suite file once per session: ``result = retrieval_suite("retrieval_x.yaml")``.

    Returns a ``SuiteResult``: ``result.value("bm25", "ndcg@10")``,
    ``result.retrievers["bm25"].evaluation.per_query["ndcg@10"]``.
    """
    def load(path: Any) -> Any:
        p = Path(path)
        if not p.is_absolute():
            p = Path(pytestconfig.rootpath) / p if not p.exists() else p
        return load_suite_for(pytestconfig, p).ensure_run(pytestconfig)

    return load


@pytest.fixture
def assert_floor():
    """``assert_floor(result, "bm25", "ndcg@10", 0.6)``: fails with the gate's full message."""
    def check(result: Any, retriever: str, metric: str, floor: float) -> None:
        from .config import Floor, floor_key
        from .gates import check_floor

        canon, op = floor_key(metric)
        f = Floor(retriever, canon, op, float(floor))
        value, worst = result.gate_value(retriever, canon)
        outcome = check_floor(result.suite.name, f, value, worst)
        if not outcome.passed:
            pytest.fail(outcome.message, pytrace=False)

    return check


# ------------------------------------------------------------------ reports

def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    states = [s for s in config.stash.get(_STATE, {}).values() if s.result is not None]
    if not states:
        return
    from .reports import render_summary

    terminalreporter.section("retrieval summary")
    for state in states:
        for line in render_summary(state.result, state.outcomes):
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("retrieval_report", None)
    if not path:
        return
    from .reports import write_json_report

    states = [s for s in session.config.stash.get(_STATE, {}).values()]
    write_json_report(Path(path), states)
