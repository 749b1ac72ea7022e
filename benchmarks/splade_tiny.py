"""Benchmark: a real SPLADE model (``../shared/models/splade-tiny``) beside BM25 on SciFact and
NFCorpus (BEIR test splits), on the embedded engine and on every running engine, each run as
a suite by ``run_suite`` (the product's path: the ``onnx`` sparse encoder, ``idf: none``).

    python scripts/export_splade_onnx.py ../shared/models/splade-tiny    # once (torch)
    python benchmarks/splade_tiny.py [--collections scifact,nfcorpus] [--engines es8,os2,es9,os3]
                                     [--max-docs N] [--sample 100]

Prints, per collection and backend, nDCG@10 and recall@100 of ``bm25`` and ``splade`` (the
engines keep 9 significant bits of each document weight: ``docs/how-to/sparse-engines.md``),
the efficiency figures of the SPLADE vectors (mean non-zero terms per document and per query;
FLOPS as in the SPLADE paper, Formal et al. 2021: ``sum over terms of p_doc(t) x p_query(t)``,
``sparse.sparse_facts``) and the encoding time per document: of the whole corpus when it was
encoded (kept beside the cache, so a rerun, which reads the cached vectors, still prints it),
and on a ``--sample`` of documents measured in this run for the ``onnx`` encoder and, when
torch is installed, the ``transformers`` encoder, beside BM25's indexing time per document on
the embedded engine. The documents' vectors are cached (``encode_corpus``), so a rerun is fast.

By default the whole corpora (SciFact 5,183 documents, NFCorpus 3,633): encoding them takes
about 70 ms of CPU per document on one thread (the MLM head's 30,522 logits per token), so 10
minutes of CPU for both; on the shared 2-core machine under load, 25-30 minutes of wall time.
Start it in the background with a log; a rerun reads the cached vectors.

``--max-docs N`` keeps the first N documents of the corpus plus every judged one (a subset:
printed with the figures). Elasticsearch 8 needs the 8.x client: the engine runs in a subprocess
with ``.venv-es8`` on the path, as ``benchmarks/sparse_engines.py`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy
sys.path.insert(0, str(ROOT / "scripts"))

from export_splade_onnx import export_dir  # noqa: E402

from pytest_retrieval.execution.runner import run_suite  # noqa: E402
from pytest_retrieval.io.beir import load_beir  # noqa: E402
from pytest_retrieval.models.embedders.cache import default_cache_dir, document_text  # noqa: E402
from pytest_retrieval.models.sparse import encode_corpus, make_sparse_encoder  # noqa: E402

SHARED = ROOT.parent / "shared"
MODEL = SHARED / "models" / "splade-tiny"
METRICS = ("ndcg@10", "recall@100")

SUITE = """\
suite: splade-tiny-{name}
judgments:
  beir: {beir}
  split: test
backend:
  type: embedded
  connection:
    hosts: ["${{RETRIEVAL_HOSTS:-http://127.0.0.1:9}}"]
latency: {{enabled: false}}
evaluation:
  metrics: [ndcg@10, recall@100]
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
  splade:
    type: sparse
    idf: none
    sparse_encoder: {{type: onnx, model: {onnx}, threads: {threads}}}
floors:
  splade: {{ndcg@10: 0.01}}
