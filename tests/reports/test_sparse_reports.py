"""A sparse retriever's efficiency facts (non-zero terms per document and per query, expected
FLOPS) and the precision an engine scored at (``backend.sparse``) reach every report: the
Markdown and HTML notes and OpenMetrics (``retrieval_sparse_cost``), as the terminal summary
and the JSON report have them."""

from __future__ import annotations

from typing import Any, Dict

from pytest_retrieval.reports.formats import sparse_fact_line, sparse_precision_lines
from pytest_retrieval.reports.html import render_html
from pytest_retrieval.reports.markdown import render_markdown
from pytest_retrieval.reports.openmetrics import render_openmetrics

PRECISION = "Lucene feature precision (9 bits): document weights truncated to 9 significant bits"
FACTS = {
    "encoder": "precomputed-sparse:ea77",
    "idf": "bm25_plus1",
    "documents": 5183,
    "queries": 300,
    "sparse_doc_nnz": 122.3126,
    "sparse_query_nnz": 12.3833,
    "flops": 2.88151,
    "empty_documents": 0,
    "empty_queries": 2,
    "common_term_share": None,
}


def doc(facts: Dict[str, Any] = FACTS) -> Dict[str, Any]:
    return {
        "suites": [
            {
                "suite": "scifact-sparse",
                "file": "retrieval_sparse.yaml",
                "backend": {
                    "backend": "elasticsearch",
                    "engine": "elasticsearch",
                    "version": "9.5.0",
                    "sparse": {
                        "sparse_embedding": {
                            "type": "sparse_vector",
                            "score_precision": PRECISION,
                            "precision_bits": 9,
                        }
                    },
                },
                "metrics": ["ndcg@10"],
                "retrievers": [
                    {"name": "bm25", "metrics": {"ndcg@10": 0.65}, "sparse": None},
                    {"name": "splade", "metrics": {"ndcg@10": 0.66}, "sparse": facts},
                ],
                "gates": [],
                "regressions": [],
            }
        ],
        "session": {},
    }


def test_the_fact_line_and_the_precision_line() -> None:
    line = sparse_fact_line(FACTS)
    assert line.startswith("122.3 non-zero terms per document, 12.4 per query, FLOPS 2.882 (")
    assert "idf: bm25_plus1" in line and "2 of 300 queries have an empty vector (zero hits)" in line
    assert "? non-zero terms per document" in sparse_fact_line({**FACTS, "sparse_doc_nnz": None})
    (precision,) = sparse_precision_lines(doc()["suites"][0]["backend"])
    assert precision == f"sparse scores of field sparse_embedding (sparse_vector): {PRECISION}"
    assert sparse_precision_lines({"backend": "embedded"}) == []


def test_markdown_and_html_show_the_cost_and_the_precision() -> None:
    for text in (render_markdown(doc()), render_html(doc())):
        assert "122.3 non-zero terms per document, 12.4 per query, FLOPS 2.882" in text
        assert "Lucene feature precision (9 bits)" in text and "sparse_embedding" in text


def test_openmetrics_has_the_cost_facts() -> None:
    text = render_openmetrics(doc({**FACTS, "sparse_doc_nnz": None}))
    assert "# TYPE retrieval_sparse_cost gauge" in text
    assert 'retriever="splade",fact="flops"} 2.88151' in text
    assert 'retriever="splade",fact="sparse_query_nnz"} 12.3833' in text
    assert 'retriever="splade",fact="sparse_doc_nnz"} NaN' in text  # an existing index without documents
    assert 'retriever="bm25",fact=' not in text
