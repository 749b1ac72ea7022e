"""A real run of the tiny suite with every gate kind, judged as the plugin judges it, for the
report writers (which only format what ``gates`` decided)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_retrieval.gates import evaluate
from pytest_retrieval.gates.baseline import baseline_from_result
from tests.ci import unavailable

from ..tiny import RICH_SUITE, run_tiny
from .scenario import build


@pytest.fixture(scope="package")
def state(tmp_path_factory):
    """What the plugin keeps per suite: the suite, its result, the floors' and baseline gates'
    outcomes (compared with a baseline of the same run) and the baseline note."""
    result = run_tiny(tmp_path_factory.mktemp("reports"), RICH_SUITE)
    baseline = baseline_from_result(result)
    return SimpleNamespace(
        suite=result.suite,
        result=result,
        error=None,
        outcomes=[evaluate(result, f) for f in result.suite.floors],
        regressions=[evaluate(result, g, baseline=baseline) for g in result.suite.regression],
        baseline_note="compared with retrieval_tiny.baseline.json",
    )


@pytest.fixture(scope="session")
def scenario(tmp_path_factory):
    """The example suite: baseline written, an unchanged run (good) and a regressed run (bad)."""
    return build(tmp_path_factory.mktemp("reports") / "demo")


@pytest.fixture(scope="session")
def good_doc(scenario):
    return json.loads(scenario["good"].files["json"].read_text())


@pytest.fixture(scope="session")
def bad_doc(scenario):
    return json.loads(scenario["bad"].files["json"].read_text())


def need_tool(name: str, hint: str) -> str:
    """A tool the tests need: missing under CI=true is a failure, never a skip."""
    path = shutil.which(name) or next(
        (str(p) for p in (Path.home() / "go" / "bin" / name,) if p.exists()), None
    )
    if path is None:
        unavailable(f"{name} not found ({hint})")
    return path


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1800",
)


@pytest.fixture
def browser(tmp_path):
    """A headless Chromium driven by selenium (Debian's chromium and chromedriver)."""
    chromium = need_tool("chromium", "apt-get install chromium chromium-driver; scripts/test installs it")
    driver_path = need_tool("chromedriver", "apt-get install chromium-driver; scripts/test installs it")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
