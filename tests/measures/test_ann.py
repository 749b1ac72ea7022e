"""ann_recall@k and the exact top k (pure), and where an ann_recall floor may stand."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.measures.ann import ann_recall, exact_top_k
from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.types import Ranking

DOCS = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [-1.0, 0.0], [2.0, 0.1]], dtype=np.float32)
IDS = ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [("cosine", ["a", "e", "c"]), ("dot_product", ["e", "a", "c"]), ("l2_norm", ["a", "c", "e"])],
)
def test_exact_top_k_follows_the_similarity(similarity: str, expected: list) -> None:
    run = exact_top_k(["q"], np.array([[1.0, 0.0]], dtype=np.float32), IDS, DOCS, similarity, 3)
    assert run["q"].doc_ids == expected


def test_ann_recall_is_the_share_of_the_exact_top_k_found() -> None:
    exact = {"q1": Ranking(["a", "b", "c", "d"], [4, 3, 2, 1]), "q2": Ranking(["x"], [1.0])}
    approx = {"q1": Ranking(["a", "c", "z", "b"], [4, 3, 2, 1])}
    assert ann_recall(approx, exact, 3, ["q1", "q2"]) == {"q1": 2 / 3, "q2": 0.0}


def test_evaluate_leaves_reference_metrics_to_the_runner() -> None:
    assert str(parse_metric("ANN_recall@10")) == "ann_recall@10"
    ev = evaluate({"q": {"a": 1}}, {"q": Ranking(["a"], [1.0])}, ["ndcg@10", "ann_recall@10"])
    assert list(ev.aggregate) == ["ndcg@10"]


@pytest.mark.parametrize(
    ("backend", "retriever", "message"),
    [
        ("elasticsearch", "{type: bm25}", "measures a knn retriever's HNSW search; 'r' is a bm25"),
        ("embedded", "{type: knn}", "needs an elasticsearch or opensearch backend"),
    ],
)
def test_an_ann_recall_floor_needs_a_knn_retriever_on_an_engine(
    tmp_path: Path, backend: str, retriever: str, message: str
) -> None:
    from pytest_retrieval.config.load import load_suite

    path = tmp_path / "retrieval_x.yaml"
    path.write_text(
        "judgments:\n  inline: [{id: q, text: t, relevant: {d: 1}}]\n"
        "embedder: {type: callable, function: os:getcwd}\n"
        f"backend: {{type: {backend}}}\nretrievers:\n  r: {retriever}\nfloors:\n  r: {{ann_recall@10: 0.9}}\n"
    )
    with pytest.raises(ConfigError, match=message):
        load_suite(path)


@pytest.mark.parametrize(
    ("exact", "named"),
    [
        ({"q1": Ranking(["a"], [1.0]), "q2": Ranking([], [])}, "query 'q2'"),
        ({"q1": Ranking(["a"], [1.0])}, "query 'q2'"),  # no exact search answered for q2
        ({}, "2 queries ('q1', 'q2')"),
    ],
)
def test_an_empty_exact_top_k_is_an_error_naming_the_queries(exact: dict, named: str) -> None:
    from pytest_retrieval.errors import InfrastructureError

    approx = {"q1": Ranking(["a"], [1.0]), "q2": Ranking(["b"], [1.0])}
    with pytest.raises(
        InfrastructureError, match=re.escape(f"ann_recall@10: the exact top 10 is empty for {named}")
    ):
        ann_recall(approx, exact, 10, ["q1", "q2"])


def test_an_empty_exact_top_k_names_a_bounded_list_of_queries() -> None:
    from pytest_retrieval.errors import InfrastructureError

    qids = [f"q{i}" for i in range(1000)] + ["x" * 5000]
    with pytest.raises(InfrastructureError) as info:
        ann_recall({}, {}, 10, qids)
    assert "1001 queries ('q0', 'q1', 'q2', 'q3', 'q4' and 996 more)" in str(info.value)
    assert len(str(info.value)) < 300
