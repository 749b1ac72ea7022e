"""A small suite with every retriever type and golden queries, for the retriever fixture and
``expectations:`` tests on the embedded engine and both real engines; its models are a
deterministic hashing embedder and a term-overlap reranker (``golden_models.py``, written
beside the suite)."""

from __future__ import annotations

import textwrap
from typing import Optional

GOLDEN_MODELS = '''
import hashlib
import re

import numpy as np

DIMS = 64


def _tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def embed(texts):
    """Bag of hashed words, L2-normalised: texts that share words are close (cosine)."""
    out = np.zeros((len(texts), DIMS), dtype=np.float32)
    for i, text in enumerate(texts):
        for t in _tokens(text):
            out[i, int(hashlib.md5(t.encode()).hexdigest(), 16) % DIMS] += 1.0
        norm = np.linalg.norm(out[i])
        out[i] = out[i] / norm if norm else out[i]
        if not norm:
            out[i, 0] = 1.0
    return out


def rerank(query, docs):
    """Query words found in the document, shorter documents first among equals."""
    q = set(_tokens(query))
    return [len(q & set(_tokens(d))) - len(d) / 1e4 for d in docs]
'''

DOCUMENTS = [
    ("d1", "Solar panels", "efficiency of solar panels in winter"),
    ("d2", "Panels", "solar efficiency measured"),
    ("d3", "Floods", "river flood defences in cities"),
    ("d4", "Wind", "wind turbines and solar farms"),
    ("d5", "Physics", "loop quantum gravity theories"),
    ("d6", "Banned", "solar panels river floods wind gravity spam"),
]

LEAVES = ("bm25", "dense", "template")
TYPES = {
    "bm25": "bm25",
    "dense": "knn",
    "rrf": "rrf",
    "weighted": "weighted",
    "linear": "linear",
    "rerank": "rerank",
    "template": "template",
}


def golden_suite(backend: str = "embedded", host: Optional[str] = None, index: Optional[str] = None) -> str:
    """The suite's YAML; ``template`` only on the engines (the embedded engine has no DSL)."""
    docs = "\n".join(f'    - {{id: {d}, title: "{t}", text: "{x}"}}' for d, t, x in DOCUMENTS)
    engine = ""
    if backend != "embedded":
        engine = f"\n  connection: {{hosts: ['{host}']}}"
        if index:
            engine += f"\n  index: {{name: {index}}}"
    template = ""
    if backend != "embedded":
        template = (
            "  template:\n    type: template\n"
            '    body: {query: {multi_match: {query: "{{query_text}}", fields: [title, text]}}}\n'
        )
    return textwrap.dedent(
        f"""\
suite: golden
judgments:
  inline:
    - {{id: q1, text: "solar panels efficiency", relevant: {{d1: 2, d2: 1}}}}
    - {{id: q2, text: "river flood defences", relevant: {{d3: 1}}}}
    - {{id: q3, text: "quantum gravity", relevant: {{d5: 1}}}}
  documents:
{docs}
backend:
  type: {backend}{engine}
embedder: {{type: callable, function: "golden_models:embed"}}
evaluation: {{depth: 20}}
latency: {{enabled: false}}
retrievers:
  bm25: {{type: bm25, fields: [title, text]}}
  dense: {{type: knn, similarity: cosine}}
  rrf: {{type: rrf, of: [bm25, dense], window: 20}}
  weighted: {{type: weighted, of: [bm25, dense], weights: [0.5, 0.5]}}
  linear: {{type: linear, of: [bm25, dense]}}
  rerank:
    type: rerank
    of: [bm25]
    window: 10
    reranker: {{type: callable, function: "golden_models:rerank"}}
{template}floors:
  bm25: {{ndcg@10: 0.1}}
expectations:
  - {{query: "river flood defences cities", first: d3}}
  - {{query: "quantum gravity theories", contains: [d5], k: 2, min_hits: 1}}
  - {{query_id: q1, contains: [d1], k: 3, excludes: [d5]}}
"""
    )


def retriever_names(backend: str) -> list:
    return [n for n in TYPES if backend != "embedded" or n != "template"]


#: counts, in the pytest run under test, every index build (prepare) and every bulk load
COUNTING_CONFTEST = """
import importlib
import json

COUNTS = {"prepare": 0, "bulk_loads": 0, "bulk_docs": 0}


def pytest_configure(config):
    from pytest_retrieval.backends.base import Backend
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
    from pytest_retrieval.backends.search_engine.backend import SearchEngineBackend

    for cls in (EmbeddedBackend, SearchEngineBackend):
        def counted(self, *a, _orig=cls.prepare, **k):
            COUNTS["prepare"] += 1
            return _orig(self, *a, **k)
        cls.prepare = counted
    for name in ("elasticsearch.helpers", "opensearchpy.helpers"):
        module = importlib.import_module(name)
        def bulk(client, actions, *a, _orig=module.streaming_bulk, **k):
            COUNTS["bulk_loads"] += 1
            def each():
                for action in actions:
                    COUNTS["bulk_docs"] += 1
                    yield action
            return _orig(client, each(), *a, **k)
        module.streaming_bulk = bulk


def pytest_unconfigure(config):
    with open("counts.json", "w") as fh:
        json.dump(COUNTS, fh)
"""

FIXTURE_TEST = """
import pytest

from pytest_retrieval import assert_in_top, assert_not_in_top, assert_ranked_above

SUITE = "retrieval_golden.yaml"
NAMES = {names!r}
JUDGED = {{"q1": "solar panels efficiency", "q2": "river flood defences", "q3": "quantum gravity"}}


@pytest.mark.parametrize("name", NAMES)
def test_retriever_fixture_ranks_as_the_suite_run(retrieval_retriever, retrieval_suite, name):
    retriever = retrieval_retriever(SUITE, name)
    assert retriever.kind == {types!r}[name]
    for qid, text in JUDGED.items():
        hits = retriever.search(text, k=5)
        assert hits.query_id == qid and hits.retriever == name
        assert hits.client_ms is not None and hits.client_ms > 0
        (many,) = retriever.search_many([text], k=5)
        assert many.doc_ids == hits.doc_ids
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        run = retrieval_suite(SUITE).retrievers[name].run[qid]
        assert hits.doc_ids == run.doc_ids[:5]
        assert [h.score for h in many] == pytest.approx(run.scores[:5], rel=1e-5)
    hits = retriever.search("river flood defences cities", k=3)
    assert_in_top(hits, "d3", 1)
    assert hits[0].title == "Floods" and hits[0].grade is None
    assert_not_in_top(hits, "d5", 1)
    judged = retriever.search("solar panels efficiency", k=6)
    assert {{h.doc_id: h.grade for h in judged}}.get("d1") == 2
    assert_ranked_above(judged, "d1", "d5")
"""


def write_golden(
    pytester, backend: str = "embedded", host: Optional[str] = None, index: Optional[str] = None
):
    """The golden suite, its models, the counting conftest and the fixture test in ``pytester``."""
    pytester.makefile(".yaml", retrieval_golden=golden_suite(backend, host, index))
    pytester.makepyfile(golden_models=GOLDEN_MODELS, conftest=COUNTING_CONFTEST)
    names = retriever_names(backend)
    pytester.makepyfile(test_fixture=FIXTURE_TEST.format(names=names, types=TYPES))
