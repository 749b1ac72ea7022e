"""The real SPLADE model (``../shared/models/splade-tiny``, issue #35 section 3) through a suite on
every engine: the ``onnx`` sparse encoder's vectors indexed as ``sparse_vector`` (Elasticsearch)
or ``rank_features`` (OpenSearch). Five documents, three queries: fast. The engine's scores are
the embedded engine's exact dot products with each document weight cut to 9 significant bits
(Lucene ``FeatureField``: below by less than 2^-8 of the score), and the rankings are the same.

Needs the ONNX export of ``scripts/export_splade_onnx.py`` (made here when torch is installed):
without a cached export these items are in the declared ``torch`` tier
(``tests/models/test_splade_tiny.py``, ``tests/ci.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.models.test_splade_tiny import EXPORT_TIER, SUITE, model_dir, onnx_dir  # noqa: F401 - fixtures

from .conftest import Instance

pytestmark = [pytest.mark.engines, *EXPORT_TIER]

PRECISION = 2.0**-8


@pytest.fixture(scope="module")
def suite(onnx_dir: Path, tmp_path_factory) -> Path:  # noqa: F811
    folder = tmp_path_factory.mktemp("splade-engines")
    path = folder / "retrieval_splade.yaml"
    text = textwrap.dedent(SUITE).replace("ONNX", str(onnx_dir))
    text = text.replace(
        "latency:",
        'backend:\n  type: embedded\n  connection:\n    hosts: ["${RETRIEVAL_HOSTS:-http://127.0.0.1:9}"]\nlatency:',
    )
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def embedded(suite: Path, tmp_path_factory, monkeypatch_module):
    from pytest_retrieval.execution.runner import run_suite

    return run_suite(suite)


@pytest.fixture(scope="module")
def monkeypatch_module(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_RETRIEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield mp


def test_splade_tiny_on_the_engine_ranks_as_the_embedded_engine(
    engine: Instance, suite: Path, embedded, monkeypatch_module
) -> None:
    from pytest_retrieval.execution.runner import run_suite

    monkeypatch_module.setenv("RETRIEVAL_HOSTS", engine.url)
    result = run_suite(suite, backend=engine.name)
    got, want = result.retrievers["splade"], embedded.retrievers["splade"]
    assert got.metrics["mrr@10"] == want.metrics["mrr@10"] == 1.0
    for qid, ranking in want.run.items():
        assert got.run[qid].doc_ids == ranking.doc_ids
        for g, w in zip(got.run[qid].scores, ranking.scores):
            assert w * (1 - PRECISION) - 1e-6 <= g <= w + 1e-6
    assert got.sparse.query_nnz == want.sparse.query_nnz
