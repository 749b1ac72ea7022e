"""ANN recall of HNSW against exact kNN on SciFact (5,183 abstracts, 300 test queries, the
shared MiniLM vectors), per engine, at several ``num_candidates``: the engines' approximate
top k (``knn`` with num_candidates on Elasticsearch, ``k`` = candidates on OpenSearch) against
the exact top k computed client-side from the same vectors, and against each engine's own
brute-force ``script_score`` search. Also the time of one approximate pass against one exact
(script_score) pass in the same run.

    PYTHONPATH=$PWD python benchmarks/ann_recall_scifact.py [--k 10] [--candidates 10 100]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_retrieval.backends.base import KnnSpec  # noqa: E402
from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend  # noqa: E402
from pytest_retrieval.backends.opensearch import OpenSearchBackend  # noqa: E402
from pytest_retrieval.errors import InfrastructureError  # noqa: E402
from pytest_retrieval.io.beir import load_beir  # noqa: E402
from pytest_retrieval.measures.ann import ann_recall, exact_top_k, mean  # noqa: E402
from pytest_retrieval.types import DocVectors, Query  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
ENGINES = {
    "elasticsearch": (ElasticsearchBackend, "http://127.0.0.1:19200"),
    "opensearch": (OpenSearchBackend, "http://127.0.0.1:19201"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--candidates", type=int, nargs="+", default=[10, 100])
    args = ap.parse_args()
    js = load_beir(SCIFACT, "test")
    emb = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
    vectors = DocVectors(
        (emb / "corpus_ids.txt").read_text().split(), np.load(emb / "corpus.npy").astype(np.float32)
    )
    q_row = {q: i for i, q in enumerate((emb / "query_ids.txt").read_text().split())}
    q_matrix = np.load(emb / "queries.npy").astype(np.float32)
    queries = [Query(q, js.queries[q], q_matrix[q_row[q]]) for q in js.qrels]
    qids = [q.qid for q in queries]
    client_exact = exact_top_k(
        qids, np.stack([q.vector for q in queries]), vectors.doc_ids, vectors.matrix, "cosine", args.k
    )
    rows = []
    for engine, (cls, url) in ENGINES.items():
        backend = cls({"hosts": [url], "request_timeout": 120}, {"suite": "ann recall bench"})
        try:
            backend.prepare(js.corpus, vectors)
            facts = backend.describe()
            t0 = time.perf_counter()
            try:  # the engine's brute-force script_score (needs lang-painless / the k-NN script)
                engine_exact = backend.exact_knn_on_engine(KnnSpec(), queries, args.k)
            except InfrastructureError as exc:
                print(f"{engine}: no exact search on the engine: {str(exc)[:160]}")
                engine_exact = None
            t_exact = time.perf_counter() - t0
            agree = mean(ann_recall(engine_exact, client_exact, args.k, qids)) if engine_exact else None
            for nc in args.candidates:
                spec = KnnSpec(num_candidates=max(nc, args.k))
                t0 = time.perf_counter()
                approx = backend.search_batch(spec, queries, args.k)
                t_ann = time.perf_counter() - t0
                rows.append(
                    {
                        "engine": f"{engine} {facts['version']}",
                        "hnsw": facts.get("hnsw"),
                        "num_candidates": spec.num_candidates,
                        f"ann_recall@{args.k} vs client exact": round(
                            mean(ann_recall(approx, client_exact, args.k, qids)), 4
                        ),
                        f"ann_recall@{args.k} vs engine exact": (
                            round(mean(ann_recall(approx, engine_exact, args.k, qids)), 4)
                            if engine_exact
                            else None
                        ),
                        "engine exact vs client exact": round(agree, 4) if agree is not None else None,
                        "ann pass s": round(t_ann, 2),
                        "exact pass s": round(t_exact, 2) if engine_exact else None,
                    }
                )
        finally:
            backend.close()
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
