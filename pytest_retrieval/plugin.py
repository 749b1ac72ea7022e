"""pytest plugin: options, collection of suite YAML files, fixtures, terminal summary.

Kept thin and cheap to import: everything heavy (pydantic, numpy, engines) is
imported when a suite file is actually collected or a fixture is used.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

SUITE_PATTERNS = ("retrieval_*.yaml", "retrieval_*.yml", "*.retrieval.yaml", "*.retrieval.yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("retrieval", "retrieval regression gates (pytest-retrieval)")
    g.addoption(
        "--retrieval-report",
        metavar="PATH",
        default=None,
        help="write a JSON report of every suite (metrics, per-query values, gates)",
    )
    g.addoption(
        "--retrieval-profile",
        choices=("exp", "trec"),
        default=None,
        help="nDCG gain for every suite: exp (2^rel-1, default) or trec (trec_eval, linear)",
    )
    g.addoption(
        "--retrieval-backend",
        choices=("embedded", "elasticsearch", "opensearch"),
        default=None,
        help="run every suite on this backend instead of the file's",
    )
    g.addoption(
        "--retrieval-override",
        metavar="FILE",
        action="append",
        default=[],
        help="a YAML file merged over every suite (e.g. a team's floors); repeatable",
    )
    g.addoption(
        "--retrieval-baseline-update",
        action="store_true",
        default=False,
        help="write each suite's baseline (per-query values, latency, input fingerprint) "
        "instead of comparing against it; review the diff and commit it",
    )
    g.addoption(
        "--retrieval-export-unjudged",
        metavar="PATH",
        default=None,
        help="write every (query, doc) in a retriever's top 10 that has no judgment, as "
        "a JSONL annotation queue (see `pytest-retrieval judge import`)",
    )
    g.addoption(
        "--retrieval-runs",
        metavar="DIR",
        default=None,
        help="write DIR/<suite>/<retriever>.run (TREC runs exactly as scored), qrels.txt and "
        "evaluate.sh (the `pytest-retrieval evaluate` commands that reproduce the numbers)",
    )
    g.addoption(
        "--retrieval-no-latency",
        action="store_true",
        default=False,
        help="skip the latency pass (latency floors are then skipped with that reason)",
    )
    from .reports.outputs import add_report_options

    add_report_options(g)  # --retrieval-markdown/-html/-openmetrics/-no-step-summary


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "retrieval: a pytest-retrieval gate item")
    config.stash[_STATE] = {}
    from .execution import queries

    # retrieval_queries() reads a suite's judgments as this run does, and shares them with it
    config.stash[_QUERIES_LOADER] = loader = lambda path: load_suite_for(config, path).shared.judgments()  # noqa: E731
    queries.push_suite_loader(loader)
    if config.pluginmanager.hasplugin("xdist"):
        from .pytest_plugin.xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(), "pytest_retrieval.pytest_plugin.xdist")
    for option, flag in (
        ("retrieval_report", "--retrieval-report"),
        ("retrieval_export_unjudged", "--retrieval-export-unjudged"),
    ):
        _check_output_path(config.getoption(option, None), flag)


def _check_output_path(value: Optional[str], flag: str) -> None:
    """An output file is checked when pytest starts, not after the run (issue #11)."""
    if not value:
        return
    import os

    path = Path(value)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise pytest.UsageError(f"{flag} {value}: is a directory, expected a file path")
    if path.exists() and not path.is_file():
        raise pytest.UsageError(f"{flag} {value}: not a regular file")
    import tempfile

    try:  # the same steps the write takes at the end: the folder, then a file in it
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=str(parent))
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise pytest.UsageError(f"{flag} {value}: cannot write there ({exc.strerror or exc})") from None


_STATE = pytest.StashKey[Dict[str, "SuiteState"]]()
_QUERIES_LOADER = pytest.StashKey[Any]()


