"""A hostile value at the ``--retrieval-*`` pytest options that had none (issue #28, section 6):
a value that is no choice, a flag given a value, a folder or a FIFO where a file is read or
written. pytest stops with one clear line naming the option, exit 4 (usage error) or 2, before any
suite runs; bounded in time, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from ..ci import needs_fifos
from .conftest import BASE, FLOORS, one_line

pytestmark = needs_fifos

R = "\u202e"

# (option, arguments, exit codes, fragments of the line; the first fragment picks the line).
# A rendering not written does not fail the run (docs/how-to/reports.md).
CASES = [
    ("--retrieval-backend", [f"--retrieval-backend={R}"], (4,), ["--retrieval-backend", "invalid choice"]),
    ("--retrieval-profile", ["--retrieval-profile=nan"], (4,), ["--retrieval-profile", "invalid choice"]),
    ("--retrieval-override", ["--retrieval-override=adir"], (1, 2), ["ConfigError", "adir", "a directory"]),
    ("--retrieval-override", ["--retrieval-override=fifo"], (1, 2), ["ConfigError", "fifo", "not a regular"]),
    (
        "--retrieval-export-unjudged",
        ["--retrieval-export-unjudged=adir"],
        (4,),
        ["--retrieval-export-unjudged adir", "is a directory"],
    ),
    (
        "--retrieval-openmetrics",
        ["--retrieval-openmetrics=adir"],
        (0,),
        ["--retrieval-openmetrics adir", "not written"],
    ),
    ("--retrieval-no-step-summary", ["--retrieval-no-step-summary=1"], (4,), ["--retrieval-no-step-summary"]),
    ("--retrieval-rank-eval", ["--retrieval-rank-eval=yes"], (4,), ["--retrieval-rank-eval"]),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("options")
    (d / "retrieval_s.yaml").write_text(BASE + FLOORS)
    (d / "adir").mkdir()
    os.mkfifo(d / "fifo")
    return d


@pytest.mark.parametrize("option,args,codes,fragments", CASES, ids=[c[1][0] for c in CASES])
def test_hostile_pytest_option(
    project: Path, option: str, args: List[str], codes: Tuple[int, ...], fragments: List[str]
) -> None:
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    done = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=120, env=env)
    said = done.stderr + done.stdout
    assert done.returncode in codes, (done.returncode, said)
    assert "Traceback" not in said, said
    lines = [line for line in said.splitlines() if fragments[0] in line]
    assert lines, said
    one_line(lines[0][lines[0].index(fragments[0]) :], *fragments)
