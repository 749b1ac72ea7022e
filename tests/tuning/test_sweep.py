"""Fusion sweeps: the grid, the vectorised replay against fusion.fuse_runs (identical
rankings and bit-identical scores on seeded random runs), tuning scores equal to
metrics.evaluate on the fused ranking, split handling and the overlap refusal, the selection rule, snippets, and a
full sweep on SciFact (BM25 from the embedded engine + kNN from the shared MiniLM vectors,
tuned on the BEIR ``train`` qrels, evaluated on ``test``)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import yaml

from pytest_retrieval.measures.fusion import FusionConfig, fuse_runs
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.tuning.sweep import (
    SweepGrid,
    VariantScore,
    _exp_to_f32,
    _selection_key,
    check_disjoint,
    default_configs,
    describe,
    opensearch_pipeline,
    replay,
    restrict_qrels,
    split_queries,
    sweep,
    yaml_block,
)
from pytest_retrieval.types import Ranking


def one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


# =========================================================================== random runs

MODES = ("uniform", "ties", "negative", "constant", "large", "tiny", "zeros", "huge", "ints")


def random_runs(rng: random.Random, n_subs: int, n_queries: int = 30, pool: int = 40, max_len: int = 25):
    runs = []
    for _ in range(n_subs):
        run = {}
        for qi in range(n_queries):
            if rng.random() < 0.1:
                continue  # query absent from this run
            m = rng.randint(0, max_len)
            docs = rng.sample([f"d{i}" for i in range(pool)], min(m, pool))
            mode = rng.choice(MODES)
            if mode == "uniform":
                sc = [rng.uniform(0, 30) for _ in docs]
            elif mode == "ties":
                sc = [round(rng.uniform(0, 3), 1) for _ in docs]
            elif mode == "negative":
                sc = [rng.uniform(-5, 5) for _ in docs]
            elif mode == "constant":
                sc = [1.5] * len(docs)
            elif mode == "large":
                sc = [rng.uniform(1e6, 1e7) for _ in docs]
            elif mode == "tiny":
                sc = [rng.uniform(0, 1e-30) for _ in docs]
            elif mode == "zeros":
                sc = [0.0 if rng.random() < 0.5 else rng.uniform(0, 1) for _ in docs]
            elif mode == "huge":  # beyond the vectorised path: reference fallback
                sc = [rng.uniform(1e19, 1e20) for _ in docs]
            else:
                sc = [rng.randint(0, 5) for _ in docs]
            sc.sort(reverse=True)
            run[f"q{qi}"] = Ranking(docs, [float(s) for s in sc])
        runs.append(run)
    return runs


def assert_same_run(a, b, what=""):
    assert list(a) == list(b), what
    for q in a:
        assert a[q].doc_ids == b[q].doc_ids, (what, q)
        assert a[q].scores == b[q].scores, (what, q)  # exact float equality


# =========================================================================== grid


def test_grid_size_is_what_is_claimed():
    grid = SweepGrid()
    assert grid.size(2) == len(grid.configs(2, 100)) == 8 + 2 * 3 * 11 == 74
    assert grid.size(3) == len(grid.configs(3, 100)) == 8 + 2 * 3 * 66 == 404
    assert (
        SweepGrid(windows=(50, 100, 200)).size(2)
        == len(SweepGrid(windows=(50, 100, 200)).configs(2, 100))
        == 3 * 74
    )
    assert SweepGrid(weighted=False).size(2) == 8
    assert SweepGrid(rrf=False, weight_step=0.25).size(2) == 2 * 3 * 5
    assert SweepGrid(rrf=False, weight_step=0.5, normalizations=("l2",)).size(4) == 3 * 10


def test_weight_vectors_are_valid_opensearch_weights():
    grid = SweepGrid()
    two = grid.weight_vectors(2)
    assert two == [(i / 10, (10 - i) / 10) for i in range(11)]
    three = grid.weight_vectors(3)
    assert len(three) == len(set(three)) == 66 and three == sorted(three)
    for ws in two + three:
        assert all(0.0 <= w <= 1.0 for w in ws) and abs(sum(ws) - 1.0) < 1e-9
        FusionConfig(method="weighted", weights=ws)  # OpenSearch's own check passes
    labels = [describe(c) for c in grid.configs(2, 100)]
    assert labels[:8] == [f"rrf k={k} window=100" for k in (1, 5, 10, 20, 40, 60, 80, 100)]
    assert labels[8] == "weighted min_max arithmetic_mean [0.0, 1.0] window=100"
    assert len(set(labels)) == 74


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"weight_step": 0.3}, "weight_step must divide 1"),
        ({"normalizations": ("z_score",)}, "normalizations"),
        ({"combinations": ("max",)}, "combinations"),
        ({"rank_constants": (0,)}, "rank_constant"),
        ({"rank_constants": (20000,)}, "[1, 10000]"),
        ({"windows": (0,)}, "windows"),
        ({"rrf": False, "weighted": False}, "empty"),
        ({"tie_break": "random"}, "tie_break"),
    ],
)
def test_grid_validation(kwargs, fragment):
    with pytest.raises(ValueError, match=None) as e:
        SweepGrid(**kwargs)
    assert fragment in str(e.value)


# =========================================================================== replay == fuse_runs


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # "huge" scores
@pytest.mark.parametrize("seed", range(8))
def test_replay_equals_fuse_runs_on_random_runs(seed):
    rng = random.Random(seed)
    n_subs = (2, 2, 3)[seed % 3]
    runs = random_runs(rng, n_subs)
    for tie_break in ("doc_id", "input_order"):
        for semantics in ("opensearch", "elasticsearch", "reference"):
            grid = SweepGrid(
                weight_step=(0.1, 0.25, 0.5)[seed % 3],
                tie_break=tie_break,
                rrf_semantics=semantics,
                weighted=semantics == "opensearch",
            )
            window = rng.choice([3, 10, 25])
            for cfg in grid.configs(n_subs, window):
                k = rng.choice([None, 1, 5, 20])
                assert_same_run(fuse_runs(runs, cfg, k=k), replay(runs, cfg, k=k), describe(cfg))


def test_replay_other_methods_and_query_subset():
    rng = random.Random(99)
    runs = random_runs(rng, 2)
    for cfg in (
        FusionConfig(method="rrf", semantics="elasticsearch_legacy", window=10),
        FusionConfig(method="linear", normalization="minmax", weights=(0.3, 0.7), window=10),
        FusionConfig(method="weighted", window=10),
    ):  # weights None: 1.0 each
        assert_same_run(fuse_runs(runs, cfg), replay(runs, cfg), describe(cfg))
    cfg = FusionConfig(method="rrf", semantics="opensearch", window=10)
    sub = replay(runs, cfg, qids=["q3", "nope", "q1"])
    assert list(sub) == [q for q in ("q3", "q1") if q in fuse_runs(runs, cfg)]


def test_replay_raises_like_fuse_runs():
    dup = [{"q": Ranking(["a", "a"], [2.0, 1.0])}, {"q": Ranking(["b"], [1.0])}]
    cfg = FusionConfig(method="rrf", semantics="opensearch")
    with pytest.raises(ValueError, match="lists document 'a' twice"):
        fuse_runs(dup, cfg)
    with pytest.raises(ValueError, match="lists document 'a' twice"):
        replay(dup, cfg)
    nan = [{"q": Ranking(["a", "b"], [float("nan"), 1.0])}, {"q": Ranking(["b"], [1.0])}]
    weighted = FusionConfig(method="weighted", weights=(0.5, 0.5))
    with pytest.raises(ValueError) as ref:
        fuse_runs(nan, weighted)
    with pytest.raises(ValueError) as ours:
        replay(nan, weighted)
    assert str(ref.value) == str(ours.value)
    assert_same_run(fuse_runs(nan, cfg), replay(nan, cfg))  # rrf ignores scores
    with pytest.raises(ValueError, match=r"number of weights \[3\]"):
        replay([{"q": Ranking(["a"], [1.0])}] * 2, FusionConfig(method="weighted", weights=(0.2, 0.3, 0.5)))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_exp_to_f32_is_bit_identical_to_math_exp():
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.uniform(-20, 0, 200_000),
            rng.uniform(-1e-6, 1e-6, 50_000),
            [0.0, -0.0, -200.0, -1e4, 80.0, 100.0],
        ]
    ).astype(np.float32)
    got = _exp_to_f32(x)
    want = np.array(
        [np.float32(math.exp(float(v))) if float(v) < 709 else np.float32(np.inf) for v in x.tolist()],
        dtype=np.float32,
    )
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# =========================================================================== splits


def test_split_queries_is_deterministic_disjoint_and_complete():
    ids = [str(i) for i in range(101)]
    tune, ev = split_queries(ids, 0.5, seed=3)
    assert len(tune) == 50 and len(ev) == 51 and not set(tune) & set(ev)
    assert sorted(tune + ev, key=int) == ids
    shuffled = ids[::-1]
    t2, e2 = split_queries(shuffled, 0.5, seed=3)
    assert set(t2) == set(tune) and set(e2) == set(ev)
    assert t2 == [q for q in shuffled if q in set(tune)]  # input order kept
    assert set(split_queries(ids, 0.5, seed=4)[0]) != set(tune)
    assert len(split_queries(ids, 0.2, seed=0)[0]) == 20
    # a query keeps its side when others are added (unless it sits at the boundary)
    more_t, _ = split_queries(ids + [f"x{i}" for i in range(10)], 0.5, seed=3)
    assert len(set(tune) - set(more_t)) <= 5
    for bad in (0.0, 1.0, -0.1, 2):
        with pytest.raises(ValueError):
            split_queries(ids, bad)
    with pytest.raises(ValueError):
        split_queries(["only"], 0.5)


def test_overlapping_splits_are_refused():
    check_disjoint(["1", "2"], ["3"])
    with pytest.raises(ValueError) as e:
        check_disjoint(["1", "2", "3"], ["3", "2", "9"])
    assert one_line(e).startswith("sweep refused: 2 query id(s) are in both")
    runs = {"a": {"1": Ranking(["x"], [1.0])}, "b": {"1": Ranking(["y"], [1.0])}}
    qrels = {"1": {"x": 1}, "2": {"y": 1}}
    with pytest.raises(ValueError) as e:
        sweep(runs, qrels, restrict_qrels(qrels, ["2", "1"]))
    assert "'1'" in one_line(e)


# =========================================================================== selection


def test_selection_rule_prefers_score_then_default_then_grid_order():
    c = FusionConfig()
    vs = [
        VariantScore(c, "late default", 0.5, True, 9),
        VariantScore(c, "early", 0.5, False, 1),
        VariantScore(c, "earlier", 0.5, False, 0),
        VariantScore(c, "best", 0.6, False, 5),
        VariantScore(c, "nan", math.nan, False, 2),
    ]
    order = [v.label for v in sorted(vs, key=_selection_key)]
    assert order == ["best", "late default", "earlier", "early", "nan"]


def _toy(seed=0, n_queries=60):
    rng = random.Random(seed)
    runs = random_runs(rng, 2, n_queries=n_queries, pool=30, max_len=20)
    # keep the toy runs in the vectorised range and descending
    runs = [{q: r for q, r in run.items() if max(map(abs, r.scores), default=0) < 1e18} for run in runs]
    qrels = {}
    for qi in range(n_queries):
        docs = rng.sample([f"d{i}" for i in range(30)], 6)
        qrels[f"q{qi}"] = {d: rng.choice([0, 1, 2, 3]) for d in docs}
    return {"lex": runs[0], "vec": runs[1]}, qrels


def test_all_tied_variants_pick_the_rrf_default():
    same = {f"q{i}": Ranking(["a", "b", "c"], [3.0, 2.0, 1.0]) for i in range(4)}
    qrels = {f"q{i}": {"a": 1, "c": 1} for i in range(4)}
    res = sweep(
        {"x": same, "y": same}, restrict_qrels(qrels, ["q0", "q1"]), restrict_qrels(qrels, ["q2", "q3"])
    )
    assert len({v.tune for v in res.variants}) == 1
    assert res.best.label == "rrf k=60 window=3" and res.best.is_default
    assert res.comparison.keys() == {"weighted min_max arithmetic_mean [0.5, 0.5] window=3"}


def test_sweep_is_deterministic_and_tuning_scores_equal_evaluate():
    runs, qrels = _toy()
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=1)
    tq, eq = restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids)
    for objective, kwargs in (
        ("ndcg@10", {}),
        ("ndcg@5", {"gain": "linear"}),
        ("mrr@10", {"relevance_threshold": 2}),
        ("recall@20", {}),
        ("map@10", {}),
        ("precision@3", {}),
        ("hit@1", {}),
        ("ndcg@10", {"depth": 5}),
    ):
        a = sweep(runs, tq, eq, objective=objective, **kwargs)
        b = sweep(runs, tq, eq, objective=objective, **kwargs)
        assert [v.tune for v in a.variants] == [v.tune for v in b.variants], objective
        assert a.best.label == b.best.label
        # the reported tuning score is evaluate() on the replayed variant
        run = fuse_runs(list(runs.values()), a.best.config, k=kwargs.get("depth", 100))
        g = kwargs.get("gain", "exp")
        assert (
            a.best.tune
            == evaluate(
                tq, run, [objective], gain=g, relevance_threshold=kwargs.get("relevance_threshold", 1)
            ).aggregate[objective]
        )


def test_objectives_without_a_cut_off_and_trec_ties():
    runs, qrels = _toy(seed=3)
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=0)
    tq, eq = restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids)
    for objective, ties in (
        ("map", "engine"),
        ("r-precision", "engine"),
        ("judged@10", "engine"),
        ("ndcg@10", "trec"),
    ):
        res = sweep(runs, tq, eq, objective=objective, ties=ties, grid=SweepGrid(weight_step=0.5))
        best_run = fuse_runs(list(runs.values()), res.best.config, k=100)
        assert res.best.tune == evaluate(tq, best_run, [objective], ties=ties).aggregate[objective]


def test_sweep_input_errors():
    runs, qrels = _toy()
    tq, eq = restrict_qrels(qrels, ["q1", "q2"]), restrict_qrels(qrels, ["q3", "q4"])
    with pytest.raises(ValueError, match="at least two"):
        sweep({"a": runs["lex"]}, tq, eq)
    with pytest.raises(ValueError, match="no candidates"):
        sweep([{}, {}], tq, eq)
    with pytest.raises(ValueError, match="tuning split has no query"):
        sweep(runs, {"q1": {"x": 0}}, eq)
    with pytest.raises(ValueError, match="depth"):
        sweep(runs, tq, eq, depth=0)
    with pytest.raises(ValueError, match="unknown metric"):
        sweep(runs, tq, eq, objective="ndgc@10")


def test_sweep_warns_about_unretrieved_queries_and_shallow_candidates():
    runs, qrels = _toy()
    qrels["ghost"] = {"d1": 1}
    res = sweep(
        runs,
        restrict_qrels(qrels, ["q1", "q2", "ghost"]),
        restrict_qrels(qrels, ["q5", "q6"]),
        grid=SweepGrid(windows=(10, 500)),
    )
    assert any("'ghost'" in w for w in res.warnings)
    assert any("window 500" in w for w in res.warnings)
    assert res.grid_size == 2 * 74
    assert {d.config.window for d in res.defaults} == {500}


# =========================================================================== snippets


def test_snippets_match_the_suite_schema_and_the_opensearch_builders():
    from pytest_retrieval.backends.opensearch import normalization_pipeline, rrf_pipeline
    from pytest_retrieval.suite.schema import RRFRetrieverConfig, WeightedRetrieverConfig

    w = FusionConfig(
        method="weighted", normalization="l2", combination="harmonic_mean", weights=(0.3, 0.7), window=150
    )
    block = yaml.safe_load(yaml_block(w, ["bm25", "dense"], name="hybrid"))
    assert block == {
        "hybrid": {
            "type": "weighted",
            "of": ["bm25", "dense"],
            "normalization": "l2",
            "combination": "harmonic_mean",
            "weights": [0.3, 0.7],
            "window": 150,
        }
    }
    WeightedRetrieverConfig.model_validate(block["hybrid"])
    assert opensearch_pipeline(w) == normalization_pipeline("l2", "harmonic_mean", [0.3, 0.7])

    r = FusionConfig(method="rrf", semantics="opensearch", rank_constant=20, window=100)
    block = yaml.safe_load(yaml_block(r, ["bm25", "dense"], name="rrf20", comment="tuned"))
    assert block == {
        "rrf20": {
            "type": "rrf",
            "of": ["bm25", "dense"],
            "rank_constant": 20,
            "window": 100,
            "semantics": "opensearch",
        }
    }
    RRFRetrieverConfig.model_validate(block["rrf20"])
    assert opensearch_pipeline(r) == rrf_pipeline(20)
    assert opensearch_pipeline(r, "d")["description"] == "d"
    with pytest.raises(ValueError):
        yaml_block(FusionConfig(method="linear"), ["a", "b"])


def test_default_configs():
    rrf, weighted = default_configs(3, 77)
    assert (rrf.method, rrf.rank_constant, rrf.window, rrf.semantics) == ("rrf", 60, 77, "opensearch")
    assert weighted.weights == (1 / 3, 1 / 3, 1 / 3) and weighted.normalization == "min_max"


# =========================================================================== SciFact


@pytest.fixture(scope="module")
def scifact_candidates(scifact_dir):
    SCIFACT = scifact_dir
    from pytest_retrieval.backends.base import BM25Spec, KnnSpec
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
    from pytest_retrieval.models.embedders import PrecomputedEmbedder
    from pytest_retrieval.suite.judgments import load_beir, load_qrels
    from pytest_retrieval.types import DocVectors, Query

    js = load_beir(SCIFACT, "test")
    train = load_qrels(SCIFACT / "qrels" / "train.tsv")
    vec = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
    emb = PrecomputedEmbedder(
        vec / "queries.npy", vec / "query_ids.txt", vec / "corpus.npy", vec / "corpus_ids.txt"
    )
    qids = [q for q in js.queries if q in js.qrels or q in train]
    qv = emb.embed_queries(qids, [js.queries[q] for q in qids])
    queries = [Query(q, js.queries[q], qv[i]) for i, q in enumerate(qids)]
    doc_ids = [d.doc_id for d in js.corpus]
    backend = EmbeddedBackend()
    backend.prepare(js.corpus, DocVectors(doc_ids, emb.embed_documents(doc_ids, []), emb.id))
    try:
        runs = {
            "bm25": backend.search_batch(BM25Spec(fields=(("title", 1.0), ("text", 1.0))), queries, 100),
            "dense": backend.search_batch(KnnSpec(similarity="cosine"), queries, 100),
        }
    finally:
        backend.close()
    return runs, train, js.qrels


def test_scifact_sweep_tune_on_train_evaluate_on_test(scifact_candidates):
    runs, train, test = scifact_candidates
    assert not set(train) & set(test)
    res = sweep(runs, train, test, metrics=("ndcg@10", "mrr@10", "recall@100"))
    assert res.grid_size == 74 and len(res.variants) == 74  # both defaults are in the grid
    assert res.tune_queries == 809 and res.eval_queries == 300
    assert all(0.0 < v.tune <= 1.0 for v in res.variants)
    assert {d.label for d in res.defaults} == {
        "rrf k=60 window=100",
        "weighted min_max arithmetic_mean [0.5, 0.5] window=100",
    }
    for d in res.defaults:
        assert res.best.tune >= d.tune
        assert set(res.evaluation[d.label].aggregate) == {"ndcg@10", "mrr@10", "recall@100"}
    assert res.ranked()[0] is res.best
    # the best variant's evaluation numbers are plain evaluate() on the fused test run
    run = fuse_runs([runs["bm25"], runs["dense"]], res.best.config, k=100)
    assert res.eval_metrics() == evaluate(test, run, ["ndcg@10", "mrr@10", "recall@100"]).aggregate
    text = res.summary()
    assert res.best.label in text and "evaluation split" in text
    doc = json.loads(json.dumps(res.as_dict()))
    assert len(doc["variants"]) == 74 and doc["best"] == res.best.label
    assert yaml.safe_load(doc["yaml"])["hybrid"]["of"] == ["bm25", "dense"]
    assert "phase_results_processors" in doc["opensearch_pipeline"]


def test_scifact_sweep_on_a_seeded_half_of_test(scifact_candidates):
    runs, _, test = scifact_candidates
    tune_ids, eval_ids = split_queries(list(test), 0.5, seed=0)
    res = sweep(
        runs,
        restrict_qrels(test, tune_ids),
        restrict_qrels(test, eval_ids),
        grid=SweepGrid(windows=(50, 100)),
    )
    assert res.grid_size == 148 and res.tune_queries == 150 and res.eval_queries == 150
    assert all(res.best.tune >= d.tune for d in res.defaults)
    again = sweep(
        runs,
        restrict_qrels(test, tune_ids),
        restrict_qrels(test, eval_ids),
        grid=SweepGrid(windows=(50, 100)),
    )
    assert again.best.label == res.best.label and [v.tune for v in again.variants] == [
        v.tune for v in res.variants
    ]


def test_three_sub_retrievers_simplex_grid_with_elasticsearch_rrf():
    rng = random.Random(11)
    runs = random_runs(rng, 3, n_queries=40, pool=30, max_len=15)
    runs = [{q: r for q, r in run.items() if max(map(abs, r.scores), default=0) < 1e18} for run in runs]
    qrels = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2]) for j in rng.sample(range(30), 5)} for i in range(40)}
    t, e = split_queries(list(qrels), 0.5, seed=2)
    grid = SweepGrid(rrf_semantics="elasticsearch", weight_step=0.25)
    res = sweep(
        {"a": runs[0], "b": runs[1], "c": runs[2]},
        restrict_qrels(qrels, t),
        restrict_qrels(qrels, e),
        grid=grid,
    )
    assert res.grid_size == grid.size(3) == 8 + 6 * 15
    assert len(res.variants) == grid.size(3) + 1  # equal thirds are not on the 0.25 grid
    assert res.defaults[1].config.weights == (1 / 3, 1 / 3, 1 / 3)
    assert yaml.safe_load(res.yaml_block())["hybrid"]["of"] == ["a", "b", "c"]
    block = yaml.safe_load(yaml_block(res.defaults[1].config, ["a", "b", "c"]))["hybrid"]
    assert tuple(block["weights"]) == (1 / 3, 1 / 3, 1 / 3)  # exact round trip
