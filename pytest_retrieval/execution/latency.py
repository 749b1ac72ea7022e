"""The latency pass of a suite run: one query at a time through the whole stage tree, as
production would serve it, after warm-up requests; and the interleaved A/B pass of the retrievers
gated on a latency ratio against ``latency.baseline``.

Two rules keep it cheap and stable (issue #13):

* numpy's BLAS runs on one thread while timing (``threadpoolctl``): what one query costs, not
  how a loaded runner schedules a thread pool (a 3633x384 mat-vec took 8.1 ms with the
  default pool on the loaded 2-core machine, 0.11 ms with one thread; embedded kNN p95
  swung 40x between runs without the pin).
* By default a seeded sample of the queries is timed (the same ones every run, in suite
  order): enough for the gated percentile's interval, at least ``MIN_LATENCY_SAMPLE`` and at
  most ``MAX_LATENCY_SAMPLE``; ``latency.max_queries: all`` times every query, N the first N.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, ContextManager, Dict, List, Sequence, Tuple

from ..backends.base import Backend
from ..config.load import Suite
from ..gates.floors import GateKind
from ..stats.latency import LatencySummary, summarize_latency
from ..types import Query, Ranking
from .plan import StagePlan
from .results import ABLatency

#: ``single(name, query) -> (ranking, server took ms or None)``
Single = Callable[[str, Query], Tuple[Ranking, Any]]


def latency_pass(
    suite: Suite,
    single: Single,
    order: Sequence[str],
    queries: Sequence[Query],
    progress: Callable[[str], None],
) -> Tuple[Dict[str, LatencySummary], Dict[str, ABLatency]]:
    """(latency per retriever of ``order``, A/B latency per retriever with a ratio ceiling)."""
    latency: Dict[str, LatencySummary] = {}
    ab: Dict[str, ABLatency] = {}
    baseline = suite.model.latency.baseline
    ab_gated = sorted({f.retriever for f in suite.floors if f.kind is GateKind.LATENCY_RATIO})
    with one_blas_thread():
        for name in order:
            progress(f"latency {name}")
            latency[name] = measure(suite, single, name, queries)
        for name in ab_gated:
            progress(f"latency {name} vs {baseline} (A/B)")
            assert baseline is not None  # a ratio floor needs latency.baseline (checked at load)
            ab[name] = measure_ab(suite, single, name, baseline, queries)
    return latency, ab


def one_blas_thread() -> ContextManager[Any]:
    """numpy's BLAS limited to one thread (threadpoolctl) for the block."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def stage_timer(suite: Suite, backend: Backend, plan: StagePlan, doc_texts: Dict[str, str]) -> Single:
    """``single(name, query) -> (ranking, server took ms)``: one query through the whole
    stage tree, as production would serve it (a rerank stage's model time included)."""
    from ..fusion.semantics import fuse

    leaves, fusions, rerankers = plan.leaves, plan.fusions, plan.rerankers
    inputs = {n: suite.inputs(n) for n in plan.order}
    windows = {n: suite.rerank_config(n).window for n in rerankers}

    def single(n: str, q: Query) -> Tuple[Ranking, Any]:
        if n in leaves:
            res = backend.search_one(leaves[n], plan.with_sparse(n, [q])[0], plan.leaf_depth)
            return res.ranking, res.server_took_ms
        if n in rerankers:
            from ..models.rerankers import rerank_ranking

            ranking, took = single(inputs[n][0], q)
            # production pays the model for every candidate of every query: no vectors
            # cached by the quality pass or an earlier repetition (bi-encoders)
            getattr(rerankers[n], "clear_cache", lambda: None)()
            return rerank_ranking(rerankers[n], q.text, ranking, doc_texts, windows[n]), took
        parts = [single(s, q) for s in inputs[n]]
        took = [t for _, t in parts if t is not None]
        return fuse([p[0] for p in parts], fusions[n]), (sum(took) if took else None)

    return single


