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


def test_counts_and_the_geometric_mean_are_not_gated_as_scores(tmp_path: Path) -> None:
    import pytest

    from pytest_retrieval.errors import ConfigError

    cases = [
        ({"floors": {"bm25": {"num_ret": 1}}}, "floors.bm25.num_ret", "is a count"),
        ({"floors": {"bm25": {"num_rel_ret[x]": 1}}}, "floors.bm25", "is a count"),
        ({"regression": {"max_drop": {"gm_map": 0.1}}}, "regression.max_drop.gm_map", "geometric mean"),
    ]
    for extra, key, fragment in cases:
        doc = {**yaml.safe_load(BASE), "floors": {"bm25": {"ndcg@10": 0.1}}, **extra}
        path = tmp_path / "s.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_suite(path)
        message = str(info.value)
        assert "\n" not in message and key in message and fragment in message, message
    # gm_map is a floor like any other (its figure, the geometric mean, against the floor)
    doc = {**yaml.safe_load(BASE), "floors": {"bm25": {"gm_map": 0.1}}}
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert "gm_map" in load_suite(path).metrics
