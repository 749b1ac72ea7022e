"""``pytest-retrieval sweep`` on a suite: candidates fetched once through the suite's backend,
the grid replayed offline, the best configuration and the snippets to paste."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from pytest_retrieval import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_suite" / "retrieval_scifact_mini.yaml"


def test_sweep_example_suite_json(capsys) -> None:
    assert cli.main(["sweep", str(EXAMPLE), "--retriever", "rrf", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sub_retrievers"] == ["bm25", "dense"]
    assert out["grid_size"] == 8 + 2 * 3 * 11  # the full grid
    assert out["tune_queries"] + out["eval_queries"] == 100
    assert "random split" in out["split"]
    best = out["best"]
    assert set(out["evaluation"]) >= {best, *out["defaults"]}
    # the YAML snippet is a retriever block the suite accepts as is
    block = yaml.safe_load(out["yaml"])
    assert list(block) == ["rrf"] and block["rrf"]["of"] == ["bm25", "dense"]
    assert "phase_results_processors" in out["opensearch_pipeline"]


def test_sweep_text_output(capsys) -> None:
    assert cli.main(["sweep", str(EXAMPLE), "--seed", "3", "--weight-step", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "fusion sweep over bm25, dense" in out and "evaluation split:" in out
    assert "suite file (retrievers:):" in out and "OpenSearch search pipeline" in out
    assert "\nrrf:  # sweep: best of" in out  # the suite's first fusion retriever, by name


def test_sweep_refuses_tuning_on_the_evaluated_split(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "sweep", str(EXAMPLE), "--tune-split", "test"],
        capture_output=True,
        text=True,
    )
    # the example suite has no BEIR folder: a plain one-line refusal either way
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "--tune-split" in p.stderr


def test_sweep_needs_a_fusion_retriever(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    suite = tmp_path / "retrieval_nofusion.yaml"
    data = yaml.safe_load(text)
    for k in ("rrf", "weighted"):
        data["retrievers"].pop(k)
        data["floors"].pop(k, None)
    data.pop("expectations", None)  # some name the fusion retrievers removed here
    for key in ("queries", "qrels", "corpus", "tags"):
        data["judgments"][key] = str(EXAMPLE.parent / data["judgments"][key])
    for key in ("queries", "query_ids", "documents", "document_ids"):
        data["embedder"][key] = str(EXAMPLE.parent / data["embedder"][key])
    suite.write_text(yaml.safe_dump(data))
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "sweep", str(suite)], capture_output=True, text=True
    )
    assert p.returncode == 2 and "no fusion retriever" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "pytest_retrieval.cli", "sweep", str(suite), "--retriever", "bm25"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "is a bm25, not a fusion" in p.stderr


def test_check_mode_needs_opensearch(capsys) -> None:
    assert cli.main(["sweep", str(EXAMPLE), "--check"]) == 2
    assert "--check replays variants on OpenSearch" in capsys.readouterr().err
