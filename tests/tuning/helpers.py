"""Shared helpers of the tuning tests: seeded random sub-runs and exact run comparison."""

from __future__ import annotations

import random

from pytest_retrieval.types import Ranking

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


def one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


def toy(seed=0, n_queries=60):
    rng = random.Random(seed)
    runs = random_runs(rng, 2, n_queries=n_queries, pool=30, max_len=20)
    # keep the toy runs in the vectorised range and descending
    runs = [{q: r for q, r in run.items() if max(map(abs, r.scores), default=0) < 1e18} for run in runs]
    qrels = {}
    for qi in range(n_queries):
        docs = rng.sample([f"d{i}" for i in range(30)], 6)
        qrels[f"q{qi}"] = {d: rng.choice([0, 1, 2, 3]) for d in docs}
    return {"lex": runs[0], "vec": runs[1]}, qrels
