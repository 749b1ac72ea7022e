"""Load benchmark (issue #16 item 7): 10,000 queries at concurrency 8 against each engine, the
plugin's quality pass against a bare client loop doing the same ``_msearch`` calls.

    python benchmarks/bench_load.py [--engines elasticsearch,opensearch] [--queries 10000]
                                    [--concurrency 8] [--es-url URL] [--os-url URL]

Needs the engines (``scripts/engines up``) and SciFact in ``../shared``. A 2-node cluster from
``scripts/engines up --nodes 2`` is measured by naming both nodes and a sharded, replicated
index::

    python benchmarks/bench_load.py --shards 2 --replicas 1 \
        --es-url http://127.0.0.1:19210,http://127.0.0.1:19211 \
        --os-url http://127.0.0.1:19220,http://127.0.0.1:19221

(the Elasticsearch 8.19 cluster with the 8.x client: ``PYTHONPATH=.venv-es8``). Per engine one
throwaway index of SciFact (5,183 abstracts, MiniLM vectors) is built and deleted at the end. The 300 test queries are repeated under distinct ids up to
``--queries``. Each contender runs in its own process (so its peak RSS is its own), BM25 then
kNN, top 10, in batches of 100 with ``--concurrency`` batches in flight:

* plugin: ``backend.search_batch`` on the existing index (every sub-response checked, hits read
  into a Run);
* bare: the engine's official client, ``msearch`` with the same bodies from a ThreadPoolExecutor
  (``bench_msearch_overhead.make_bare``).

Prints wall time, queries answered and errors per contender and spec, the ratio plugin / bare
and each process's peak RSS. Every query must be accounted for: a missing one is an error.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_msearch_overhead as base  # noqa: E402

from pytest_retrieval.backends.base import BM25Spec, KnnSpec  # noqa: E402
from pytest_retrieval.types import Query  # noqa: E402

K = 10


def _queries(n: int) -> List[Query]:
    _, _, queries = base.load_scifact()
    return [
        Query(f"{q.qid}#{i // len(queries)}", q.text, q.vector)
        for i, q in enumerate(queries * (n // len(queries) + 1))
    ][:n]


def _backend_class(engine: str) -> Any:
    if engine == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend

        return ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend

    return OpenSearchBackend


def child(engine: str, url: str, index: str, side: str, n: int, concurrency: int) -> Dict[str, Any]:
    """One contender over both specs; returns its figures (printed as JSON)."""
    queries = _queries(n)
    out: Dict[str, Any] = {}
    if side == "plugin":
        backend = _backend_class(engine)(
            {
                "hosts": url.split(","),
                "batch_size": base.BATCH_SIZE,
                "concurrency": concurrency,
                "request_timeout": 120,
            },
            {"name": index, "suite": "bench load"},
        )
        backend.prepare(None, None)

        def search(spec: Any) -> Dict[str, List[str]]:
            return {q: [d for d, _ in r.pairs()] for q, r in backend.search_batch(spec, queries, K).items()}

    else:
        base.CONCURRENCY = concurrency
        client, bare = base.make_bare(engine, url, index)

        def search(spec: Any) -> Dict[str, List[str]]:
            return {q: [d for d, _ in h] for q, h in bare(spec, queries, K).items()}

    for name, spec in (("bm25", BM25Spec()), ("knn", KnnSpec())):
        t0 = time.perf_counter()
        errors = 0
        try:
            run = search(spec)
        except Exception as exc:  # noqa: BLE001 - counted, then reported
            errors, run = 1, {}
            out[f"{name}_error"] = f"{type(exc).__name__}: {exc}"[:300]
        wall = time.perf_counter() - t0
        missing = sum(1 for q in queries if q.qid not in run)
        out[name] = {"wall_s": wall, "answered": len(run), "missing": missing, "errors": errors}
    if side == "plugin":
        backend.close()  # an existing index: nothing is deleted
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def bench(engine: str, url: str, n: int, concurrency: int, settings: Dict[str, int]) -> None:
    corpus, vectors, _ = base.load_scifact()
    backend = _backend_class(engine)(
        {"hosts": url.split(","), "request_timeout": 120}, {"suite": "bench load", "settings": settings}
    )
    try:
        backend.prepare(corpus, vectors)
        index = backend.index_name
        results = {}
        for side in ("bare", "plugin"):
            cmd = [sys.executable, __file__, "--child", side, "--engines", engine, "--url", url]
            cmd += ["--index", str(index), "--queries", str(n), "--concurrency", str(concurrency)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            results[side] = json.loads(done.stdout.strip().splitlines()[-1])
        facts = backend.describe()
        print(
            f"{engine} {facts.get('version', '')} at {url}: {n} queries, concurrency {concurrency}, top {K}, "
            f"batches of {base.BATCH_SIZE}, {facts.get('shards')} shards, {facts.get('replicas')} replicas"
        )
        for spec in ("bm25", "knn"):
            for side in ("bare", "plugin"):
                r = results[side][spec]
                print(
                    f"  {spec:4s} {side:6s} {r['wall_s']:7.2f} s  answered {r['answered']:6d}  "
                    f"missing {r['missing']}  errors {r['errors']}"
                    + (f"  ({results[side].get(spec + '_error')})" if r["errors"] else "")
                )
            ratio = results["plugin"][spec]["wall_s"] / results["bare"][spec]["wall_s"]
            print(f"  {spec:4s} ratio plugin/bare wall: {ratio:.3f}")
        for side in ("bare", "plugin"):
            print(f"  peak RSS {side:6s} {results[side]['peak_rss_mib']:.0f} MiB")
    finally:
        backend.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="elasticsearch,opensearch")
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--es-url", default=base.URLS["elasticsearch"])
    ap.add_argument("--os-url", default=base.URLS["opensearch"])
    ap.add_argument("--shards", type=int, default=1, help="shards of the throwaway index")
    ap.add_argument("--replicas", type=int, default=0, help="replicas of the throwaway index")
    ap.add_argument("--child", choices=("bare", "plugin"), help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--index", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(
            json.dumps(child(args.engines, args.url, args.index, args.child, args.queries, args.concurrency))
        )
        return 0
    urls = {"elasticsearch": args.es_url, "opensearch": args.os_url}
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if not base.reachable(urls[engine]):
            print(f"{engine}: not reachable at {urls[engine]} (scripts/engines up); skipped")
            continue
        settings = {"number_of_shards": args.shards, "number_of_replicas": args.replicas}
        bench(engine, urls[engine], args.queries, args.concurrency, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
