"""Every output is written on its own: one that cannot be written is one line naming its option,
path and why; every other output is still written (issue #28: an unwritable runs folder, a query
id with a space in a run file or a baseline path that is a folder was an INTERNALERROR that lost
the JSON and Markdown reports)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_retrieval.fileio import atomic_write, read_regular_file
from pytest_retrieval.reports.outputs import OutputWriter, render_outputs, report_document, write_run_files

from ..ci import needs_fifos
from ..tiny import TINY_SUITE

pytest_plugins = ["pytester"]


def test_a_writer_that_raises_is_one_line_and_the_next_one_runs() -> None:
    said: list = []
    writer = OutputWriter(said.append)
    assert not writer.write("--x out", lambda: 1 / 0)
    assert not writer.write("--y y.md", lambda: open("/nonexistent-dir/y.md", "w"), data=False)
    assert writer.write("--z z", lambda: None)
    assert said == [
        "ERROR: --x out: not written: ZeroDivisionError: division by zero",
        "--y y.md: not written: No such file or directory: /nonexistent-dir/y.md",
    ]
    assert writer.failed == said


def test_a_rendering_that_cannot_be_written_leaves_the_others(state, tmp_path) -> None:
    doc = report_document([state])
    (tmp_path / "taken.md").mkdir()
    said: list = []
    problems = render_outputs(
        doc,
        markdown=tmp_path / "taken.md",
        html=tmp_path / "r.html",
        openmetrics=tmp_path / "r.txt",
        say=said.append,
    )
    assert (
        problems
        == said
        == [
            f"--markdown {tmp_path / 'taken.md'}: not written: a folder, not a regular file: {tmp_path / 'taken.md'}"
        ]
    )
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert (tmp_path / "r.txt").read_text().endswith("# EOF\n")


def test_a_runs_folder_that_is_a_file_is_one_line(state, tmp_path) -> None:
    (tmp_path / "runs").write_text("")
    said: list = []
    write_run_files(OutputWriter(said.append), [state.result], tmp_path / "runs")
    assert len(said) == 1 and said[0].startswith(
        f"ERROR: --retrieval-runs {tmp_path / 'runs'} (retrieval_tiny.yaml)"
    )


@needs_fifos
def test_a_fifo_or_device_is_refused_never_read_or_replaced(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/null"), "a device"), (tmp_path, "a folder")):
        with pytest.raises(OSError, match=f"{kind}, not a regular file"):
            read_regular_file(path)
        with pytest.raises(OSError, match=f"{kind}, not a regular file"):
            atomic_write(path, lambda fh: fh.write("x"))
    assert Path("/dev/null").is_char_device()


def test_outputs_that_cannot_be_written_do_not_lose_the_reports(pytester) -> None:
    """A query id with a space (no run file) and a baseline path that is a folder: one line
    each, a failed exit, and every other output written."""
    pytester.makefile(
        ".yaml",
        retrieval_tiny=TINY_SUITE.replace("{id: q2,", "{id: 'q 2',"),
        retrieval_ok=TINY_SUITE.replace("suite: tiny", "suite: ok").replace(
            "floors:\n", "regression:\n  baseline: taken\n  max_drop: {ndcg@10: 0.01}\nfloors:\n"
        ),
    )
    p = pytester.path
    (p / "taken").mkdir()
    result = pytester.runpytest_subprocess(
        "-q",
        "--retrieval-baseline-update",
        f"--retrieval-runs={p / 'runs'}",
        f"--retrieval-export-unjudged={p / 'queue.jsonl'}",
        f"--retrieval-report={p / 'r.json'}",
        f"--retrieval-markdown={p / 'r.md'}",
    )
    out = result.stdout.str()
    assert result.ret == 1 and "INTERNALERROR" not in out and "Traceback" not in out
    lines = [line for line in result.outlines if "not written" in line]
    assert len(lines) == 2, out
    # paths under the rootdir as pytest's node ids (the summary reads the same on every machine)
    assert "ERROR: --retrieval-baseline-update taken: not written: a folder" in out
    assert "ERROR: --retrieval-runs" in out and "(retrieval_tiny.yaml): not written: query id 'q 2'" in out
    assert (p / "queue.jsonl").is_file()
    assert sorted(x.name for x in (p / "runs").iterdir()) == ["ok"]  # the other suite's run files
    assert len(json.loads((p / "r.json").read_text())["suites"]) == 2
    assert (p / "r.md").read_text().startswith("## ")
