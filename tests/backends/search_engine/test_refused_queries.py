"""A query the engine refuses as written is the retriever's problem (``QueryRefused``), an
engine that cannot answer is everyone's (issue #36); an unknown analyzer names the local
engines' limit."""

from __future__ import annotations

import pytest

from pytest_retrieval.backends.search_engine.http import ANALYSIS_HINT, with_hint
from pytest_retrieval.backends.search_engine.search import read_hits
from pytest_retrieval.errors import InfrastructureError, QueryRefused


def _fail(what, detail):
    return InfrastructureError(f"{what}: {detail}")


def test_a_400_item_of_an_msearch_is_the_retrievers_problem() -> None:
    item = {
        "status": 400,
        "error": {"type": "search_phase_execution_exception", "reason": "all shards failed"},
    }
    with pytest.raises(QueryRefused):
        read_hits(item, "q1", 10, _fail)


def test_failed_shards_of_a_query_error_are_refused_and_a_lost_node_is_not() -> None:
    def shards(kind):
        return {
            "_shards": {"total": 2, "failed": 1, "failures": [{"reason": {"type": kind, "reason": "x"}}]},
            "hits": {"hits": []},
        }

    with pytest.raises(QueryRefused):
        read_hits(shards("query_shard_exception"), "q1", 10, _fail)
    with pytest.raises(InfrastructureError) as info:
        read_hits(shards("node_not_connected_exception"), "q1", 10, _fail)
    assert not isinstance(info.value, QueryRefused)
    with pytest.raises(InfrastructureError) as info:
        read_hits({"status": 503, "error": {"type": "unavailable_shards_exception"}}, "q1", 10, _fail)
    assert not isinstance(info.value, QueryRefused)


@pytest.mark.parametrize(
    "reason",
    [
        "failed to find analyzer [english]",
        "[match] analyzer [english] not found",
        "Unknown analyzer [x]",
        "Failed to parse mapping: analyzer [english] has not been configured in mappings",
        "failed to find tokenizer under [whitespace]",
    ],
)
def test_an_unknown_analyzer_names_the_local_engines_limit(reason) -> None:
    assert with_hint(reason).endswith(ANALYSIS_HINT) and "analysis-common" in ANALYSIS_HINT
    assert with_hint("some other reason") == "some other reason"
