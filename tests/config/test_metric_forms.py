"""The measure registry's metric forms in a suite file: a parameter (``rbp(0.9)``), a prime
for judged documents only (``ndcg'@10``), trec_eval's and ir_measures' spellings, in
``evaluation.metrics``, floors and the baseline comparison; printed canonical."""

from __future__ import annotations

from pathlib import Path

import yaml

from pytest_retrieval.config.load import load_suite

from ..hostile.conftest import BASE


def test_new_metric_forms_load_everywhere_metrics_are_accepted(tmp_path: Path) -> None:
    doc = yaml.safe_load(BASE)
    doc["evaluation"] = {"metrics": ["RBP(p=0.9)@10", "iprec_at_recall_0.50", "ERR@20", "Judged@10"]}
    doc["floors"] = {"bm25": {"ndcg'@10": 0.1, "condensed(map)": 0.1, "bpref": 0.1}}
    doc["regression"] = {"max_drop": {"nDCG'@10": 0.02, "rbp": 0.02}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    suite = load_suite(path)
    for metric in (
        "rbp(0.9)@10",
        "iprec(0.5)",
        "err@20",
        "judged@10",
        "ndcg'@10",
        "map'",
        "bpref",
        "rbp(0.8)",
    ):
        assert metric in suite.metrics, (metric, suite.metrics)
    assert {f.metric for f in suite.floors} >= {"ndcg'@10", "map'", "bpref"}
    assert {g[1] for g in suite.regression} == {"ndcg'@10", "rbp(0.8)"}
