"""The vectorised replay against fusion.fuse_runs: identical rankings and bit-identical scores
on seeded random runs, the same errors, and the exact float32 exp."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from pytest_retrieval.fusion.config import FusionConfig
from pytest_retrieval.fusion.javafloat import exp_to_float32
from pytest_retrieval.fusion.replay import replay
from pytest_retrieval.fusion.semantics import fuse_runs
from pytest_retrieval.tuning.grid import SweepGrid, describe
from pytest_retrieval.types import Ranking

from ..tuning.helpers import assert_same_run, random_runs


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
    got = exp_to_float32(x)
    want = np.array(
        [np.float32(math.exp(float(v))) if float(v) < 709 else np.float32(np.inf) for v in x.tolist()],
        dtype=np.float32,
    )
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # "huge" scores
@pytest.mark.parametrize("seed", range(4))
def test_fused_columns_score_like_the_fused_rankings(seed):
    """``Replayer.columns`` (no Ranking per query) gives every metric value of
    ``evaluate(qrels, Replayer.fuse(...))``, under both tie rules. Seed 0 keeps the "huge"
    rankings and adds one score beyond float32 (inf in Java float, NaN fused scores for some
    variants: those rows are ranked by ``fuse``, and the columns then come from the rankings);
    the others drop them, so the columns are built from the fused order."""
    from pytest_retrieval.fusion.replay import Replayer
    from pytest_retrieval.measures.columnar import QrelsColumns
    from pytest_retrieval.measures.metrics import evaluate

    rng = random.Random(100 + seed)
    n_subs = (2, 3)[seed % 2]
    runs = random_runs(rng, n_subs)
    if seed:
        runs = [{q: r for q, r in run.items() if all(abs(x) < 1e18 for x in r.scores)} for run in runs]
    else:
        runs[0]["q0"] = Ranking(["d1", "d2", "d3"], [1e39, 2.0, 1.0])
    qrels = {
        f"q{i}": {f"d{d}": rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(range(40), rng.randint(1, 12))}
        for i in range(32)  # q30, q31: judged, in no run
    }
    qrels["q5"] = {"d1": 0}  # no relevant document
    qc = QrelsColumns.from_qrels(qrels)
    metrics = ["ndcg@10", "map", "mrr", "recall@20", "precision@5", "judged@10", "r-precision"]
    present = [f"q{i}" for i in range(30) if any(f"q{i}" in r for r in runs)]
    from_order = from_rankings = 0
    for tie_break in ("doc_id", "input_order"):
        semantics = ("opensearch", "elasticsearch")[seed % 2]
        grid = SweepGrid(weight_step=0.25, tie_break=tie_break, rrf_semantics=semantics)
        window = rng.choice([3, 10, 25])
        replayer = Replayer(runs, present, window, tie_break)
        for cfg in grid.configs(n_subs, window):
            k = rng.choice([None, 5, 20])
            for ties in ("engine", "trec"):
                want = evaluate(qc, replayer.fuse(cfg, k=k), metrics, ties=ties)
                columns = replayer.columns(cfg, qc, ties=ties, k=k)
                from_order += type(columns.docs).__name__ == "_UnionDocs"
                from_rankings += type(columns.docs).__name__ != "_UnionDocs"
                got = evaluate(qc, columns, metrics, ties=ties)
                where = f"{describe(cfg)} k={k} ties={ties}"
                assert got.per_query == want.per_query, where
                assert (got.missing, got.unjudged_queries) == (want.missing, want.unjudged_queries), where
    assert from_order > 0
    assert from_rankings > 0 or seed


def test_replay_in_blocks_equals_fuse_runs(monkeypatch):
    from pytest_retrieval.fusion import replay as replay_module

    monkeypatch.setattr(replay_module, "REPLAY_BLOCK", 7)  # 30 queries: 5 blocks
    runs = random_runs(random.Random(7), 2)
    for cfg in (
        FusionConfig(method="rrf", semantics="elasticsearch", window=10),
        FusionConfig(method="weighted", window=10, weights=(0.3, 0.7)),
        FusionConfig(method="linear", normalization="minmax", weights=(0.3, 0.7), window=10),
    ):
        assert_same_run(fuse_runs(runs, cfg, k=5), replay(runs, cfg, k=5), describe(cfg))


def test_replay_equals_fuse_runs_where_the_old_matrix_path_differed():
    """The cases the replay once sent to the per-query path or got wrong, now one arithmetic:
    an Elasticsearch rank constant beyond 2**24 (k + rank made a float one by one, as Java
    does), np.int64 scores beyond 2**53 (rounded once to float32), a zero minimum of either
    sign (Elasticsearch minmax keeps the first), and scores that overflow float32."""
    big = [np.int64(2**54 + 2**30 + 1), np.int64(2**54), np.int64(3)]
    runs = [
        {
            "q1": Ranking(["a", "b", "c"], [0.0, -0.0, -0.0]),
            "q2": Ranking(["a", "b", "c"], big),
            "q3": Ranking(["a", "b"], [1e39, 1.0]),
            "q4": Ranking(["a", "b"], [3e19, 1e19]),
        },
        {
            "q1": Ranking(["c", "d"], [-0.0, 0.0]),
            "q2": Ranking(["d", "a"], [5.0, 1.0]),
            "q3": Ranking(["b", "c"], [2.0, 1.0]),
            "q4": Ranking(["c"], [1.0]),
        },
    ]
    configs = [FusionConfig(method="rrf", semantics="elasticsearch", rank_constant=2**25 + 1)]
    configs += [
        FusionConfig(method="weighted", normalization=norm, combination=comb, weights=(0.25, 0.75))
        for norm in ("min_max", "l2")
        for comb in ("arithmetic_mean", "geometric_mean", "harmonic_mean")
    ]
    configs += [
        FusionConfig(method="linear", normalization=norm, weights=(1.0, 2.0))
        for norm in ("minmax", "l2_norm", "none")
    ]
    for cfg in configs:
        for k in (None, 2):
            want, got = fuse_runs(runs, cfg, k=k), replay(runs, cfg, k=k)
            assert list(want) == list(got), describe(cfg)
            for q in want:  # reprs: a NaN fused score equals itself there
                assert want[q].doc_ids == got[q].doc_ids, (describe(cfg), q)
                assert list(map(repr, want[q].scores)) == list(map(repr, got[q].scores)), (describe(cfg), q)
