"""Ini keys for the ``--retrieval-*`` options (issue #26): every option has one, the command line
wins, ini paths are resolved against the rootdir (pytest run from a subdirectory writes and reads
the same files) and paths in the reports are relative to the rootdir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

from pytest_retrieval.pytest_plugin.ini import INI_KEYS

from ..hostile.conftest import BASE, FLOORS
from ..hostile.test_surfaces import pytest_surfaces

PYPROJECT = """\
[tool.pytest.ini_options]
retrieval_report = "out/report.json"
retrieval_markdown = "out/summary.md"
retrieval_override = ["team/floors.yaml"]
retrieval_no_latency = "true"
retrieval_profile = "trec"
"""


def test_every_option_has_an_ini_key() -> None:
    options = {o[2:].replace("-", "_") for o in pytest_surfaces()}
    assert options == set(INI_KEYS)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "floors.yaml").write_text("floors:\n  bm25:\n    recall@10: 0.999\n")
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retrieval_t.yaml").write_text(BASE + FLOORS)
    return tmp_path


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(run, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_ini_values_apply_from_a_subdirectory(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _pytest(root / "search")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said  # recall@10 of 1.0 meets the team's floor
    doc = json.loads((root / "out" / "report.json").read_text())
    (suite,) = doc["suites"]
    assert suite["file"] == "search/retrieval_t.yaml"  # relative to the rootdir
    assert suite["profile"] == "trec"
    summary = (root / "out" / "summary.md").read_text()
    assert str(root) not in summary and str(root) not in json.dumps(doc)
    assert "recall@10" in said  # the override's floor is a gate
    assert not (root / "search" / "out").exists()


def test_the_command_line_wins(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _pytest(root / "search", "--retrieval-report=mine.json", "--retrieval-profile=exp")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "out" / "report.json").exists()
    doc = json.loads((root / "search" / "mine.json").read_text())
    assert doc["suites"][0]["profile"] == "exp"
    assert (root / "out" / "summary.md").is_file()  # the ini keys not overridden still apply


def _lines(done: subprocess.CompletedProcess, fragment: str) -> List[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if fragment in line]


def test_an_override_file_missing_from_the_ini_is_named(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "team" / "floors.yaml").unlink()
    done = _pytest(root / "search")
    assert done.returncode != 0
    assert _lines(done, "floors.yaml"), done.stdout + done.stderr
