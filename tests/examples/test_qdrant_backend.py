"""The third-party backend contract, end to end: the example package under
``examples/backends/qdrant`` is pip-installed (``--no-deps --target``, its own pyproject.toml and
entry point) into a temporary folder put on ``PYTHONPATH``, and a real SciFact suite (300
queries, the precomputed all-MiniLM-L6-v2 vectors) runs through pytest with
``backend: {type: qdrant}``. Qdrant's local mode is exact kNN, so nDCG@10 equals the embedded
engine's kNN over the same vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_retrieval.execution.runner import run_suite

from ..ci import unavailable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "backends" / "qdrant"

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example package installed into a folder of its own (never into the environment)."""
    try:
        import qdrant_client  # noqa: F401
    except ImportError:
        unavailable("qdrant-client is not installed (pip install -e '.[test]')")
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
        + ["--target", str(target), str(EXAMPLE)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (target / "pytest_retrieval_qdrant").is_dir()
    return target


def scifact_suite(folder: Path, shared: Path, backend: str) -> Path:
    vectors = shared / "data" / "scifact" / "embeddings" / "all-MiniLM-L6-v2"
    doc = {
        "suite": "scifact-qdrant",
        "judgments": {"beir": str(shared / "data" / "scifact"), "split": "test"},
        "embedder": {
            "type": "precomputed",
            "queries": str(vectors / "queries.npy"),
            "query_ids": str(vectors / "query_ids.txt"),
            "documents": str(vectors / "corpus.npy"),
            "document_ids": str(vectors / "corpus_ids.txt"),
        },
        "backend": {"type": backend},
        "evaluation": {"metrics": ["ndcg@10", "recall@100"]},
        "latency": {"max_queries": 20, "repetitions": 1, "warmup": 0},
        "retrievers": {"dense": {"type": "knn", "similarity": "cosine"}},
        "floors": {"dense": {"ndcg@10": 0.6}},
    }
    path = folder / f"retrieval_{backend}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_scifact_suite_runs_on_the_installed_qdrant_backend(
    pytester: pytest.Pytester, installed: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = scifact_suite(pytester.path, shared_dir, "qdrant")
    path = os.pathsep.join(p for p in (str(installed), os.environ.get("PYTHONPATH", "")) if p)
    monkeypatch.setenv("PYTHONPATH", path)
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", f"--retrieval-report={report}", suite
    )
    result.assert_outcomes(passed=1)  # dense::ndcg@10
    out = result.stdout.str()
    assert "on qdrant (qdrant-local" in out
    dense = {r["name"]: r for r in json.loads(report.read_text())["suites"][0]["retrievers"]}["dense"]

    embedded = run_suite(scifact_suite(pytester.path, shared_dir, "embedded")).retrievers["dense"].evaluation
    # exact kNN on both sides over the same float32 vectors: the same nDCG@10, query by query
    # (to float rounding: Qdrant normalises the vectors itself and scores in float32)
    for metric in ("ndcg@10", "recall@100"):
        assert dense["metrics"][metric] == pytest.approx(embedded.aggregate[metric], abs=1e-9)
        differing = [
            q for q, v in dense["per_query"].items() if abs(v[metric] - embedded.per_query[metric][q]) > 1e-9
        ]
        assert differing == [], metric
    assert dense["metrics"]["ndcg@10"] > 0.6


def test_a_suite_without_the_package_names_the_type(pytester: pytest.Pytester, shared_dir: Path) -> None:
    suite = scifact_suite(pytester.path, shared_dir, "qdrant")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", suite)
    out = result.stdout.str()
    assert (
        "backend.type: unknown backend type 'qdrant' (known: embedded, elasticsearch, opensearch, http, python"
        in out
    )
    assert "Traceback" not in out
