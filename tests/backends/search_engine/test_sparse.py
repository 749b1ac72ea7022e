"""The engine-independent part of learned sparse retrieval on Elasticsearch/OpenSearch
(``search_engine/sparse.py``): the checks of document and query vectors, the precision
model of Lucene's FeatureField, the query bodies of both adapters. The engines themselves:
tests/engines/test_sparse_engines.py."""

from __future__ import annotations

import math

import pytest

from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend
from pytest_retrieval.backends.opensearch import OpenSearchBackend
from pytest_retrieval.backends.search_engine.sparse import (
    PRECISION_BITS,
    check_doc_vectors,
    feature_value,
    query_weights,
    sparse_facts,
    sparse_query_body,
)
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import DocSparseVectors, Query


def test_feature_value_keeps_nine_significant_bits():
    # measured on Elasticsearch 8.19/9.5: 1.2345678 scores as 1.234375, 0.1 as 0.099853516
    assert feature_value(1.2345678) == 1.234375
    assert feature_value(0.1) == pytest.approx(0.099853516, abs=1e-9)
    for w in (0.001, 0.37, 1.0, 3.3, 1234.5):
        kept = feature_value(w)
        assert kept <= w and (w - kept) / w < 2.0**-8
    assert feature_value(1.5) == 1.5  # representable in 9 bits: kept exactly
    assert PRECISION_BITS == 9


def test_doc_vectors_checked_by_name():
    ok = check_doc_vectors(DocSparseVectors(["a", "b"], [{"x": 1.0, "y": 0.0}, {"p.q": 2}], "enc"))
    assert ok == {"a": {"x": 1.0}, "b": {"p.q": 2.0}}  # a zero weight adds nothing: left out
    cases = [
        (DocSparseVectors(["a"], [{"x": -1.0}], "e"), r"document 'a', term 'x'.*negative"),
        (DocSparseVectors(["a"], [{"x": math.nan}], "e"), "not finite"),
        (DocSparseVectors(["a"], [{"x": 1e39}], "e"), "float32 range"),
        (DocSparseVectors(["a"], [{"x": 1e-40}], "e"), "float32 range"),
        (DocSparseVectors(["a"], [{"": 1.0}], "e"), "not a non-empty string"),
        (DocSparseVectors(["a"], [{"x": "heavy"}], "e"), "not a number"),
        (DocSparseVectors(["a"], [[1.0]], "e"), "mapping"),
        (DocSparseVectors(["a", "a"], [{"x": 1.0}, {"x": 1.0}], "e"), "two sparse vectors"),
        (DocSparseVectors(["a", "b"], [{"x": 1.0}], "e"), "2 document ids but 1 vectors"),
    ]
    for vectors, message in cases:
        with pytest.raises(ConfigError, match=message):
            check_doc_vectors(vectors)


def test_query_bodies():
    q = Query("q1", "text", sparse={"cell": 2.0, "p.value": 0.5, "zero": 0.0})
    assert query_weights(q) == {"cell": 2.0, "p.value": 0.5}
    es = ElasticsearchBackend.__new__(ElasticsearchBackend)
    es.engine_info = lambda: ("elasticsearch", "8.19.0")  # type: ignore[method-assign]
    body = sparse_query_body("f", q, 10, es._sparse_clause)
    assert body == {
        "query": {
            "sparse_vector": {"field": "f", "query_vector": {"cell": 2.0, "p.value": 0.5}, "prune": False}
        },
        "size": 10,
        "_source": False,
    }
    es.engine_info = lambda: ("elasticsearch", "8.14.3")  # type: ignore[method-assign]
    with pytest.raises(ConfigError, match=r"Elasticsearch >= 8.15\), the server is 8.14.3"):
        sparse_query_body("f", q, 10, es._sparse_clause)

    os_ = OpenSearchBackend.__new__(OpenSearchBackend)
    assert sparse_query_body("f", q, 5, os_._sparse_clause)["query"] == {
        "neural_sparse": {"f": {"query_tokens": {"cell": 2.0, "p.value": 0.5}}}
    }
    big = Query("q2", "", sparse={"a": 128.0, "b": 32.0})
    # FeatureField.newLinearQuery refuses weights above 64: scaled in, boosted back
    assert sparse_query_body("f", big, 5, os_._sparse_clause)["query"] == {
        "neural_sparse": {"f": {"query_tokens": {"a": 64.0, "b": 16.0}, "boost": 2.0}}
    }
    empty = Query("q3", "", sparse={})
    assert sparse_query_body("f", empty, 5, os_._sparse_clause)["query"] == {"match_none": {}}
    with pytest.raises(ConfigError, match="query 'q4' has no sparse vector"):
        sparse_query_body("f", Query("q4", "x"), 5, os_._sparse_clause)


def test_sparse_facts_name_the_precision():
    assert sparse_facts({}) == {}
    facts = sparse_facts({"sparse_embedding": "rank_features"})["sparse"]["sparse_embedding"]
    assert facts["type"] == "rank_features" and facts["precision_bits"] == 9
    assert facts["score_precision"].startswith("Lucene feature precision (9 bits)")
