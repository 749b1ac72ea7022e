"""Golden queries from Python, next to the YAML ones: ask a retriever of the suite directly.

``retrieval_retriever`` binds to the suite's own index (the one its YAML items search: built
once per session), so these searches rank exactly as the suite's run does."""

import pytest

from pytest_retrieval import assert_in_top, assert_not_in_top, assert_ranked_above, retrieval_queries

SUITE = "retrieval_scifact_mini.yaml"


@pytest.fixture(scope="module")
def bm25(retrieval_retriever):
    return retrieval_retriever(SUITE, "bm25")


def test_vitamin_d_review_is_found(bm25):
    hits = bm25.search("vitamin D deficiency", k=10)
    assert_in_top(hits, "30720103", k=3)  # "Vitamin D status: measurement, interpretation, ..."
    assert_not_in_top(hits, "33409100", k=10)  # a homocysteine trial


def test_hybrid_ranks_the_judged_document_first(retrieval_retriever):
    # the embedder is precomputed: a judged query's text keeps its vector
    rrf = retrieval_retriever(SUITE, "rrf")
    hits = rrf.search("AIRE is expressed in some skin tumors.", k=5)
    assert hits.doc_ids[0] == "12580014"
    assert_ranked_above(hits, "12580014", hits.doc_ids[-1])


def test_search_many_batches(bm25):
    answers = bm25.search_many(["vitamin D deficiency", "homocysteine vitamin B12"], k=5)
    assert [len(a) for a in answers] == [5, 5]


@pytest.mark.parametrize("q", retrieval_queries(SUITE, tag="contradicts")[:3], ids=str)
def test_each_contradicting_claim_finds_a_relevant_abstract(retrieval_suite, q):
    got = retrieval_suite(SUITE).query("rrf", q.id)
    assert got.metrics["recall@100"] == 1.0, got
