"""The per-version facts of the engine backends (``search_engine/versions.py``), without a
server.
The same facts against the real servers: ``tests/engines/test_versions.py``."""

from __future__ import annotations

import pytest

from pytest_retrieval.backends.opensearch import normalization_pipeline, rrf_pipeline
from pytest_retrieval.backends.search_engine import versions
from pytest_retrieval.errors import ConfigError, InfrastructureError


def test_elasticsearch_client_against_server_majors():
    assert versions.check_elasticsearch_client("9.5.0", "elasticsearch-py 9.5.1") is None
    assert versions.check_elasticsearch_client("8.19.21", "elasticsearch-py 8.19.3") is None
    with pytest.raises(InfrastructureError) as err:
        versions.check_elasticsearch_client("8.19.21", "elasticsearch-py 9.5.1")
    msg = str(err.value)
    assert (
        "\n" not in msg and "Elasticsearch 8.19.21" in msg and "pip install 'elasticsearch>=8.12,<9'" in msg
    )
    warning = versions.check_elasticsearch_client("9.5.0", "elasticsearch-py 8.19.3")
    assert "REST compatibility" in warning and "pip install 'elasticsearch>=9,<10'" in warning
    assert versions.check_elasticsearch_client("unknown", "elasticsearch-py 9.5.1") is None


def test_client_version_names_the_package():
    assert versions.client_version("elasticsearch").startswith("elasticsearch-py ")
    assert versions.client_version("opensearch").startswith("opensearch-py ")


def test_pinned_vector_mappings():
    es = versions.es_vector_mapping(384, "cosine", "none", "9.5.0")
    assert es["index_options"] == {"type": "hnsw", "m": 16, "ef_construction": 100}
    assert es["similarity"] == "cosine" and es["element_type"] == "float" and es["index"] is True
    for quant, kind in (("int8", "int8_hnsw"), ("int4", "int4_hnsw"), ("bbq", "bbq_hnsw")):
        assert versions.es_vector_mapping(384, "cosine", quant, "8.19.21")["index_options"]["type"] == kind

    os2 = versions.os_vector_mapping(384, "cosinesimil", "none", "2.19.6")
    assert os2["method"] == {
        "name": "hnsw",
        "engine": "lucene",
        "space_type": "cosinesimil",
        "parameters": {"m": 16, "ef_construction": 100},
    }
    assert versions.os_vector_mapping(384, "l2", "none", "3.6.0") == dict(
        os2, method=dict(os2["method"], space_type="l2")
    )
    sq7 = {"name": "sq", "parameters": {"bits": 7}}
    assert versions.os_vector_mapping(8, "l2", "int8", "2.19.6")["method"]["parameters"]["encoder"] == sq7
    assert versions.os_vector_mapping(8, "l2", "int8", "3.6.0")["method"]["parameters"]["encoder"] == sq7
    bbq = versions.os_vector_mapping(8, "l2", "bbq", "3.6.0")["method"]["parameters"]["encoder"]
    assert bbq == {"name": "sq", "parameters": {"bits": 1}}
    with pytest.raises(ConfigError, match="bbq needs OpenSearch >= 3.6"):
        versions.os_vector_mapping(8, "l2", "bbq", "2.19.6")
    with pytest.raises(ConfigError, match="int4 is Elasticsearch only"):
        versions.os_vector_mapping(8, "l2", "int4", "3.6.0")


def test_bm25_similarity_type_keeps_the_k1_plus_one_scale():
    assert versions.bm25_similarity_type("elasticsearch", "9.5.0") == "BM25"
    assert versions.bm25_similarity_type("opensearch", "2.19.6") == "BM25"
    assert versions.bm25_similarity_type("opensearch", "3.6.0") == "LegacyBM25"


