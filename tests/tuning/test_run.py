"""The sweep's I/O edge (``tuning/run.py``): which fusion is tuned, how the judged queries are
split (at random, or another BEIR split), candidates fetched once through the suite's backend,
and the OpenSearch check (the variants it picks, how a server answer is compared, its refusals)
against a stand-in server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import pytest

from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.plan import load_judgments
from pytest_retrieval.fusion.replay import replay
from pytest_retrieval.tuning.grid import SweepGrid
from pytest_retrieval.tuning.run import (
    CheckResult,
    _check_on_opensearch,
    _check_variants,
    fusion_inputs,
    run_sweep,
    splits,
)
from pytest_retrieval.tuning.selection import opensearch_pipeline, restrict_qrels, split_queries
from pytest_retrieval.tuning.sweep import sweep
from pytest_retrieval.types import Query, Ranking

from .helpers import toy

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_suite" / "retrieval_scifact_mini.yaml"


@pytest.fixture(scope="module")
def example():
    return load_suite(EXAMPLE)


# ------------------------------------------------------------------ the fusion tuned


def test_fusion_inputs(example) -> None:
    assert fusion_inputs(example, None) == ("rrf", ["bm25", "dense"])  # the first fusion
    assert fusion_inputs(example, "weighted") == ("weighted", ["bm25", "dense"])
    with pytest.raises(
        ConfigError, match=r"'bm25' is a bm25, not a fusion \(fusion retrievers: rrf, weighted\)"
    ):
        fusion_inputs(example, "bm25")
    with pytest.raises(ConfigError, match="no retriever 'nope'"):
        fusion_inputs(example, "nope")


# ------------------------------------------------------------------ splits


def test_random_split_of_the_suite_queries(example) -> None:
    js = load_judgments(example)
    tune, ev, how = splits(example, js, tune_split=None, tune_fraction=0.3, seed=1)
    assert how == "random split of the suite's queries: 0.3 tune, seed 1"
    assert not set(tune) & set(ev) and set(tune) | set(ev) == set(js.qrels)
    t_ids, e_ids = split_queries(list(js.qrels), fraction=0.3, seed=1)
    assert tune == restrict_qrels(js.qrels, t_ids) and ev == restrict_qrels(js.qrels, e_ids)
    assert splits(example, js, tune_split=None, tune_fraction=0.3, seed=1)[0] == tune  # seeded
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ConfigError, match="--tune-fraction must be in"):
            splits(example, js, tune_split=None, tune_fraction=bad, seed=0)
    with pytest.raises(ConfigError, match="--tune-split needs a BEIR collection"):
        splits(example, js, tune_split="train", tune_fraction=0.5, seed=0)


def _beir(folder: Path) -> Path:
    """A six-query BEIR folder: qrels for ``test`` (q1-q3) and ``train`` (q4-q6, plus a query
    the collection does not have)."""
    beir = folder / "beir"
    (beir / "qrels").mkdir(parents=True)
    with (beir / "corpus.jsonl").open("w") as fh:
        for d in range(12):
            fh.write(
                json.dumps({"_id": f"d{d}", "title": f"title {d}", "text": f"word{d % 4} text {d}"}) + "\n"
            )
    with (beir / "queries.jsonl").open("w") as fh:
        for q in range(1, 7):
            fh.write(json.dumps({"_id": f"q{q}", "text": f"word{q % 4}"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t2\n")
    (beir / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq4\td4\t1\nq5\td5\t1\nq6\td6\t1\nq99\td7\t1\n"
    )
    suite = folder / "retrieval_beir.yaml"
    suite.write_text(
        "judgments:\n  beir: beir\n  split: test\n"
        "retrievers:\n"
        "  title: {type: bm25, fields: [title]}\n"
        "  text: {type: bm25, fields: [text]}\n"
        "  hybrid: {type: rrf, of: [title, text]}\n"
        "floors:\n  hybrid: {ndcg@10: 0.0}\n"
    )
    return suite


def test_tune_on_another_beir_split(tmp_path: Path) -> None:
    suite = load_suite(_beir(tmp_path))
    js = load_judgments(suite)
    tune, ev, how = splits(suite, js, tune_split="train", tune_fraction=0.5, seed=0)
    assert how == "tune on BEIR 'train', evaluate on 'test'"
    assert set(tune) == {"q4", "q5", "q6"}  # q99 has no query text in the collection
    assert ev == {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}}
    with pytest.raises(ConfigError, match="is the split the suite evaluates on"):
        splits(suite, js, tune_split="test", tune_fraction=0.5, seed=0)


# ------------------------------------------------------------------ fetch once, sweep


def test_run_sweep_fetches_each_sub_retriever_once(example, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: List[Any] = []
    real = EmbeddedBackend.search_batch

    def counted(self, spec, queries, k):
        calls.append((type(spec).__name__, len(queries), k))
        return real(self, spec, queries, k)

    monkeypatch.setattr(EmbeddedBackend, "search_batch", counted)
    said: List[str] = []
    grid = SweepGrid(weight_step=0.5)
    result, how, check = run_sweep(example, retriever="weighted", grid=grid, seed=3, say=said.append)
    assert check is None and how.startswith("random split")
    # one batch per sub-retriever, all judged queries, as deep as the window (the depth, 100)
    assert calls == [("BM25Spec", 100, 100), ("KnnSpec", 100, 100)]
    assert f"sweeping {grid.size(2)} variants offline" in said
    assert result.names == ("bm25", "dense") and result.grid_size == grid.size(2)
    # RRF as the suite's engine computes it: embedded ranks like Elasticsearch
    assert {v.config.semantics for v in result.variants if v.config.method == "rrf"} == {"elasticsearch"}
    assert result.tune_queries + result.eval_queries == 100
    assert result.metrics[0] == "ndcg@10" and set(result.metrics) >= set(example.metrics)


def test_run_sweep_takes_the_tuned_retrievers_window(example, monkeypatch: pytest.MonkeyPatch) -> None:
    depths: List[int] = []
    real = EmbeddedBackend.search_batch

    def recorded(self, spec, queries, k):
        depths.append(k)
        return real(self, spec, queries, k)

    monkeypatch.setattr(EmbeddedBackend, "search_batch", recorded)
    result, _, _ = run_sweep(example, retriever="rrf", grid=SweepGrid(weight_step=0.5, rrf=True))
    assert depths == [200, 200]  # rrf's window: 200
    assert {d.config.window for d in result.defaults} == {200}


def test_check_needs_opensearch_before_any_query(example, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_query(*args, **kwargs):
        raise AssertionError("queried before refusing")

    monkeypatch.setattr(EmbeddedBackend, "search_batch", no_query)
    with pytest.raises(
        ConfigError, match="--check replays variants on OpenSearch; this suite's backend is embedded"
    ):
        run_sweep(example, check=True)
    with pytest.raises(ValueError, match="unknown metric"):
        run_sweep(example, objective="ndgc@10")


# ------------------------------------------------------------------ the OpenSearch check


@pytest.fixture(scope="module")
def toy_sweep():
    runs, qrels = toy(seed=5)
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=0)
    result = sweep(
        runs,
        restrict_qrels(qrels, tune_ids),
        restrict_qrels(qrels, eval_ids),
        grid=SweepGrid(weight_step=0.5, rrf_semantics="opensearch"),
    )
    return {"bm25": runs["lex"], "dense": runs["vec"]}, result


def test_check_variants_best_defaults_then_one_per_family(toy_sweep) -> None:
    _, result = toy_sweep
    picked = _check_variants(result, 20)
    head = [result.best.config] + [d.config for d in result.defaults]
    assert picked[: len(head)] == head  # what a team would paste first
    rest = picked[len(head) :]
    assert not set(rest) & set(head) and len(rest) == len(set(rest))
    # then the best of each (method, normalization, combination) not already picked
    best_of = {}
    for v in result.ranked():
        best_of.setdefault((v.config.method, v.config.normalization, v.config.combination), v.config)
    assert rest == [c for c in best_of.values() if c not in head]
    assert {(c.method, c.normalization, c.combination) for c in picked} == set(best_of)
    assert len(best_of) == 1 + 2 * 3  # rrf + every (normalization, combination)
    assert _check_variants(result, 3) == picked[:3]
    assert _check_variants(result, 0) == picked[:1]


class StandInServer:
    """Answers ``search_hybrid`` with the given runs, one per call, recording the requests."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests: List[Any] = []

    def search_hybrid(self, bm25, knn, queries, k, pipeline, pagination_depth):
        self.requests.append((type(bm25).__name__, type(knn).__name__, k, pipeline, pagination_depth))
        return self.answers.pop(0)


