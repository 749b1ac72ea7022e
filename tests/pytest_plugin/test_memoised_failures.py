"""A suite's run happens once per session (issue #28): when it fails, or pytest-timeout
interrupts it, every item of the suite reports that one failure; the run never starts again
per item."""

from __future__ import annotations

import textwrap

import pytest

from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]

# The suite's backend fails in its quality pass; each call is counted in a file. pytest-timeout's
# signal method raises pytest's ``Failed`` (a BaseException) from inside the run: the same here.
CONFTEST = """
import pathlib
import pytest
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.errors import InfrastructureError

def failing_search(self, spec, queries, k):
    with open(pathlib.Path(__file__).parent / "calls.txt", "a") as fh:
        fh.write("search\\n")
    {raise_it}

EmbeddedBackend.search_batch = failing_search
"""

# kind -> (the failure, what each item says, the Python test's outcome: an engine fault is an error)
FAILURES = {
    "infrastructure": (
        'raise InfrastructureError("engine down")',
        "InfrastructureError: engine down",
        "errors",
    ),
    "timeout": (
        'pytest.fail("Timeout (>1.0s) from pytest-timeout.")',
        "Timeout (>1.0s) from pytest-timeout.",
        "failed",
    ),
    "bug": (
        'raise ZeroDivisionError("a bug in a backend")',
        "ZeroDivisionError: a bug in a backend",
        "failed",
    ),
}


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_a_failed_suite_run_is_reported_by_every_item_and_never_rerun(pytester, kind) -> None:
    raise_it, said, python_test = FAILURES[kind]
    pytester.makeconftest(CONFTEST.replace("{raise_it}", raise_it))
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    pytester.makepyfile(
        test_beside=textwrap.dedent(
            """
            def test_asks_for_the_suite(retrieval_suite):
                retrieval_suite("retrieval_tiny.yaml")
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--retrieval-no-latency")
    outcomes = {"errors": 2, "skipped": 1, "failed": 0}  # 3 gates (the latency one skipped)
    outcomes[python_test] += 1
    result.assert_outcomes(**outcomes)
    assert (pytester.path / "calls.txt").read_text().splitlines() == ["search"]  # one run
    assert result.stdout.str().count(said) >= 3  # each gate item and the Python test say it
