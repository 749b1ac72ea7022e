"""The pure sparse core: checks, IDF, the efficiency facts and the common-term share."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.sparse import (
    apply_idf,
    bm25_idf,
    check_vectors,
    common_term_share,
    doc_stats,
    sparse_facts,
    vocabulary_mismatch,
)

DOCS = [{"a": 1.0, "b": 2.0}, {"a": 0.5}, {"a": 1.0, "c": 3.0}, {}]


def test_idf_is_lucene_bm25_and_never_negative() -> None:
    assert bm25_idf(4, 1) == pytest.approx(math.log(1 + 3.5 / 1.5))
    assert bm25_idf(10, 10) > 0  # a term in every document still scores (the +1 variant)
    stats = doc_stats(DOCS)
    assert stats.df == {"a": 3, "b": 1, "c": 1}
    q = apply_idf({"a": 2.0, "zzz": 1.0}, stats)
    assert q["a"] == pytest.approx(2.0 * math.log(1 + (4 - 3 + 0.5) / 3.5))
    assert q["zzz"] == pytest.approx(math.log(1 + 4.5 / 0.5))  # df = 0: matches nothing anyway


def test_doc_stats_count_non_zeros_and_empties() -> None:
    stats = doc_stats(DOCS)
    assert stats.n_docs == 4 and stats.empty == 1
    assert stats.mean_nnz == pytest.approx(5 / 4)
    assert stats.weight_sums["a"] == pytest.approx(2.5)


def test_flops_is_the_expected_number_of_shared_terms() -> None:
    stats = doc_stats(DOCS)
    queries = {"q1": {"a": 1.0}, "q2": {"a": 1.0, "b": 1.0}, "q3": {}}
    facts = sparse_facts(queries, stats, "enc", "none")
    # p_doc(a) = 3/4, p_query(a) = 2/3; p_doc(b) = 1/4, p_query(b) = 1/3
    assert facts.flops == pytest.approx(3 / 4 * 2 / 3 + 1 / 4 * 1 / 3)
    # the same by brute force: the mean over (query, document) pairs of shared terms
    pairs = [len(set(q) & set(d)) for q in queries.values() for d in DOCS]
    assert facts.flops == pytest.approx(np.mean(pairs))
    assert facts.query_nnz == pytest.approx(1.0) and facts.doc_nnz == pytest.approx(5 / 4)
    assert facts.empty_queries == ["q3"]
    assert "1 of 3 queries have an empty vector (zero hits)" in facts.line()
    assert any("zero hits: 'q3'" in w for w in facts.warnings())
    assert facts.as_dict()["flops"] == facts.flops and facts.value("sparse_doc_nnz") == facts.doc_nnz


def test_common_term_share_and_its_warning() -> None:
    stats = doc_stats(DOCS)  # 'a' is in 3 of 4 documents
    queries = [{"a": 1.0, "c": 1.0}]
    # score mass: a: 1 x 2.5, c: 1 x 3.0
    assert common_term_share(queries, stats) == pytest.approx(2.5 / 5.5)
    facts = sparse_facts({"q": queries[0]}, stats, "enc", "none")
    assert facts.common_term_share == pytest.approx(2.5 / 5.5)
    assert any("carry 45% of the score mass" in w for w in facts.warnings())
    assert sparse_facts({"q": queries[0]}, stats, "enc", "bm25_plus1").common_term_share is None
    assert not sparse_facts({"q": {"c": 1.0}}, stats, "enc", "none").warnings()


def test_no_documents_no_flops() -> None:
    facts = sparse_facts({"q": {"a": 1.0}}, None, "enc", "none")
    assert facts.flops is None and facts.doc_nnz is None and "FLOPS ?" in facts.line()


@pytest.mark.parametrize(
    "vector, message",
    [
        ({"a": -0.5}, "query 'q': term 'a' has a negative weight -0.5"),
        ({"a": float("nan")}, "query 'q': term 'a' has a non-finite weight nan"),
        ({"a": float("inf")}, "non-finite weight inf"),
        ({"a": "1"}, "term 'a' has weight '1', not a number"),
        ({"a": True}, "term 'a' has weight True, not a number"),
        ([1.0, 2.0], "a sparse vector is a {term: weight} mapping, got list"),
    ],
)
def test_check_vectors_one_clear_line(vector, message) -> None:
    with pytest.raises(ConfigError) as info:
        check_vectors(["q"], [vector], "query", "model.onnx")
    text = str(info.value)
    assert message in text and "model.onnx" in text and "\n" not in text


def test_check_vectors_drops_zeros_and_counts_empties() -> None:
    vectors, empty = check_vectors(["a", "b"], [{"x": 0.0, "y": np.float32(2)}, {}], "document")
    assert vectors == [{"y": 2.0}, {}] and empty == 1
    with pytest.raises(ConfigError, match="1 document sparse vectors for 2 ids"):
        check_vectors(["a", "b"], [{}], "document")


def test_vocabulary_mismatch() -> None:
    df = {"solar": 3, "panel": 1}
    assert vocabulary_mismatch([{"solar": 1.0}, {"1996": 1.0}], df) is None  # half: tolerated
    msg = vocabulary_mismatch([{"1996": 1.0}, {"2054": 1.0}, {"solar": 1.0}], df)
    assert msg is not None and "2 of 3 queries share no term with any document" in msg
