"""The ``stability`` block and ``judgments.canary`` (issue #33): gates parsed with their direction
and depth; every mistake one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.cutoffs import run_depth

BASE = """\
suite: t
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
retrievers:
  bm25: {type: bm25}
"""


def _load(tmp_path: Path, extra: str):
    p = tmp_path / "retrieval_s.yaml"
    p.write_text(BASE + extra)
    return load_suite(p)


def test_gates_with_their_direction_and_depth(tmp_path: Path) -> None:
    suite = _load(
        tmp_path,
        "evaluation: {depth: 50}\nstability:\n  bm25: {rbo@10: 0.9, top1_changed: 0.05, RBO(0.95)@100: 0.8, rank_change@10: 1.5}\n",
    )
    gates = {g.measure: g for g in suite.stability}
    assert set(gates) == {"rbo@10", "top1_changed", "rbo(0.95)@100", "rank_change@10"}
    assert (
        gates["rbo@10"].op == ">=" and gates["top1_changed"].op == "<=" and gates["rank_change@10"].op == "<="
    )
    assert gates["top1_changed"].k == 1 and gates["rbo@10"].origin.endswith(":11")
    assert run_depth(suite, 0) == 100  # deeper than evaluation.depth: the gate needs its top 100
    assert not suite.floors  # a suite of stability gates alone is a suite


@pytest.mark.parametrize(
    "extra,fragments",
    [
        ("stability:\n  nope: {rbo@10: 0.9}\n", ["stability.nope", "unknown retriever"]),
        ("stability:\n  bm25: {}\n", ["stability.bm25", "no stability measure"]),
        ("stability:\n  bm25: {ndcg@10: 0.9}\n", ["stability.bm25.ndcg@10", "scored against judgments"]),
        ("stability:\n  bm25: {rbo@10: 1.5}\n", ["stability.bm25.rbo@10", "lies in [0, 1]"]),
        ("stability:\n  bm25: {rank_change@10: -1}\n", ["rank_change@10", "lies in >= 0"]),
        ("stability:\n  bm25: {rbo@10: yes}\n", ["stability.bm25.rbo@10", "finite number"]),
        ("stability:\n  bm25: {rbo@10: .nan}\n", ["stability.bm25.rbo@10", "finite number"]),
        ("stability:\n  bm25: {rbo@10: 0.9, rbo_ext@10: 0.9}\n", ["rbo_ext@10", "same measure"]),
        ("stability:\n  bm25: {rbo@1000: 0.9}\n", ["rbo@1000", "1..100"]),
        ("stability:\n  bm25: {rbo: 0.9}\n", ["stability.bm25.rbo"]),
    ],
)
def test_a_mistake_is_one_line(tmp_path: Path, extra: str, fragments: list) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, extra)
    message = str(info.value)
    assert "\n" not in message and "retrieval_s.yaml" in message
    for f in fragments:
        assert f in message, message


def test_an_empty_canary_file_name_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "retrieval_s.yaml"
    p.write_text(
        BASE.replace("judgments:\n", "judgments:\n  canary: ' '\n") + "stability:\n  bm25: {rbo@10: 0.9}\n"
    )
    with pytest.raises(ConfigError, match="name the canary queries file"):
        load_suite(p)
