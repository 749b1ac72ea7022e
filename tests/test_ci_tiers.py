"""The declared tiers of ``tests/ci.py``: the variable ``scripts/test`` sets names known tiers only,
and a tier left out deselects its items (counted in the summary), never skips them."""

from __future__ import annotations

import pytest

from tests.ci import TIERS_OFF_ENV, tiers_off

pytest_plugins = ["pytester"]


def test_the_tiers_left_out_are_read_from_the_variable(monkeypatch) -> None:
    monkeypatch.delenv(TIERS_OFF_ENV, raising=False)
    assert tiers_off() == {}
    monkeypatch.setenv(TIERS_OFF_ENV, " torch, ")
    assert list(tiers_off()) == ["torch"] and "not installed" in tiers_off()["torch"]


def test_an_unknown_tier_is_a_usage_error(monkeypatch) -> None:
    monkeypatch.setenv(TIERS_OFF_ENV, "torch,torh")
    with pytest.raises(pytest.UsageError, match=r"unknown tier\(s\) \['torh'\]"):
        tiers_off()


def test_a_tier_left_out_is_deselected_and_counted_not_skipped(pytester, monkeypatch) -> None:
    monkeypatch.setenv(TIERS_OFF_ENV, "torch")
    monkeypatch.setenv("CI", "true")
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems, pytest_terminal_summary")
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.torch\n"
        "def test_needs_torch():\n    import torch\n"
        "def test_plain():\n    pass\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(
        ["tier torch: 1 item(s) deselected: torch and transformers are not installed*"]
    )
