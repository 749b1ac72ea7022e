"""The retriever fixture and ``expectations:`` on real Elasticsearch and OpenSearch, for every
retriever type (bm25, knn, rrf, weighted, linear, rerank, template), on a throwaway index and on
an existing one: the fixture ranks as the suite's run, and the suite's index is built (bulk
loaded) once per session even when YAML items and fixtures both use it."""

from __future__ import annotations

import json
import sys

import pytest

from ..golden import DOCUMENTS, GOLDEN_MODELS, TYPES, write_golden
from .conftest import ENGINE_URLS, http, random_name, vector_mapping

pytest_plugins = ["pytester"]


def _run(pytester):
    names = [n for n in TYPES]
    result = pytester.runpytest_subprocess(
        "test_fixture.py",
        "retrieval_golden.yaml",
        "-q",
        "-p",
        "no:cacheprovider",
        "--retrieval-report",
        "r.json",
    )
    out = result.stdout.str()
    assert "Error" not in out, out[-3000:]
    result.assert_outcomes(passed=len(names) + 1 + 3 * len(names))
    assert f"golden queries: {3 * len(names)} passed, 0 failed" in out
    report = json.loads((pytester.path / "r.json").read_text())
    return json.loads((pytester.path / "counts.json").read_text()), report["suites"][0]


def test_throwaway_index_is_bulk_loaded_once_for_items_and_fixtures(pytester, engine: str) -> None:
    write_golden(pytester, engine, ENGINE_URLS[engine])
    counts, suite = _run(pytester)
    assert suite["backend"]["index_mode"] == "throwaway"
    assert counts["prepare"] == 1, counts
    assert counts["bulk_loads"] == 1 and counts["bulk_docs"] == len(DOCUMENTS), counts
    index = suite["backend"]["index"]
    status, _ = http(ENGINE_URLS[engine], path=f"/{index}")
    assert status == 404, f"the throwaway index {index} outlived the session"


@pytest.fixture
def existing_index(engine: str, pytester):
    """An index the plugin did not create: title/text, the golden embedder's vectors."""
    url = ENGINE_URLS[engine]
    name = random_name("golden")
    sys.path.insert(0, str(pytester.path))
    pytester.makepyfile(golden_models=GOLDEN_MODELS)
    try:
        import golden_models  # type: ignore[import-not-found]

        vectors = golden_models.embed([f"{t} {x}" for _, t, x in DOCUMENTS])
    finally:
        sys.path.remove(str(pytester.path))
        sys.modules.pop("golden_models", None)
    body = {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {
            "properties": {
                "title": {"type": "text"},
                "text": {"type": "text"},
                "embedding": vector_mapping(engine, vectors.shape[1]),
            }
        },
    }
    if engine == "opensearch":
        body["settings"]["index.knn"] = True
    status, resp = http(url, "PUT", f"/{name}", body)
    assert status == 200, resp
    for (doc_id, title, text), vec in zip(DOCUMENTS, vectors):
        doc = {"title": title, "text": text, "embedding": [float(v) for v in vec]}
        status, resp = http(url, "PUT", f"/{name}/_doc/{doc_id}", doc)
        assert status in (200, 201), resp
    http(url, "POST", f"/{name}/_refresh")
    yield name
    http(url, "DELETE", f"/{name}")


def test_existing_index_is_only_read(pytester, engine: str, existing_index: str) -> None:
    write_golden(pytester, engine, ENGINE_URLS[engine], index=existing_index)
    counts, suite = _run(pytester)
    assert suite["backend"]["index_mode"] == "existing" and suite["backend"]["index"] == existing_index
    assert counts["prepare"] == 1 and counts["bulk_loads"] == 0, counts
    status, resp = http(ENGINE_URLS[engine], path=f"/{existing_index}/_count")
    assert status == 200 and resp["count"] == len(DOCUMENTS)
