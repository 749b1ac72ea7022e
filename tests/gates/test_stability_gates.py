"""Canary queries and stability gates end to end through pytest (issue #33): the baseline stores
the rankings, an unchanged pipeline passes, a change of ranking fails with the queries that moved,
a baseline without the rankings is an error."""

from __future__ import annotations

import json
from pathlib import Path

pytest_plugins = ["pytester"]

DATA = Path(__file__).resolve().parents[2] / "example_suite" / "data"

SUITE = f"""\
suite: stable
judgments:
  queries: {DATA}/queries.jsonl
  qrels: {DATA}/qrels.tsv
  corpus: {DATA}/corpus.jsonl
  canary: canary.jsonl
latency:
  enabled: false
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
stability:
  bm25: {{rbo@10: 0.9, top1_changed: 0.05}}
"""

CANARY = [
    {"_id": "c1", "text": "vitamin D deficiency and bone fractures"},
    {"_id": "c2", "text": "gene expression in tumour cells"},
    {"_id": "c3", "text": "antibiotic resistance of bacteria"},
]


def _run(pytester, *args):
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess("-q", "-rs", f"--retrieval-report={report}", *args)
    return result, json.loads(report.read_text())


def test_canary_stability_workflow(pytester) -> None:
    suite = pytester.makefile(".yaml", retrieval_stable=SUITE)
    (pytester.path / "canary.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CANARY))
    result, _ = _run(pytester)  # no baseline: skipped, said
    result.assert_outcomes(skipped=2)
    assert "no stability comparison" in result.stdout.str()

    result, _ = _run(pytester, "--retrieval-baseline-update")
    doc = json.loads((pytester.path / "retrieval_stable.baseline.json").read_text())
    entry = doc["retrievers"]["bm25"]
    assert set(entry["canary"]) == {"c1", "c2", "c3"} and entry["top_depth"] >= 10
    assert set(doc["fingerprint"]["canary_hashes"]) == {"c1", "c2", "c3"}
    assert "c1" not in entry["per_query"]["ndcg@10"]  # never scored by a relevance measure

    result, report = _run(pytester)
    result.assert_outcomes(passed=2)
    outcomes = report["suites"][0]["stability"]["outcomes"]
    assert {o["measure"] for o in outcomes} == {"rbo@10", "top1_changed"}
    rbo = next(o for o in outcomes if o["measure"] == "rbo@10")
    assert rbo["value"] == 1.0 and rbo["canary"]["queries"] == 3 and rbo["judged"]["queries"] > 0
    assert "3 canary queries" in result.stdout.str()

    # ranking changes: titles only; a canary text changed is left out and counted
    suite.write_text(SUITE.replace("fields: [title, text]", "fields: [title]"))
    CANARY[2]["text"] = "antibiotic resistance"
    (pytester.path / "canary.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CANARY))
    result, report = _run(pytester)
    out = result.stdout.str()
    assert result.ret == 1
    assert "stable :: bm25 :: stability:rbo@10" in out and "below the floor" in out
    assert "most changed queries" in out and "entered:" in out
    assert "1 left out (text changed" in out
    assert "Traceback" not in out


def test_baseline_without_rankings_is_an_error(pytester) -> None:
    pytester.makefile(".yaml", retrieval_stable=SUITE)
    (pytester.path / "canary.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CANARY))
    _run(pytester, "--retrieval-baseline-update")
    path = pytester.path / "retrieval_stable.baseline.json"
    (pytester.path / "retrieval_stable.yaml").write_text(SUITE.replace("  canary: canary.jsonl\n", ""))
    _run(pytester, "--retrieval-baseline-update")  # a baseline without canary rankings
    (pytester.path / "retrieval_stable.yaml").write_text(SUITE)
    result, _ = _run(pytester)
    result.assert_outcomes(errors=0, failed=0, passed=0) if False else None
    out = result.stdout.str()
    assert "has no rankings of the canary queries" in out and "--retrieval-baseline-update" in out
    assert result.ret != 0
    assert path.exists()
