"""Partial runs (issue #28): after ``-x``, ``-k``, ``--lf``, ``-m``, an errored or skipped
gate, an xdist worker crash or a run of Python tests only, the headline of the terminal
summary, the Markdown file, the step summary and the HTML report says how many gates ran and
why the others were not judged, never "passed" nor "no regression". Each case: one pytest
run, its headline one exact line, bounded in time."""

from __future__ import annotations

import html
from typing import Dict, List, NamedTuple

import pytest

from ..tiny import TINY_SUITE
from .conftest import bounded, one_line

pytest_plugins = ["pytester"]

FAILING = TINY_SUITE.replace("suite: tiny", "suite: two").replace("ndcg@10: 0.5", "ndcg@10: 0.99")
PYTHON_TEST = "def test_asks(retrieval_suite):\n    assert retrieval_suite('retrieval_tiny.yaml')\n"
# a backend that fails (an engine fault), or takes the xdist worker down with it
FAULT = """
import os
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.errors import InfrastructureError

def fault(self, spec, queries, k):
    {body}

EmbeddedBackend.search_batch = fault
"""
NO_REGRESSION = "no verdict on the gates that did not run"


class Case(NamedTuple):
    files: Dict[str, str]  # file name -> text
    args: List[str]
    headline: str  # without the icon
    icon: str
    first: List[str] = []  # the arguments of an earlier run (--lf reads its failures)


BOTH = {"retrieval_tiny.yaml": TINY_SUITE, "retrieval_two.yaml": FAILING}
CASES = {
    "all ran": Case(
        {"retrieval_tiny.yaml": TINY_SUITE},
        [],
        "Retrieval gates passed: 0 failed, 0 errored, 3 passed; no baseline to compare with",
        "✅",
    ),
    "-k": Case(
        BOTH,
        ["-k", "tiny and rrf"],
        f"Partial retrieval run: 1 of 6 gates ran (5 not judged: 5 deselected); 1 passed; {NO_REGRESSION}",
        "⏸️",
    ),
    "-m": Case(
        BOTH,
        ["-m", "not retrieval"],
        f"Partial retrieval run: 0 of 6 gates ran (6 not judged: 6 deselected); {NO_REGRESSION}",
        "⏸️",
    ),
    "-x": Case(
        BOTH,
        ["-x"],
        f"Retrieval gates failed: 4 of 6 gates ran (2 not judged: 2 not reached); "
        f"1 failed, 3 passed; {NO_REGRESSION}",
        "❌",
    ),
    "--lf": Case(
        BOTH,
        ["--lf"],
        f"Retrieval gates failed: 1 of 6 gates ran (5 not judged: 5 deselected); 1 failed; {NO_REGRESSION}",
        "❌",
        first=["-q"],
    ),
    "skipped": Case(
        {"retrieval_tiny.yaml": TINY_SUITE},
        ["--retrieval-no-latency"],
        f"Partial retrieval run: 2 of 3 gates ran (1 not judged: 1 skipped); "
        f"2 passed, 1 skipped; {NO_REGRESSION}",
        "⏸️",
    ),
    "python tests only": Case(
        {"retrieval_tiny.yaml": TINY_SUITE, "test_beside.py": PYTHON_TEST},
        ["test_beside.py"],
        f"Partial retrieval run: 0 of 3 gates ran (3 not judged: 3 not collected); {NO_REGRESSION}",
        "⏸️",
    ),
    "errored": Case(
        {
            "retrieval_tiny.yaml": TINY_SUITE,
            "conftest.py": FAULT.format(body="raise InfrastructureError('down')"),
        },
        [],
        f"Retrieval gates errored: 0 of 3 gates ran (3 not judged: 3 errored); "
        f"3 errored, 1 suite did not run; {NO_REGRESSION}",
        "⚠️",
    ),
    "xdist worker crash": Case(
        {"retrieval_tiny.yaml": TINY_SUITE, "conftest.py": FAULT.format(body="os._exit(3)")},
        ["-n", "1", "--max-worker-restart=0"],
        f"Retrieval gates errored: 0 of 3 gates ran (3 not judged: 1 errored, 2 not reached); "
        f"1 errored; {NO_REGRESSION}",
        "⚠️",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_partial_run_says_what_was_not_judged(pytester, monkeypatch, name: str) -> None:
    case = CASES[name]
    for file, text in case.files.items():
        (pytester.path / file).write_text(text)
    step = pytester.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    outputs = [
        f"--retrieval-markdown={pytester.path / 'r.md'}",
        f"--retrieval-html={pytester.path / 'r.html'}",
    ]
    with bounded(120):
        if case.first:
            pytester.runpytest_subprocess(*case.first)
            step.unlink()
        result = pytester.runpytest_subprocess("-p", "no:randomly", *case.args, *outputs)
    out = result.stdout.lines
    at = out.index(case.headline)  # the first line of the summary section (an empty one may precede it)
    assert any("retrieval summary" in line for line in out[max(0, at - 2) : at])
    one_line(case.headline, "gate")
    assert (pytester.path / "r.md").read_text().splitlines()[0] == f"## {case.icon} {case.headline}"
    assert step.read_text().splitlines()[0] == f"## {case.icon} {case.headline}"
    assert html.escape(case.headline, quote=True) in (pytester.path / "r.html").read_text()
    if case.headline.startswith("Partial"):
        assert "passed:" not in case.headline and "no regression" not in case.headline
