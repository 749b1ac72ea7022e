"""The sweep's check mode on the real OpenSearch servers (2.19 and 3.6): offline replay and the server's
hybrid query through a search pipeline must rank alike for every variant checked (the best,
the defaults, an RRF with a non-default rank constant, each normalisation x combination)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_retrieval import cli

pytestmark = pytest.mark.engines


def test_sweep_check_mode_agrees_with_opensearch(
    os_instance, shared_dir, tmp_path: Path, capsys, record_property
) -> None:
    os_url = os_instance.url
    sci = shared_dir / "data" / "scifact"
    emb = sci / "embeddings" / "all-MiniLM-L6-v2"
    suite = tmp_path / "retrieval_sweep.yaml"
    suite.write_text(f"""\
suite: sweep-check
judgments: {{beir: {sci}, split: test}}
embedder:
  type: precomputed
  queries: {emb}/queries.npy
  query_ids: {emb}/query_ids.txt
  documents: {emb}/corpus.npy
  document_ids: {emb}/corpus_ids.txt
backend:
  type: opensearch
  connection: {{hosts: ["{os_url}"]}}
retrievers:
  bm25: {{type: bm25, fields: [title, text]}}
  dense: {{type: knn, similarity: cosine}}
  hybrid: {{type: rrf, of: [bm25, dense], window: 100}}
floors:
  hybrid: {{ndcg@10: 0.6}}
""")
    code = cli.main(
        ["sweep", str(suite), "--check", "--check-variants", "9", "--rank-constants", "5,60", "--json"]
    )
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err  # 2: the sweep itself could not run
    out = json.loads(captured.out)
    check = out["check"]
    labels = [v["label"] for v in check["variants"]]
    assert any(l.startswith("rrf k=5 ") for l in labels), labels  # a non-default constant
    families = {tuple(l.split()[1:3]) for l in labels if l.startswith("weighted")}
    assert len(families) == 6, labels  # every norm x combination
    bad = [v for v in check["variants"] if v["mismatches"]]
    assert code == 0 and check["ok"], bad[:1]
    assert check["queries"] == 300
    assert max(v["max_score_diff"] for v in check["variants"]) < 1e-6
    record_property("variants_checked", len(check["variants"]))
    record_property("max_score_diff", max(v["max_score_diff"] for v in check["variants"]))
    print(
        f"{os_instance.id}: {len(check['variants'])} variants, {check['queries']} queries, "
        f"max score diff {max(v['max_score_diff'] for v in check['variants']):.2e}"
    )