def pytest_unconfigure(config: pytest.Config) -> None:
    from .execution import queries

    loader = config.stash.get(_QUERIES_LOADER, None)
    if loader is not None:
        queries.pop_suite_loader(loader)


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
        self.regressions: List[Any] = []
        self._warned: set = set()
        self.items: List[Dict[str, Any]] = []  # every gate item's outcome and message, for reports
        self._baseline: Any = None
        self._shared: Any = None  # suite.shared.SharedBackend: one index for items and fixtures
        self.expectations: List[Any] = []  # (Expectation, retriever, Hits, broken) per golden item run
        self.runs = 0  # how many processes ran the suite (1; more under xdist with a split suite)

    def for_controller(self) -> SuiteState:
        """A copy for the xdist controller (``xdist.py``): no backend, an error that survives pickling."""
        import copy
        import pickle

        out = copy.copy(self)
        out._shared = None
        out.runs = 1
        if self.error is not None:
            try:
                pickle.loads(pickle.dumps(self.error))
            except Exception:  # noqa: BLE001 - e.g. keyword-only constructor arguments
                out.error = RuntimeError(f"{type(self.error).__name__}: {self.error}")
        return out

    @property
    def shared(self) -> Any:
        """The suite's backend for this session, shared by its items and fixtures."""
        if self._shared is None:
            from .execution.shared import SharedBackend

            self._shared = SharedBackend(self.suite)
        return self._shared

    def baseline(self) -> Tuple[Any, str]:
        """(Baseline, note) or (None, why the comparison falls back to floors only)."""
        if self._baseline is None:
            from .gates.baseline import load_comparable_baseline

            self._baseline = load_comparable_baseline(self.suite, self.result)
        return self._baseline

    @property
    def loaded_baseline(self) -> Optional[Tuple[Any, str]]:
        """(Baseline, note) once something asked for the baseline, else None."""
        return self._baseline

    @property
    def baseline_note(self) -> str:
        """What the baseline comparison said, once a baseline gate asked for it ("" before)."""
        return self._baseline[1] if self._baseline is not None else ""

    def warnings_once(self, retriever: str) -> List[str]:
        """The retriever's warnings the first time they are asked for, then none."""
        if retriever in self._warned:
            return []
        self._warned.add(retriever)
        return list(self.result.retrievers[retriever].warnings)

    def ensure_run(self, config: pytest.Config) -> Any:
        if self.result is None and self.error is None:
            from .execution.runner import SuiteRunner

            verbose = config.getoption("verbose") > 0
            tr = config.pluginmanager.get_plugin("terminalreporter")

            def progress(msg: str) -> None:
                if verbose and tr is not None:
                    tr.write_line(f"[retrieval] {self.suite.name}: {msg}")

            try:
                self.result = SuiteRunner(self.suite, progress=progress, shared=self.shared).run()
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
    return out


def load_suite_for(config: pytest.Config, path: Path) -> SuiteState:
    from .config.load import load_suite

    key = str(Path(path).resolve())
    states = config.stash[_STATE]
    if key not in states:
        overrides = tuple(Path(p) for p in config.getoption("retrieval_override"))
        suite = load_suite(Path(path), overrides=overrides, cli=_cli_overrides(config))
        if config.getoption("retrieval_no_latency"):
            # not a file override: the file stays valid, its latency items are skipped
            suite.model.latency.enabled = False
        states[key] = SuiteState(suite)
    return states[key]


# --------------------------------------------------------------- collection


def _one_line(excinfo: pytest.ExceptionInfo) -> Optional[str]:
    from .errors import RetrievalError

    if excinfo.errisinstance(RetrievalError):
        kind = type(excinfo.value).__name__
        return f"{kind}: {excinfo.value}"
    return None


class RetrievalSuiteFile(pytest.File):
    def collect(self) -> Iterator[pytest.Collector]:
        state = load_suite_for(self.config, self.path)
        by_retriever: Dict[str, List[Any]] = {}
        for floor in state.suite.floors:
            by_retriever.setdefault(floor.retriever, []).append(floor)
        regression: Dict[str, List[Any]] = {}
        for gate in state.suite.regression:
            regression.setdefault(gate.retriever, []).append(gate)
        expectations: Dict[str, List[Any]] = {}
        for expectation in state.suite.expectations:
            for name in expectation.retrievers:
                expectations.setdefault(name, []).append(expectation)
        for name in state.suite.order:
            if name in by_retriever or name in regression or name in expectations:
                yield RetrieverNode.from_parent(
                    self,
                    name=name,
                    floors=by_retriever.get(name, []),
                    regression=regression.get(name, ()),
                    expectations=expectations.get(name, ()),
                    state=state,
                )

    def repr_failure(self, excinfo):  # type: ignore[override]
        return _one_line(excinfo) or super().repr_failure(excinfo)


class RetrieverNode(pytest.Collector):
    def __init__(self, *, floors: List[Any], state: SuiteState, regression=(), expectations=(), **kw: Any):
        super().__init__(**kw)
        self.floors = floors
        self.regression = list(regression)
        self.expectations = list(expectations)
        self.state = state

    def collect(self) -> Iterator[pytest.Item]:
        for floor in self.floors:
            yield GateItem.from_parent(self, name=floor.name, floor=floor, state=self.state)
        for gate in self.regression:
            yield RegressionItem.from_parent(self, name=gate.name, gate=gate, state=self.state)
        for expectation in self.expectations:
            yield ExpectationItem.from_parent(
                self, name=f"expect[{expectation.name}]", expectation=expectation, state=self.state
            )


class GateFailed(AssertionError):
    """A floor that was not met. Its message is the whole report."""


