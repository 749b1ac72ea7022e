"""The latency pass's plan: which queries are timed (seeded sample, ``all``, first N), how the
summary says so, and BLAS pinned to one thread while timing."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.latency import (
    MAX_LATENCY_SAMPLE,
    MIN_LATENCY_SAMPLE,
    one_blas_thread,
    plan_repetitions,
    sample_size,
    seeded_sample,
)
from pytest_retrieval.types import Query

from ..tiny import TINY_SUITE, run_tiny


def test_seeded_sample_is_the_same_every_run_and_in_suite_order():
    queries = [Query(f"q{i}", "t") for i in range(5000)]
    a, b = seeded_sample(queries, 400), seeded_sample(queries, 400)
    assert a == b and len(a) == 400
    order = {q.qid: i for i, q in enumerate(queries)}
    assert [order[q.qid] for q in a] == sorted(order[q.qid] for q in a)
    assert seeded_sample(queries[:10], 400) == queries[:10]


def test_sample_size_covers_the_gated_percentile_within_bounds():
    assert sample_size(20) == MIN_LATENCY_SAMPLE
    assert sample_size(400) == 400 and sample_size(2000) == MAX_LATENCY_SAMPLE


def _suite(tmp_path: Path, latency: str):
    path = tmp_path / "retrieval_tiny.yaml"
    path.write_text(TINY_SUITE.replace("latency:\n  warmup: 1\n", f"latency:\n  warmup: 1\n{latency}"))
    return load_suite(path)


def test_max_queries_all_first_n_and_default_sample(tmp_path):
    queries = [Query(f"q{i}", "t") for i in range(3000)]
    default, reps = plan_repetitions(_suite(tmp_path, ""), "bm25", queries)
    assert len(default) == MIN_LATENCY_SAMPLE and reps == 1  # p95 gated: 400 samples
    every, reps = plan_repetitions(_suite(tmp_path, "  max_queries: all\n"), "bm25", queries)
    assert every == queries and reps == 1
    first, reps = plan_repetitions(_suite(tmp_path, "  max_queries: 100\n"), "bm25", queries)
    assert first == queries[:100] and reps == 4


def test_summary_says_how_many_queries_were_timed(tmp_path):
    from types import SimpleNamespace

    from pytest_retrieval.reports.outputs import report_document
    from pytest_retrieval.reports.terminal import render_summary

    result = run_tiny(tmp_path)
    latency = result.retrievers["bm25"].latency
    assert (latency.queries, latency.of_queries) == (4, 4)
    assert latency.as_dict()["queries_timed"] == 4
    state = SimpleNamespace(suite=result.suite, result=result, error=None, outcomes=[], regressions=[])
    text = "\n".join(render_summary(report_document([state])["suites"][0]))
    assert "latency: every query timed" in text and "one BLAS thread" in text


def test_one_blas_thread_while_timing():
    from threadpoolctl import threadpool_info

    with one_blas_thread():
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
