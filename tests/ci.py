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


# FIFOs (os.mkfifo) are POSIX: elsewhere the FIFO cases skip, but never under CI=true (there a
# missing os.mkfifo fails them, by the rule above)
needs_fifos = pytest.mark.skipif(
    not hasattr(os, "mkfifo") and os.environ.get("CI") != "true", reason="FIFOs are POSIX"
)
