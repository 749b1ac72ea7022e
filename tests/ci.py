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


# Declared tiers: a group of tests whose prerequisite CI does not install, by a documented
# decision (e.g. torch: PyPI's torch is the CUDA build, 5.4 GB with its nvidia-* libraries; the
# wheel alone does not import). ``scripts/test`` names the tiers it leaves out in this variable
# (comma-separated) after checking the prerequisite; the items of a tier left out (marker of the
# same name) are deselected, counted in pytest's summary (tests/conftest.py), never skipped. A
# tier not named here runs, and its missing prerequisite fails under CI=true (``unavailable``).
TIERS_OFF_ENV = "PYTEST_RETRIEVAL_TIERS_OFF"
TIERS = {"torch": "torch and transformers are not installed (scripts/test; docs/reference/layout.md)"}


def tiers_off() -> dict:
    """``{tier: why}`` of the declared tiers ``scripts/test`` leaves out in this run."""
    named = {t.strip() for t in os.environ.get(TIERS_OFF_ENV, "").split(",") if t.strip()}
    unknown = named - set(TIERS)
    if unknown:  # a typo would run nothing of a tier and say so nowhere
        raise pytest.UsageError(f"{TIERS_OFF_ENV}: unknown tier(s) {sorted(unknown)}; known: {sorted(TIERS)}")
    return {t: TIERS[t] for t in sorted(named)}
