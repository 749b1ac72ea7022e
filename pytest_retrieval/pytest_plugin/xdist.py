"""pytest-xdist (``pytest -n 2``): each suite runs once, and the controller reports.

* **One worker per suite.** ``SuiteScheduling`` (built on first use: it needs xdist) is xdist's ``LoadScopeScheduling`` with
  a folder of suite files as one scope: every item of its YAML suites and the Python tests
  beside them (which ask for those suites through ``retrieval_suite``/``retrieval_retriever``)
  go to the same worker, so each suite runs once (and builds its throwaway index once); any
  other test is its own scope, spread as ``--dist load`` would. A Python test in another
  folder that names a suite file in its text (``retrieval_suite("../suites/retrieval_x.yaml")``,
  ``SUITE = "retrieval_x.yaml"``) joins that suite's scope (``suite_scopes``), so the suite still
  runs once (issue #26); a name built at run time is not seen (the suite then runs again on
  that test's worker, and the summary says so). It replaces only the default ``load`` distribution; an explicit
  ``--dist loadfile``/``loadgroup``/... is left alone (a suite's items may then be split, and
  each worker runs the suite: the summary says so).
* **Reports from the controller.** A worker writes nothing (no report, run file or baseline):
  at the end of its session it hands its suites' states to the controller through xdist's
  ``workeroutput`` (pickled: the same code on both sides of a local pipe, exact floats and
  objects, nothing re-parsed), the controller merges them and then writes the summary and every
  report from them exactly as a serial run does, and ``--retrieval-baseline-update`` is written
  once, by the controller.
* **A worker that crashes keeps what it finished** (issue #32): when a worker's last item of a
  suite is torn down, the suite's state rides to the controller on that item's teardown report
  (``STREAMED_KEY``, carried by xdist as any report attribute). The end-of-session hand-over
  supersedes these copies; a worker that dies (``os._exit``, a segfault, the OOM killer) never
  hands over, and the controller then merges the suites it streamed: a suite that finished is
  in every report, its error included.
* Throwaway index names carry a random suffix (``backends/search_engine/index.py``), so workers
  never collide.
"""

from __future__ import annotations

import base64
import json
import pickle
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

import pytest

from .suite_files import is_suite_file

if TYPE_CHECKING:
    from .session import RetrievalSession
    from .state import SuiteState

__all__ = [
    "COVERAGE_OUTPUT_KEY",
    "WORKER_OUTPUT_KEY",
    "XdistHooks",
    "hand_over",
    "in_collection_order",
    "is_worker",
    "merge",
    "receive",
    "suite_scopes",
]

WORKER_OUTPUT_KEY = "pytest_retrieval_states"
STREAMED_KEY = "pytest_retrieval_suite_state"  # a suite's state on its last item's teardown report
COVERAGE_OUTPUT_KEY = "pytest_retrieval_gates"  # the suites' gate counts, the worker's deselection


def is_worker(config: pytest.Config) -> bool:
    """True in an xdist worker process (its config has ``workerinput``)."""
    return hasattr(config, "workerinput")


def hand_over(config: pytest.Config, states: List[SuiteState], coverage: Dict[str, Any]) -> None:
    """Worker side: the states of the suites this worker ran, and what it knows of the
    session's gates (``GateCoverage.handed``), for the controller."""
    ran = [s.for_controller() for s in states if s.result is not None or s.error is not None]
    output = config.workeroutput  # type: ignore[attr-defined]
    output[WORKER_OUTPUT_KEY] = _encode(ran)
    output[COVERAGE_OUTPUT_KEY] = json.dumps(coverage)


def _encode(states: List[SuiteState]) -> str:
    return base64.b64encode(pickle.dumps(states)).decode("ascii")


def _decode(payload: str) -> List[SuiteState]:
    return list(pickle.loads(base64.b64decode(payload)))


def _suite_key(state: SuiteState) -> str:
    return str(Path(state.suite.path).resolve())


def receive(node: Any, states: Dict[str, SuiteState]) -> None:
    """Controller side: merge one finished worker's suite states into ``states`` (by suite
    file). A suite run by two workers (its items split by an explicit ``--dist`` mode, or a
    Python test asking for it elsewhere) keeps the first result and every item's outcome."""
    payload = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if payload:
        merge(_decode(payload), states)


def merge(handed: Iterable[SuiteState], states: Dict[str, SuiteState]) -> None:
    """``handed`` (one worker's suites) merged into ``states``, as :func:`receive` does. The
    suites' secrets are registered here too: the controller writes the reports."""
    from ..config.yamlio import register_secrets

    for state in handed:
        register_secrets(getattr(state.suite, "interpolated", []))
        key = _suite_key(state)
        mine = states.get(key)
        if mine is None:
            states[key] = state
            continue
        mine.runs += state.runs
        if mine.result is None and state.result is not None:
            mine.result, mine.error = state.result, state.error
        mine.items += state.items
        mine.outcomes += state.outcomes
        mine.regressions += state.regressions
        mine.expectations += state.expectations


# a suite file's name as a string literal in a Python test (``"retrieval_x.yaml"``, a path to it)
_SUITE_LITERAL = re.compile(r"""["']([^"'\n]*?(?:retrieval_[^"'/\\\n]*|[^"'/\\\n]*\.retrieval)\.ya?ml)["']""")


