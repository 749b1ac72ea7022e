"""Ranking diffs and the baseline's top-k rankings (one query per line)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.baseline import Baseline, read_baseline, write_baseline
from pytest_retrieval.gates.floors import Floor
from pytest_retrieval.gates.rankings import ranking_depth, ranking_diff


def test_ranking_diff_says_what_left_entered_and_moved() -> None:
    before = ["r1", "x1", "r2", "x2", "r3"]
    now = ["x2", "r2", "new", "x1", "r1"]
    grades = {"r1": 2, "r2": 1, "r3": 1, "x1": 0, "new": 0}
    d = ranking_diff(before, now, grades, k=5)
    assert d.left == [("r3", 1, 5)] and d.left_other == 0
    assert d.entered == [("new", 0, 3)]
    assert ("r1", 2, 1, 5) in d.moved and ("r2", 1, 3, 2) in d.moved and ("x1", 0, 2, 4) in d.moved
    assert d.moved_other == 1  # x2 is unjudged
    lines = d.lines(titles={"r3": "Third relevant"})
    assert lines[0].startswith('relevant that left the top 5: r3 "Third relevant" (grade 1, was #5)')
    assert lines[1] == "entered: new (grade 0, now #3)"
    assert lines[2].startswith("moved: r1 (grade 2) #1 -> #5")
    assert ranking_diff(before, before, grades, k=5).lines() == ["top 5 unchanged"]
    assert ranking_diff(["a", "b"], ["c"], {}, k=10).lines() == [
        "relevant that left the top 10: none, and 2 non-relevant or unjudged left",
        "entered: c (unjudged, now #1)",
    ]


@pytest.mark.parametrize(
    "floors, regression, k",
    [
        (["ndcg@10"], [], 10),
        (["ndcg@5", "p95_ms"], [], 10),
        (["recall@15"], [], 15),
        (["recall@100"], [], 20),
        (["lift@ndcg@10"], [("r", "map", 0.01)], 20),
    ],
)
def test_ranking_depth_is_the_deepest_gated_cutoff_within_10_and_20(floors, regression, k) -> None:
    suite = SimpleNamespace(floors=[Floor("r", m, ">=", 0.1) for m in floors], regression=regression)
    assert ranking_depth(suite) == k


def test_baseline_keeps_one_query_per_line_and_reads_back(tmp_path) -> None:
    b = Baseline(
        suite="s",
        created="2025-01-01T00:00:00Z",
        plugin_version="0",
        fingerprint={},
        retrievers={
            "bm25": {
                "per_query": {"ndcg@10": {"q1": 1.0, "q2": 0.5}},
                "aggregate": {"ndcg@10": 0.75},
                "queries": 2,
                "top": {"q1": ["d1", "d 2", 'd"3'], "q2": []},
            }
        },
    )
    path = write_baseline(tmp_path / "b.json", b)
    text = path.read_text()
    assert '    "q1": ["d1", "d 2", "d\\"3"],\n' in text and '    "q2": []\n' in text
    back = read_baseline(path)
    assert back.top("bm25") == {"q1": ["d1", "d 2", 'd"3'], "q2": []} and back.top("other") == {}
    doc = json.loads(text)
    doc["retrievers"]["bm25"]["top"]["q1"] = [1, 2]
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"retrievers.bm25.top"):
        read_baseline(path)