class _SuiteItem(pytest.Item):
    """An item that reads its suite's shared run. The retrieval happens in ``setup``, so an
    engine or data problem is a pytest ERROR, not a failed gate (and never a pass)."""

    def __init__(self, *, state: SuiteState, **kw: Any):
        super().__init__(**kw)
        self.state = state
        self.add_marker("retrieval")

    def setup(self) -> None:
        self.state.ensure_run(self.config)

    def repr_failure(self, excinfo, style=None):  # type: ignore[override]
        if excinfo.errisinstance(GateFailed):
            return str(excinfo.value)
        return _one_line(excinfo) or super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):  # setup/teardown errors
        return _one_line(excinfo) or super()._repr_failure_py(excinfo, style=style)


class GateItem(_SuiteItem):
    def __init__(self, *, floor: Any, **kw: Any):
        super().__init__(**kw)
        self.floor = floor

    def setup(self) -> None:
        from .gates import GateKind

        if self.config.getoption("retrieval_no_latency") and self.floor.kind in (
            GateKind.LATENCY,
            GateKind.LATENCY_RATIO,
        ):
            pytest.skip("--retrieval-no-latency: latency not measured")
        super().setup()

    def runtest(self) -> None:
        from .gates import evaluate
        from .reports.junit import floor_properties

        outcome = evaluate(self.state.result, self.floor)
        self.state.outcomes.append(outcome)
        self.user_properties.extend(floor_properties(outcome))
        for w in self.state.warnings_once(self.floor.retriever):  # once per retriever, not per item
            self.warn(pytest.PytestWarning(f"{outcome.suite} :: {self.floor.retriever}: {w}"))
        if not outcome.passed:
            raise GateFailed(outcome.message)

    def reportinfo(self):
        origin = self.floor.origin
        line = None
        if origin and ":" in origin:
            try:
                line = int(origin.rsplit(":", 1)[1]) - 1
            except ValueError:
                line = None
        return self.path, line, f"{self.parent.name}::{self.name}"


class RegressionItem(_SuiteItem):
    """Non-inferiority against the committed baseline: paired, per query (and per stratum)."""

    def __init__(self, *, gate: Any, **kw: Any):
        super().__init__(**kw)
        self.gate = gate

    def runtest(self) -> None:
        from .gates import evaluate
        from .reports.junit import regression_properties

        if self.config.getoption("retrieval_baseline_update"):
            pytest.skip("--retrieval-baseline-update: writing the baseline, not comparing")
        baseline, note = self.state.baseline()
        if baseline is None:
            pytest.skip(note)
        outcome = evaluate(self.state.result, self.gate, baseline=baseline)
        self.state.regressions.append(outcome)
        self.user_properties.extend(regression_properties(outcome))
        if not outcome.passed:
            raise GateFailed(outcome.message)

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"


class ExpectationItem(_SuiteItem):
    """A golden query of the suite's ``expectations:`` for one retriever, read off the suite's
    run (its query went through the same pass as the judged ones)."""

    def __init__(self, *, expectation: Any, **kw: Any):
        super().__init__(**kw)
        self.expectation = expectation
        self.retriever = self.parent.name if self.parent is not None else ""

    def runtest(self) -> None:
        from .gates.expectations import check_expectation, failure_message
        from .reports.junit import expectation_properties

        e, retriever = self.expectation, self.retriever
        hits = self.state.result.expectation_hits(e, retriever)
        broken = check_expectation(hits, e.checks)
        self.state.expectations.append((e, retriever, hits, broken))
        self.user_properties.extend(expectation_properties(e, hits, broken))
        if broken:
            label = f"{self.state.suite.name} :: {retriever} :: {self.name}"
            raise GateFailed(failure_message(hits, broken, e.shown_k, label=label, origin=e.origin))

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if call.when == "call" and call.excinfo is not None and _uses_retrieval_fixture(item):
        from .errors import InfrastructureError

        if call.excinfo.errisinstance(InfrastructureError):
            # an engine fault inside a test that searches a suite: an ERROR, never a failed
            # (or passed) test; pytest counts failed reports outside the call phase as errors
            outcome.get_result().when = "setup"
    if isinstance(item, _SuiteItem):
        from .reports.details import record_item

        record_item(item, call, outcome.get_result())


# ------------------------------------------------------------------ fixtures

_RETRIEVAL_FIXTURES = ("retrieval_retriever", "retrieval_suite")


