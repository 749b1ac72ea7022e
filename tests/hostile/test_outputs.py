"""Hostile output paths and names (issue #28, section 3): a baseline that is a FIFO, a device or a
folder, report paths that cannot be written, ids a TREC file cannot hold, a report JSON whose
numbers are text. Each is one clear line (the option or file, and what is wrong), bounded in
time, and never a hang or a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, List

import pytest

from pytest_retrieval import cli
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.baseline import baseline_from_result, read_baseline, write_baseline
from pytest_retrieval.reports.outputs import OutputWriter, render_outputs, write_run_files

from ..ci import needs_fifos
from ..tiny import TINY_SUITE, run_tiny
from .conftest import bounded, one_line

pytestmark = needs_fifos


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return run_tiny(tmp_path_factory.mktemp("outputs"), TINY_SUITE)


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "fifo")
    return tmp / "fifo"


def _folder(tmp: Path) -> Path:
    (tmp / "folder").mkdir()
    return tmp / "folder"


def _file(tmp: Path) -> Path:
    (tmp / "file").write_text("")
    return tmp / "file"


def _read_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        read_baseline(path)
    return str(info.value)


def _written(what: str, write: Callable[[], object]) -> str:
    said: List[str] = []
    OutputWriter(said.append).write(what, write)
    assert len(said) == 1, said
    return said[0]


def _rendered(tmp: Path, **paths: Path) -> str:
    doc = {"version": 1, "suites": []}
    said: List[str] = []
    render_outputs(doc, say=said.append, **paths)  # type: ignore[arg-type]
    assert len(said) == 1, said
    return said[0]


def _tiny_with_id(tmp: Path, old: str, new: str):
    return run_tiny(tmp, TINY_SUITE.replace(old, new))


# (id, the one line of the case, its fragments); each gets a fresh tmp folder and the tiny result
CASES = [
    ("baseline is a FIFO", lambda t, r: _read_error(_fifo(t)), ["fifo", "a FIFO, not a regular file"]),
    (
        "baseline is a folder",
        lambda t, r: _read_error(_folder(t)),
        ["folder", "a folder, not a regular file"],
    ),
    ("baseline is a device", lambda t, r: _read_error(Path("/dev/null")), ["/dev/null", "a device"]),
    (
        "baseline written to a FIFO",
        lambda t, r: _written(
            "--retrieval-baseline-update", lambda: write_baseline(_fifo(t), baseline_from_result(r))
        ),
        ["ERROR: --retrieval-baseline-update", "a FIFO, not a regular file", "fifo"],
    ),
    (
        "baseline written to a folder",
        lambda t, r: _written(
            "--retrieval-baseline-update", lambda: write_baseline(_folder(t), baseline_from_result(r))
        ),
        ["a folder, not a regular file"],
    ),
    (
        "runs folder is a file",
        lambda t, r: _written_runs([r], _file(t)),
        ["ERROR: --retrieval-runs", "(retrieval_tiny.yaml): not written"],
    ),
    (
        "query id with a space in a run file",
        lambda t, r: _written_runs([_tiny_with_id(t, "{id: q2,", "{id: 'q 2',")], t / "runs"),
        ["(retrieval_tiny.yaml)", "query id 'q 2' contains whitespace"],
    ),
    (
        "document id with a tab in a run file",
        lambda t, r: _written_runs([_tiny_with_id(t, "d3", '"d\\t3"')], t / "runs"),
        ["document id 'd\\t3' contains whitespace"],
    ),
    (
        "query id of 10,000 characters with a newline",
        lambda t, r: _written_runs(
            [_tiny_with_id(t, "{id: q2,", '{id: "q\\n' + "x" * 10_000 + '",')], t / "runs"
        ),
        ["query id 'q\\nxxx", "...' contains whitespace"],
    ),
    ("Markdown path is a FIFO", lambda t, r: _rendered(t, markdown=_fifo(t)), ["--markdown", "a FIFO"]),
    ("HTML path is a folder", lambda t, r: _rendered(t, html=_folder(t)), ["--html", "a folder"]),
    ("OpenMetrics path is /dev/null", lambda t, r: _rendered(t, openmetrics=Path("/dev/null")), ["a device"]),
    (
        "HTML path under a file",
        lambda t, r: _rendered(t, html=_file(t) / "r.html"),
        ["--html", "not written: not a folder"],
    ),
    (
        "step summary is a folder",
        lambda t, r: _rendered(t, step_summary=_folder(t)),
        ["$GITHUB_STEP_SUMMARY"],
    ),
    ("step summary is a FIFO", lambda t, r: _rendered(t, step_summary=_fifo(t)), ["$GITHUB_STEP_SUMMARY"]),
]


def _written_runs(results, folder: Path) -> str:
    said: List[str] = []
    write_run_files(OutputWriter(said.append), results, folder)
    assert len(said) == 1, said
    return said[0]


@pytest.mark.parametrize("case, line, fragments", CASES, ids=[c[0] for c in CASES])
def test_hostile_output_is_one_line(case, line, fragments, tmp_path, result) -> None:
    with bounded(10):
        one_line(line(tmp_path, result), *fragments)


def test_a_report_whose_numbers_are_text_renders_or_is_one_line(tmp_path, result, capsys) -> None:
    """``pytest-retrieval report`` on a JSON report whose numbers were replaced by markup."""
    from types import SimpleNamespace

    from pytest_retrieval.gates import evaluate
    from pytest_retrieval.reports.outputs import report_document

    state = SimpleNamespace(
        suite=result.suite,
        result=result,
        error=None,
        outcomes=[evaluate(result, f) for f in result.suite.floors],
    )

    def texts(x):
        if isinstance(x, dict):
            return {k: texts(v) for k, v in x.items()}
        if isinstance(x, list):
            return [texts(v) for v in x]
        return "<b>@octocat</b>" if isinstance(x, (int, float)) and not isinstance(x, bool) else x

    report = tmp_path / "r.json"
    report.write_text(json.dumps(texts(report_document([state]))))
    out = {k: tmp_path / f"o.{k}" for k in ("md", "html", "txt")}
    with bounded(60):
        code = cli.main(
            [
                "report",
                str(report),
                "--markdown",
                str(out["md"]),
                "--html",
                str(out["html"]),
                "--openmetrics",
                str(out["txt"]),
            ]
        )
    err = capsys.readouterr().err
    if code == 2:  # refused where it is read (cli/report_file.py): one line naming the place
        one_line(err, str(report), "expected a number")
        assert not any(path.exists() for path in out.values())
        return
    for line in err.strip().splitlines():
        one_line(line, "not written")
    assert code == (1 if err.strip() else 0)
    for path in out.values():
        if path.exists():
            assert "<b>" not in path.read_text()
    assert "@octocat" not in (out["md"].read_text() if out["md"].exists() else "").replace("@&#8203;", "")
