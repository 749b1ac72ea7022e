"""What pytest collects from suite files: which files are suites, and the gates of one suite
(each floor, baseline gate and golden query, by retriever). Collection (``items.py``) and the
count of a session's gates (``coverage.py``) read the same list."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

if TYPE_CHECKING:
    from ..config.load import Suite

__all__ = ["SUITE_PATTERNS", "gate_count", "is_suite_file", "suite_gates", "team_gates"]

SUITE_PATTERNS = ("retrieval_*.yaml", "retrieval_*.yml", "*.retrieval.yaml", "*.retrieval.yml")


def is_suite_file(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, p) for p in SUITE_PATTERNS)


def suite_gates(suite: Suite) -> Dict[str, Tuple[List[Any], List[Any], List[Any]]]:
    """Retriever -> (floors, baseline gates, golden queries), in the suite's retriever order;
    only the retrievers with at least one."""
    floors: Dict[str, List[Any]] = {}
    for floor in [f for f in suite.floors if not f.team]:  # a team's: under its team (``team_gates``)
        floors.setdefault(floor.retriever, []).append(floor)
    regression: Dict[str, List[Any]] = {}
    for gate in [g for g in suite.regression if not g.team]:  # a team's: under its team
        regression.setdefault(gate.retriever, []).append(gate)
    expectations: Dict[str, List[Any]] = {}
    for expectation in suite.expectations:
        for name in expectation.retrievers:
            expectations.setdefault(name, []).append(expectation)
    for ref_gate in list(suite.reference) + list(suite.stability):  # items.py collects them apart
        regression.setdefault(ref_gate.retriever, [])
    return {
        name: (floors.get(name, []), regression.get(name, []), expectations.get(name, []))
        for name in suite.order
        if name in floors or name in regression or name in expectations
    }


def team_gates(suite: Suite) -> Dict[str, Dict[str, List[Any]]]:
    """Team -> retriever -> that team's gates (``teams:``, config/teams.py): its floors, then its
    baseline gates, in the suite's team order and retriever order."""
    out: Dict[str, Dict[str, List[Any]]] = {team.name: {} for team in suite.teams}
    gates: List[Any] = [*suite.floors, *suite.regression]
    for name in suite.order:
        for gate in gates:
            if gate.team and gate.retriever == name:
                out[gate.team].setdefault(name, []).append(gate)
    return out


def gate_count(suite: Suite) -> int:
    """How many gate items the suite's file collects (its teams' gates included)."""
    own = sum(len(f) + len(r) + len(e) for f, r, e in suite_gates(suite).values())
    gates: List[Any] = [*suite.floors, *suite.regression]
    teams = sum(1 for g in gates if g.team)
    return own + len(suite.reference) + len(suite.stability) + teams
