"""Hostile vectors (issue #11 item 9): zero vectors under cosine, vectors large enough to
overflow float32 arithmetic, id lists that do not line up with the rows or the queries,
dimensions that differ from the documents', NaN, infinities and malformed files. Each is one
clear line naming the file (or the ids), or is computed exactly; never a silent 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner

from .conftest import bounded, one_line

QUERIES = {"q1": [1.0, 0.0, 0.0], "q2": [0.0, 1.0, 0.0]}
DOCS = {"d1": [0.9, 0.1, 0.0], "d2": [0.1, 0.9, 0.0], "d3": [0.5, 0.5, 0.1]}


JSONL_EMBEDDER = "  type: precomputed\n  queries: q.jsonl\n  documents: d.jsonl\n"


def _suite(similarity: str = "cosine", embedder: str = JSONL_EMBEDDER) -> str:
    return f"""\
suite: vec
judgments:
  inline:
    - {{id: q1, text: "solar panels", relevant: {{d1: 1}}}}
    - {{id: q2, text: "river floods", relevant: {{d2: 1}}}}
  documents:
    - {{id: d1, text: "solar panels in winter"}}
    - {{id: d2, text: "river flood defences"}}
    - {{id: d3, text: "wind and water"}}
embedder:
{embedder}
latency:
  enabled: false
retrievers:
  dense:
    type: knn
    similarity: {similarity}
floors:
  dense:
    ndcg@10: 0.1
