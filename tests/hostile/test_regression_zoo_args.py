"""Hostile options of benchmarks/regression_zoo.py: one clear line naming the option, exit status 2,
before any suite is built or run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import bounded, one_line

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import regression_zoo  # noqa: E402

# (id, arguments, fragments of the one-line refusal)
ZOO_ARGS = [
    ("unknown dataset", ["--dataset", "msmarco"], ["--dataset: msmarco", "scifact, nfcorpus"]),
    ("one unknown among known", ["--dataset", "scifact,trec-covid"], ["--dataset: trec-covid"]),
    ("empty dataset list", ["--dataset", ","], ["--dataset: empty"]),
    ("unknown engine", ["--engine", "opensearch"], ["--engine: opensearch", "embedded, elasticsearch"]),
    ("engine in capitals", ["--engine", "Embedded"], ["--engine: Embedded"]),
    ("only zero", ["--only", "0"], ["--only: at least 1"]),
    ("only negative", ["--only", "-3"], ["--only: at least 1"]),
    ("only not a number", ["--only", "all"], ["--only", "invalid int value"]),
    ("only a fraction", ["--only", "1.5"], ["--only", "invalid int value"]),
    ("unknown option", ["--max-drop", "0.02"], ["unrecognized arguments: --max-drop 0.02"]),
]


@pytest.mark.parametrize("args, fragments", [c[1:] for c in ZOO_ARGS], ids=[c[0] for c in ZOO_ARGS])
def test_zoo_option_refused_in_one_line(args, fragments, capsys, tmp_path):
    with bounded(10), pytest.raises(SystemExit) as exit_info:
        regression_zoo.main(args + ["--out", str(tmp_path / "never")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    one_line(err, *fragments)
    assert not (tmp_path / "never").exists()


# (id, file content or None for no file, fragments of the one-line refusal)
ZOO_SAVED_ROWS = [
    ("no such file", None, ["--summarize:", "rows.json", "FileNotFoundError"]),
    ("not JSON", "{{{", ["rows.json: not a file of zoo rows", "JSONDecodeError"]),
    ("rows of another shape", '[{"change": "x"}]', ["not a file of zoo rows", "TypeError"]),
    ("a JSON object, not rows", '{"rows": []}', ["not a file of zoo rows", "TypeError"]),
    ("a directory", "dir", ["not a file of zoo rows"]),
]


@pytest.mark.parametrize(
    "content, fragments", [c[1:] for c in ZOO_SAVED_ROWS], ids=[c[0] for c in ZOO_SAVED_ROWS]
)
def test_zoo_saved_rows_refused_in_one_line(content, fragments, capsys, tmp_path):
    path = tmp_path / "rows.json"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    with bounded(10):
        assert regression_zoo.main(["--summarize", str(path)]) == 2
    captured = capsys.readouterr()
    one_line(captured.err.strip(), *fragments)
    assert captured.out == ""