def test_rrf_rank_constant_where_each_neural_search_reads_it():
    body = rrf_pipeline(5)
    comb = lambda b: b["phase_results_processors"][0]["score-ranker-processor"]["combination"]  # noqa: E731
    assert comb(versions.os_search_pipeline(body, "2.19.6")) == {
        "technique": "rrf",
        "parameters": {"rank_constant": 5},
    }
    for v in ("3.0.0", "2.19.6"):
        assert comb(versions.os_search_pipeline(body, v)) == comb(body)
    assert comb(versions.os_search_pipeline(body, "3.1.0")) == {"technique": "rrf", "rank_constant": 5}
    assert comb(versions.os_search_pipeline(body, "3.6.0")) == {"technique": "rrf", "rank_constant": 5}
    # the documented (3.1+) form is moved back for a server that would ignore it
    direct = {
        "phase_results_processors": [
            {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 7}}}
        ]
    }
    assert comb(versions.os_search_pipeline(direct, "2.19.6")) == {
        "technique": "rrf",
        "parameters": {"rank_constant": 7},
    }
    assert versions.os_search_pipeline(direct, "3.6.0") == direct
    assert body == rrf_pipeline(5)  # not modified in place
    norm = normalization_pipeline("l2", "arithmetic_mean", [0.3, 0.7])
    assert versions.os_search_pipeline(norm, "3.6.0") == norm == versions.os_search_pipeline(norm, "2.19.6")


def test_vector_index_facts_of_existing_indexes():
    es9_default = {
        "type": "dense_vector",
        "dims": 384,
        "index": True,
        "similarity": "cosine",
        "index_options": {
            "type": "bbq_hnsw",
            "m": 16,
            "ef_construction": 100,
            "rescore_vector": {"oversample": 3.0},
        },
    }
    facts = versions.vector_index_facts("elasticsearch", "embedding", es9_default)
    assert facts["index_options"] == "bbq_hnsw" and facts["quantization"] == "bbq"
    assert facts["rescore_vector"] == {"oversample": 3.0}
    es8_default = dict(es9_default, index_options={"type": "int8_hnsw", "m": 16, "ef_construction": 100})
    assert versions.vector_index_facts("elasticsearch", "embedding", es8_default)["quantization"] == "int8"
    flat = dict(es9_default, index_options={"type": "int4_flat"})
    assert versions.vector_index_facts("elasticsearch", "v", flat)["quantization"] == "int4"
    unpinned_os = {"type": "knn_vector", "dimension": 384}
    f = versions.vector_index_facts("opensearch", "embedding", unpinned_os)
    assert f["engine"] == "server default" and f["quantization"] == "none"
    on_disk = {"type": "knn_vector", "dimension": 384, "mode": "on_disk", "compression_level": "32x"}
    assert versions.vector_index_facts("opensearch", "e", on_disk)["quantization"] == "compression 32x"
    assert versions.vector_index_facts("opensearch", "e", None) == {"field": "e", "type": "absent"}


def test_field_mapping_reads_the_first_index_that_has_the_field():
    found = {
        "a": {"mappings": {}},
        "b": {
            "mappings": {"doc.emb": {"full_name": "doc.emb", "mapping": {"emb": {"type": "dense_vector"}}}}
        },
    }
    assert versions.field_mapping(found, "doc.emb") == {"type": "dense_vector"}
    assert versions.field_mapping({"a": {"mappings": {}}}, "emb") is None
    assert versions.field_mapping(None, "emb") is None


def test_opensearch_3_sets_the_candidate_list_with_ef_search():
    """OpenSearch 3 searches at least the index's ef_search (100) candidates whatever the query's
    k: the query's method_parameters.ef_search makes num_candidates mean what it says."""
    assert versions.os_knn_search_parameters(10, "2.19.6") == {}
    assert versions.os_knn_search_parameters(10, "3.6.0") == {"method_parameters": {"ef_search": 10}}


def test_older_than_compares_the_leading_numbers_and_lets_unparsable_versions_through():
    assert versions.older_than("2.18.0", (2, 19))
    assert not versions.older_than("2.19.6", (2, 19))
    assert not versions.older_than("3.0.0", (2, 19))
    assert not versions.older_than("8.x-SNAPSHOT", (8, 15))
