"""unjudged.py: the annotation queue of unjudged top-10 documents."""

from __future__ import annotations

import json
from types import SimpleNamespace

from pytest_retrieval.reports.unjudged import write_unjudged


def test_every_unjudged_pair_once_with_the_rank_per_retriever(state, tmp_path):
    path = tmp_path / "queue.jsonl"
    errored = SimpleNamespace(suite=state.suite, result=None)
    n = write_unjudged(path, [state, errored])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert n == len(rows) > 0
    qrels = state.result.judgments.qrels
    pairs = [(r["query_id"], r["doc_id"]) for r in rows]
    assert len(set(pairs)) == len(pairs)
    assert not any(d in qrels.get(q, {}) for q, d in pairs)
    for r in rows:
        assert set(r) == {"suite", "query_id", "query", "doc_id", "retrievers"} and r["suite"] == "tiny"
        assert r["query"] == state.result.judgments.queries[r["query_id"]]
        for name, rank in r["retrievers"].items():
            assert (r["query_id"], r["doc_id"], rank) in state.result.unjudged(name)


def test_nothing_run_writes_an_empty_queue(state, tmp_path):
    path = tmp_path / "queue.jsonl"
    assert write_unjudged(path, [SimpleNamespace(suite=state.suite, result=None)]) == 0
    assert path.read_text() == ""
