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
        "--retrieval-no-latency",
        action="store_true",
        default=False,
        help="skip the latency pass (latency floors then error, they never pass)",
    )
    from .reports.outputs import add_report_options

    add_report_options(g)  # --retrieval-markdown/-html/-openmetrics/-no-step-summary


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
        self.regressions: List[Any] = []
        self.items: List[Dict[str, Any]] = []  # every gate item's outcome and message, for reports
        self.warned: set = set()
        self._baseline: Any = None

    def baseline(self, config: pytest.Config):
        """(Baseline, note) or (None, why the comparison falls back to floors only)."""
        if self._baseline is None:
            from .gates.regression import load_comparable_baseline

            self._baseline = load_comparable_baseline(self.suite, self.result)
        return self._baseline

    def ensure_run(self, config: pytest.Config) -> Any:
        if self.result is None and self.error is None:
            from .suite.runner import SuiteRunner

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
    from .suite.load import load_suite

    key = str(Path(path).resolve())
    states = config.stash[_STATE]
    if key not in states:
        overrides = tuple(Path(p) for p in config.getoption("retrieval_override"))
        states[key] = SuiteState(load_suite(Path(path), overrides=overrides, cli=_cli_overrides(config)))
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
        regression: Dict[str, List[Any]] = {}
        for r_name, metric, max_drop in state.suite.regression:
            regression.setdefault(r_name, []).append((metric, max_drop))
        for name in state.suite.order:
            if name in by_retriever or name in regression:
                yield RetrieverNode.from_parent(
                    self,
                    name=name,
                    floors=by_retriever.get(name, []),
                    regression=regression.get(name, ()),
                    state=state,
                )

    def repr_failure(self, excinfo):  # type: ignore[override]
        return _one_line(excinfo) or super().repr_failure(excinfo)


class RetrieverNode(pytest.Collector):
    def __init__(self, *, floors: List[Any], state: SuiteState, regression=(), **kw: Any):
        super().__init__(**kw)
        self.floors = floors
        self.regression = list(regression)
        self.state = state

    def collect(self):
        for floor in self.floors:
            yield GateItem.from_parent(self, name=floor.name, floor=floor, state=self.state)
        for metric, max_drop in self.regression:
            yield RegressionItem.from_parent(
                self, name=f"baseline:{metric}", metric=metric, max_drop=max_drop, state=self.state
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

    def runtest(self) -> None:
        from .gates.floors import check_floor

        result = self.state.result
        floor = self.floor
        r = result.retrievers[floor.retriever]
        value, worst = result.gate_value(floor.retriever, floor.metric, stratum=floor.stratum)
        outcome = check_floor(
            result.suite.name,
            floor,
            value,
            worst,
            n_queries=result.n_queries(floor.retriever, floor.stratum),
            unit=" ms" if floor.is_latency else "",
        )
        lat = result.suite.model.latency
        if floor.is_latency and lat.verdict == "ci":
            from .gates.floors import latency_ci_outcome

            outcome = latency_ci_outcome(
                result.suite.name, floor, r.latency.samples_ms, confidence=lat.confidence
            )
        if floor.is_latency_ratio:
            from .gates.floors import latency_ratio_outcome

            outcome = latency_ratio_outcome(
                result.suite.name, floor, r.ab, confidence=lat.confidence, verdict=lat.verdict
            )
        self.state.outcomes.append(outcome)
        self.user_properties.extend(
            [
                ("retrieval_suite", result.suite.name),
                ("retrieval_retriever", floor.retriever),
                ("retrieval_metric", floor.metric),
                ("retrieval_value", repr(value)),
                ("retrieval_op", floor.op),
                ("retrieval_threshold", repr(floor.threshold)),
            ]
        )
        if floor.retriever not in self.state.warned:  # once per retriever, not per item
            self.state.warned.add(floor.retriever)
            for w in r.warnings:
                self.warn(pytest.PytestWarning(f"{result.suite.name} :: {floor.retriever}: {w}"))
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

    def __init__(self, *, metric: str, max_drop: float, **kw: Any):
        super().__init__(**kw)
        self.metric = metric
        self.max_drop = max_drop

    def runtest(self) -> None:
        from .gates.regression import RegressionOutcome, judge_against_baseline

        retriever = self.parent.name
        if self.config.getoption("retrieval_baseline_update"):
            pytest.skip("--retrieval-baseline-update: writing the baseline, not comparing")
        baseline, note = self.state.baseline(self.config)
        if baseline is None:
            pytest.skip(note)
        outcome: RegressionOutcome = judge_against_baseline(
            self.state.result, baseline, retriever, self.metric, self.max_drop
        )
        self.state.regressions.append(outcome)
        self.user_properties.extend(
            [
                ("retrieval_suite", self.state.suite.name),
                ("retrieval_retriever", retriever),
                ("retrieval_metric", f"baseline:{self.metric}"),
                ("retrieval_mean_diff", repr(outcome.overall.mean_diff)),
                ("retrieval_ci_low", repr(outcome.overall.ci_low)),
                ("retrieval_max_drop", repr(self.max_drop)),
            ]
        )
        if not outcome.passed:
            raise GateFailed(outcome.message)

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if isinstance(item, _SuiteItem):
        from .reports.details import record_item

        record_item(item, call, outcome.get_result())


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
        from .gates.floors import Floor, check_floor, floor_key

        canon, op, stratum = floor_key(metric)
        f = Floor(retriever, canon, op, float(floor), stratum=stratum)
        value, worst = result.gate_value(retriever, canon, stratum=stratum)
        outcome = check_floor(result.suite.name, f, value, worst)
        if not outcome.passed:
            pytest.fail(outcome.message, pytrace=False)

    return check


# ------------------------------------------------------------------ reports


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    states = [s for s in config.stash.get(_STATE, {}).values() if s.result is not None]
    if not states:
        return
    from .reports.terminal import render_summary

    terminalreporter.section("retrieval summary")
    for state in states:
        note = state._baseline[1] if state._baseline is not None else ""
        for line in render_summary(state.result, state.outcomes, state.regressions, note):
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.getoption("retrieval_baseline_update", False):
        from .gates.regression import update_baseline

        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        for state in session.config.stash.get(_STATE, {}).values():
            if state.result is not None:
                written = update_baseline(state.suite, state.result)
                if tr is not None:
                    tr.write_line(f"[retrieval] baseline written: {written}")
    unjudged = session.config.getoption("retrieval_export_unjudged", None)
    if unjudged:
        from .reports.terminal import write_unjudged

        write_unjudged(Path(unjudged), list(session.config.stash.get(_STATE, {}).values()))
    from .reports.outputs import write_outputs

    write_outputs(session, list(session.config.stash.get(_STATE, {}).values()))  # JSON, Markdown, HTML, ...
