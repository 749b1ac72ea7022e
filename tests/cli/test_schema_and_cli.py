"""The published JSON Schema and the trec_eval-like command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_retrieval.config
from pytest_retrieval import cli
from pytest_retrieval.config.schema import json_schema

# the package's copy (in CI's main pass, the installed wheel's: it must ship the schema)
SCHEMA = Path(pytest_retrieval.config.__file__).resolve().parent / "suite.schema.json"


def test_published_schema_is_current() -> None:
    # regenerate with: pytest-retrieval schema > pytest_retrieval/config/suite.schema.json
    assert json.loads(SCHEMA.read_text()) == json_schema()


def test_example_suite_validates_against_published_schema() -> None:
    import jsonschema
    import yaml

    root = Path(__file__).resolve().parents[2]
    doc = yaml.safe_load((root / "example_suite" / "retrieval_scifact_mini.yaml").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def _write(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("q1 0 a 3\nq1 0 b 2\nq1 0 c 0\nq1 0 e 1\nq2 0 x 1\nq3 0 z 0\n")
    run = tmp_path / "run.trec"
    # grades in ranked order for q1: 3, 2, 0, 0(unjudged), 1 -> the design's worked example
    run.write_text(
        "q1 Q0 a 1 5.0 t\nq1 Q0 b 2 4.0 t\nq1 Q0 c 3 3.0 t\nq1 Q0 d 4 2.0 t\n"
        "q1 Q0 e 5 1.0 t\nq3 Q0 z 1 1.0 t\n"
    )
    return qrels, run


def test_evaluate_json_worked_example(tmp_path: Path, capsys) -> None:
    qrels, run = _write(tmp_path)
    assert (
        cli.main(
            ["evaluate", str(qrels), str(run), "-m", "ndcg@5", "-m", "mrr@10", "--json", "--per-query"]
            + ["--average-over", "relevant"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert round(out["per_query"]["q1"]["ndcg@5"], 3) == 0.988
    assert out["per_query"]["q2"]["ndcg@5"] == 0.0  # judged query without hits: 0, counted
    assert out["aggregate"]["ndcg@5"] == pytest.approx(out["per_query"]["q1"]["ndcg@5"] / 2, abs=0)
    assert "q3" not in out["per_query"]  # no relevant judgment: left out, listed
    assert out["queries"]["no_relevant"] == ["q3"]


def test_evaluate_text_output_and_profile(tmp_path: Path, capsys) -> None:
    qrels, run = _write(tmp_path)
    assert cli.main(["evaluate", str(qrels), str(run), "-m", "ndcg@5", "--profile", "trec"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ndcg@5\tall\t")
    assert out[-1] == "num_q\tall\t2"


def test_evaluate_bad_input_is_one_line(tmp_path: Path) -> None:
    qrels, run = _write(tmp_path)
    run.write_text("q1 Q0 a one 5.0 t\n")
    # the rank column is read (and must be an integer) when it orders the run: --ties engine;
    # under --ties trec (the default) it is ignored, as trec_eval ignores it
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "evaluate", str(qrels), str(run), "--ties", "engine"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "run.trec:1" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "evaluate", str(qrels), str(run), "-m", "ndgc@10"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "unknown metric" in p.stderr and "Traceback" not in p.stderr


def test_fuse_command_rrf_and_weighted(tmp_path: Path, capsys) -> None:
    r1, r2 = tmp_path / "a.trec", tmp_path / "b.trec"
    r1.write_text("q Q0 d1 1 3.0 a\nq Q0 d2 2 2.0 a\nq Q0 d3 3 1.0 a\n")
    r2.write_text("q Q0 d3 1 0.9 b\nq Q0 d1 2 0.5 b\n")
    assert (
        cli.main(
            [
                "fuse",
                str(r1),
                str(r2),
                "--method",
                "rrf",
                "--rank-constant",
                "60",
                "--window",
                "100",
                "--semantics",
                "elasticsearch",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.split("\n")
    assert lines[0].split()[:4] == ["q", "Q0", "d1", "1"]  # 1/61 + 1/62 beats 1/63 + 1/61
    assert (
        cli.main(
            [
                "fuse",
                str(r1),
                str(r2),
                "--method",
                "weighted",
                "--norm",
                "min_max",
                "--combine",
                "arithmetic_mean",
                "--weights",
                "0.3,0.7",
                "--window",
                "100",
                "--semantics",
                "opensearch",
            ]
        )
        == 0
    )
    lines = [l.split() for l in capsys.readouterr().out.strip().split("\n")]
    assert [l[2] for l in lines] == ["d3", "d1", "d2"]
    assert cli.main(["fuse", str(r1), str(r2), "--method", "weighted", "--weights", "0.3,0.3"]) == 2
