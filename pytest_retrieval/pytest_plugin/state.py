"""One suite's state for the pytest session: the loaded suite, its run (or the error that stopped
it), its shared backend, its baseline and what its gate items found."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

import pytest

from .stability import StabilityInputs

if TYPE_CHECKING:
    from ..config.load import Suite
    from ..execution.results import SuiteResult
    from ..execution.shared import SharedBackend
    from ..gates.baseline import Baseline
    from ..gates.expectations import Expectation
    from ..gates.regression import RegressionOutcome
    from ..gates.verdicts import GateOutcome

    #: a golden item's check: (expectation, retriever, its ``Hits``, what broke)
    ExpectationCheck = Tuple[Expectation, str, Any, List[str]]

__all__ = ["MEMOISED_FAILURES", "SuiteState"]

#: What a suite's run may raise that every item of the suite then reports, the run never
#: started again: any error, and pytest's ``Failed`` outcome, which pytest-timeout's signal
#: method raises from inside the run ("Timeout (>Ns) from pytest-timeout.") and which is a
#: ``BaseException``. Not ``KeyboardInterrupt`` nor pytest's ``Exit``: those end the session.
MEMOISED_FAILURES = (Exception, pytest.fail.Exception)


class SuiteState:
    """One suite per file per session: loaded once, run once, shared by its items."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self.result: Optional[SuiteResult] = None
        self.error: Optional[BaseException] = None
        self.outcomes: List[GateOutcome] = []
        self.regressions: List[RegressionOutcome] = []
        self.references: List[RegressionOutcome] = []  # against the pinned run of the history
        self.stability = StabilityInputs()  # the baseline's stored rankings, read once (issue #33)
        self.stabilities: List[Any] = []  # gates.stability.StabilityOutcome of each stability item
        self._reference: Optional[Tuple[Baseline, str, str]] = None  # (values, note, run id)
        self._reference_error: Optional[Exception] = None
        self._warned: Set[str] = set()
        self.items: List[Dict[str, Any]] = []  # every gate item's outcome and message, for reports
        self._baseline: Optional[Tuple[Optional[Baseline], str]] = None
        self._floor_baseline: Optional[Tuple[Optional[Baseline]]] = None  # floors' own read of it
        self._shared: Optional[SharedBackend] = None  # one index for items and fixtures
        self.expectations: List[ExpectationCheck] = []  # per golden item run
        self.runs = 0  # how many processes ran the suite (1; more under xdist with a split suite)
        self.attempts = 0  # how many times this process started the suite's run (at most 1)
        self._error_tb: Any = None
        self.failure_shown: Dict[str, str] = {}  # failed retriever -> the item that showed its error

    def for_controller(self) -> SuiteState:
        """A copy for the xdist controller (``xdist.py``): no backend, an error that survives pickling."""
        import copy
        import pickle

        out = copy.copy(self)
        out._shared = None
        out._error_tb = None  # a traceback does not pickle
        out._reference_error = None  # each item reported it; the controller does not read it again
        out.stability = self.stability.fresh()  # the controller does not compare again
        out.runs = 1
        if self.error is not None:
            try:
                pickle.loads(pickle.dumps(self.error))
            except Exception:  # noqa: BLE001 - e.g. keyword-only constructor arguments
                out.error = RuntimeError(f"{type(self.error).__name__}: {self.error}")
        return out

    @property
    def shared(self) -> SharedBackend:
        """The suite's backend for this session, shared by its items and fixtures."""
        if self._shared is None:
            from ..execution.shared import SharedBackend

            self._shared = SharedBackend(self.suite)
        return self._shared

    def close(self) -> None:
        """Close the shared backend, if one was made (its throwaway index is deleted)."""
        if self._shared is not None:
            self._shared.close()

    def baseline(self) -> Tuple[Optional[Baseline], str]:
        """(Baseline, note) or (None, why the comparison falls back to floors only)."""
        if self._baseline is None:
            from ..gates.baseline import load_comparable_baseline

            self._baseline = load_comparable_baseline(self.suite, self.result)
        return self._baseline

    def floor_baseline(self) -> Optional[Baseline]:
        """The baseline a failed floor lists its largest drops against: the regression gates'
        (loaded once for both), or, in a suite without baseline gates, read for the floors
        alone (not reported as the suite's comparison). None when there is none to trust."""
        from ..errors import RetrievalError

        if self.suite.regression:
            try:
                return self.baseline()[0]
            except RetrievalError:  # the regression gates report it
                return None
        if self._floor_baseline is None:
            from ..gates.baseline import load_comparable_baseline

            try:
                self._floor_baseline = (load_comparable_baseline(self.suite, self.result)[0],)
            except RetrievalError:
                self._floor_baseline = (None,)
        return self._floor_baseline[0]

    def reference(self, config: pytest.Config) -> Tuple[Baseline, str, str]:
        """(the stored reference run's values, note, run id) of ``regression.reference``, read
        once from the session's history store; ``ConfigError`` / ``HistoryError`` when there is
        no store, no such run, or a run that cannot be the reference (gates/reference.py)."""
        if self._reference is None:
            from ..errors import RetrievalError
            from .reference import read_reference

            if self._reference_error is not None:  # read once: every reference item says the same line
                raise self._reference_error
            try:
                self._reference = read_reference(config, self.suite, self.ran)
            except RetrievalError as exc:
                self._reference_error = exc
                raise
        return self._reference

    @property
    def reference_note(self) -> str:
        """What the reference comparison said, once a reference gate asked for it ("" before)."""
        return self._reference[1] if self._reference is not None else ""

    @property
    def loaded_baseline(self) -> Optional[Tuple[Optional[Baseline], str]]:
        """(Baseline, note) once something asked for the baseline, else None."""
        return self._baseline

    @property
    def baseline_note(self) -> str:
        """What the baseline comparison said, once a baseline gate asked for it ("" before)."""
        return self._baseline[1] if self._baseline is not None else ""

    @property
    def ran(self) -> SuiteResult:
        """The suite's result, for a gate item (whose setup ran the suite)."""
        if self.result is None:
            raise RuntimeError(f"{self.suite.name}: the suite has not run")
        return self.result

    def warnings_once(self, retriever: str) -> List[str]:
        """The retriever's warnings the first time they are asked for, then none."""
        if retriever in self._warned:
            return []
        self._warned.add(retriever)
        return list(self.ran.retrievers[retriever].warnings)

    def raise_if_failed(self, retriever: str, nodeid: str) -> None:
        """An item of a retriever that failed in the run (``SuiteResult.failed``) is an error: the
        first one raises the retriever's error in full, the others point at it (issue #36: one
        message per retriever, not one per gate)."""
        result = self.result
        if result is None or retriever not in result.failed:
            return
        from ..errors import RetrieverFailed

        exc = result.failed[retriever]
        label = f"{self.suite.name} :: {retriever}"
        first = self.failure_shown.setdefault(retriever, nodeid)
        if first == nodeid:
            raise RetrieverFailed(f"{label}: the retriever failed, its gates are not judged: {exc}")
        raise RetrieverFailed(
            f"{label}: not judged: the retriever failed (the error is shown once, at {first})"
        )

    def ensure_run(self, config: pytest.Config) -> SuiteResult:
        """Run the suite the first time (progress on the terminal with ``-v``); then the result,
        or the error of that run again: a suite that failed or timed out is never run a second
        time, every later item reports that one failure (issue #28)."""
        if self.result is None and self.error is None:
            self.attempts += 1
            try:
                self.result = self._run(config)
            except MEMOISED_FAILURES as exc:
                self.error = exc
                self._error_tb = exc.__traceback__
        if self.error is not None:
            # the first failure's own traceback each time, not one that grows per item
            raise self.error.with_traceback(self._error_tb)
        return self.ran

    def _run(self, config: pytest.Config) -> SuiteResult:
        from ..execution.runner import SuiteRunner
        from ..redaction import redact
        from ..safe_names import one_line

        verbose = config.getoption("verbose") > 0
        tr = config.pluginmanager.get_plugin("terminalreporter")

        def progress(msg: str) -> None:
            if verbose and tr is not None:
                tr.write_line(one_line(redact(f"[retrieval] {self.suite.name}: {msg}")))

        return SuiteRunner(self.suite, progress=progress, shared=self.shared, isolate=True).run()
