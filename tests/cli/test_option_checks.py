"""Command-line values refused with one line whatever else is given (tests/hostile found them):
``fuse --norm`` whatever ``--method``, an integer beyond 64 bits, a prompt template that is a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_retrieval.cli.app import main
from pytest_retrieval.errors import ConfigError
from tests.ci import needs_fifos


@pytest.fixture
def runs(tmp_path: Path) -> list:
    for name in ("r1", "r2"):
        (tmp_path / name).write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    return [str(tmp_path / "r1"), str(tmp_path / "r2")]


@pytest.mark.parametrize("method", ["rrf", "weighted", "linear"])
def test_fuse_refuses_an_unknown_norm_whatever_the_method(runs, capsys, method: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["fuse", *runs, "--method", method, "--norm", "nosuch"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--norm: 'nosuch' is no normalization" in err and err.count("\n") == 1


def test_fuse_refuses_a_norm_rrf_would_ignore(runs, capsys) -> None:
    assert main(["fuse", *runs, "--norm", "l2"]) != 0
    assert "--norm applies to --method weighted or linear only" in capsys.readouterr().err
    assert main(["fuse", *runs, "--method", "linear", "--norm", "l2_norm"]) == 0


@pytest.mark.parametrize("value", ["1" + "0" * 28, "9223372036854775808", "5,-9223372036854775809"])
def test_an_integer_option_beyond_64_bits_is_one_line(runs, capsys, value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["fuse", *runs, "--window", value.split(",")[-1]])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "too large" in err and "Traceback" not in err and err.count("\n") == 1


@needs_fifos
def test_a_prompt_template_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    from pytest_retrieval.cli.judge.llm import read_template

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="FIFO"):
        read_template(str(tmp_path / "fifo"))
    with pytest.raises(ConfigError, match="folder"):
        read_template(str(tmp_path))
    (tmp_path / "t.txt").write_bytes(b"\xff{query}")
    with pytest.raises(ConfigError, match="cannot read prompt template"):
        read_template(str(tmp_path / "t.txt"))
