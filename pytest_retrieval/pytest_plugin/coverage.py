"""Which gates of the session got a verdict (issue #28: a partial run never reads as a verdict).

A gate is an item of a suite file (a floor, a baseline gate, a golden query). The session
counts the gates its suites define, those pytest collected, deselected (``-k``, ``-m``,
``--lf``) and the outcome of every one that ran, from the reports pytest logs (so under
pytest-xdist the controller counts the reports of every worker, a crashed one's included).
``as_dict()`` is the JSON report's ``session.gates``; the renderers say "3 of 17 gates ran"
from it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Sequence, Set

import pytest

from .suite_files import is_suite_file

__all__ = ["GATE_OUTCOME", "GateCoverage", "is_gate_nodeid"]

#: The attribute a gate item's report carries: its outcome as the reports count it (passed,
#: failed, error, skipped). A report without it (an xdist worker crash) that failed is an error.
GATE_OUTCOME = "retrieval_gate"

_WORST = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}  # one outcome per gate: the worst phase


def is_gate_nodeid(nodeid: str) -> bool:
    """A node id of an item of a suite file (every item of a suite file is a gate)."""
    return "::" in nodeid and is_suite_file(Path(nodeid.split("::", 1)[0]))


class GateCoverage:
    """The session's gates: defined (per suite file), collected, deselected, and their outcomes."""

    def __init__(self) -> None:
        self.defined: Dict[str, int] = {}  # resolved suite file -> how many gates it defines
        self.collected: Set[str] = set()  # gate node ids pytest selected to run
        self.deselected: Set[str] = set()
        self.outcomes: Dict[str, str] = {}  # gate node id -> its worst outcome
        self.suite_files: Set[str] = set()  # node ids of the suite files collection reached

    def define(self, suite_file: str, gates: int) -> None:
        self.defined[suite_file] = max(gates, self.defined.get(suite_file, 0))

    def collect(self, nodeids: Iterable[str]) -> None:
        self.collected.update(n for n in nodeids if is_gate_nodeid(n))

    def deselect(self, nodeids: Iterable[str]) -> None:
        self.deselected.update(n for n in nodeids if is_gate_nodeid(n))

    def record(self, report: pytest.TestReport) -> None:
        """One phase's report of a gate item (other reports are ignored)."""
        if not is_gate_nodeid(report.nodeid):
            return
        outcome: Optional[str] = getattr(report, GATE_OUTCOME, None)
        if outcome is None:
            if not report.failed:
                return  # a setup or teardown that passed says nothing
            outcome = "error"  # a teardown that failed, a worker that crashed running it
        before = self.outcomes.get(report.nodeid)
        if before is None or _WORST[outcome] > _WORST[before]:
            self.outcomes[report.nodeid] = outcome

    def merge(self, other: Dict[str, Any]) -> None:
        """A worker's ``handed()`` (xdist): what only it knows (the suites, its deselection)."""
        for suite_file, gates in other.get("defined", {}).items():
            self.define(suite_file, int(gates))
        self.deselect(other.get("deselected", ()))

    # ---- pytest's hooks (the session registers this object as a plugin)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A suite file collection reached, collected or not (``--lf`` skips a file whole)."""
        if "::" not in report.nodeid and is_suite_file(Path(report.nodeid)):
            self.suite_files.add(report.nodeid)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collect(item.nodeid for item in session.items)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselect(item.nodeid for item in items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.record(report)

    def handed(self) -> Dict[str, Any]:
        """What the controller cannot see for itself, as plain data."""
        return {"defined": dict(self.defined), "deselected": sorted(self.deselected)}

    def as_dict(self) -> Dict[str, int]:
        """The counts of the JSON report's ``session.gates``: ``ran`` gates got a verdict
        (passed or failed); the others were not judged: errored, skipped, deselected, not
        reached (collected, the session stopped before them) or not collected (a suite asked
        for by a Python test only, a file pytest was not given or ``--lf`` left out)."""
        counts = Counter(self.outcomes.values())
        seen = self.collected | self.deselected | set(self.outcomes)
        total = max(sum(self.defined.values()), len(seen))
        collected = self.collected | set(self.outcomes)
        reached = len(self.outcomes)
        return {
            "total": total,
            "ran": counts["passed"] + counts["failed"],
            "passed": counts["passed"],
            "failed": counts["failed"],
            "errored": counts["error"],
            "skipped": counts["skipped"],
            "deselected": len(self.deselected - collected),
            "not_reached": len(collected) - reached,
            "not_collected": max(0, total - len(seen)),
        }
