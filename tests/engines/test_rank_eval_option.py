"""``--retrieval-rank-eval`` (``evaluation.rank_eval``) on every engine of the matrix (issue #34):
a suite run through pytest with the option reports, in the JSON report and the summary, that the
engine's own ``_rank_eval`` agrees with the plugin on every query and measure (OpenSearch 2.19
and 3.6, which ``scripts/engines`` gives the rank-eval module), names the retriever it cannot
express (a client-side fusion) and the measure it has no form for (``ndcg'@10``), and on an
engine without the module (the integ-test Elasticsearch builds) is one line, not a pass of the
check and not a traceback.

The example suite's data (100 SciFact queries over 671 abstracts, its MiniLM vectors): two BM25
retrievers and a kNN one (its body as the quality pass sent it, the clause's k at the run's
depth), no latency pass; one run per engine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "example_suite" / "data"
MEASURES = ["ndcg@10", "precision@10", "recall@10", "mrr@10", "err@10"]


def _suite(tmp_path: Path, engine) -> Path:
    path = tmp_path / "retrieval_rank_eval.yaml"
    path.write_text(
        f"""suite: rank-eval-check
judgments:
  queries: {DATA / "queries.jsonl"}
  qrels: {DATA / "qrels.tsv"}
  corpus: {DATA / "corpus.jsonl"}
embedder:
  type: precomputed
  queries: {DATA / "vectors" / "queries.npy"}
  query_ids: {DATA / "vectors" / "query_ids.txt"}
  documents: {DATA / "vectors" / "corpus.npy"}
  document_ids: {DATA / "vectors" / "corpus_ids.txt"}
backend:
  type: {engine.name}
  connection:
    hosts: ["{engine.url}"]
evaluation:
  metrics: [{", ".join(MEASURES)}, map@10, "ndcg'@10"]
retrievers:
  bm25: {{type: bm25, fields: [title, text]}}
  title: {{type: bm25, fields: [title]}}
  dense: {{type: knn, similarity: cosine}}
  rrf: {{type: rrf, of: [bm25, dense]}}
floors:
  bm25: {{ndcg@10: 0.0}}
"""
    )
    return path


def test_rank_eval_option(engine, tmp_path):
    suite = _suite(tmp_path, engine)
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", "-q", "-rA"]
    cmd += ["--retrieval-rank-eval", "--retrieval-no-latency", "--retrieval-report", str(report)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    check = json.loads(report.read_text())["suites"][0]["rank_eval"]
    if engine.name == "elasticsearch":  # the integ-test builds have no rank-eval module
        assert check["unavailable"] and "_rank_eval" in check["unavailable"], check
        assert check["compared"] == {} and check["disagreements"] == []
        lines = [line for line in out.splitlines() if "_rank_eval cross-check" in line]
        assert len(lines) == 1 and "not run" in lines[0], lines
        return
    assert check["unavailable"] is None, check
    assert check["measures"] == MEASURES
    assert check["disagreements"] == [], check["disagreements"][:5]
    assert set(check["compared"]) == {"bm25", "title", "dense"} and min(check["compared"].values()) >= 5 * 90
    assert "fused client-side" in check["skipped"]["rrf"]
    assert any("ndcg'@10" in why for why in check["not_expressible"])
    assert "_rank_eval cross-check, bm25: " in out and "all agree" in out