"""


def _jsonl(path: Path, vectors: Dict[str, Any]) -> None:
    path.write_text("".join(json.dumps({"id": k, "vector": v}) + "\n" for k, v in vectors.items()))


def _npy(tmp: Path, name: str, vectors: Dict[str, Any], ids: List[str] = None) -> str:
    np.save(tmp / f"{name}.npy", np.asarray(list(vectors.values())))
    (tmp / f"{name}_ids.txt").write_text("\n".join(ids if ids is not None else list(vectors)) + "\n")
    return f"{name}.npy"


def _run(tmp: Path, text: str) -> Any:
    path = tmp / "retrieval_vec.yaml"
    path.write_text(text)
    with bounded(30):
        return SuiteRunner(load_suite(path)).run()


def _scaled(factor: float) -> Callable[[Path], str]:
    def make(tmp: Path) -> str:
        _jsonl(tmp / "q.jsonl", {k: [x * factor for x in v] for k, v in QUERIES.items()})
        _jsonl(tmp / "d.jsonl", {k: [x * factor for x in v] for k, v in DOCS.items()})
        return _suite()

    return make


def _with(queries: Dict[str, Any] = QUERIES, docs: Dict[str, Any] = DOCS, similarity: str = "cosine"):
    def make(tmp: Path) -> str:
        _jsonl(tmp / "q.jsonl", queries)
        _jsonl(tmp / "d.jsonl", docs)
        return _suite(similarity)

    return make


def _npy_case(q_ids: List[str] = None, d_vectors: Dict[str, Any] = DOCS, q_vectors: Dict[str, Any] = QUERIES):
    def make(tmp: Path) -> str:
        _npy(tmp, "q", q_vectors, q_ids)
        _npy(tmp, "d", d_vectors)
        emb = "  type: precomputed\n  queries: q.npy\n  query_ids: q_ids.txt\n  documents: d.npy\n  document_ids: d_ids.txt\n"
        return _suite(embedder=emb)

    return make


def _raw_npy(array: Any) -> Callable[[Path], str]:
    def make(tmp: Path) -> str:
        np.save(tmp / "q.npy", array, allow_pickle=True)
        (tmp / "q_ids.txt").write_text("q1\nq2\n")
        _jsonl(tmp / "d.jsonl", DOCS)
        return _suite(
            embedder="  type: precomputed\n  queries: q.npy\n  query_ids: q_ids.txt\n  documents: d.jsonl\n"
        )

    return make


ZERO3 = [0.0, 0.0, 0.0]

# (id, files maker, fragments of the one-line error)
ERRORS = [
    (
        "zero query vector",
        _with(queries={"q1": ZERO3, "q2": [0, 1, 0]}),
        ["1 query vector(s) are all zeros", "'q1'"],
    ),
    (
        "zero document vector",
        _with(docs={**DOCS, "d3": ZERO3}),
        ["1 document vector(s) are all zeros", "'d3'"],
    ),
    ("every query zero", _with(queries={"q1": ZERO3, "q2": ZERO3}), ["2 query vector(s)", "'q1', 'q2'"]),
    ("NaN in JSONL", _with(queries={"q1": [float("nan"), 0, 0], "q2": [0, 1, 0]}), ["q.jsonl:1", "NaN"]),
    ("Infinity in JSONL", _with(docs={**DOCS, "d2": [float("inf"), 0, 0]}), ["d.jsonl:2", "infinite"]),
    ("beyond float32 in JSONL", _with(docs={**DOCS, "d1": [1e39, 0, 0]}), ["d.jsonl:1", "float32"]),
    (
        "string in a vector",
        _with(queries={"q1": ["1", 0, 0], "q2": [0, 1, 0]}),
        ["q.jsonl:1", "list of numbers"],
    ),
    ("empty vector", _with(queries={"q1": [], "q2": [0, 1, 0]}), ["q.jsonl:1", "non-empty"]),
    ("ragged JSONL", _with(docs={**DOCS, "d3": [1, 2]}), ["d.jsonl:3", "2 dimensions, earlier ones have 3"]),
    (
        "query dimension differs from the documents'",
        _with(queries={"q1": [1, 0], "q2": [0, 1]}),
        ["query vectors have 2 dimensions", "q.jsonl", "document vectors have 3", "d.jsonl"],
    ),
    (
        "query without a vector",
        _with(queries={"q1": [1, 0, 0]}),
        ["q.jsonl", "no query vector for 1 id(s): 'q2'"],
    ),
    (
        "query ids not the queries'",
        _with(queries={"0": [1, 0, 0], "1": [0, 1, 0]}),
        ["no query vector for 2", "'q1'"],
    ),
    (
        "dot_product overflow",
        _with(
            queries={"q1": [3e19, 3e19, 0], "q2": [0, 3e19, 0]},
            docs={k: [x * 3e19 for x in v] for k, v in DOCS.items()},
            similarity="dot_product",
        ),
        ["overflow float32", "dot_product"],
    ),
    (
        "npy: more ids than rows",
        _npy_case(q_ids=["q1", "q2", "q3"]),
        ["q_ids.txt", "3 ids for 2 vector rows"],
    ),
    ("npy: fewer ids than rows", _npy_case(q_ids=["q1"]), ["q_ids.txt", "1 ids for 2 vector rows"]),
    ("npy: duplicate id", _npy_case(q_ids=["q1", "q1"]), ["q_ids.txt:2", "duplicate id 'q1'"]),
    (
        "npy: NaN row",
        _npy_case(q_vectors={"q1": [1, 0, 0], "q2": [float("nan"), 1, 0]}),
        ["q.npy", "row 1", "NaN"],
    ),
    (
        "npy: beyond float32",
        _npy_case(d_vectors={**DOCS, "d2": [1e300, 0, 0]}),
        ["d.npy", "row 1", "float32"],
    ),
    ("npy: 1-D array", _raw_npy(np.zeros(3)), ["q.npy", "2-D numeric array"]),
    ("npy: strings", _raw_npy(np.array([["a", "b"], ["c", "d"]])), ["q.npy", "2-D numeric array"]),
    ("npy: pickled objects", _raw_npy(np.array([[{}, 1], [2, 3]], dtype=object)), ["q.npy", "cannot read"]),
]


@pytest.mark.parametrize("make,fragments", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_hostile_vectors_are_one_clear_line(tmp_path: Path, make, fragments) -> None:
    text = make(tmp_path)
    with pytest.raises(ConfigError) as err:
        _run(tmp_path, text)
    one_line(str(err.value), *fragments)


@pytest.mark.parametrize("factor", [1e-30, 1e19, 1e30, 1e38])
def test_cosine_is_scale_free_even_where_float32_norms_overflow(tmp_path: Path, factor: float) -> None:
    """cos(a*x, a*y) = cos(x, y): vectors of 1e30 (whose float32 squared norm is inf) rank and
    score as the unscaled ones, since the norms are taken in float64."""
    base = _run(tmp_path, _scaled(1.0)(tmp_path))
    scaled = _run(tmp_path, _scaled(factor)(tmp_path))
    for qid in QUERIES:
        a, b = base.retrievers["dense"].run[qid], scaled.retrievers["dense"].run[qid]
        assert a.doc_ids == b.doc_ids
        assert np.allclose(a.scores, b.scores, rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    "vector,similarity,fragment",
    [
        ([0.0, 0.0, 0.0], "cosine", "all zeros"),
        ([float("nan"), 1.0, 0.0], "cosine", "NaN or infinite"),
        ([float("inf"), 1.0, 0.0], "dot_product", "NaN or infinite"),
    ],
)
def test_engine_knn_bodies_refuse_vectors_the_engine_cannot_score(vector, similarity, fragment) -> None:
    """Elasticsearch/OpenSearch: named before the request, as a config problem (not as the
    engine's error after the fact)."""
    from pytest_retrieval.backends.base import KnnSpec
    from pytest_retrieval.backends.search_engine.dsl import search_body
    from pytest_retrieval.types import Query

    with pytest.raises(ConfigError) as err:
        search_body(
            KnnSpec(similarity=similarity),
            Query("q9", "t", np.asarray(vector)),
            10,
            lambda *a: {},
            "opensearch",
        )
    one_line(str(err.value), "query 'q9'", fragment)
    # a zero vector is fine where it has a score (dot product 0)
    assert search_body(
        KnnSpec(similarity="dot_product"), Query("q9", "t", np.zeros(3)), 10, lambda *a: {}, "x"
    )
