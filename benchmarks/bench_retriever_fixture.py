"""Benchmark: the retriever fixture's batched ``search_many`` against one ``search`` per query,
and the golden-query share of a suite run (the texts ride along in the same pass).

    python benchmarks/bench_retriever_fixture.py [--backend embedded|elasticsearch|opensearch] [--repeat 3]

The example suite (``example_suite/retrieval_scifact_mini.yaml``, 100 judged queries), its
``bm25`` retriever (free text needs no vectors there), on the chosen backend; the same 100
texts (the judged ones) each way, the contenders taking turns in each round, best of
``--repeat``. Both answer the same top 10 (checked). On the engines ``search`` sends one
``_search`` per query and ``search_many`` batches them through ``_msearch``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.retriever import Retriever
from pytest_retrieval.execution.shared import SharedBackend

SUITE = Path(__file__).resolve().parents[1] / "example_suite" / "retrieval_scifact_mini.yaml"
HOSTS = {"elasticsearch": "http://127.0.0.1:19200", "opensearch": "http://127.0.0.1:19201"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="embedded", choices=["embedded", *HOSTS])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cli = {"backend.type": args.backend}
    if args.backend in HOSTS:
        cli["backend.connection"] = {"hosts": [HOSTS[args.backend]]}
    shared = SharedBackend(load_suite(SUITE, cli=cli))
    try:
        bm25 = Retriever(shared, "bm25")
        texts = list(shared.judgments().queries.values())
        bm25.search_many(texts[:5], k=10)  # builds the index, warms up
        one, many = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            singles = [bm25.search(t, k=10) for t in texts]
            one.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            batch = bm25.search_many(texts, k=10)
            many.append(time.perf_counter() - t0)
            assert [h.doc_ids for h in singles] == [h.doc_ids for h in batch]
        a, b = min(one), min(many)
        print(f"{args.backend}: {len(texts)} queries, bm25, top 10, best of {args.repeat}")
        print(f"  search x{len(texts)}: {a * 1000:8.1f} ms")
        print(f"  search_many:   {b * 1000:8.1f} ms")
        print(f"  ratio search / search_many: {a / b:.2f}x")
    finally:
        shared.close()


if __name__ == "__main__":
    main()