"""


def collection(name: str, data: Path, max_docs: int, subset: str, work: Path) -> Path:
    """The BEIR folder the suite reads: the collection itself, or (``--max-docs N``) a subset in
    a copy: ``judged``, the first N documents plus every judged one (all test judgments kept);
    ``prefix``, the first N documents only, with the judgments on them (queries left without a
    relevant document drop out). Either is easier than the whole corpus (fewer distractors)."""
    source = data / name
    if not max_docs:
        return source
    js = load_beir(source, "test")
    judged = {d for rels in js.qrels.values() for d in rels}
    folder = work / f"{name}-{subset}-{max_docs}"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    kept = set()
    with open(source / "corpus.jsonl", encoding="utf-8") as fh, open(folder / "corpus.jsonl", "w") as out:
        for n, line in enumerate(fh):
            doc_id = json.loads(line)["_id"]
            if n < max_docs or (subset == "judged" and doc_id in judged):
                out.write(line)
                kept.add(doc_id)
    (folder / "queries.jsonl").write_bytes((source / "queries.jsonl").read_bytes())
    with (
        open(source / "qrels" / "test.tsv", encoding="utf-8") as fh,
        open(folder / "qrels" / "test.tsv", "w") as out,
    ):
        for n, line in enumerate(fh):
            if n == 0 or line.split("\t")[1] in kept:
                out.write(line)
    return folder


def encode(beir: Path, onnx: Path, threads: int) -> Dict[str, Any]:
    """The corpus encoded once (cached); its time per document, kept beside the cache."""
    js = load_beir(beir, "test")
    docs = list(js.corpus)
    encoder = make_sparse_encoder({"type": "onnx", "model": str(onnx), "threads": threads})
    record = (
        default_cache_dir() / f"splade-tiny-timing-{encoder.id.split(':')[-1]}-{beir.name}-{len(docs)}.json"
    )
    t0 = time.perf_counter()
    encode_corpus(encoder, docs)
    took = time.perf_counter() - t0
    # under 1 ms per document the vectors came from the cache (an encoding takes ~70 ms of CPU):
    # a cache read is not an encoding time, so none is recorded (the table says "not known")
    if not record.is_file() and took * 1000 / max(len(docs), 1) >= 1.0:
        record.write_text(json.dumps({"documents": len(docs), "seconds": took, "threads": threads}))
    timing = json.loads(record.read_text()) if record.is_file() else {"seconds": None, "threads": threads}
    return {**timing, "documents": len(docs), "queries": len(js.qrels)}


def sample_times(beir: Path, onnx: Path, n: int, threads: int) -> Dict[str, float]:
    """ms per document of each encoder on the first ``n`` documents (uncached, after a warm-up),
    and BM25's indexing time per document on the embedded engine (whole corpus)."""
    from pytest_retrieval.backends.base import BM25Spec
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
    from pytest_retrieval.types import Query

    docs = list(load_beir(beir, "test").corpus)
    texts = [document_text(d) for d in docs[:n]]
    configs = {"onnx": {"type": "onnx", "model": str(onnx), "threads": threads}}
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401

        configs["transformers"] = {"type": "transformers", "model": str(MODEL), "threads": threads}
    except ImportError:
        pass
    out: Dict[str, float] = {}
    for name, config in configs.items():
        encoder = make_sparse_encoder(config)
        encoder.encode_documents(["w"], ["warm up"])
        t0 = time.perf_counter()
        encoder.encode_documents([d.doc_id for d in docs[:n]], texts)
        out[name] = (time.perf_counter() - t0) * 1000 / len(texts)
    backend = EmbeddedBackend()
    t0 = time.perf_counter()
    backend.prepare(docs, None)
    backend.search_batch(BM25Spec(), [Query("q", "warm up")], 1)  # the index is built on first use
    out["bm25 index"] = (time.perf_counter() - t0) * 1000 / len(docs)
    backend.close()
    return out


def run_one(suite: Path, backend: str) -> Dict[str, Any]:
    """One backend's run of the suite: metrics per retriever, the SPLADE vectors' facts."""
    result = run_suite(suite, backend=backend)
    facts = result.retrievers["splade"].sparse
    return {
        "metrics": {n: {m: r.metrics[m] for m in METRICS} for n, r in result.retrievers.items()},
        "sparse": {"doc_nnz": facts.doc_nnz, "query_nnz": facts.query_nnz, "flops": facts.flops},
        "version": str(result.backend_info.get("version", "")),
    }


def run_elsewhere(suite: Path, key: str, kind: str, version: str, url: str) -> Optional[Dict[str, Any]]:
    """An engine's run in a subprocess (its client major; ``.venv-es<major>`` for Elasticsearch 8)."""
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    venv = ROOT / f".venv-es{version.split('.')[0]}"
    if kind == "elasticsearch" and venv.is_dir():
        paths.insert(0, str(venv))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), RETRIEVAL_HOSTS=url)
    cmd = [sys.executable, __file__, "--one", str(suite), "--backend", kind]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"  {key}: failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.splitlines()[-1])


