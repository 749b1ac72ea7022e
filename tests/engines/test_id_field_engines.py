"""``backend.index.id_field`` on real Elasticsearch and OpenSearch (issue #36, section 2): an
existing index whose judgments are keyed by a ``_source`` field (``sku``), not by the engine's
``_id``. BM25, kNN and the hybrid built on them rank by SKU; a retriever whose hits lack the
field, or whose hits share one value, is one clear error of that retriever only. One small index
per engine for the module."""

from __future__ import annotations

import json
import sys
from typing import Iterator

import pytest

from ..golden import DOCUMENTS, GOLDEN_MODELS
from .conftest import ENGINE_URLS, Instance, http, random_name, vector_mapping

#: documents only the two broken retrievers find (their BM25 fields hold text only these have)
ODD = "solar panels efficiency river flood defences quantum gravity"


def _embed(texts):
    namespace: dict = {}
    exec(GOLDEN_MODELS, namespace)  # noqa: S102 - the test suite's own deterministic embedder
    return namespace["embed"](texts)


@pytest.fixture(scope="module")
def sku_index(engine: Instance) -> Iterator[str]:
    """Engine ids ``e-d1`` ..., SKUs ``SKU-d1`` ...; ``lacks`` has no SKU, ``twin-a`` and
    ``twin-b`` share one; all three are filtered out of the kNN retriever by ``group``."""
    url, name = ENGINE_URLS[engine], random_name("id-field")
    docs = [
        (f"e-{d}", {"sku": f"SKU-{d}", "title": t, "text": x, "group": "good"}) for d, t, x in DOCUMENTS[:5]
    ]
    docs += [
        ("lacks", {"title": "Odd", "text": "odd", "note_a": ODD, "group": "odd"}),
        ("twin-a", {"sku": "SKU-TWIN", "title": "Twin", "text": "twin", "note_b": ODD, "group": "odd"}),
        ("twin-b", {"sku": "SKU-TWIN", "title": "Twin", "text": "twin", "note_b": ODD, "group": "odd"}),
    ]
    vectors = _embed([f"{d['title']} {d['text']}" for _, d in docs])
    body = {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {
            "properties": {
                "sku": {"type": "keyword"},
                "group": {"type": "keyword"},
                "title": {"type": "text"},
                "text": {"type": "text"},
                "note_a": {"type": "text"},
                "note_b": {"type": "text"},
                "embedding": vector_mapping(engine, vectors.shape[1]),
            }
        },
    }
    if engine.name == "opensearch":
        body["settings"]["index.knn"] = True
    status, resp = http(url, "PUT", f"/{name}", body)
    assert status == 200, resp
    lines = []
    for (doc_id, doc), vec in zip(docs, vectors):
        lines.append({"index": {"_index": name, "_id": doc_id}})
        lines.append({**doc, "embedding": [float(v) for v in vec]})
    ndjson = "".join(json.dumps(line) + "\n" for line in lines)
    status, resp = http(url, "POST", "/_bulk?refresh=true", ndjson)
    assert status == 200 and not resp.get("errors"), resp
    yield name
    http(url, "DELETE", f"/{name}")


@pytest.fixture(scope="module")
def result(engine: Instance, sku_index: str, tmp_path_factory):
    """One run of a suite keyed by SKU: three retrievers that work, two that cannot."""
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    folder = tmp_path_factory.mktemp("sku")
    (folder / "golden_models.py").write_text(GOLDEN_MODELS)
    path = folder / "retrieval_sku.yaml"
    path.write_text(
        "suite: sku\n"
        "judgments:\n  inline:\n"
        "    - {id: q1, text: solar panels efficiency, relevant: {SKU-d1: 2, SKU-d2: 1}}\n"
        "    - {id: q2, text: river flood defences, relevant: {SKU-d3: 1}}\n"
        "    - {id: q3, text: quantum gravity, relevant: {SKU-d5: 1}}\n"
        f"backend:\n  type: {engine.name}\n  connection: {{hosts: ['{ENGINE_URLS[engine]}']}}\n"
        f"  index: {{name: {sku_index}, vector_field: embedding, id_field: sku}}\n"
        'embedder: {type: callable, function: "golden_models:embed"}\n'
        "evaluation: {depth: 10}\n"
        "latency: {enabled: false}\n"
        "retrievers:\n"
        "  bm25: {type: bm25, fields: [title, text]}\n"
        "  dense: {type: knn, similarity: cosine, filter: {term: {group: good}}}\n"
        "  hybrid: {type: rrf, of: [bm25, dense], window: 10}\n"
        "  lacks: {type: bm25, fields: [note_a]}\n"
        "  twins: {type: bm25, fields: [note_b]}\n"
        "floors:\n  bm25: {ndcg@10: 0.1}\n"
    )
    sys.path.insert(0, str(folder))
    try:
        return SuiteRunner(load_suite(path), isolate=True).run()
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("golden_models", None)


def test_every_retriever_kind_ranks_by_the_field(result) -> None:
    assert set(result.retrievers) == {"bm25", "dense", "hybrid"}
    assert result.missing_documents is None or not result.missing_documents.missing
    for name in ("bm25", "dense", "hybrid"):
        run = result.retrievers[name].run
        ids = {d for q in run.values() for d in q.doc_ids}
        assert ids and ids <= {f"SKU-{d}" for d, _, _ in DOCUMENTS[:5]}, (name, ids)
        assert run["q2"].doc_ids[0] == "SKU-d3", (name, run["q2"].doc_ids)
        assert result.value(name, "ndcg@10") > 0.5, name


def test_a_hit_without_the_field_or_two_hits_sharing_it_errors_that_retriever_only(result) -> None:
    assert set(result.failed) == {"lacks", "twins"}, result.failed
    lacks, twins = str(result.failed["lacks"]), str(result.failed["twins"])
    assert "hit 'lacks' has no field 'sku'" in lacks and "backend.index.id_field" in lacks, lacks
    assert "SKU-TWIN" in twins and "backend.index.id_field" in twins, twins
    assert "\n" not in lacks.strip() and "\n" not in twins.strip()
