"""Request building shared by the Elasticsearch and OpenSearch backends (no engine needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec
from pytest_retrieval.backends.search_engine.dsl import bm25_query, default_num_candidates, render_template
from pytest_retrieval.backends.search_engine.http import ConnectionSettings, error_reason
from pytest_retrieval.backends.search_engine.index import (
    _deep_merge,
    _flatten_settings,
    slugify,
    stopwords_setting,
)
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import Query

Q = Query("q1", 'say "hi" \\ to {braces} and ünïcode', np.array([0.5, -0.25], dtype=np.float32))


def test_template_dict_placeholders():
    body = {
        "query": {
            "bool": {
                "should": [
                    {"match": {"text": "{{query_text}}"}},
                    {"match": {"title": "prefix {{ query_text }} suffix"}},
                ]
            }
        },
        "knn": {"field": "e", "query_vector": "{{query_vector}}", "k": "{{k}}"},
        "size": "{{k}}",
        "note": "top {{k}}",
    }
    out = render_template(body, Q, 7)
    assert out["query"]["bool"]["should"][0]["match"]["text"] == Q.text
    assert out["query"]["bool"]["should"][1]["match"]["title"] == f"prefix {Q.text} suffix"
    assert out["knn"]["query_vector"] == [0.5, -0.25]
    assert out["knn"]["k"] == 7 and out["size"] == 7 and out["note"] == "top 7"
    assert body["size"] == "{{k}}"  # the template itself is not modified


def test_template_json_string_escapes_text():
    text = '{"query": {"match": {"text": "{{query_text}}"}}, "knn": {"v": "{{query_vector}}"}, "size": {{k}}}'
    out = render_template(text, Q, 3)
    assert out["query"]["match"]["text"] == Q.text
    assert out["knn"]["v"] == [0.5, -0.25] and out["size"] == 3
    assert render_template('{"size": "{{k}}"}', Q, 4) == {"size": 4}


def test_template_errors():
    with pytest.raises(ConfigError, match="no vector"):
        render_template({"v": "{{query_vector}}"}, Query("q", "t"), 3)
    with pytest.raises(ConfigError, match="whole JSON string"):
        render_template({"v": "x {{query_vector}}"}, Q, 3)
    with pytest.raises(ConfigError, match="not valid JSON"):
        render_template('{"size": {{k}}', Q, 3)
    with pytest.raises(ConfigError):
        render_template(["not", "an", "object"], Q, 3)


def test_bm25_query_shapes():
    assert bm25_query(BM25Spec(fields=(("text", 1.0),)), "x") == {"match": {"text": {"query": "x"}}}
    assert bm25_query(BM25Spec(fields=(("text", 2.0),)), "x") == {
        "match": {"text": {"query": "x", "boost": 2.0}}
    }
    mm = bm25_query(BM25Spec(fields=(("title", 2.5), ("text", 1.0)), tie_breaker=0.3), "x")["multi_match"]
    assert mm == {"query": "x", "type": "best_fields", "fields": ["title^2.5", "text"], "tie_breaker": 0.3}
    mf = bm25_query(BM25Spec(multi_match_type="most_fields", tie_breaker=0.3), "x")["multi_match"]
    assert mf["type"] == "most_fields" and "tie_breaker" not in mf
    with pytest.raises(ConfigError):
        bm25_query(BM25Spec(multi_match_type="cross_fields"), "x")
    with pytest.raises(ConfigError):
        bm25_query(BM25Spec(fields=()), "x")


def test_num_candidates():
    assert default_num_candidates(KnnSpec(), 10) == 100
    assert default_num_candidates(KnnSpec(), 80) == 160
    assert default_num_candidates(KnnSpec(), 9000) == 10000
    assert default_num_candidates(KnnSpec(num_candidates=50), 10) == 50
    with pytest.raises(ConfigError):
        default_num_candidates(KnnSpec(num_candidates=5), 10)


def test_error_reason_prefers_root_and_deepest_cause():
    err = {
        "error": {
            "root_cause": [{"type": "query_shard_exception", "reason": "failed to create query"}],
            "type": "search_phase_execution_exception",
            "reason": "all shards failed",
            "failed_shards": [
                {
                    "reason": {
                        "type": "query_shard_exception",
                        "reason": "failed",
                        "caused_by": {
                            "type": "illegal_argument_exception",
                            "reason": "field [x] is not a vector",
                        },
                    }
                }
            ],
        }
    }
    text = error_reason(err)
    assert text.startswith("query_shard_exception: failed to create query")
    assert "field [x] is not a vector" in text
    assert error_reason("plain") == "plain" and error_reason(None) == "unknown error"


def test_connection_settings_hide_credentials():
    c = ConnectionSettings(
        {"hosts": ["https://bob:hunter2-secret@search.example:9243/"], "request_timeout": 5}
    )
    assert c.hosts == ["https://search.example:9243"]
    assert (c.username, c.password) == ("bob", "hunter2-secret")
    assert "hunter2" not in repr(c)
    msg = c.redact(
        "GET https://bob:hunter2-secret@search.example:9243/ failed, "
        "Authorization: Basic Ym9iOmh1bnRlcjItc2VjcmV0 password hunter2-secret"
    )
    assert "hunter2" not in msg and "Ym9iOmh1bnRlcjItc2VjcmV0" not in msg
    k = ConnectionSettings({"hosts": "localhost:9200", "api_key": "the-api-key-value"})
    assert k.hosts == ["http://localhost:9200"]
    assert "the-api-key-value" not in k.redact("header ApiKey the-api-key-value") + repr(k)
    with pytest.raises(ConfigError, match="unknown connection key"):
        ConnectionSettings({"host": "x"})


def test_settings_flatten_and_merge():
    flat = _flatten_settings({"number_of_shards": 2, "index": {"knn": True}, "analysis.x": 1})
    assert flat == {"index.number_of_shards": 2, "index.knn": True, "index.analysis.x": 1}
    merged = _deep_merge(
        {"properties": {"a": {"type": "text"}, "b": {"type": "text"}}, "_meta": {"x": 1}},
        {"properties": {"a": {"type": "keyword"}}, "dynamic": False},
    )
    assert merged == {
        "properties": {"a": {"type": "keyword"}, "b": {"type": "text"}},
        "_meta": {"x": 1},
        "dynamic": False,
    }


def test_small_helpers():
    assert slugify("My Suite: SciFact/BM25!") == "my-suite-scifact-bm25"
    assert slugify("***") == "suite"
    assert stopwords_setting(None) == "_none_" and stopwords_setting("english") == "_english_"
    assert stopwords_setting("_french_") == "_french_" and stopwords_setting(["a", "b"]) == ["a", "b"]
    json.dumps(render_template({"v": "{{query_vector}}"}, Q, 1))  # JSON-able floats
