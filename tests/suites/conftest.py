"""The SciFact and XQuAD-R suites read ../shared (the BEIR data and its vectors): without it, its items skip
(or fail under CI=true, by the one rule of tests/ci.py) instead of erroring at setup."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..ci import unavailable

HERE = Path(__file__).resolve().parent
# the suite's own default: ${PYTEST_RETRIEVAL_SHARED:-../../../shared} relative to this folder
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED") or HERE / ".." / ".." / ".." / "shared")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    data = SHARED / "data" / ("xquad-r" if item.path.name.startswith("retrieval_xquad_r_") else "scifact")
    if item.path.parent == HERE and not data.is_dir():
        unavailable(f"{data} is missing (the shared data beside the checkout)")
