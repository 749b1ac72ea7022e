"""The rankings the stability measures compare with (issue #33): a baseline's top lists and their
depth, an older baseline named, ranking_depth for stability metrics, a stored run's rankings."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.baseline import Baseline, RankingsMissing, read_baseline, write_baseline
from pytest_retrieval.gates.rankings import STABILITY_MAX_DEPTH, ranking_depth, stability_depth
from pytest_retrieval.history.rankings import stored_rankings


def _baseline(entry):
    return Baseline(
        suite="s",
        created="2026-01-01T00:00:00Z",
        plugin_version="0.2.0",
        fingerprint={},
        retrievers={"bm25": entry},
    )


def _entry(top, depth=None):
    entry = {
        "per_query": {"ndcg@10": {q: 0.5 for q in top}},
        "aggregate": {"ndcg@10": 0.5},
        "queries": len(top),
    }
    entry["top"] = top
    if depth is not None:
        entry["top_depth"] = depth
    return entry


def test_a_baseline_keeps_its_rankings_and_their_depth(tmp_path):
    top = {"q1": ["d1", "d2", "d3"], "q2": ["d9"]}
    path = write_baseline(tmp_path / "b.json", _baseline(_entry(top, depth=3)))
    text = path.read_text(encoding="utf-8")
    assert '"q1": ["d1", "d2", "d3"]' in text and '"top_depth": 3' in text  # one line a query: diffable
    back = read_baseline(path)
    assert back.top_depth("bm25") == 3
    assert back.stored_rankings("bm25", 2) == {"q1": ["d1", "d2"], "q2": ["d9"]}
    with pytest.raises(
        RankingsMissing,
        match="keeps the top 3 of each ranking of 'bm25', a stability measure needs the top 10",
    ):
        back.stored_rankings("bm25", 10)
    with pytest.raises(RankingsMissing, match="no retriever 'rrf'"):
        back.stored_rankings("rrf", 3)


def test_an_older_baseline_loads_and_names_what_stability_needs(tmp_path):
    path = write_baseline(tmp_path / "b.json", _baseline(_entry({"q1": ["d1"]})))
    back = read_baseline(path)  # still a baseline for the relevance gates
    assert back.top("bm25") == {"q1": ["d1"]} and back.top_depth("bm25") is None
    with pytest.raises(RankingsMissing, match="stability comparisons need a rewritten baseline"):
        back.stored_rankings("bm25", 10)


@pytest.mark.parametrize(
    "depth,top,message",
    [
        (0, {"q1": ["d1"]}, "expected a positive integer"),
        ("10", {"q1": ["d1"]}, "expected a positive integer"),
        (1, {"q1": ["d1", "d2"]}, "2 documents, more than top_depth 1"),
        (5, {"q1": ["d1", "d1"]}, "a document is twice in the ranking"),
    ],
)
def test_a_bad_top_depth_is_one_line(tmp_path, depth, top, message):
    path = write_baseline(tmp_path / "b.json", _baseline(_entry(top, depth=depth)))
    with pytest.raises(ConfigError, match=message) as err:
        read_baseline(path)
    assert "\n" not in str(err.value) and "b.json" in str(err.value)


def test_ranking_depth_reaches_the_stability_measures_depth():
    suite = SimpleNamespace(floors=[], regression=[], stability_metrics=["rbo@50", "top1_changed"])
    assert ranking_depth(suite) == 50
    assert ranking_depth(SimpleNamespace(floors=[], regression=[])) == 10
    assert stability_depth(["top1_changed", "ndcg@100"]) == 1
    with pytest.raises(ValueError, match=f"at most the top {STABILITY_MAX_DEPTH}"):
        stability_depth(["jaccard@101"])


def _record(rankings, k=20):
    return {
        "run": {"id": "abc123", "time": "2026-01-01T00:00:00Z"},
        "suites": [{"suite": "s", "k": k, "rankings": rankings}],
    }


def test_a_stored_runs_rankings():
    got = stored_rankings(_record({"bm25": {"q1": ["a", "b"]}}), "s")
    assert got.depth == 20 and got.of("bm25", 1) == {"q1": ["a"]}
    with pytest.raises(
        ValueError, match="kept the top 20 of each ranking, a stability measure needs the top 50"
    ):
        got.of("bm25", 50)
    with pytest.raises(ValueError, match="kept no rankings of 'rrf' \\(it has bm25\\)"):
        got.of("rrf", 10)
    with pytest.raises(ValueError, match="run abc123: no suite 'other'"):
        stored_rankings(_record({}), "other")
    with pytest.raises(ValueError, match="kept no rankings"):
        stored_rankings(_record({}), "s")
    with pytest.raises(ValueError, match="holds a document twice"):
        stored_rankings(_record({"bm25": {"q1": ["a", "a"]}}), "s")


def test_a_stored_run_read_as_a_reference_keeps_its_depth():
    from pytest_retrieval.gates.reference import reference_from_record

    record = _record({"bm25": {"q1": ["a", "b"]}}, k=10)
    record["suites"][0].update(
        fingerprint={"corpus": {}}, retrievers=[{"name": "bm25", "per_query": {"q1": {"ndcg@10": 1.0}}}]
    )
    ref = reference_from_record(json.loads(json.dumps(record)), "s", ref="v1")
    assert ref.stored_rankings("bm25", 10) == {"q1": ["a", "b"]}


def test_a_stored_runs_canary_rankings_and_fingerprint():
    record = _record({"bm25": {"q1": ["a", "b"]}})
    entry = record["suites"][0]
    assert stored_rankings(record, "s").canary is None  # kept none: the caller refuses canary queries
    entry.update(canary_rankings={"bm25": {"c1": ["x"]}}, fingerprint={"canary_hashes": {"c1": "h"}})
    got = stored_rankings(record, "s")
    assert got.canary == {"bm25": {"c1": ["x"]}} and got.fingerprint["canary_hashes"] == {"c1": "h"}
    entry["canary_rankings"] = ["c1"]
    with pytest.raises(ValueError, match="run abc123: suite 's': canary_rankings is not an object"):
        stored_rankings(record, "s")
    entry["canary_rankings"] = {"bm25": {"c1": ["x", "x"]}}
    with pytest.raises(ValueError, match="for query 'c1' .* holds a document twice"):
        stored_rankings(record, "s")


def test_latest_names_the_newest_stored_run_of_the_suite(tmp_path):
    from pytest_retrieval.errors import HistoryError
    from pytest_retrieval.history import open_store
    from pytest_retrieval.history.rankings import resolve_run

    store = open_store(str(tmp_path / "h.sqlite"))
    try:
        with pytest.raises(HistoryError, match="no stored run of suite 's' \\(latest\\)"):
            resolve_run(store, "latest", "s")
    finally:
        store.close()
