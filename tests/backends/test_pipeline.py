"""What the whole-pipeline backends accept as a ranking: (doc_id, score) pairs, best first,
cut at k; ids as text (integers as their decimal), finite numeric scores (NumPy's included);
anything else refused with the query named, never guessed."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_retrieval.backends.base import KnnSpec, ServiceSpec
from pytest_retrieval.backends.pipeline import PipelineBackend, ranking_of
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import Query, Ranking


def test_pairs_become_a_ranking_cut_at_k() -> None:
    pairs = [("a", 3), (7, np.float32(2.5)), (np.int64(8), 1.0), ("z", 0.0)]
    assert ranking_of(pairs, 3, "q", ConfigError) == Ranking(["a", "7", "8"], [3.0, 2.5, 1.0])
    assert ranking_of((), 10, "q", ConfigError) == Ranking()


@pytest.mark.parametrize(
    "pairs, fragment",
    [
        ({"a": 1.0}, "expected a list of (doc_id, score) pairs, got dict"),
        ("a", "got str"),
        (None, "got NoneType"),
        ([("a",)], "hit 0 is tuple ('a',), expected a (doc_id, score) pair"),
        ([("", 1.0)], "hit 0 has doc id str ''"),
        ([(None, 1.0)], "hit 0 has doc id NoneType"),
        ([("a", float("inf"))], "has score float inf"),
        ([("a", "1.0")], "has score str '1.0'"),
        ([("a", True)], "has score bool True"),
        ([("a", 2.0), ("a", 1.0)], "document 'a' is listed twice"),
    ],
)
def test_anything_else_is_refused_naming_the_query(pairs, fragment) -> None:
    with pytest.raises(ConfigError) as err:
        ranking_of(pairs, 10, "query 'q1'", ConfigError)
    assert str(err.value).startswith("query 'q1': ") and fragment in str(err.value)


class Echo(PipelineBackend):
    name = "echo"

    def ask(self, spec, query, k):
        return Ranking([query.qid], [1.0]), 2.5


def test_the_quality_pass_keeps_the_queries_and_the_latency_pass_is_one_ask() -> None:
    queries = [Query(f"q{i}", "t") for i in range(20)]
    run = Echo(max_concurrency=4).search_batch(ServiceSpec(), queries, 10)
    assert list(run) == [q.qid for q in queries] and all(run[q].doc_ids == [q] for q in run)
    one = Echo().search_one(ServiceSpec(), queries[0], 10)
    assert one.ranking.doc_ids == ["q0"] and one.server_took_ms == 2.5
    with pytest.raises(
        ConfigError, match="backend 'echo' answers only 'type: service' retrievers .* got a knn retriever"
    ):
        Echo().search_batch(KnnSpec(), queries, 10)
    with pytest.raises(ConfigError, match="max_concurrency must be >= 1"):
        Echo(max_concurrency=0)
