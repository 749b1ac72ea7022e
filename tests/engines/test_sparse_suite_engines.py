"""One learned sparse suite (#25), run whole through pytest, on the embedded engine and on every
engine of the matrix (Elasticsearch 8.19/9.5: ``sparse_vector``; OpenSearch 2.19/3.6:
``rank_features`` + ``neural_sparse``), switching only ``--retrieval-backend``.

The suite runs on all of SciFact (5,183 abstracts, 300 test queries): BM25, two sparse
retrievers with precomputed vectors written here (``tests/sparse/bm25_encoder.py``: BM25 term
weights, ``idf: bm25_plus1``, so the sparse dot product is BM25 itself; ``sparse_top32`` keeps
each document's 32 heaviest terms, another encoder, so the throwaway index gets a second
field), an ``rrf`` fusion of bm25 + sparse, quality floors and the cost gates
(``sparse_doc_nnz``, ``sparse_query_nnz``, ``flops``). Latency is not measured (CI budget).

The engines keep 9 significant bits of each document weight (Lucene FeatureField, truncated;
``search_engine/sparse.py``), so "same as embedded" means: every hit of an engine's sparse top 10
scores the embedded engine's exact score of that document minus less than 2^-8 of it, and sits
within 2^-8 of the embedded top 10 (a swap only between scores that close). Top-10 overlap,
identical-order queries, nDCG@10 difference and largest relative score error are recorded
(``record_property``; ``--junitxml``). The reports must say the precision an engine scored at.

``test_existing_index_with_sparse_fields`` (Elasticsearch 9.5 only, or the Elasticsearch of a
restricted run: one engine is enough for the wiring) builds its own index with two ``sparse_vector`` fields and points the same suite at
it with ``index: {name: ...}`` and ``field:``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

from .conftest import ES_INSTANCES, INSTANCES, Instance, _require, http, instance_params, random_name

pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600  # per backend run
K = 10
PRECISION = 2.0**-8  # FeatureField: 9 significant bits, truncated (relative error < 2^-8)
SLACK = 1e-6  # query weights travel as float32
NDCG_TOLERANCE = 0.01  # bm25 (hence rrf) differs by Lucene's one-byte field lengths
SPARSE = ("sparse", "sparse_top32")

SUITE = """\
suite: scifact-sparse
judgments:
  beir: {beir}
backend:
  type: embedded
  connection:
    hosts: ["${{RETRIEVAL_HOSTS:-http://127.0.0.1:9}}"]
{index}evaluation:
  metrics: [ndcg@10, recall@100]
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
  sparse:
    type: sparse
    idf: bm25_plus1
{field_a}    sparse_encoder: {{type: precomputed, documents: docs.jsonl, queries: queries.jsonl}}
  sparse_top32:
    type: sparse
    idf: bm25_plus1
{field_b}    sparse_encoder: {{type: precomputed, documents: docs_top32.jsonl, queries: queries.jsonl}}
  hybrid:
    type: rrf
    of: [bm25, sparse]
floors:
  sparse:
    ndcg@10: 0.62
    sparse_doc_nnz: 130
    sparse_query_nnz: 15
    flops: 3.5
  sparse_top32:
    ndcg@10: 0.5
    sparse_doc_nnz: 32
  hybrid:
    ndcg@10: 0.62
