"""The real exports of ../shared/data/interchange (provenance in its SOURCE.txt): without them,
the items that read them skip (or fail under CI=true, by the one rule of tests/ci.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..ci import unavailable

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED") or HERE / ".." / ".." / ".." / "shared")
DATA = SHARED / "data" / "interchange"


@pytest.fixture(scope="session")
def data() -> Path:
    if not DATA.is_dir():
        unavailable(f"{DATA} is missing (the shared data beside the checkout)")
    return DATA


def cli(*argv: str) -> int:
    from pytest_retrieval.cli.app import main

    return main([str(a) for a in argv])
