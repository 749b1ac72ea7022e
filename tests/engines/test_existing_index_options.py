"""On an existing index, BM25 k1/b and stop words are the index's own settings: a retriever
that sets them is a config error naming the index and what its settings hold."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import Query

from .conftest import ENGINE_URLS, backend_class, http, random_name

SETTINGS = {
    "number_of_shards": 1,
    "number_of_replicas": 0,
    "similarity": {"tuned": {"type": "BM25", "k1": 0.9, "b": 0.4}},
    "analysis": {"analyzer": {"prose": {"type": "standard", "stopwords": "_english_"}}},
}
MAPPINGS = {
    "properties": {
        "title": {"type": "text"},
        "text": {"type": "text", "analyzer": "prose", "similarity": "tuned"},
    }
}


@pytest.fixture(scope="module")
def existing(engine: str) -> Iterator[str]:
    url, name = ENGINE_URLS[engine], random_name("owned-options")
    status, body = http(url, "PUT", f"/{name}", {"settings": SETTINGS, "mappings": MAPPINGS})
    assert status == 200, body
    http(
        url,
        "PUT",
        f"/{name}/_doc/d1?refresh=true",
        {"title": "Solar", "text": "the efficiency of solar panels"},
    )
    yield name
    http(url, "DELETE", f"/{name}")


def _search(engine: str, index: str, spec: BM25Spec):
    backend = backend_class(engine)({"hosts": [ENGINE_URLS[engine]]}, {"name": index})
    try:
        backend.prepare(None, None)
        return backend.search_batch(spec, [Query("q1", "solar panels")], 10)
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        (BM25Spec(k1=0.5, b=0.3), "k1: 0.5, b: 0.3"),
        (BM25Spec(stopwords="english"), "stopwords: english"),
        (BM25Spec(index_options=("k1",)), "k1: 1.2"),  # written in the YAML, even at the default
    ],
    ids=["k1-b", "stopwords", "k1-as-default"],
)
def test_index_owned_options_are_refused_naming_what_the_index_holds(engine, existing, spec, named) -> None:
    with pytest.raises(ConfigError) as err:
        _search(engine, existing, spec)
    text = str(err.value)
    assert named in text and repr(existing) in text, text
    assert (
        "text: similarity BM25 (k1=0.9, b=0.4), analyzer prose (stopwords _english_, type standard)" in text
    )
    assert "title: similarity BM25 (k1=1.2, b=0.75), analyzer standard" in text
    assert "throwaway index" in text and "index template" in text


def test_a_retriever_without_them_searches_the_index_as_it_is(engine, existing) -> None:
    run = _search(engine, existing, BM25Spec())
    assert run["q1"].doc_ids == ["d1"]


def test_the_suite_names_what_it_wrote(engine, existing, tmp_path: Path) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    path = tmp_path / "retrieval_owned.yaml"
    path.write_text(
        "suite: owned\n"
        "judgments:\n  inline:\n    - {id: q1, text: solar panels, relevant: {d1: 1}}\n"
        f"backend:\n  type: {engine}\n  connection: {{hosts: ['{ENGINE_URLS[engine]}']}}\n"
        f"  index: {{name: {existing}}}\n"
        "latency: {enabled: false}\n"
        "retrievers:\n  bm25: {type: bm25, fields: [title, text], b: 0.75}\n"
        "floors:\n  bm25: {ndcg@10: 0.1}\n"
    )
    with pytest.raises(
        ConfigError, match=r"retrieval_owned.yaml:\d+: retrievers.bm25: a bm25 retriever sets b: 0.75, but"
    ):
        SuiteRunner(load_suite(path)).run()
