"""Merging new labels with existing ones under a conflict policy, and importing filled
annotation files and qrels files in order."""

from __future__ import annotations

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.merge import import_annotations, merge_qrels


def test_merge_policies() -> None:
    old = {"q1": {"a": 1, "b": 0}}
    new = {"q1": {"a": 1, "b": 2, "c": 3}, "q2": {"x": 0}}
    keep = merge_qrels(old, new)
    assert keep.qrels == {"q1": {"a": 1, "b": 0, "c": 3}, "q2": {"x": 0}}
    assert (keep.added, keep.unchanged, len(keep.conflicts)) == (2, 1, 1)
    assert merge_qrels(old, new, policy="prefer-new").qrels["q1"]["b"] == 2
    with pytest.raises(ConfigError, match=r"f.csv:9: \('q1', 'b'\) is graded 2 here but 0"):
        merge_qrels(old, new, policy="error", origins={("q1", "b"): "f.csv:9"})
    with pytest.raises(ValueError):
        merge_qrels(old, new, policy="newest")
    assert old == {"q1": {"a": 1, "b": 0}}  # inputs untouched


def test_import_accepts_qrels_files_and_several_sources(tmp_path) -> None:
    human = tmp_path / "human.csv"
    human.write_text("query_id,doc_id,grade\nq1,a,3\nq1,b,\n")
    llm = tmp_path / "llm.qrels"
    llm.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 c 0\n")
    res = import_annotations([human, llm], {}, policy="keep-existing")
    # people first, the LLM fills the gaps; the LLM's different grade for (q1, a) is reported
    assert res.qrels == {"q1": {"a": 3, "b": 2}, "q2": {"c": 0}}
    assert [(c.query_id, c.doc_id, c.existing, c.new) for c in res.merge.conflicts] == [("q1", "a", 3, 1)]
    assert "1 blank (skipped)" in res.summary() and f"{human}:3" in res.summary()
