"""Collection of suite YAML files: a file is a collector, each retriever of it a collector, and
each floor, baseline gate and golden query of that retriever an item. The items read their
suite's one run (``SuiteState``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Union

import pytest

from ..redaction import redact
from ..safe_names import one_line
from .coverage import GATE_OUTCOME
from .session import RetrievalSession
from .state import SuiteState
from .suite_files import SUITE_PATTERNS, is_suite_file, suite_gates, team_gates

if TYPE_CHECKING:
    from ..gates.expectations import Expectation
    from ..gates.floors import BaselineGate, Floor, ReferenceGate
    from ..gates.stability import StabilityGate

__all__ = [
    "SUITE_PATTERNS",
    "ExpectationItem",
    "GateFailed",
    "GateItem",
    "ReferenceItem",
    "RegressionItem",
    "RetrievalSuiteFile",
    "RetrieverNode",
    "StabilityItem",
    "SuiteItem",
    "TeamNode",
    "collect_file",
    "is_suite_file",
    "one_line_collection_error",
    "record_report",
]


def collect_file(file_path: Path, parent: pytest.Collector) -> Optional[RetrievalSuiteFile]:
    if is_suite_file(file_path):
        return RetrievalSuiteFile.from_parent(parent, path=file_path)
    return None


def _one_line(excinfo: pytest.ExceptionInfo, node: Union[pytest.Item, pytest.Collector]) -> Optional[str]:
    from ..errors import RetrievalError

    if excinfo.errisinstance(RetrievalError):
        kind = type(excinfo.value).__name__
        return _relative(f"{kind}: {excinfo.value}", node)
    return None


def _relative(text: str, node: Union[pytest.Item, pytest.Collector]) -> str:
    """Paths under the rootdir as pytest names its node ids (``search/retrieval_x.yaml:20``)."""
    from ..reports.paths import relative_text

    return relative_text(text, node.config.rootpath)


def one_line_collection_error(
    collector: pytest.Collector, call: pytest.CallInfo, report: pytest.CollectReport
) -> None:
    """A suite problem raised while a Python test module is imported (``retrieval_queries(SUITE)``
    at module level: a typo in the suite, an unknown tag) is the one line a suite file's
    collection error is, not pytest's traceback through the plugin (``--fulltrace`` keeps it).
    Called from the documented ``pytest_exception_interact`` hook, which gets the collection's
    ``CallInfo`` and report before the report is shown."""
    if isinstance(collector, RetrievalSuiteFile):  # its own repr_failure says it
        return
    excinfo = call.excinfo
    if report.failed and excinfo is not None and not collector.config.getoption("fulltrace", False):
        line = _one_line(excinfo, collector)
        if line is not None:
            report.longrepr = line


class RetrievalSuiteFile(pytest.File):
    def collect(self) -> Iterator[pytest.Collector]:
        from ..execution.plan import check_judgment_files

        state = RetrievalSession.of(self.config).load(self.path)
        check_judgment_files(state.suite)  # a missing file: one collection error, not one per gate
        for name, (floors, regression, expectations) in suite_gates(state.suite).items():
            yield RetrieverNode.from_parent(
                self,
                name=one_line(name),  # a node id is one line, whatever the YAML key holds
                retriever=name,
                floors=floors,
                regression=regression,
                expectations=expectations,
                reference=[g for g in state.suite.reference if g.retriever == name],
                stability=[g for g in state.suite.stability if g.retriever == name],
                state=state,
            )
        for team, by_retriever in team_gates(state.suite).items():
            yield TeamNode.from_parent(self, name=team, gates=by_retriever, state=state)

    def repr_failure(self, excinfo):  # type: ignore[override]
        return _one_line(excinfo, self) or super().repr_failure(excinfo)


class TeamNode(pytest.Collector):
    """A team threshold file's gates (config/teams.py): one node per team under the suite file,
    its retrievers under it (``retrieval_search.yaml::ranking::rrf::ndcg@10``), over the suite's
    one run."""

    def __init__(self, *, gates: Dict[str, List[Any]], state: SuiteState, **kw: Any):
        super().__init__(**kw)
        self.gates = gates  # retriever -> its floors and baseline gates
        self.state = state

    def collect(self) -> Iterator[pytest.Collector]:
        from ..gates.floors import BaselineGate

        for retriever, gates in self.gates.items():
            yield RetrieverNode.from_parent(
                self,
                name=one_line(retriever),
                retriever=retriever,
                floors=[g for g in gates if not isinstance(g, BaselineGate)],
                regression=[g for g in gates if isinstance(g, BaselineGate)],
                state=self.state,
            )


class RetrieverNode(pytest.Collector):
    def __init__(
        self,
        *,
        floors: List[Floor],
        state: SuiteState,
        retriever: str,
        regression: Sequence[BaselineGate] = (),
        expectations: Sequence[Expectation] = (),
        reference: Sequence[ReferenceGate] = (),
        stability: Sequence[StabilityGate] = (),
        **kw: Any,
    ):
        super().__init__(**kw)
        self.retriever = retriever  # the suite's name for it (``name`` is its one-line form)
        self.floors = floors
        self.regression = list(regression)
        self.reference = list(reference)
        self.stability = list(stability)
        self.expectations = list(expectations)
        self.state = state

    def collect(self) -> Iterator[pytest.Item]:
        for floor in self.floors:
            yield GateItem.from_parent(self, name=floor.name, floor=floor, state=self.state)
        for gate in self.regression:
            yield RegressionItem.from_parent(self, name=gate.name, gate=gate, state=self.state)
        for ref_gate in self.reference:
            yield ReferenceItem.from_parent(self, name=ref_gate.name, gate=ref_gate, state=self.state)
        for st_gate in self.stability:
            yield StabilityItem.from_parent(self, name=st_gate.name, gate=st_gate, state=self.state)
        for expectation in self.expectations:
            yield ExpectationItem.from_parent(
                self, name=f"expect[{expectation.name}]", expectation=expectation, state=self.state
            )


class GateFailed(AssertionError):
    """A floor that was not met. Its message is the whole report."""


class SuiteItem(pytest.Item):
    """An item that reads its suite's shared run. The retrieval happens in ``setup``, so an
    engine or data problem is a pytest ERROR, not a failed gate (and never a pass)."""

    def __init__(self, *, state: SuiteState, **kw: Any):
        super().__init__(**kw)
        self.state = state
        self.retriever = getattr(self.parent, "retriever", "")  # its RetrieverNode's retriever
        self.add_marker("retrieval")

    def setup(self) -> None:
        self.state.ensure_run(self.config)
        self.state.raise_if_failed(self.retriever, self.nodeid)

    def repr_failure(self, excinfo, style=None):  # type: ignore[override]
        if excinfo.errisinstance(GateFailed):
            return _relative(str(excinfo.value), self)
        return _one_line(excinfo, self) or super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):  # setup/teardown errors
        return _one_line(excinfo, self) or super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, self.label

    @property
    def label(self) -> str:
        """``rrf::ndcg@10``, or a team's ``ranking::rrf::ndcg@10``: the item's id in its file."""
        team = self.parent.parent if self.parent is not None else None
        prefix = f"{team.name}::" if isinstance(team, TeamNode) else ""
        return f"{prefix}{one_line(self.retriever)}::{self.name}"


class GateItem(SuiteItem):
    def __init__(self, *, floor: Floor, **kw: Any):
        super().__init__(**kw)
        self.floor = floor

    def setup(self) -> None:
        from ..gates import GateKind
        from ..gates.verdicts import check_latency_samples

        latency = self.floor.kind in (GateKind.LATENCY, GateKind.LATENCY_RATIO)
        if latency and self.config.getoption("retrieval_no_latency"):
            pytest.skip("--retrieval-no-latency: latency not measured")
        super().setup()
        if latency and self.state.result is not None:
            # too few samples to judge the percentile: an error of the setup, never a pass or a failure
            check_latency_samples(self.state.result, self.floor)

    def runtest(self) -> None:
        from ..gates import evaluate
        from ..reports.junit import floor_properties

        outcome = evaluate(self.state.result, self.floor)
        if not outcome.passed and not self.config.getoption("retrieval_baseline_update"):
            baseline = self.state.floor_baseline()  # its worst queries: the largest drops first
            if baseline is not None:
                outcome = evaluate(self.state.result, self.floor, baseline=baseline)
        self.state.outcomes.append(outcome)
        self.user_properties.extend((k, _relative(v, self)) for k, v in floor_properties(outcome))
        for w in self.state.warnings_once(self.floor.retriever):  # once per retriever, not per item
            self.warn(
                pytest.PytestWarning(
                    redact(_relative(f"{outcome.suite} :: {self.floor.retriever}: {w}", self))
                )
            )
        if not outcome.passed:
            raise GateFailed(redact(outcome.message))

    def reportinfo(self):
        origin = self.floor.origin
        line = None
        if origin and ":" in origin:
            try:
                line = int(origin.rsplit(":", 1)[1]) - 1
            except ValueError:
                line = None
        return self.path, line, self.label


class RegressionItem(SuiteItem):
    """Non-inferiority against the committed baseline: paired, per query (and per stratum)."""

    def __init__(self, *, gate: BaselineGate, **kw: Any):
        super().__init__(**kw)
        self.gate = gate

    def runtest(self) -> None:
        from ..gates import evaluate
        from ..gates.regression import baseline_gate_refusal
        from ..reports.junit import regression_properties

        if self.config.getoption("retrieval_baseline_update"):
            pytest.skip("--retrieval-baseline-update: writing the baseline, not comparing")
        baseline, note = self.state.baseline()
        if baseline is None:
            pytest.skip(_relative(note, self))
        gate = self.gate
        refused = baseline_gate_refusal(self.state.ran, baseline, gate.retriever, gate.metric, gate.max_drop)
        if refused is not None:
            pytest.skip(_relative(refused, self))
        outcome = evaluate(self.state.result, self.gate, baseline=baseline)
        self.state.regressions.append(outcome)
        self.user_properties.extend((k, _relative(v, self)) for k, v in regression_properties(outcome))
        if not outcome.passed:
            raise GateFailed(outcome.message)


class ReferenceItem(SuiteItem):
    """The cumulative budget against the pinned run of the history (``regression.reference``):
    the baseline gate's paired comparison, against a stored run that does not move. A
    reference that cannot be read or compared is an error, never a skip (gates/reference.py)."""

    def __init__(self, *, gate: ReferenceGate, **kw: Any):
        super().__init__(**kw)
        self.gate = gate

    def runtest(self) -> None:
        from ..gates.reference import judge_against_reference
        from ..reports.junit import regression_properties

        if self.config.getoption("retrieval_baseline_update"):
            pytest.skip("--retrieval-baseline-update: writing the baseline, not comparing")
        reference, _, run_id = self.state.reference(self.config)
        ref = self.state.suite.reference_run
        outcome = judge_against_reference(self.state.ran, reference, self.gate, ref=ref, run_id=run_id)
        self.state.references.append(outcome)
        self.user_properties.extend(regression_properties(outcome, kind="reference"))
        if not outcome.passed:
            raise GateFailed(outcome.message)


class StabilityItem(SuiteItem):
    """A stability measure of one retriever against the baseline's stored rankings (issue #33):
    canary and judged queries, no judgments needed. No baseline file is a skip (as for the
    baseline gates); a baseline without the rankings is an error (gates/stability.py)."""

    def __init__(self, *, gate: StabilityGate, **kw: Any):
        super().__init__(**kw)
        self.gate = gate

    def runtest(self) -> None:
        from ..gates.baseline import BaselineMissing
        from ..gates.stability import judge_stability

        if self.config.getoption("retrieval_baseline_update"):
            pytest.skip("--retrieval-baseline-update: writing the baseline, not comparing")
        state, result = self.state, self.state.ran
        try:
            compared = state.stability.compared(state.suite, result, self.gate.retriever)
        except BaselineMissing as exc:
            pytest.skip(_relative(f"{exc}: no stability comparison", self))
        js = result.judgments
        texts = {**js.queries, **result.canary}
        outcome = judge_stability(
            state.suite.name, self.gate, compared, texts=texts, titles=result.titles(), judged_docs=js.qrels
        )
        state.stabilities.append(outcome)
        self.user_properties.append(("stability", f"{self.gate.measure}={outcome.value:.6f}"))
        if not outcome.passed:
            raise GateFailed(redact(outcome.message))


class ExpectationItem(SuiteItem):
    """A golden query of the suite's ``expectations:`` for one retriever, read off the suite's
    run (its query went through the same pass as the judged ones)."""

    def __init__(self, *, expectation: Expectation, **kw: Any):
        super().__init__(**kw)
        self.expectation = expectation

    def runtest(self) -> None:
        from ..gates.expectations import check_expectation, failure_message
        from ..reports.junit import expectation_properties

        e, retriever = self.expectation, self.retriever
        hits = self.state.ran.expectation_hits(e, retriever)
        broken = check_expectation(hits, e.checks)
        self.state.expectations.append((e, retriever, hits, broken))
        self.user_properties.extend(expectation_properties(e, hits, broken))
        if broken:
            label = f"{self.state.suite.name} :: {retriever} :: {self.name}"
            raise GateFailed(failure_message(hits, broken, e.shown_k, label=label, origin=e.origin))


def redact_report(report: Any) -> None:
    """Every registered secret out of a report's text (``redaction``): the failure or error
    message (terminal, JUnit XML, xdist's controller), its sections and its JUnit properties.
    A text that holds none keeps its form (a traceback stays a traceback)."""
    if report.longrepr is not None:
        text = str(report.longrepr)
        shown = redact(text)
        if shown != text:
            report.longrepr = shown
    report.sections = [(redact(title), redact(body)) for title, body in report.sections]
    if getattr(report, "user_properties", None):
        report.user_properties = [(redact(k), redact(v)) for k, v in report.user_properties]


def record_report(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    """A suite item's outcome and message, kept on its suite state for the reports."""
    if isinstance(item, SuiteItem):
        from ..reports.details import record_item

        outcome = record_item(item, call, report)
        if outcome is not None:  # read by the session's gate count, on the xdist controller too
            setattr(report, GATE_OUTCOME, outcome)
