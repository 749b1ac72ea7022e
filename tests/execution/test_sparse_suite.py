"""A sparse retriever in a whole suite run on the embedded engine: fused with BM25 (rrf,
weighted, linear), under quality and cost floors, a baseline, golden queries, the retriever
fixture, run files and the reports; and the refusals of odd vectors, one line each."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import run_suite

from ..tiny import TINY_SUITE

pytest_plugins = ["pytester"]

ENCODER = Path(__file__).resolve().parents[1] / "sparse" / "bm25_encoder.py"

SPARSE = """\
  sparse:
    type: sparse
    idf: bm25_plus1
    sparse_encoder: {type: callable, function: "bm25_encoder:documents", query_function: "bm25_encoder:queries"}
  hybrid_rrf:
    type: rrf
    of: [bm25, sparse]
  hybrid_weighted:
    type: weighted
    of: [bm25, sparse]
  hybrid_linear:
    type: linear
    of: [sparse, bm25]
    weights: [0.7, 0.3]
"""

FLOORS = """\
  sparse:
    ndcg@10: 0.8
    flops: 1.0
    sparse_doc_nnz: 10
    sparse_query_nnz: 3
  hybrid_rrf:
    ndcg@10: 0.8
"""


def sparse_suite(text: str = SPARSE, floors: str = FLOORS, extra: str = "") -> str:
    return TINY_SUITE.replace("retrievers:\n", extra + "retrievers:\n" + text).replace(
        "floors:\n", "floors:\n" + floors
    )


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    (tmp_path / "bm25_encoder.py").write_text(ENCODER.read_text())
    return tmp_path


def run(folder: Path, text: str):
    path = folder / "retrieval_sparse.yaml"
    path.write_text(text)
    return run_suite(path)


def test_sparse_leaf_ranks_fuses_and_reports_its_cost(suite_dir: Path) -> None:
    result = run(suite_dir, sparse_suite())
    sparse = result.retrievers["sparse"]
    assert sparse.kind == "sparse" and sparse.metrics["ndcg@10"] > 0.8
    assert set(sparse.run["q1"].doc_ids[:2]) == {"d1", "d2"}
    for fused in ("hybrid_rrf", "hybrid_weighted", "hybrid_linear"):
        assert result.retrievers[fused].run["q2"].doc_ids[0] == "d3"
        assert result.retrievers[fused].candidate_recall["sparse"] == 1.0
    facts = sparse.sparse
    assert facts.queries == 4 and facts.documents == 5 and facts.query_nnz == pytest.approx(3.0)
    assert 0 < facts.flops < 1 and result.value("sparse", "flops") == facts.flops
    assert result.value("sparse", "sparse_doc_nnz") == pytest.approx(facts.doc_nnz)
    assert result.backend_info["sparse_encoders"]["sparse"].startswith(
        "callable-sparse:bm25_encoder:documents"
    )
    assert sparse.latency is not None and sparse.latency.samples_ms


def test_idf_none_warns_about_common_terms(suite_dir: Path) -> None:
    text = sparse_suite(SPARSE.replace("idf: bm25_plus1", "idf: none"), "")
    text = text.replace('text: "wind turbines and solar farms"', 'text: "solar solar solar wind"')
    text = text.replace('text: "loop gravity theories"', 'text: "solar loop gravity"')
    result = run(suite_dir, text)
    warnings = result.retrievers["sparse"].warnings
    assert any("terms held by more than half the documents carry" in w for w in warnings), warnings


def test_an_empty_query_vector_is_a_counted_zero_hit_query(suite_dir: Path) -> None:
    text = sparse_suite(SPARSE.replace("bm25_encoder:queries", "bm25_encoder:empty_queries"), "")
    result = run(suite_dir, text)
    sparse = result.retrievers["sparse"]
    assert sparse.run["q2"].doc_ids == [] and sparse.sparse.empty_queries == ["q2"]
    assert "1 of 4 queries have an empty vector (zero hits)" in sparse.sparse.line()
    assert any("get zero hits: 'q2'" in w for w in sparse.warnings)


@pytest.mark.parametrize(
    "replace, message",
    [
        (("bm25_encoder:queries", "bm25_encoder:negative"), "term 'solar' has a negative weight -1.0"),
        (("bm25_encoder:queries", "bm25_encoder:numbers"), "share no term with any document"),
        (("bm25_encoder:documents", "bm25_encoder:nowhere"), "bm25_encoder"),
    ],
)
def test_odd_vectors_are_one_clear_line(suite_dir: Path, replace, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        run(suite_dir, sparse_suite(SPARSE.replace(*replace), ""))
    text = str(info.value)
    assert message in text and "retrievers.sparse.sparse_encoder" in text and "\n" not in text


def test_precomputed_queries_missing_on_one_side(suite_dir: Path) -> None:
    rows = [{"_id": d, "vector": {"solar": 1.0}} for d in ("d1", "d2", "d3", "d4", "d5")]
    (suite_dir / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (suite_dir / "queries.jsonl").write_text('{"_id": "q1", "vector": {"solar": 1}}\n')
    text = sparse_suite(
        "  sparse:\n    type: sparse\n    sparse_encoder: {type: precomputed, queries: queries.jsonl, "
        "documents: docs.jsonl}\n",
        "",
    )
    with pytest.raises(ConfigError, match=r"no query sparse vector for 3 of 4 id\(s\): 'q2', '3', 'q4'"):
        run(suite_dir, text)
    (suite_dir / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:4]))
    with pytest.raises(ConfigError, match=r"no document sparse vector for 1 of 5 id\(s\): 'd5'"):
        run(suite_dir, text)


@pytest.mark.parametrize(
    "floors, message",
    [
        (
            "  text_only:\n    flops: 1\n",
            "flops measures a sparse retriever's vectors; 'text_only' is a bm25 retriever",
        ),
        ("  sparse:\n    sparse_doc_nnz: -1\n", "ceiling -1 can never be met"),
        ("  sparse:\n    flops[energy]: 1\n", "not per stratum"),
    ],
)
def test_cost_floors_refused(suite_dir: Path, floors: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(suite_dir, sparse_suite(floors=floors))


GATES = textwrap.dedent(
    """\
    def test_sparse_fixture(retrieval_retriever):
        sparse = retrieval_retriever("retrieval_sparse.yaml", "sparse")
        hits = sparse.search("river flood defences", k=3)
        assert hits.doc_ids[0] == "d3"
        free = sparse.search("winter solar panels", k=2)  # free text: encoded by the callable
        assert free.doc_ids[0] == "d1"
        fused = retrieval_retriever("retrieval_sparse.yaml", "hybrid_rrf")
        assert fused.search_many(["quantum gravity"], k=1)[0].doc_ids == ["d5"]
    """
)


def test_through_pytest_floors_baseline_expectations_fixture_reports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bm25_encoder=ENCODER.read_text(), test_sparse_fixture=GATES)
    expectations = (
        'expectations:\n  - {query: "river flood", contains: [d3], retrievers: [sparse, hybrid_rrf]}\n'
    )
    regression = "regression:\n  max_drop: {ndcg@10: 0.0}\n  retrievers: [sparse, hybrid_rrf]\n"
    pytester.makefile(".yaml", retrieval_sparse=sparse_suite(extra=expectations + regression))
    first = pytester.runpytest_subprocess("-q", "--retrieval-baseline-update", "-p", "no:cacheprovider")
    assert first.ret == 0, first.stdout.str()
    report = pytester.path / "report.json"
    runs = pytester.path / "runs"
    result = pytester.runpytest_subprocess(
        "-q", "-rA", f"--retrieval-report={report}", f"--retrieval-runs={runs}", "-p", "no:cacheprovider"
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    for item in ("sparse::flops", "sparse::sparse_doc_nnz", "sparse::baseline:ndcg@10", "sparse::expect["):
        assert f"PASSED retrieval_sparse.yaml::{item}" in out
    assert "test_sparse_fixture.py::test_sparse_fixture" in out
    assert "sparse: sparse callable-sparse:bm25_encoder:documents" in out and "per query, FLOPS" in out
    data = json.loads(report.read_text())
    suite = data["suites"][0] if "suites" in data else data
    entry = (
        next(r for r in suite["retrievers"] if r["name"] == "sparse")
        if isinstance(suite["retrievers"], list)
        else suite["retrievers"]["sparse"]
    )
    assert (
        entry["type"] == "sparse"
        and entry["sparse"]["flops"] > 0
        and entry["sparse"]["sparse_query_nnz"] == 3.0
    )
    gates = {(g["retriever"], g["metric"]): g for g in suite["gates"]}
    assert gates["sparse", "flops"]["op"] == "<=" and gates["sparse", "flops"]["passed"]
    written = [p.name for p in runs.rglob("*") if p.is_file()]
    assert any("sparse" in n for n in written), written


def test_rerank_stage_over_a_sparse_leaf(suite_dir: Path) -> None:
    rerank = (
        "  reranked:\n    type: rerank\n    of: [sparse]\n    window: 10\n"
        '    reranker: {type: callable, function: "bm25_encoder:rerank_by_length"}\n'
    )
    result = run(suite_dir, sparse_suite(SPARSE + rerank, ""))
    reranked = result.retrievers["reranked"].run["q1"].doc_ids
    assert set(reranked) == set(result.retrievers["sparse"].run["q1"].doc_ids)
    assert reranked[0] == "d2"  # "Panels solar efficiency measured": the shortest hit


def test_fusion_sweep_over_bm25_and_sparse(suite_dir: Path) -> None:
    from pytest_retrieval.cli import main

    path = suite_dir / "retrieval_sparse.yaml"
    path.write_text(sparse_suite(floors=""))
    assert main(["sweep", str(path), "--retriever", "hybrid_weighted", "--json"]) == 0


def test_onnx_encoder_in_a_suite(suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ..models.test_sparse_encoders import build_mlm, build_tokenizer

    monkeypatch.setenv("PYTEST_RETRIEVAL_CACHE_DIR", str(suite_dir / "cache"))
    folder = suite_dir / "splade"
    folder.mkdir()
    vocab = build_tokenizer(folder / "tokenizer.json")
    # an identity MLM head: each token lights up itself only (log(1 + relu(2)) for every token)
    build_mlm(folder / "model.onnx", np.eye(vocab, dtype=np.float32) * 2, np.eye(vocab, dtype=np.float32))
    text = sparse_suite(
        "  sparse:\n    type: sparse\n    idf: bm25_plus1\n    sparse_encoder: {type: onnx, model: splade}\n",
        "",
    )
    result = run(suite_dir, text)
    sparse = result.retrievers["sparse"]
    assert sparse.run["q2"].doc_ids[0] == "d3"  # river flood defences
    assert sparse.sparse.encoder.startswith("onnx-sparse:splade:")
    assert list((suite_dir / "cache").rglob("*.sparse.npz"))  # the documents' vectors were cached
