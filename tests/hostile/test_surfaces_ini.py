"""A hostile value at every ini key of the plugin (``[tool.pytest.ini_options]``, issue #26): a
value that is no choice, a flag that is not true or false, a folder, a FIFO or a device where a
file is read or written, control and format characters in a path. pytest stops with one clear
line naming the key (or, for a rendering written at the end, the file that was not written),
bounded in time, never a traceback; a rendering not written does not fail the run (README,
"Reports in the pull request")."""

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

# (the ini line, exit codes, fragments of the line; the first fragment picks the line)
CASES = [
    ('retrieval_profile = "nan"', (4,), ["retrieval_profile", "expected one of exp, trec"]),
    ('retrieval_backend = "\\u202e"', (4,), ["retrieval_backend", "expected one of embedded"]),
    ('retrieval_report = "adir"', (4,), ["retrieval_report in pyproject.toml", "is a directory"]),
    ('retrieval_report = "a\\u0007b.json"', (4,), ["retrieval_report", "control or format characters"]),
    (
        'retrieval_export_unjudged = "fifo"',
        (4,),
        ["retrieval_export_unjudged in pyproject.toml", "not a regular"],
    ),
    ('retrieval_override = ["adir"]', (1, 2), ["ConfigError", "adir", "a directory"]),
    ('retrieval_override = ["\\u202efloors.yaml"]', (4,), ["retrieval_override", "format characters"]),
    ('retrieval_runs = "afile"', (1,), ["retrieval_runs in pyproject.toml", "afile"]),
    ('retrieval_markdown = "adir"', (0,), ["retrieval_markdown in pyproject.toml", "not written"]),
    ('retrieval_html = "fifo"', (0,), ["retrieval_html in pyproject.toml", "a FIFO"]),
    ('retrieval_openmetrics = "/dev/null"', (0,), ["retrieval_openmetrics in pyproject.toml", "a device"]),
    ('retrieval_no_latency = "maybe"', (4,), ["retrieval_no_latency", "expected true or false"]),
    ('retrieval_no_step_summary = "2"', (4,), ["retrieval_no_step_summary", "expected true or false"]),
    ('retrieval_rank_eval = "\\u202e"', (4,), ["retrieval_rank_eval", "expected true or false"]),
    (
        'retrieval_baseline_update = "\\u202e"',
        (4,),
        ["retrieval_baseline_update", "expected false, or 'always'"],
    ),
    ('retrieval_baseline_update = "true"', (4,), ["retrieval_baseline_update", "pass a regression"]),
    ('retrieval_report = ["a.json", "b.json"]', (4,), ["retrieval_report", "a TOML list; expected one path"]),
    ('retrieval_html = ["a.html"]', (4,), ["retrieval_html", "a TOML list"]),
    ('retrieval_profile = ["trec"]', (4,), ["retrieval_profile", "a TOML list; expected one value"]),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("ini")
    (d / "retrieval_s.yaml").write_text(BASE + FLOORS)
    (d / "adir").mkdir()
    (d / "afile").write_text("x")
    os.mkfifo(d / "fifo")
    return d


@pytest.mark.parametrize(
    "line,codes,fragments", CASES, ids=[c[0].split(" = ")[0] + str(i) for i, c in enumerate(CASES)]
)
def test_hostile_ini_value(project: Path, line: str, codes: Tuple[int, ...], fragments: List[str]) -> None:
    (project / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\n{line}\n")
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    done = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=120, env=env)
    said = done.stderr + done.stdout
    assert done.returncode in codes, (done.returncode, said)
    assert "Traceback" not in said, said
    lines = [x for x in said.splitlines() if fragments[0] in x]
    assert lines, said
    one_line(lines[0][lines[0].index(fragments[0]) :], *fragments)