def suite_scopes(files: Iterable[str], root: Path) -> Dict[str, str]:
    """The xdist scope of each suite file and of each Python test file tied to suites (node id
    file part -> scope): the folders holding suite files, joined through the Python tests beside
    them or naming them (``_SUITE_LITERAL``, resolved as ``retrieval_suite`` resolves a path:
    beside the test, else under the rootdir, else any collected suite of that file name)."""
    files = list(dict.fromkeys(files))
    suites = [Path(f) for f in files if is_suite_file(Path(f))]
    folders = _Folders()
    members = {s.as_posix(): s.parent.as_posix() for s in suites}
    for f in (Path(f) for f in files if f.endswith(".py")):
        tied = _folders_of(f, root, suites)
        if tied:
            folders.join(tied)
            members[f.as_posix()] = tied[0]
    return {f: f"retrieval suites in {folders.find(folder) or '.'}" for f, folder in members.items()}


class _Folders:
    """Folders joined into groups (union-find): a group is one xdist scope."""

    def __init__(self) -> None:
        self.parent: Dict[str, str] = {}

    def find(self, x: str) -> str:
        while self.parent.setdefault(x, x) != x:
            x = self.parent[x]
        return x

    def join(self, folders: List[str]) -> None:
        for folder in folders[1:]:
            self.parent[self.find(folder)] = self.find(folders[0])


def _folders_of(test: Path, root: Path, suites: List[Path]) -> List[str]:
    """The folders of the suites a Python test file is tied to: its own when suites sit beside
    it, and those of the suite files it names."""
    out = [test.parent.as_posix()] if any(s.parent == test.parent for s in suites) else []
    try:
        text = (root / test).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    by_name: Dict[str, List[Path]] = {}
    for s in suites:
        by_name.setdefault(s.name, []).append(s)
    for name in dict.fromkeys(_SUITE_LITERAL.findall(text)):
        found = _resolve(root, test, name)
        hits = [found] if found is not None and found in suites else by_name.get(Path(name).name, [])
        out += [h.parent.as_posix() for h in hits]
    return list(dict.fromkeys(out))


def _resolve(root: Path, test: Path, name: str) -> Optional[Path]:
    for candidate in ((root / test).parent / name, root / name):
        try:
            if candidate.is_file():
                return candidate.resolve().relative_to(root.resolve())
        except (OSError, ValueError):
            continue
    return None


def _suite_scheduling() -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """The suites of a folder, the Python tests beside them and the Python tests anywhere
        that name them are one scope (one worker): ``suite_scopes``. Every other test is a
        scope of its own."""

        _scopes: Optional[Dict[str, str]] = None

        def _split_scope(self, nodeid: str) -> str:
            if self._scopes is None:  # the whole collection, before the first scope is given
                collection: List[str] = next(iter(self.registered_collections.values()), [])
                files = [n.split("::", 1)[0] for n in collection]
                self._scopes = suite_scopes(files, Path(self.config.rootpath))
            return self._scopes.get(nodeid.split("::", 1)[0], nodeid)

    return SuiteScheduling


def in_collection_order(
    states: Dict[str, SuiteState], nodeids: List[str], root: Path
) -> Dict[str, SuiteState]:
    """``states`` ordered as a serial run creates them: suite files in collection order, then
    suites only a Python test asked for (in the order they arrived)."""
    first: Dict[str, int] = {}
    for i, nodeid in enumerate(nodeids):
        first.setdefault(nodeid.split("::", 1)[0], i)

    def position(item: Any) -> int:
        try:
            rel = Path(item[0]).relative_to(root.resolve()).as_posix()
        except ValueError:
            return len(nodeids)
        return first.get(rel, len(nodeids))

    return dict(sorted(states.items(), key=position))  # stable: arrival order among equals


class XdistHooks:
    """Registered by ``plugin.pytest_configure`` only when pytest-xdist is installed; the
    controller merges the workers' suites into its ``RetrievalSession``."""

    def __init__(self, session: RetrievalSession) -> None:
        self.session = session
        self.collected: List[str] = []  # the node ids of the first worker's collection
        self.streamed: Dict[str, Dict[str, SuiteState]] = {}  # worker id -> suite -> its state
        self._suite_done = False  # worker: the item being torn down is its suite's last here

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> None:
        state = getattr(item, "state", None)
        self._suite_done = (
            is_worker(item.config) and state is not None and getattr(nextitem, "state", None) is not state
        )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        outcome = yield
        if call.when != "teardown" or not self._suite_done:
            return
        self._suite_done = False
        state = item.state  # type: ignore[attr-defined]
        if state.result is not None or state.error is not None:  # worker: stream it now
            setattr(outcome.get_result(), STREAMED_KEY, _encode([state.for_controller()]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, STREAMED_KEY, None)
        node = getattr(report, "node", None)  # set by xdist on the controller
        if payload and node is not None:
            mine = self.streamed.setdefault(_worker_id(node), {})
            for state in _decode(payload):
                mine[_suite_key(state)] = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: List[str]) -> None:
        if not self.collected:
            self.collected = list(ids)
        self.session.coverage.collect(ids)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own (first result wins)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Optional[Any]:
        if config.getoption("dist", "no") != "load":
            return None
        return _suite_scheduling()(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        states = self.session.suites
        streamed = self.streamed.pop(_worker_id(node), {})
        if getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY):
            receive(node, states)  # the whole hand-over supersedes what was streamed
        else:  # the worker crashed: the suites it finished, as they were streamed
            merge(streamed.values(), states)
        handed = getattr(node, "workeroutput", {}).get(COVERAGE_OUTPUT_KEY)
        if handed:  # none from a worker that crashed: its reports were counted as they came
            self.session.coverage.merge(json.loads(handed))
        ordered = in_collection_order(states, self.collected, Path(node.config.rootpath))
        states.clear()
        states.update(ordered)


def _worker_id(node: Any) -> str:
    gateway = getattr(node, "gateway", None)
    return str(getattr(gateway, "id", None) or id(node))