def test_check_compares_the_server_with_the_offline_replay(example, toy_sweep) -> None:
    runs, result = toy_sweep
    picked = _check_variants(result, 2)
    # the server answers the top k of each query
    offline = [
        {q: r.top(10) for q, r in replay([runs["bm25"], runs["dense"]], cfg).items()} for cfg in picked
    ]
    qids = sorted(set(runs["bm25"]) | set(runs["dense"]), key=lambda q: int(q[1:]))
    queries = [Query(q, "text") for q in qids]
    wrong = dict(offline[1])
    q0 = next(q for q in qids if len(wrong.get(q, ())) >= 2)
    wrong[q0] = Ranking(list(reversed(wrong[q0].doc_ids)), list(wrong[q0].scores))
    server = StandInServer([offline[0], wrong])
    said: List[str] = []
    out = _check_on_opensearch(example, server, queries, runs, result, ["bm25", "dense"], 2, 10, said.append)
    assert isinstance(out, CheckResult) and (out.k, out.queries) == (10, len(queries))
    assert [r[:3] for r in server.requests] == [("BM25Spec", "KnnSpec", 10)] * 2
    assert [r[3] for r in server.requests] == [opensearch_pipeline(c) for c in picked]
    assert [r[4] for r in server.requests] == [c.window for c in picked]
    assert out.variants[0]["mismatches"] == 0 and out.variants[0]["max_score_diff"] == 0.0
    assert out.variants[1]["mismatches"] == 1 and out.variants[1]["first"].startswith(f"query {q0}: ")
    assert not out.ok
    text = out.summary()
    assert "2 variants" in text and "DIFFERENT on 1 queries" in text and "same" in text
    assert said == [f"checking on OpenSearch: {v['label']}" for v in out.variants]


def test_check_needs_a_bm25_then_a_knn_retriever(example, toy_sweep) -> None:
    runs, result = toy_sweep
    with pytest.raises(ConfigError, match="must list a bm25 retriever, then a knn retriever"):
        _check_on_opensearch(example, StandInServer([]), [], runs, result, ["dense", "bm25"], 1, 10, print)


def test_check_result_summary_when_all_agree() -> None:
    res = CheckResult(
        k=5,
        queries=3,
        variants=[{"label": "rrf k=60 window=100", "max_score_diff": 0.0, "mismatches": 0, "first": ""}],
    )
    assert res.ok
    assert res.summary().splitlines() == [
        "check on the OpenSearch server: 1 variants, 3 queries, top 5 (tie groups compared as sets)",
        f"  {'same':>28}  max |score diff| 0  rrf k=60 window=100",
    ]
