"""The package as users install it (issue #26).

CI's main pass (scripts/test) runs the whole suite against the installed wheel, from a copy of the
checkout without ``pytest_retrieval/`` (scripts/wheel_tree.py); ``PYTEST_RETRIEVAL_SOURCE`` names
the checkout the wheel was built from. There, these tests check that the package imported is the
wheel's and that it holds every file of the source package (code and package data: a pattern
missing from ``[tool.setuptools.package-data]`` fails here, and in the tests that read the file).
Run from the checkout, they check the same of the checkout itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest_retrieval

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(pytest_retrieval.__file__).resolve().parent
SOURCE = Path(os.environ.get("PYTEST_RETRIEVAL_SOURCE") or ROOT).resolve()

# the data files the code reads at run time (besides modules)
PACKAGE_DATA = (
    "py.typed",  # PEP 561: mypy of a team's tests sees the plugin's types
    "config/suite.schema.json",  # the published schema (`pytest-retrieval schema`, editors)
    "reports/static/report.css",  # inlined into the HTML report
    "reports/static/report.js",
)


def _source_files() -> List[str]:
    """Every file of the source package, as git lists it (tracked, and untracked not ignored)."""
    listed = subprocess.run(
        [
            "git",
            "-C",
            str(SOURCE),
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "pytest_retrieval",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [p.split("/", 1)[1] for p in listed if (SOURCE / p).is_file()]


def test_the_package_data_is_beside_the_code() -> None:
    missing = [name for name in PACKAGE_DATA if not (PACKAGE / name).is_file()]
    assert not missing, f"{PACKAGE} lacks {missing} (pyproject.toml [tool.setuptools.package-data])"


def test_the_installed_package_holds_every_file_of_the_source() -> None:
    files = _source_files()
    assert "plugin.py" in files and "config/suite.schema.json" in files, files[:5]
    missing = [rel for rel in files if not (PACKAGE / rel).is_file()]
    assert not missing, (
        f"the installed package {PACKAGE} lacks {len(missing)} file(s) of the source: {missing}"
    )


def test_the_tests_import_the_package_they_are_meant_to() -> None:
    plugin = sys.modules.get("pytest_retrieval.plugin")
    assert plugin is not None and Path(plugin.__file__).resolve().parent == PACKAGE
    if os.environ.get("PYTEST_RETRIEVAL_SOURCE"):  # the wheel pass: never the checkout's sources
        # (the wheel's environment may sit inside the checkout, e.g. .venv-wheel/: compare with
        # the checkout's package folder, not the checkout)
        checkout = SOURCE / "pytest_retrieval"
        assert not PACKAGE.is_relative_to(checkout), f"{PACKAGE} is the checkout, not the installed wheel"
        assert not PACKAGE.is_relative_to(ROOT), f"{PACKAGE} is inside the tests' tree {ROOT}"
