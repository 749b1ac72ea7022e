"""Benchmark: a large suite on the embedded engine -- wall time and the latency pass's share,
and how steady the embedded kNN p95 is on a loaded runner.

    python benchmarks/bench_suite_scale.py [--queries 2600,10000] [--stability-runs 5] [--out /tmp/...]

Input: NFCorpus (``../shared/data/nfcorpus``: 3,633 documents, 3,237 queries, judgments of
the train, dev and test splits together) with the precomputed all-MiniLM-L6-v2 vectors.
A suite of N queries takes the judged queries in file order, cycling through them again
with new ids (``PLAIN-2~1``) past the 3,2xx judged ones, each copy with its original's text,
vector and judgments. Written under ``--out`` (never in the repository).

The suite: ``bm25`` (title + text), ``dense`` (knn, cosine), ``rrf`` of the two (window
100); metrics ndcg@10, recall@100, map; a ``p95_ms`` ceiling on ``dense`` (so p95 is the
gated percentile). Timed with ``SuiteRunner.run()`` (what ``pytest`` runs per suite file):

* ``default``: ``latency`` as shipped -- a seeded sample (400-1,000 queries), one BLAS thread;
* ``all``: ``latency.max_queries: all`` -- every query timed (the behaviour before the sample).

Printed: wall time of the run, time in the latency pass (every ``suite.latency.measure`` /
``measure_ab`` call) and its share.

Stability (``--stability-runs``, default 5): with a second process busy-looping on one core
(bounded in time, ended at exit), the latency pass of ``dense`` is run that many times on
the 2,600-query suite, with BLAS pinned to one thread (as shipped) and without the pin
(before); printed: each run's p95 and the largest / smallest ratio (target: <= 1.5).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout

from pytest_retrieval.config.load import load_suite  # noqa: E402
from pytest_retrieval.execution import latency as latency_mod  # noqa: E402
from pytest_retrieval.execution.plan import StagePlan, load_judgments, make_backend  # noqa: E402
from pytest_retrieval.execution.runner import SuiteRunner  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "nfcorpus"


def build(out: Path, n: int) -> Path:
    """The suite folder for ``n`` queries (cached)."""
    folder = out / f"nfcorpus_q{n}"
    suite = folder / "suite.yaml"
    if suite.exists():
        return suite
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    emb = SHARED / "embeddings" / "all-MiniLM-L6-v2"
    texts = {}
    for line in open(SHARED / "queries.jsonl", encoding="utf-8"):
        obj = json.loads(line)
        texts[obj["_id"]] = obj["text"]
    qrels: Dict[str, Dict[str, str]] = {}
    for split in ("test", "dev", "train"):
        with open(SHARED / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
            next(fh)
            for line in fh:
                q, d, g = line.rstrip("\n").split("\t")
                if q in texts:
                    qrels.setdefault(q, {})[d] = g
    judged = [q for q in texts if q in qrels]
    vec_ids = (emb / "query_ids.txt").read_text().split()
    vecs = np.load(emb / "queries.npy")
    row = {q: i for i, q in enumerate(vec_ids)}
    ids, rows = [], []
    with (
        open(folder / "queries.jsonl", "w", encoding="utf-8") as fq,
        open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as fr,
    ):
        fr.write("query-id\tcorpus-id\tscore\n")
        for i in range(n):
            src = judged[i % len(judged)]
            qid = src if i < len(judged) else f"{src}~{i // len(judged)}"
            fq.write(json.dumps({"_id": qid, "text": texts[src]}) + "\n")
            fr.write("".join(f"{qid}\t{d}\t{g}\n" for d, g in qrels[src].items()))
            ids.append(qid)
            rows.append(row[src])
    np.save(folder / "queries.npy", vecs[rows])
    (folder / "query_ids.txt").write_text("\n".join(ids) + "\n")
    (folder / "corpus.jsonl").symlink_to(SHARED / "corpus.jsonl")
    suite.write_text(
        f"""suite: nfcorpus_{n}
judgments:
  beir: {folder}
  split: test
