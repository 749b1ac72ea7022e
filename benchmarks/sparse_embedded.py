"""Benchmark: the embedded engine's learned sparse retrieval against a straightforward scipy
implementation of the reference pipeline, on SciFact, in one run.

    python benchmarks/sparse_embedded.py [--scifact PATH] [--k 100] [--replicate 1] [--repeat 3]

Vectors: ``tests/sparse/bm25_encoder.py`` (deterministic BM25 term weights from the corpus
text: documents get each term's BM25 saturation, queries 1 per term), so with ``idf:
bm25_plus1`` the sparse dot product is BM25; every SciFact query (all splits, 1,109), repeated
``--replicate`` times for a bigger batch. IDF is applied query-side by ``sparse.apply_idf``
for both contenders, as the runner does.

* ours: ``EmbeddedBackend.prepare_sparse`` (CSR, corpus order) + ``search_batch(SparseSpec)``
  (query blocks bounded at 256 MiB of scores, top k by ``np.partition`` + stable sort);
* reference: one vocabulary, ``scipy.sparse.csr_matrix`` of documents and queries,
  ``(Q @ D.T).toarray()`` for all queries at once, then per query every document scoring > 0
  sorted by (-score, corpus position) with ``np.lexsort``, cut at k.

Timed: best of ``--repeat`` (taking turns) of build + search; memory: tracemalloc peak of one
build + search. Rankings: every query's top k, ids identical and scores equal to 1e-12.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

import numpy as np  # noqa: E402

from pytest_retrieval.backends.base import SparseSpec  # noqa: E402
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend  # noqa: E402
from pytest_retrieval.sparse import apply_idf, doc_stats  # noqa: E402
from pytest_retrieval.types import DocSparseVectors, Document, Query  # noqa: E402
from tests.sparse import bm25_encoder  # noqa: E402


def load(folder: Path, replicate: int):
    docs, texts = [], []
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append(Document(str(d["_id"]), {"title": d.get("title", ""), "text": d.get("text", "")}))
            texts.append(f"{d.get('title', '')} {d.get('text', '')}".strip())
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh]
    doc_vectors = bm25_encoder.documents(texts)
    stats = doc_stats(doc_vectors)
    raw = bm25_encoder.queries([q["text"] for q in queries])
    sent = [
        Query(f"{q['_id']}#{r}", q["text"], sparse=apply_idf(v, stats))
        for r in range(replicate)
        for q, v in zip(queries, raw)
    ]
    return docs, doc_vectors, sent


def ours(docs, doc_vectors, queries, k):
    backend = EmbeddedBackend()
    backend.prepare(docs, None)
    backend.prepare_sparse(DocSparseVectors([d.doc_id for d in docs], doc_vectors, "bm25-weights"))
    run = backend.search_batch(SparseSpec(encoder_id="bm25-weights"), queries, k)
    return {q: (r.doc_ids, r.scores) for q, r in run.items()}


def reference(docs, doc_vectors, queries, k):
    import scipy.sparse as sp

    vocab: Dict[str, int] = {}
    for v in doc_vectors:
        for t in v:
            vocab.setdefault(t, len(vocab))

    def csr(vectors):
        rows, cols, vals = [], [], []
        for r, v in enumerate(vectors):
            for t, w in v.items():
                if t in vocab:
                    rows.append(r)
                    cols.append(vocab[t])
                    vals.append(w)
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(vectors), len(vocab)), dtype=np.float64)

    scores = (csr([q.sparse for q in queries]) @ csr(doc_vectors).T).toarray()
    ids = [d.doc_id for d in docs]
    out = {}
    for q, row in zip(queries, scores):
        hits = np.flatnonzero(row > 0)
        order = hits[np.lexsort((hits, -row[hits]))][:k]
        out[q.qid] = ([ids[i] for i in order], [float(row[i]) for i in order])
    return out


def timed(fn: Callable[[], Any]) -> Tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def peak(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def compare(a: Dict[str, Any], b: Dict[str, Any]) -> Tuple[int, float]:
    """(queries whose top k ids differ, the largest relative score difference)."""
    differ, worst = 0, 0.0
    for q, (ids, scores) in b.items():
        got_ids, got_scores = a[q]
        differ += got_ids != ids
        for x, y in zip(got_scores, scores):
            worst = max(worst, abs(x - y) / max(abs(y), 1e-300))
    return differ, worst


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--replicate", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    docs, doc_vectors, queries = load(args.scifact, args.replicate)
    print(f"SciFact: {len(docs)} documents, {len(queries)} queries, top {args.k}")
    contenders = {"ours": ours, "reference": reference}
    best = {n: float("inf") for n in contenders}
    runs: Dict[str, Any] = {}
    for _ in range(args.repeat):
        for name, fn in contenders.items():
            seconds, runs[name] = timed(lambda fn=fn: fn(docs, doc_vectors, queries, args.k))
            best[name] = min(best[name], seconds)
    memory = {n: peak(lambda fn=fn: fn(docs, doc_vectors, queries, args.k)) for n, fn in contenders.items()}
    differ, worst = compare(runs["ours"], runs["reference"])
    for name in contenders:
        print(f"  {name:<10} {best[name] * 1000:9.1f} ms   peak {memory[name] / 2**20:8.1f} MiB")
    print(
        f"  ratio ours/reference: time {best['ours'] / best['reference']:.2f}x, "
        f"peak memory {memory['ours'] / memory['reference']:.2f}x"
    )
    print(
        f"  rankings: {len(queries) - differ}/{len(queries)} identical top {args.k}; max relative score diff {worst:.1e}"
    )
    return 0 if differ == 0 and worst <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
