"""The one rule for missing test prerequisites (../shared, a running engine, a browser): under
``CI=true`` a missing prerequisite fails the test, never skips it; on a developer machine it skips."""

from __future__ import annotations

import os

import pytest


def unavailable(reason: str) -> None:
    """Fail (CI) or skip (elsewhere) the current test because ``reason``; never returns."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)