"""


def suite_text(beir: Path, index: str = "", fields: Tuple[str, str] = ("", "")) -> str:
    return SUITE.format(
        beir=beir,
        index=f"  index: {{name: {index}}}\n" if index else "",
        field_a=f"    field: {fields[0]}\n" if fields[0] else "",
        field_b=f"    field: {fields[1]}\n" if fields[1] else "",
    )


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory, scifact_dir: Path) -> Path:
    """The suite and its precomputed vectors (documents: BM25 term weights; queries: 1 per term)."""
    sys.path.insert(0, str(ROOT / "tests" / "sparse"))
    try:
        import bm25_encoder
    finally:
        sys.path.pop(0)
    folder = tmp_path_factory.mktemp("sparse-suite")
    docs = [json.loads(line) for line in (scifact_dir / "corpus.jsonl").open()]
    vectors = bm25_encoder.documents([f"{d['title']} {d['text']}" for d in docs])
    top32 = [dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[:32]) for v in vectors]
    for name, rows in (("docs.jsonl", vectors), ("docs_top32.jsonl", top32)):
        with (folder / name).open("w") as fh:
            fh.writelines(json.dumps({"_id": d["_id"], "vector": v}) + "\n" for d, v in zip(docs, rows))
    queries = [json.loads(line) for line in (scifact_dir / "queries.jsonl").open()]
    q_vectors = bm25_encoder.queries([q["text"] for q in queries])
    with (folder / "queries.jsonl").open("w") as fh:
        fh.writelines(json.dumps({"_id": q["_id"], "vector": v}) + "\n" for q, v in zip(queries, q_vectors))
    (folder / "retrieval_sparse.yaml").write_text(suite_text(scifact_dir))
    return folder


def run_pytest(folder: Path, suite: str, backend: str, url: str, out: Path) -> dict:
    """The suite run by pytest in a subprocess -> {"rc", "output", "report", "runs"}."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RETRIEVAL_HOSTS=url)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "pytest", suite, "-p", "no:cacheprovider", "-q", "--rootdir", str(folder)]
    cmd += [
        "--retrieval-backend",
        backend,
        "--retrieval-no-latency",
        "--retrieval-report",
        str(out / "r.json"),
    ]
    cmd += ["--retrieval-runs", str(out / "runs"), "--retrieval-markdown", str(out / "r.md")]
    cmd += ["--retrieval-html", str(out / "r.html"), "--retrieval-openmetrics", str(out / "r.prom")]
    try:
        proc = subprocess.run(
            cmd,
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT_S,
        )
        rc, output = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        partial = exc.output or b""
        rc, output = "timeout", (partial.decode(errors="replace") if isinstance(partial, bytes) else partial)
    report = out / "r.json"
    return {
        "rc": rc,
        "output": output,
        "report": json.loads(report.read_text())["suites"][0] if report.exists() else None,
        "runs": out / "runs" / "scifact-sparse",
        "out": out,
    }


@pytest.fixture(scope="module")
def suite_run(suite_dir: Path) -> Callable[[Optional[Instance]], dict]:
    """``suite_run(instance)`` (None: embedded): the suite's run there, once per module, one
    after the other."""
    results: Dict[str, dict] = {}

    def run(instance: Optional[Instance]) -> dict:
        key = "embedded" if instance is None else instance.key
        if key not in results:
            results[key] = run_pytest(
                suite_dir,
                "retrieval_sparse.yaml",
                "embedded" if instance is None else instance.name,
                "http://127.0.0.1:9" if instance is None else instance.url,
                suite_dir / f"out-{key}",
            )
        return results[key]

    return run


