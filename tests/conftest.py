"""Repository-level pytest configuration for pytest-retrieval's own tests.

The plugin itself is registered through its ``pytest11`` entry point (``pip install -e .``);
nothing here is needed by users. Tests may read the public collections in ``../shared``
(beside the project root; CI has it too); the product and ``example_suite/`` never do.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy.fft  # noqa: F401
import pytest

from tests.ci import tiers_off, unavailable

ROOT = Path(__file__).resolve().parent.parent
# numpy.fft is imported here, once: an in-process pytester run that imports it first (through
# scipy, from a golden-query model) would have it dropped from sys.modules on restore, and numpy 2
# refuses to load its C extension a second time ("cannot load module more than once per process").

SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared``; missing it under CI=true is a failure, never a skip."""
    if not (SHARED / "data").is_dir():
        unavailable(f"shared test data not found at {SHARED} (set PYTEST_RETRIEVAL_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def scifact_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "scifact"


@pytest.fixture(autouse=True)
def _forget_secrets() -> object:
    """Each test starts and ends with an empty secret registry (``redaction``): a value one test
    registers (a hostile password such as ``true``) is not redacted from the next test's output."""
    from pytest_retrieval.redaction import reset

    reset()
    yield
    reset()


def pytest_collection_modifyitems(config, items):
    """The items of a declared tier that scripts/test leaves out (``tests/ci.py``: tiers_off)
    are deselected, and counted in the summary below: never skipped."""
    off = tiers_off()
    if not off:
        return
    keep, dropped = [], {}
    for item in items:
        tier = next((t for t in off if item.get_closest_marker(t)), None)
        if tier is None:
            keep.append(item)
        else:
            dropped.setdefault(tier, []).append(item)
    if dropped:
        config.hook.pytest_deselected(items=[i for group in dropped.values() for i in group])
        items[:] = keep
    config._tiers_deselected = {t: (off[t], len(group)) for t, group in dropped.items()}  # noqa: SLF001


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for tier, (why, n) in sorted(getattr(config, "_tiers_deselected", {}).items()):
        terminalreporter.write_line(f"tier {tier}: {n} item(s) deselected: {why}")
