"""Benchmark: the plugin's quality pass against a bare client ``_msearch`` loop.

    python benchmarks/bench_msearch_overhead.py [--engines elasticsearch,opensearch]
                                                [--repeat 7] [--k 100]

Needs the local engines (``scripts/engines up``: Elasticsearch on 19200, OpenSearch on 19201;
``PYTEST_RETRIEVAL_ES_URL`` / ``PYTEST_RETRIEVAL_OS_URL`` point elsewhere) and SciFact in
``../shared`` (``PYTEST_RETRIEVAL_SHARED``). Per engine, one throwaway index of the whole
SciFact corpus (5,183 abstracts, MiniLM vectors) is built by the backend with periodic refresh
off and merged to one segment (no background merge changes the answers between passes) and
deleted at the end.

Contenders, over the 300 SciFact test queries, top ``k`` each, for a BM25 spec (title + text,
best_fields) and a kNN spec (cosine, num_candidates = max(2k, 100)):

* plugin: ``backend.search_batch(spec, queries, k)``: builds the bodies, sends ``_msearch`` in
  batches of ``batch_size`` (100) with ``concurrency`` (3) batches in flight, checks every
  sub-response and reads the hits into a Run;
* bare: the engine's own Python client (``Elasticsearch.msearch`` / ``OpenSearch.msearch``),
  default settings, the SAME bodies (built by plain code in the loop and checked equal to the
  plugin's once, untimed: ``{}`` header, ``query``, ``size`` k, ``_source`` false), the same
  batches and a ThreadPoolExecutor of the same concurrency, reading ``(_id, _score)`` of each
  sub-response's hits (an error sub-response raises).

Both answer the same: the runs are compared once (untimed). Timed in one run, interleaved
(the order alternates each round), after one warm-up each; best and median of ``--repeat``
rounds, wall time and this process's CPU time (all threads). Prints the ratio plugin / bare;
target: at most 1.10.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from pytest_retrieval.backends.base import BM25Spec, KnnSpec
from pytest_retrieval.io.beir import load_beir
from pytest_retrieval.types import DocVectors, Query

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))
URLS = {
    "elasticsearch": os.environ.get("PYTEST_RETRIEVAL_ES_URL", "http://127.0.0.1:19200"),
    "opensearch": os.environ.get("PYTEST_RETRIEVAL_OS_URL", "http://127.0.0.1:19201"),
}
BATCH_SIZE = 100
CONCURRENCY = 3
TARGET = 1.10


def load_scifact():
    folder = SHARED / "data" / "scifact"
    js = load_beir(folder, "test")
    emb = folder / "embeddings" / "all-MiniLM-L6-v2"
    vectors = DocVectors(
        (emb / "corpus_ids.txt").read_text().split(),
        np.load(emb / "corpus.npy").astype(np.float32, copy=False),
    )
    q_row = {q: i for i, q in enumerate((emb / "query_ids.txt").read_text().split())}
    q_matrix = np.load(emb / "queries.npy").astype(np.float32, copy=False)
    queries = [Query(q, js.queries[q], q_matrix[q_row[q]]) for q in js.qrels]
    return js.corpus, vectors, queries


def reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.split(",")[0] + "/_cluster/health", timeout=5) as resp:
            return resp.status == 200
    except Exception:  # noqa: BLE001
        return False


# --------------------------------------------------------------------------- the bare loop


def bare_body(engine: str, spec: Any, query: Query, k: int) -> Dict[str, Any]:
    """What a team writing its own loop sends (checked equal to the plugin's bodies)."""
    if isinstance(spec, BM25Spec):
        fields = [name if boost == 1.0 else f"{name}^{boost:g}" for name, boost in spec.fields]
        q = {"multi_match": {"query": query.text, "type": spec.multi_match_type, "fields": fields}}
        return {"query": q, "size": k, "_source": False}
    candidates = spec.num_candidates or min(10000, max(2 * k, 100))
    vector = query.vector.tolist()
    if engine == "elasticsearch":
        return {
            "knn": {"field": spec.field, "query_vector": vector, "k": k, "num_candidates": candidates},
            "size": k,
            "_source": False,
        }
    return {"query": {"knn": {spec.field: {"vector": vector, "k": candidates}}}, "size": k, "_source": False}


def make_bare(
    engine: str, url: str, index: str, header: Optional[Dict[str, str]] = None
) -> Tuple[Any, Callable]:
    """The bare client loop; ``url`` may name several nodes of a cluster, comma-separated;
    ``header`` is sent as each search's ``_msearch`` header line (e.g. a ``preference``)."""
    hosts = url.split(",")
    if engine == "elasticsearch":
        from elasticsearch import Elasticsearch

        client = Elasticsearch(hosts)

        def msearch(searches):
            return client.msearch(index=index, searches=searches).body
    else:
        from opensearchpy import OpenSearch

        client = OpenSearch(hosts)

        def msearch(searches):
            return client.msearch(body=searches, index=index)

    def run(spec: Any, queries: List[Query], k: int) -> Dict[str, List[Tuple[str, float]]]:
        bodies = [(q.qid, bare_body(engine, spec, q, k)) for q in queries]
        batches = [bodies[i : i + BATCH_SIZE] for i in range(0, len(bodies), BATCH_SIZE)]

        def one(batch):
            searches: List[Dict[str, Any]] = []
            for _qid, body in batch:
                searches += [dict(header or {}), body]
            responses = msearch(searches)["responses"]
            out = []
            for (qid, _body), r in zip(batch, responses):
                if "error" in r:
                    raise RuntimeError(f"query {qid}: {r['error']}")
                out.append((qid, [(h["_id"], h["_score"]) for h in r["hits"]["hits"]]))
            return out

        with concurrent.futures.ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            return {qid: hits for chunk in pool.map(one, batches) for qid, hits in chunk}

    return client, run


# --------------------------------------------------------------------------- timing


def timed(fn: Callable[[], Any]) -> Tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def bench_engine(engine: str, corpus, vectors, queries, repeat: int, k: int) -> Dict[str, float]:
    if engine == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend as cls
    else:
        from pytest_retrieval.backends.opensearch import OpenSearchBackend as cls
    url = URLS[engine]
    backend = cls(
        {"hosts": [url], "batch_size": BATCH_SIZE, "concurrency": CONCURRENCY},
        {"suite": "bench msearch", "settings": {"refresh_interval": "-1"}},
    )
    client = None
    try:
        t0 = time.perf_counter()
        backend.prepare(corpus, vectors)
        index = backend.index_name
        req = urllib.request.Request(f"{url}/{index}/_forcemerge?max_num_segments=1", method="POST")
        urllib.request.urlopen(req, timeout=600).read()
        print(f"{engine}: indexed {len(corpus)} docs into {index} in {time.perf_counter() - t0:.1f} s")
        client, bare = make_bare(engine, url, index)
        specs = {"bm25": BM25Spec(), "knn": KnnSpec()}
        ratios: Dict[str, float] = {}
        for name, spec in specs.items():
            # same bodies, same answers (untimed)
            for q in queries:
                assert bare_body(engine, spec, q, k) == backend.build_body(spec, q, k), (name, q.qid)
            ours = backend.search_batch(spec, queries, k)
            theirs = bare(spec, queries, k)
            assert {q: r.pairs() for q, r in ours.items()} == {
                q: [(d, float(s)) for d, s in h] for q, h in theirs.items()
            }, f"{name}: runs differ"
            contenders = {
                "plugin": lambda spec=spec: backend.search_batch(spec, queries, k),
                "bare": lambda spec=spec: bare(spec, queries, k),
            }
            wall: Dict[str, List[float]] = {c: [] for c in contenders}
            cpu: Dict[str, List[float]] = {c: [] for c in contenders}
            for i in range(repeat):
                order = list(contenders) if i % 2 == 0 else list(contenders)[::-1]
                for c in order:
                    w, p = timed(contenders[c])
                    wall[c].append(w)
                    cpu[c].append(p)
            best = {c: min(v) for c, v in wall.items()}
            med = {c: statistics.median(v) for c, v in wall.items()}
            cpu_med = {c: statistics.median(v) for c, v in cpu.items()}
            ratios[f"{name} best"] = best["plugin"] / best["bare"]
            ratios[f"{name} median"] = med["plugin"] / med["bare"]
            print(f"  {name:4s} {len(queries)} queries, k={k}, {repeat} interleaved rounds:")
            for c in contenders:
                print(
                    f"    {c:6s} wall best {best[c] * 1000:8.1f} ms  median {med[c] * 1000:8.1f} ms"
                    f"   client CPU median {cpu_med[c] * 1000:7.1f} ms"
                )
            print(
                f"    ratio plugin/bare: best {ratios[f'{name} best']:.3f}  "
                f"median {ratios[f'{name} median']:.3f}  "
                f"(client CPU {cpu_med['plugin'] / cpu_med['bare']:.3f}; "
                f"CPU added {(cpu_med['plugin'] - cpu_med['bare']) * 1000:+.1f} ms)"
            )
        return ratios
    finally:
        if client is not None:
            client.close()
        backend.close()  # deletes the benchmark's index


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="elasticsearch,opensearch")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args()
    corpus, vectors, queries = load_scifact()
    verdicts = {}
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if not reachable(URLS[engine]):
            print(f"{engine}: not reachable at {URLS[engine]} (scripts/engines up); skipped")
            continue
        ratios = bench_engine(engine, corpus, vectors, queries, args.repeat, args.k)
        verdicts[engine] = max(ratios[f"{s} best"] for s in ("bm25", "knn"))
    if not verdicts:
        return 1
    print(f"summary (worst spec, best-of ratio plugin/bare; target <= {TARGET:.2f}):")
    for engine, r in verdicts.items():
        print(f"  {engine:13s} {r:.3f}  {'OK' if r <= TARGET else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