def read_run(path: Path) -> Dict[str, List[Tuple[str, float]]]:
    """A TREC run file -> qid -> [(doc, score)] in rank order."""
    run: Dict[str, List[Tuple[str, float]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, []).append((doc, float(score)))
    return run


def passed(result: dict, name: str) -> dict:
    assert result["rc"] == 0, f"pytest exited {result['rc']} on {name}:\n{result['output'][-4000:]}"
    suite = result["report"]
    assert suite is not None, result["output"][-4000:]
    failed = [g for g in suite["gates"] if not g["passed"]]
    assert not failed, f"{name}: gates not met: {failed}"
    kinds = {(g["retriever"], g["metric"]) for g in suite["gates"]}
    assert {("sparse", "flops"), ("sparse", "sparse_doc_nnz"), ("sparse_top32", "sparse_doc_nnz")} <= kinds
    return suite


@pytest.mark.parametrize("instance", [pytest.param(None, id="embedded")] + instance_params(INSTANCES))
def test_sparse_suite_gates_pass(instance, suite_run, record_property):
    """Every gate passes; the cost facts are the embedded engine's (they are the vectors', not
    the engine's); an engine's summary and JSON report say the precision it scored at, per field
    (two encoders: two fields)."""
    if instance is not None:
        _require(instance)
    name = "embedded" if instance is None else instance.id
    result = suite_run(instance)
    suite = passed(result, name)
    facts = {r["name"]: r["sparse"] for r in suite["retrievers"] if r.get("sparse")}
    assert set(facts) == set(SPARSE)
    assert facts["sparse_top32"]["sparse_doc_nnz"] <= 32 < facts["sparse"]["sparse_doc_nnz"]
    for r in suite["retrievers"]:
        record_property(f"{r['name']}_ndcg@10", r["metrics"]["ndcg@10"])
    for report in ("r.md", "r.html"):  # the cost facts reach every report
        assert "non-zero terms per document" in (result["out"] / report).read_text(), report
    assert 'retriever="sparse_top32",fact="sparse_doc_nnz"} 32.0' in (result["out"] / "r.prom").read_text()
    if instance is None:
        assert "Lucene feature precision" not in result["output"]
        return
    assert facts == {
        r["name"]: r["sparse"] for r in passed(suite_run(None), "embedded")["retrievers"] if r.get("sparse")
    }
    fields = suite["backend"]["sparse"]
    assert set(fields) == {"sparse_embedding", "sparse_embedding-2"}, fields
    for field, info in fields.items():
        assert info["precision_bits"] == 9 and "Lucene feature precision (9 bits)" in info["score_precision"]
        summary = [line for line in result["output"].splitlines() if f"field {field} " in line]
        assert summary and "Lucene feature precision (9 bits)" in summary[0], result["output"][-3000:]
    for report in ("r.md", "r.html"):
        assert "Lucene feature precision (9 bits)" in (result["out"] / report).read_text(), report
    index = suite["backend"]["index"]
    assert http(instance.url, path=f"/{index}")[0] == 404, f"{index} left behind"


def top10_parity(
    engine: Dict[str, List[Tuple[str, float]]], exact: Dict[str, List[Tuple[str, float]]]
) -> dict:
    """The engine's top 10 against the embedded (exact) run: asserts the 9-bit bound per hit and
    returns the figures."""
    overlap, identical, worst = [], 0, 0.0
    for qid, ranked in exact.items():
        want = ranked[:K]
        got = engine.get(qid, [])[:K]
        assert len(got) == len(want), (qid, len(got), len(want))
        if not want:
            continue
        exact_of = dict(ranked)
        tenth = want[-1][1]
        for doc, score in got:
            assert doc in exact_of, (qid, doc, "not in the embedded top 100")
            e = exact_of[doc]
            rel = (e - score) / e
            worst = max(worst, abs(rel))
            assert -SLACK <= rel < PRECISION + SLACK, (qid, doc, score, e)
            assert e >= tenth * (1 - PRECISION - SLACK), (qid, doc, e, tenth, "outside the embedded top 10")
        overlap.append(len({d for d, _ in got} & {d for d, _ in want}) / len(want))
        identical += [d for d, _ in got] == [d for d, _ in want]
    return {
        "top10_overlap": sum(overlap) / len(overlap),
        "top10_identical_queries": identical,
        "max_rel_score_error": worst,
    }


@pytest.mark.parametrize("instance", instance_params(INSTANCES))
def test_sparse_suite_top10_as_embedded(instance, suite_run, record_property):
    """Each sparse retriever's top 10 on the engine is the embedded engine's up to 9-bit
    document weights; nDCG@10 of every retriever within 0.01 of the embedded engine's."""
    _require(instance)
    embedded, engine = suite_run(None), suite_run(instance)
    ndcg = {}
    for key, result in (("embedded", embedded), ("engine", engine)):
        ndcg[key] = {r["name"]: r["metrics"]["ndcg@10"] for r in passed(result, key)["retrievers"]}
    for name in SPARSE:
        figures = top10_parity(
            read_run(engine["runs"] / f"{name}.run"), read_run(embedded["runs"] / f"{name}.run")
        )
        figures["ndcg10_diff"] = ndcg["engine"][name] - ndcg["embedded"][name]
        for what, value in figures.items():
            record_property(f"{name}_{what}", value)
        print(instance.id, name, figures)
        assert figures["top10_overlap"] > 0.97 and abs(figures["ndcg10_diff"]) < 0.005, figures
    for name in ("bm25", "hybrid"):
        diff = ndcg["engine"][name] - ndcg["embedded"][name]
        record_property(f"{name}_ndcg10_diff", diff)
        assert abs(diff) <= NDCG_TOLERANCE, (name, ndcg)


# one Elasticsearch is enough for the existing-index wiring: 9.5, else the one this run has
EXISTING = [i for i in ES_INSTANCES if i.key == "es9"] or ES_INSTANCES[:1]


def _bulk_existing(url: str, index: str, folder: Path, beir: Path) -> None:
    """An index as a team would build it: title/text and two sparse_vector fields."""
    mapping = {
        "properties": {
            "title": {"type": "text"},
            "text": {"type": "text"},
            "splade": {"type": "sparse_vector"},
            "splade_small": {"type": "sparse_vector"},
        }
    }
    body = {"settings": {"number_of_shards": 1, "number_of_replicas": 0}, "mappings": mapping}
    status, answer = http(url, "PUT", f"/{index}", body)
    assert status == 200, answer
    small = {}
    for line in (folder / "docs_top32.jsonl").open():
        row = json.loads(line)
        small[row["_id"]] = row["vector"]
    full = {}
    for line in (folder / "docs.jsonl").open():
        row = json.loads(line)
        full[row["_id"]] = row["vector"]
    lines: List[str] = []
    for line in (beir / "corpus.jsonl").open():
        d = json.loads(line)
        source = {
            "title": d["title"],
            "text": d["text"],
            "splade": full[d["_id"]],
            "splade_small": small[d["_id"]],
        }
        lines += [json.dumps({"index": {"_id": d["_id"]}}), json.dumps(source)]
    for start in range(0, len(lines), 2000):
        status, answer = http(
            url, "POST", f"/{index}/_bulk", "\n".join(lines[start : start + 2000]) + "\n", 120
        )
        assert status == 200 and not answer["errors"], str(answer)[:2000]
    assert http(url, "POST", f"/{index}/_refresh")[0] == 200


@pytest.mark.parametrize("instance", instance_params(EXISTING))
def test_existing_index_with_sparse_fields(instance, suite_dir, suite_run, scifact_dir: Path):
    """The same suite against an index of one's own (``index: {name}``, each sparse retriever
    naming its ``field``): gates pass, the index is only read, and each sparse retriever ranks
    and scores exactly as on the throwaway index of the same engine."""
    _require(instance)
    index = random_name("sparse-existing")
    try:
        _bulk_existing(instance.url, index, suite_dir, scifact_dir)
        (suite_dir / "retrieval_existing.yaml").write_text(
            suite_text(scifact_dir, index, ("splade", "splade_small"))
        )
        result = run_pytest(
            suite_dir, "retrieval_existing.yaml", "elasticsearch", instance.url, suite_dir / "out-existing"
        )
        suite = passed(result, f"{instance.id} existing index")
        assert suite["backend"]["index_mode"] == "existing"
        assert set(suite["backend"]["sparse"]) == {"splade", "splade_small"}, suite["backend"]["sparse"]
        assert "field splade " in result["output"]
        throwaway = suite_run(instance)
        for name in SPARSE:
            mine = read_run(result["runs"] / f"{name}.run")
            theirs = read_run(throwaway["runs"] / f"{name}.run")
            assert mine == theirs, name
        assert http(instance.url, path=f"/{index}/_count")[1]["count"] == 5183
    finally:
        http(instance.url, "DELETE", f"/{index}")
