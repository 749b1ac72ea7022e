"""One version source (``pytest_retrieval/version.py``): the package, the command and the
installed distribution's metadata agree."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest_retrieval
from pytest_retrieval import cli
from pytest_retrieval.version import __version__

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_prints_the_version(capsys) -> None:
    try:
        cli.main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == f"pytest-retrieval {__version__}"


def test_the_console_script_prints_it_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.split() == ["pytest-retrieval", __version__], done


def test_one_version_source() -> None:
    assert pytest_retrieval.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|(a|b|rc)\d+)?", __version__)
    # the installed distribution (the wheel in CI's main pass) was built from the same file
    assert importlib.metadata.version("pytest-retrieval") == __version__
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert 'attr = "pytest_retrieval.version.__version__"' in pyproject


def test_the_changelog_names_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in changelog
    assert "## [Unreleased]" in changelog