def plan_repetitions(
    suite: Suite, name: str, queries: Sequence[Query], ratio: bool = False
) -> Tuple[List[Query], int]:
    """(sampled queries, repetitions) for ``name``'s latency pass. ``auto`` takes enough
    passes for 20 samples above the highest percentile gated (p95: 400 samples); an A/B
    pass takes at least 4 rounds under ``auto`` (2 when set), see
    ``benchmarks/latency_gate_flakiness.py``.

    Which queries: ``max_queries`` unset = a seeded sample of ``sample_size`` queries (in
    suite order); ``all`` = every query; N = the first N."""
    from ..stats.latency import repetitions_needed

    cfg = suite.model.latency
    floors = [
        f
        for f in suite.floors
        if f.retriever == name and f.kind is (GateKind.LATENCY_RATIO if ratio else GateKind.LATENCY)
    ]
    needed = repetitions_needed(max([f.percentile for f in floors] or [50]))
    sample = _sample(cfg.max_queries, queries, needed)
    if isinstance(cfg.repetitions, int):
        repetitions = cfg.repetitions
    else:  # auto
        repetitions = max(1, math.ceil(needed / max(len(sample), 1)))
    if ratio:  # measured: 2 rounds caught a 30% slowdown 95/100 times, 4 rounds 100/100
        repetitions = max(4 if cfg.repetitions == "auto" else 2, repetitions)
    return sample, repetitions


def _sample(max_queries: Any, queries: Sequence[Query], needed: int) -> List[Query]:
    """The queries timed: every one (``all``), the first N, or a seeded sample by default."""
    if max_queries == "all":
        return list(queries)
    if max_queries:
        return list(queries[:max_queries])
    return seeded_sample(queries, sample_size(needed))


def measure(suite: Suite, single: Single, name: str, queries: Sequence[Query]) -> LatencySummary:
    """One query at a time, ``repetitions`` passes after ``warmup`` requests."""
    cfg = suite.model.latency
    sample, repetitions = plan_repetitions(suite, name, queries)
    if not sample:
        return summarize_latency([], [], warmup=0, repetitions=0)
    for q in _warmup(sample, cfg.warmup):
        single(name, q)
    wall: List[float] = []
    took: List[float] = []
    for _ in range(repetitions):
        for q in sample:
            t0 = time.perf_counter()
            _, server = single(name, q)
            wall.append((time.perf_counter() - t0) * 1000.0)
            if server is not None:
                took.append(float(server))
    return summarize_latency(
        wall, took, warmup=cfg.warmup, repetitions=repetitions, queries=len(sample), of_queries=len(queries)
    )


def measure_ab(suite: Suite, single: Single, name: str, baseline: str, queries: Sequence[Query]) -> ABLatency:
    """``baseline`` (A) and ``name`` (B) timed interleaved, query by query
    (``significance.ab_schedule``: a fresh seeded order each round, the arm that goes
    first alternating), so that load on the machine hits both arms alike."""
    from ..stats.latency import ab_schedule

    cfg = suite.model.latency
    sample, repetitions = plan_repetitions(suite, name, queries, ratio=True)
    arms = {"A": baseline, "B": name}
    if sample:
        for q in _warmup(sample, cfg.warmup):
            single(baseline, q)
            single(name, q)
    times: Dict[str, List[List[float]]] = {"A": [[] for _ in sample], "B": [[] for _ in sample]}
    for qi, arm in ab_schedule(len(sample), repetitions, seed=0):
        t0 = time.perf_counter()
        single(arms[arm], sample[qi])
        times[arm][qi].append((time.perf_counter() - t0) * 1000.0)
    return ABLatency(
        baseline=baseline, baseline_ms=times["A"], current_ms=times["B"], repetitions=repetitions
    )


#: Largest default latency sample: p99 (2,000 samples) then takes 2 passes over it.
MAX_LATENCY_SAMPLE = 1000
#: Smallest default latency sample (when the suite has that many queries): a p95 with 20
#: samples above it even when only p50 is gated.
MIN_LATENCY_SAMPLE = 400


def sample_size(needed: int) -> int:
    """Queries timed by default when ``needed`` samples are wanted (see ``plan_repetitions``)."""
    return min(MAX_LATENCY_SAMPLE, max(MIN_LATENCY_SAMPLE, needed))


def seeded_sample(queries: Sequence[Query], k: int, seed: int = 0) -> List[Query]:
    """``k`` queries drawn with a fixed seed (the same ones on every run), in suite order."""
    import random

    if k >= len(queries):
        return list(queries)
    picked = sorted(random.Random(seed).sample(range(len(queries)), k))
    return [queries[i] for i in picked]


def _warmup(sample: List[Query], warmup: int) -> List[Query]:
    """The first ``warmup`` queries of ``sample`` repeated as often as needed."""
    return (sample * ((warmup // len(sample)) + 1))[:warmup]