embedder:
  type: precomputed
  queries: {folder / "queries.npy"}
  query_ids: {folder / "query_ids.txt"}
  documents: {emb / "corpus.npy"}
  document_ids: {emb / "corpus_ids.txt"}
evaluation:
  metrics: [ndcg@10, recall@100, map]
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
  dense:
    type: knn
    similarity: cosine
  rrf:
    type: rrf
    of: [bm25, dense]
    window: 100
floors:
  dense:
    p95_ms: 1000
""",
        encoding="utf-8",
    )
    return suite


@contextlib.contextmanager
def timing_latency_pass():
    """Adds up the time spent in the latency pass (``measure`` and ``measure_ab`` of
    ``suite/latency.py``) while the block runs; yields a one-item list holding the seconds."""
    spent = [0.0]
    originals = {name: getattr(latency_mod, name) for name in ("measure", "measure_ab")}

    def timed(fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t0

        return wrapper

    for name, fn in originals.items():
        setattr(latency_mod, name, timed(fn))
    try:
        yield spent
    finally:
        for name, fn in originals.items():
            setattr(latency_mod, name, fn)


def one_run(suite_path: Path, max_queries=None):
    suite = load_suite(suite_path)
    if max_queries is not None:
        suite.model.latency.max_queries = max_queries
    with timing_latency_pass() as spent:
        t0 = time.perf_counter()
        result = SuiteRunner(suite).run()
        wall = time.perf_counter() - t0
    lat = result.retrievers["dense"].latency
    return wall, spent[0], lat, result


@contextlib.contextmanager
def busy_core(seconds: int):
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def stability(suite_path: Path, runs: int) -> None:
    suite = load_suite(suite_path)
    r = SuiteRunner(suite)
    js = load_judgments(suite)
    qids = [q for q in js.queries if q in js.qrels]
    backend = make_backend(suite)
    embedder = r.embedder()
    queries = r.queries(js, qids, embedder)
    backend.prepare(js.corpus, r._doc_vectors(embedder, js.corpus))
    single = latency_mod.stage_timer(suite, backend, StagePlan.of(suite, ["dense"], 100), {})
    print(f"  stability: dense latency pass x {runs}, {len(queries)} queries, one core busy-looping")
    try:
        for label, pin in (
            ("one BLAS thread (as shipped)", latency_mod.one_blas_thread),
            ("BLAS unpinned (before)", contextlib.nullcontext),
        ):
            p95s: List[float] = []
            with busy_core(600):
                for _ in range(runs):
                    with pin():
                        lat = latency_mod.measure(suite, single, "dense", queries)
                    p95s.append(lat.p95)
            spread = max(p95s) / min(p95s)
            print(
                f"    {label:<30} p95 ms per run: {', '.join(f'{p:.2f}' for p in p95s)};"
                f" max/min = {spread:.2f} ({'<= 1.5 ok' if spread <= 1.5 else 'ABOVE 1.5'})"
            )
    finally:
        backend.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", default="2600,10000")
    ap.add_argument("--stability-runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("/tmp/pytest-retrieval-bench"))
    args = ap.parse_args(argv)
    if not SHARED.exists():
        print(f"needs {SHARED}")
        return 1
    sizes = [int(x) for x in args.queries.split(",")]
    for n in sizes:
        path = build(args.out, n)
        print(f"{n} queries ({path}):")
        for label, mq in (
            ("default (seeded sample, one BLAS thread)", None),
            ("latency.max_queries: all", "all"),
        ):
            wall, lat_s, lat, result = one_run(path, mq)
            ev = result.retrievers["rrf"].evaluation
            print(
                f"  {label:<42} run {wall:7.1f}s, latency pass {lat_s:6.1f}s = {lat_s / wall:5.1%} of the run;"
                f" dense timed {lat.queries} of {lat.of_queries} queries x {lat.repetitions},"
                f" p95 {lat.p95:.2f} ms; rrf ndcg@10 {ev.aggregate['ndcg@10']:.4f}"
            )
    if args.stability_runs:
        stability(build(args.out, min(sizes)), args.stability_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
