"""Benchmark: learned sparse retrieval on Elasticsearch and OpenSearch against the embedded
engine (exact float64 dot products), on SciFact, every running engine in one run.

    python benchmarks/sparse_engines.py [--scifact PATH] [--engines es8,es9,os2,os3]

Vectors: ``tests/sparse/bm25_encoder.py`` (BM25 term weights of the corpus text; queries 1 per
term, ``idf: bm25_plus1`` applied query-side by ``sparse.apply_idf``: the dot product is BM25),
``--max-terms`` N keeps each document's N heaviest terms (0: all). Queries: the 300 of the BEIR
test split, top 10.

Per engine (a throwaway index built by the backend as a suite builds it: ``sparse: true``, one
build): top-10 overlap with the embedded engine's exact top 10, queries whose top 10 is
identical in order, nDCG@10 difference, the largest relative score error against the exact
dot product, and the same against the embedded engine fed the weights Lucene's FeatureField
keeps (9 significant bits, ``search_engine/sparse.py feature_value``): what is left once the
truncation is accounted for. Times (build, search of the 300 queries) are printed beside the
embedded engine's, for orientation only (the engines run on the same 2-core machine).

An Elasticsearch server whose major differs from the installed client's is measured in a
subprocess with ``.venv-es<major>`` on the path when this checkout has it (``pip install
--no-deps --target .venv-es8 "elasticsearch>=8.12,<9" "elastic-transport>=8.15.1,<9"``),
otherwise listed as not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from pytest_retrieval.backends.base import SparseSpec  # noqa: E402
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend  # noqa: E402
from pytest_retrieval.backends.search_engine.sparse import feature_value  # noqa: E402
from pytest_retrieval.io.beir import load_beir  # noqa: E402
from pytest_retrieval.measures.metrics import evaluate  # noqa: E402
from pytest_retrieval.sparse import apply_idf, doc_stats  # noqa: E402
from pytest_retrieval.types import DocSparseVectors, Query, Ranking  # noqa: E402
from tests.sparse import bm25_encoder  # noqa: E402

K = 10
ENCODER = "bm25-weights"
SPEC = SparseSpec(encoder_id=ENCODER)


def load(folder: Path, max_terms: int):
    js = load_beir(folder, "test")
    docs = list(js.corpus)
    vectors = bm25_encoder.documents(
        [f"{d.fields.get('title', '')} {d.fields.get('text', '')}" for d in docs]
    )
    if max_terms:
        vectors = [dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[:max_terms]) for v in vectors]
    stats = doc_stats(vectors)
    raw = bm25_encoder.queries([js.queries[q] for q in js.qrels])
    queries = [Query(q, js.queries[q], sparse=apply_idf(v, stats)) for q, v in zip(js.qrels, raw)]
    return docs, vectors, queries, js.qrels


def embedded_run(docs, vectors, queries) -> Tuple[Dict[str, Ranking], float, float]:
    backend = EmbeddedBackend()
    t0 = time.perf_counter()
    backend.prepare(docs, None)
    backend.prepare_sparse(DocSparseVectors([d.doc_id for d in docs], vectors, ENCODER))
    t1 = time.perf_counter()
    run = backend.search_batch(SPEC, queries, K)
    t2 = time.perf_counter()
    backend.close()
    return run, t1 - t0, t2 - t1


def engine_run(kind: str, url: str, docs, vectors, queries) -> Tuple[Dict[str, Ranking], float, float, str]:
    if kind == "elasticsearch":
        from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend as Backend
    else:
        from pytest_retrieval.backends.opensearch import OpenSearchBackend as Backend  # type: ignore[assignment]
    backend = Backend({"hosts": [url]}, {"suite": "sparse engines benchmark", "sparse": True})
    try:
        t0 = time.perf_counter()
        backend.prepare(docs, None)
        backend.prepare_sparse(DocSparseVectors([d.doc_id for d in docs], vectors, ENCODER))
        info = backend.describe()  # the announced index is built here, with the vectors
        t1 = time.perf_counter()
        run = backend.search_batch(SPEC, queries, K)
        t2 = time.perf_counter()
        return run, t1 - t0, t2 - t1, str(info.get("version"))
    finally:
        backend.close()


def figures(run, exact, model, vectors_of, queries, qrels) -> Dict[str, Any]:
    """The engine's top 10 against the exact one (and against the 9-bit model's)."""
    overlap, identical, identical_model, worst, worst_model = [], 0, 0, 0.0, 0.0
    for q in queries:
        got, want = run[q.qid], exact[q.qid]
        if want.doc_ids:
            overlap.append(len(set(got.doc_ids) & set(want.doc_ids)) / len(want.doc_ids))
        identical += got.doc_ids == want.doc_ids
        identical_model += got.doc_ids == model[q.qid].doc_ids
        for doc, score in zip(got.doc_ids, got.scores):
            vec = vectors_of[doc]
            e = sum(w * vec.get(t, 0.0) for t, w in q.sparse.items())
            m = sum(w * feature_value(vec[t]) for t, w in q.sparse.items() if t in vec)
            worst = max(worst, abs(score - e) / e)
            worst_model = max(worst_model, abs(score - m) / m)
    ndcg = {
        n: evaluate(qrels, r, ["ndcg@10"]).aggregate["ndcg@10"]
        for n, r in (("engine", run), ("exact", exact))
    }
    return {
        "top10_overlap": sum(overlap) / len(overlap),
        "identical_top10": identical,
        "identical_top10_vs_9bit_model": identical_model,
        "queries": len(queries),
        "ndcg10": ndcg["engine"],
        "ndcg10_diff": ndcg["engine"] - ndcg["exact"],
        "max_rel_score_error": worst,
        "max_rel_score_error_vs_9bit_model": worst_model,
    }


def instances(wanted: Optional[List[str]]) -> List[Tuple[str, str, str, str]]:
    out = subprocess.run(["bash", str(ROOT / "scripts" / "engines"), "list"], capture_output=True, text=True)
    rows = [tuple(line.split()) for line in out.stdout.splitlines() if line.strip()]
    return [r for r in rows if len(r) == 4 and (not wanted or r[0] in wanted)]  # type: ignore[misc]


def reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3):
            return True
    except Exception:  # noqa: BLE001
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/_nodes/_local", timeout=3):
                return True
        except Exception:  # noqa: BLE001
            return False


def client_major(kind: str) -> Optional[int]:
    from pytest_retrieval.backends.search_engine.versions import client_version

    found = client_version(kind)
    return int(found.rsplit(" ", 1)[-1].split(".")[0]) if found else None


def measure_elsewhere(key: str, version: str, args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """An Elasticsearch server the installed client cannot talk to: this script again, with the
    matching client's folder on the path."""
    venv = ROOT / f".venv-es{version.split('.')[0]}"
    if not venv.is_dir():
        return None
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(venv), str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    cmd = [sys.executable, __file__, "--engines", key, "--json", "--scifact", str(args.scifact)]
    cmd += ["--max-terms", str(args.max_terms)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(out.stdout.splitlines()[-1]).get(key)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--engines", default="", help="comma-separated keys of `scripts/engines list`")
    parser.add_argument("--max-terms", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON line of the engines' figures")
    args = parser.parse_args(argv)
    docs, vectors, queries, qrels = load(args.scifact, args.max_terms)
    vectors_of = {d.doc_id: v for d, v in zip(docs, vectors)}
    exact, build, search = embedded_run(docs, vectors, queries)
    model, _, _ = embedded_run(docs, [{t: feature_value(w) for t, w in v.items()} for v in vectors], queries)
    if not args.json:
        nnz = sum(len(v) for v in vectors) / len(vectors)
        print(
            f"SciFact: {len(docs)} documents ({nnz:.1f} terms each on average), {len(queries)} test queries, top {K}"
        )
        print(f"  embedded (exact): build {build:.2f} s, search {search * 1000:.0f} ms")
    results: Dict[str, Any] = {}
    for key, kind, version, url in instances([k for k in args.engines.split(",") if k]):
        if not reachable(url):
            results[key] = None
            continue
        if kind == "elasticsearch" and client_major(kind) != int(version.split(".")[0]):
            results[key] = measure_elsewhere(key, version, args)
            continue
        run, e_build, e_search, _ = engine_run(kind, url, docs, vectors, queries)
        found = figures(run, exact, model, vectors_of, queries, qrels)
        found.update(build_s=e_build, search_ms=e_search * 1000, engine=f"{kind} {version}")
        results[key] = found
    if args.json:
        print(json.dumps(results))
        return 0
    for key, f in results.items():
        if f is None:
            print(f"  {key}: not measured (not running, or no client for its major)")
            continue
        print(
            f"  {f['engine']}: top-10 overlap {f['top10_overlap']:.5f}, identical top 10 "
            f"{f['identical_top10']}/{f['queries']} ({f['identical_top10_vs_9bit_model']}/{f['queries']} vs the "
            f"9-bit model), nDCG@10 {f['ndcg10']:.5f} (diff {f['ndcg10_diff']:+.1e}), max rel. score error "
            f"{f['max_rel_score_error']:.2e} ({f['max_rel_score_error_vs_9bit_model']:.1e} vs the 9-bit model); "
            f"build {f['build_s']:.2f} s ({f['build_s'] / build:.1f}x embedded), search {f['search_ms']:.0f} ms "
            f"({f['search_ms'] / 1000 / search:.1f}x embedded)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
