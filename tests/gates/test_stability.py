"""gates/stability.py, pure: which queries are compared, the verdict's direction, the failure
message (the most changed queries, what came and went, with titles), undefined values."""

from __future__ import annotations

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.stability import (
    StabilityGate,
    compare_rankings,
    entered_unjudged,
    judge_stability,
    parse_stability_measure,
)


def _compared(depth: int = 10):
    stored = {"q1": ["a", "b", "c"], "c1": ["x", "y"], "c2": ["m"], "gone": ["z"], "t": ["k"]}
    current = {"q1": ["a", "b", "c"], "c1": ["y", "new"], "c2": ["m"], "t": ["k"], "fresh": ["a"]}
    return compare_rankings(
        stored,
        current,
        canary={"c1", "c2", "t"},
        old_texts={"t": "h1", "c1": "h2"},
        new_texts={"t": "h9", "c1": "h2"},
        depth=depth,
        system=["corpus: 10 -> 11 documents"],
    )


def test_which_queries_are_compared() -> None:
    c = _compared()
    assert set(c.before) == {"q1", "c1", "c2"} and c.canary == {"c1", "c2"} and c.judged == ["q1"]
    assert c.left_out == {"gone": "no longer in the set", "t": "text changed"} and c.new == 1
    assert entered_unjudged(c, {"c1": {}}) == {"c1": [("new", 2)]}


def test_a_failed_floor_names_what_came_and_went() -> None:
    gate = StabilityGate("bm25", "rbo@10", ">=", 0.95, 10, "s.yaml:9")
    out = judge_stability(
        "s", gate, _compared(), texts={"c1": "canary text"}, titles={"new": "A New Doc"}, judged_docs={}
    )
    assert not out.passed and out.canary == 2 and out.judged == 1 and out.left_out == 2 and out.new == 1
    msg = out.message
    assert msg.startswith("s :: bm25 :: stability:rbo@10 = ") and "below the floor >= 0.9500" in msg
    assert "set at s.yaml:9" in msg and "system changes, compared: corpus: 10 -> 11 documents" in msg
    assert "c1 (canary)  canary text" in msg and 'entered: new "A New Doc" (#2, unjudged)' in msg
    assert "left the top 10: x (was #1)" in msg


def test_a_ceiling_passes_at_or_below() -> None:
    gate = StabilityGate("bm25", "top1_changed", "<=", 1 / 3, 1)
    out = judge_stability("s", gate, _compared(), texts={}, titles={}, judged_docs={})
    assert out.passed and out.value == pytest.approx(1 / 3) and "ok" in out.message


def test_stored_too_shallow_or_nothing_compared_is_an_error() -> None:
    gate = StabilityGate("bm25", "rbo@20", ">=", 0.9, 20)
    with pytest.raises(ConfigError, match="stores each ranking's top 10, rbo@20 needs the top 20"):
        judge_stability("s", gate, _compared(depth=10), texts={}, titles={}, judged_docs={})
    empty = compare_rankings({}, {"q": ["a"]}, canary=set(), old_texts={}, new_texts={}, depth=10)
    with pytest.raises(ConfigError, match="no query of this run has a ranking in the baseline"):
        judge_stability(
            "s", StabilityGate("bm25", "rbo@10", ">=", 0.9, 10), empty, texts={}, titles={}, judged_docs={}
        )


def test_kendall_tau_undefined_everywhere_is_an_error() -> None:
    c = compare_rankings({"q": ["a"]}, {"q": ["b"]}, canary=set(), old_texts={}, new_texts={}, depth=10)
    with pytest.raises(ConfigError, match="undefined for every compared query"):
        judge_stability(
            "s", StabilityGate("r", "kendall_tau@10", ">=", 0.5, 10), c, texts={}, titles={}, judged_docs={}
        )


def test_measure_names() -> None:
    assert parse_stability_measure("RBO@10") == ("rbo@10", ">=", 10)
    assert parse_stability_measure("rbo(0.95)@20") == ("rbo(0.95)@20", ">=", 20)
    assert parse_stability_measure("topk_changed@10") == ("topk_changed@10", "<=", 10)
    with pytest.raises(ValueError, match="scored against judgments"):
        parse_stability_measure("ndcg@10")
