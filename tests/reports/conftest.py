from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .scenario import build


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
        msg = f"{name} not found ({hint})"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path
