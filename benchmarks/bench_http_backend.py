"""The cost of the ``http`` backend's hop: SciFact's 300 test queries (BM25, top 100) asked of
the embedded engine directly, and of the same engine behind the test service
(``tests/backends/http/service.py``: http.server on loopback) through the ``http`` backend with
1 and 4 requests in flight, POSTed one query per request and 20 per request (``backend.batch``,
the service's ``/msearch`` doing the same per-query searches); and one query at a time (the
latency pass's ``search_one``). Medians of ``--rounds`` interleaved rounds, as ratios against
the direct engine in the same run, and batched against unbatched POST.

    PYTHONPATH=$PWD python benchmarks/bench_http_backend.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_retrieval.backends.base import BM25Spec, ServiceSpec  # noqa: E402
from pytest_retrieval.backends.http.backend import HttpBackend  # noqa: E402
from pytest_retrieval.backends.http.config import (  # noqa: E402
    HttpBatchConfig,
    HttpRequestConfig,
    HttpResponseConfig,
)
from pytest_retrieval.io.beir import load_beir  # noqa: E402
from pytest_retrieval.types import Query  # noqa: E402
from tests.backends.http.service import TOKEN, SearchService  # noqa: E402

SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    js = load_beir(SHARED / "data" / "scifact", "test", with_corpus=True)
    queries = [Query(q, js.queries[q]) for q in js.qrels]
    assert js.corpus is not None
    with SearchService(js.corpus) as service:

        def http(concurrency: int) -> HttpBackend:
            return HttpBackend(
                HttpRequestConfig(
                    url=service.url + "/search?q={query}&k={k}", headers={"Authorization": f"Bearer {TOKEN}"}
                ),
                HttpResponseConfig(hits="results", id="doc.id", score="score"),
                max_concurrency=concurrency,
            )

        def post(batch: int) -> HttpBackend:
            return HttpBackend(
                HttpRequestConfig(
                    method="POST",
                    url=service.url + "/search",
                    body={"query": "{query}", "size": "{k}", "id": "{query_id}"},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                ),
                HttpResponseConfig(hits="results", id="doc.id", score="score"),
                max_concurrency=4,
                batch=HttpBatchConfig(
                    size=batch,
                    url=service.url + "/msearch",
                    body={"searches": "{requests}"},
                    answers="responses",
                )
                if batch
                else None,
            )

        one_by_one, batched = (
            post(0).search_batch(ServiceSpec(), queries, 100),
            post(20).search_batch(ServiceSpec(), queries, 100),
        )
        assert {q: (r.doc_ids, r.scores) for q, r in one_by_one.items()} == {
            q: (r.doc_ids, r.scores) for q, r in batched.items()
        }, "batched rankings differ"
        passes: Dict[str, Callable[[], object]] = {
            "embedded engine, direct": lambda: service.engine.search_batch(BM25Spec(), queries, 100),
            "http backend, 1 in flight": lambda: http(1).search_batch(ServiceSpec(), queries, 100),
            "http backend, 4 in flight": lambda: http(4).search_batch(ServiceSpec(), queries, 100),
            "http POST, 4 in flight": lambda: post(0).search_batch(ServiceSpec(), queries, 100),
            "http POST, batches of 20": lambda: post(20).search_batch(ServiceSpec(), queries, 100),
        }
        times: Dict[str, List[float]] = {name: [] for name in passes}
        for _ in range(args.rounds):
            for name, run in passes.items():
                started = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - started)
        peer = statistics.median(times["embedded engine, direct"])
        print(f"quality pass, {len(queries)} queries, top 100 (median of {args.rounds} rounds):")
        for name, values in times.items():
            print(
                f"  {name:28s} {statistics.median(values) * 1000:7.0f} ms  {statistics.median(values) / peer:4.1f}x"
            )
        ratio = statistics.median(times["http POST, batches of 20"]) / statistics.median(
            times["http POST, 4 in flight"]
        )
        print(f"  batches of 20 / one query per request (both POST, 4 in flight): {ratio:.2f}x")
        one, direct = [], []
        backend = http(1)
        for q in queries[:100]:
            started = time.perf_counter()
            backend.search_one(ServiceSpec(), q, 100)
            one.append(time.perf_counter() - started)
            started = time.perf_counter()
            service.engine.search_one(BM25Spec(), q, 100)
            direct.append(time.perf_counter() - started)
        ratio = statistics.median(one) / statistics.median(direct)
        print(
            f"one query (latency pass), p50 over 100: http {statistics.median(one) * 1000:.2f} ms, "
            f"direct {statistics.median(direct) * 1000:.2f} ms ({ratio:.1f}x)"
        )


if __name__ == "__main__":
    main()
