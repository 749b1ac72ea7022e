"""Golden queries that cannot pass on what they did not check: assertions beyond the hits
fetched are errors, documents that exist nowhere are config errors, the internal ids of golden
texts never take a judged query's ranking."""

from __future__ import annotations

import pytest

from pytest_retrieval import assert_in_top, assert_not_in_top
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.hits import Hit, Hits
from pytest_retrieval.gates.expectations import known_ranks
from pytest_retrieval.io.ids import as_id, internal_query_id

from ..tiny import TINY_SUITE, run_tiny

FULL = Hits("solar", "bm25", [Hit("d1", 3.0, 1), Hit("d2", 2.0, 2), Hit("d3", 1.0, 3)], depth=3)
SHORT = Hits("solar", "bm25", [Hit("d1", 3.0, 1)], depth=10)  # the engine had one match


def test_known_ranks() -> None:
    assert known_ranks(FULL) == 3  # a full page: rank 4 and below unknown
    assert known_ranks(SHORT) is None  # fewer than asked: the whole ranking
    assert known_ranks(["d1", "d2"]) == 2  # a plain list: its length


def test_not_in_top_beyond_the_hits_fetched_is_an_error() -> None:
    assert_not_in_top(FULL, "d9", 3)
    with pytest.raises(ValueError, match=r"assert_not_in_top: k 20 is beyond the 3 hits fetched.*k=20"):
        assert_not_in_top(FULL, "d9", 20)
    with pytest.raises(AssertionError, match="'d2' should not be in the top 20, is at rank 2"):
        assert_not_in_top(FULL, "d2", 20)  # found: the failure is certain
    assert_not_in_top(SHORT, "d9", 50)  # every hit came back: d9 is at no rank
    with pytest.raises(ValueError, match="beyond the 2 hits fetched"):
        assert_not_in_top(["d1", "d2"], "d9", 5)


def test_in_top_beyond_the_hits_fetched_is_an_error_unless_found() -> None:
    assert_in_top(FULL, "d3", 20)  # found at 3: certain
    with pytest.raises(ValueError, match=r"assert_in_top: k 20 is beyond the 3 hits fetched"):
        assert_in_top(FULL, "d9", 20)
    with pytest.raises(AssertionError, match="'d9' should be in the top 50"):
        assert_in_top(SHORT, "d9", 50)


@pytest.mark.parametrize("k", [0, -1, True, 2.0, "3"])
def test_k_must_be_a_positive_integer(k) -> None:
    for check in (assert_in_top, assert_not_in_top):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            check(FULL, "d1", k)


def test_internal_ids_are_never_judged_ids() -> None:
    qid = internal_query_id("expect", 0)
    assert qid != "expect:0" and as_id(qid) != qid  # every id read is stripped: none is this


def test_a_judged_query_named_like_an_internal_id_keeps_its_ranking(tmp_path) -> None:
    text = TINY_SUITE.replace("{id: q2,", "{id: 'expect:0',") + (
        "expectations:\n  - {query: 'quantum gravity', first: d5}\n"
    )
    plain = run_tiny(tmp_path, TINY_SUITE.replace("{id: q2,", "{id: 'expect:0',"))
    got = run_tiny(tmp_path, text)
    for name, rr in got.retrievers.items():
        assert rr.run["expect:0"].doc_ids == plain.retrievers[name].run["expect:0"].doc_ids
        assert rr.metrics == plain.retrievers[name].metrics
    (e,) = got.suite.expectations
    assert got.expectation_hits(e, "bm25").doc_ids[0] == "d5"


@pytest.mark.parametrize(
    "entry, key",
    [
        ("{query: solar, excludes: [d9]}", "expectations[0].excludes[0]"),
        ("{query: solar, contains: [d1, dd2]}", "expectations[0].contains[1]"),
        ("{query: solar, above: [d1, d99]}", "expectations[0].above[1]"),
        ("{query_id: q1, first: D1}", "expectations[0].first"),
    ],
)
def test_a_document_that_exists_nowhere_is_a_config_error(tmp_path, entry: str, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        run_tiny(tmp_path, TINY_SUITE + f"expectations:\n  - {entry}\n")
    message = str(err.value)
    assert "retrieval_tiny.yaml:" in message and key in message
    assert "is not in the corpus" in message and "exists nowhere" in message