def _uses_retrieval_fixture(item: pytest.Item) -> bool:
    return any(f in _RETRIEVAL_FIXTURES for f in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def retrieval_suite(pytestconfig: pytest.Config):
    """Load and run a suite file once per session: ``result = retrieval_suite("retrieval_x.yaml")``.

    Returns a ``SuiteResult``: ``result.value("bm25", "ndcg@10")``,
    ``result.retrievers["bm25"].evaluation.per_query["ndcg@10"]``, ``result.query("bm25", qid)``
    (one query's metrics, ranking and grades).
    """

    def load(path: Any) -> Any:
        return _suite_state(pytestconfig, path).ensure_run(pytestconfig)

    return load


def _suite_state(config: pytest.Config, path: Any) -> SuiteState:
    """The suite at ``path``: as given, else beside the calling test file, else under rootdir."""
    p = Path(path)
    if not p.is_absolute() and not p.exists():
        import inspect

        caller = Path(inspect.stack()[2].filename).resolve().parent / p
        p = caller if caller.exists() else Path(config.rootpath) / p
    return load_suite_for(config, p)


@pytest.fixture(scope="session")
def retrieval_retriever(pytestconfig: pytest.Config):
    """A suite's retriever, to ask it questions: ``r = retrieval_retriever("retrieval_x.yaml", "rrf")``
    then ``hits = r.search("iphone 15 case", k=10)`` or ``r.search_many(texts, k)``.

    Bound to the suite's own backend: the same index as the suite's YAML items (a throwaway
    index is built once per session), the same embedder, fusion and rerank stages."""
    from .execution.retriever import Retriever

    made: Dict[Tuple[str, str], Any] = {}

    def get(path: Any, name: str) -> Any:
        state = _suite_state(pytestconfig, path)
        key = (str(state.suite.path), name)
        if key not in made:
            made[key] = Retriever(state.shared, name)
        return made[key]

    return get


@pytest.fixture
def assert_floor():
    """``assert_floor(result, "bm25", "ndcg@10", 0.6)``: fails with the gate's full message."""

    def check(result: Any, retriever: str, metric: str, floor: float) -> None:
        from .gates.floors import Floor, floor_key
        from .gates.verdicts import point_verdict

        canon, op, stratum = floor_key(metric)
        outcome = point_verdict(result, Floor(retriever, canon, op, float(floor), stratum=stratum))
        if not outcome.passed:
            pytest.fail(outcome.message, pytrace=False)

    return check


# ------------------------------------------------------------------ reports


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    states = [s for s in config.stash.get(_STATE, {}).values() if s.result is not None]
    if not states:
        return
    from .reports.terminal import expectation_lines, render_summary

    terminalreporter.section("retrieval summary")
    for state in states:
        for line in render_summary(state.result, state.outcomes, state.regressions, state.baseline_note):
            terminalreporter.write_line(line)
        if state.runs > 1:  # pytest-xdist with a --dist mode that split the suite's items
            terminalreporter.write_line(
                f"  note: the suite ran {state.runs} times, on {state.runs} xdist workers (a Python test outside "
                "its folder asked for it, or a --dist mode split its items; the default `-n N` keeps a "
                "folder of suites and its Python tests on one worker)"
            )
        for line in expectation_lines(state.expectations):
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from .pytest_plugin.xdist import hand_over, is_worker

    if is_worker(session.config):  # the controller reports, once, for every worker (xdist.py)
        hand_over(session.config, list(session.config.stash.get(_STATE, {}).values()))
        _close_shared_backends(session.config)
        return
    if session.config.getoption("retrieval_baseline_update", False):
        from .gates.baseline import update_baseline

        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        for state in session.config.stash.get(_STATE, {}).values():
            if state.result is not None:
                written = update_baseline(state.suite, state.result)
                if tr is not None:
                    tr.write_line(f"[retrieval] baseline written: {written}")
    runs_dir = session.config.getoption("retrieval_runs", None)
    if runs_dir:
        from .execution.export import write_suite_runs

        for state in session.config.stash.get(_STATE, {}).values():
            if state.result is not None:
                write_suite_runs(state.result, Path(runs_dir))
    unjudged = session.config.getoption("retrieval_export_unjudged", None)
    if unjudged:
        from .reports.unjudged import write_unjudged

        _write_or_say(session, "--retrieval-export-unjudged", unjudged, write_unjudged)
    from .reports.outputs import write_outputs

    write_outputs(session, list(session.config.stash.get(_STATE, {}).values()))  # JSON, Markdown, HTML, ...
    _close_shared_backends(session.config)


def _close_shared_backends(config: pytest.Config) -> None:
    """Every suite's shared backend is closed (its throwaway index deleted) once the session ends."""
    for state in config.stash.get(_STATE, {}).values():
        if state._shared is not None:
            state._shared.close()


def _write_or_say(session: pytest.Session, flag: str, path: str, write: Any) -> None:
    """A report that cannot be written is one line and a non-zero exit, never a traceback
    that throws the verdict away."""
    states = list(session.config.stash.get(_STATE, {}).values())
    try:
        write(Path(path), states)
    except (OSError, ValueError, TypeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        line = f"ERROR: {flag} {path}: not written: {reason}"
        if tr is not None:
            tr.write_line(line, red=True)
        else:  # pragma: no cover
            import sys

            print(line, file=sys.stderr)
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