def engines(wanted: List[str]) -> List[List[str]]:
    """[key, kind, version, url] of every engine up (``scripts/engines status``)."""
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "engines"), "status"], capture_output=True, text=True
    )
    rows = [line.split() for line in out.stdout.splitlines()]
    return [
        [r[0], *r[1].split("-", 1), r[3]]
        for r in rows
        if len(r) >= 4 and r[2] == "up" and (not wanted or r[0] in wanted)
    ]


def table(name: str, info: Dict[str, Any], runs: Dict[str, Dict[str, Any]], times: Dict[str, float]) -> None:
    print(f"\n{name}: {info['documents']} documents, {info['queries']} test queries")
    print("| backend | BM25 nDCG@10 | SPLADE nDCG@10 | BM25 recall@100 | SPLADE recall@100 |")
    print("|---|---|---|---|---|")
    for backend, run in runs.items():
        m = run["metrics"]
        print(
            f"| {backend} | {m['bm25']['ndcg@10']:.4f} | {m['splade']['ndcg@10']:.4f} | "
            f"{m['bm25']['recall@100']:.4f} | {m['splade']['recall@100']:.4f} |"
        )
    facts = next(iter(runs.values()))["sparse"]
    took = "not known (cached before its time was kept)"
    if info["seconds"] is not None:
        took = f"{info['seconds'] * 1000 / info['documents']:.1f} ms per document"
    print(
        f"SPLADE vectors: {facts['doc_nnz']:.1f} terms per document, {facts['query_nnz']:.1f} per query, "
        f"FLOPS {facts['flops']:.3f}; encoding the corpus: {took} "
        f"(onnx, {info['threads']} thread(s), when it was encoded)"
    )
    bm25 = times.pop("bm25 index")
    shown = ", ".join(f"{k} {v:.1f} ms ({v / bm25:.0f}x BM25)" for k, v in times.items())
    print(f"per document, measured now: {shown}; BM25 indexing {bm25:.3f} ms")


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "data")
    parser.add_argument("--collections", default="scifact,nfcorpus")
    parser.add_argument(
        "--engines", default="", help="keys of `scripts/engines status` (default: every one up)"
    )
    parser.add_argument("--onnx", type=Path, help="the export folder (default: export_splade_onnx's cache)")
    parser.add_argument("--max-docs", type=int, default=0, help="a subset of N documents (see --subset)")
    parser.add_argument("--subset", choices=("judged", "prefix"), default="judged")
    parser.add_argument("--sample", type=int, default=100, help="documents timed per encoder in this run")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="embedded", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one, args.backend)))
        return 0
    onnx = args.onnx or export_dir(MODEL)
    if not (onnx / "model.onnx").is_file():
        print(f"no ONNX export in {onnx}: python scripts/export_splade_onnx.py {MODEL}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="splade-tiny-"))  # the suites and subsets; removed at the end
    try:
        run_collections(args, onnx, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def run_collections(args: argparse.Namespace, onnx: Path, work: Path) -> None:
    """Each collection's runs (embedded, then every engine up) and its tables."""
    for name in [c for c in args.collections.split(",") if c]:
        beir = collection(name, args.data, args.max_docs, args.subset, work)
        info = encode(beir, onnx, args.threads)
        suite = work / f"retrieval_{name}.yaml"
        suite.write_text(SUITE.format(name=name, beir=beir, onnx=onnx, threads=args.threads))
        runs = {"embedded": run_one(suite, "embedded")}
        for key, kind, version, url in engines([e for e in args.engines.split(",") if e]):
            found = run_elsewhere(suite, key, kind, version, url)
            if found is not None:
                runs[f"{kind} {found['version'] or version}"] = found
        subset = {
            "judged": f"the first {args.max_docs} documents + every judged one",
            "prefix": f"the first {args.max_docs} documents and their judgments",
        }
        table(name + (f" (subset: {subset[args.subset]})" if args.max_docs else ""), info, runs,
              sample_times(beir, onnx, args.sample, args.threads))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
