"""Canary queries and stability gates end to end through pytest (issue #33): the baseline stores
the rankings, an unchanged pipeline passes, a change of ranking fails with the queries that moved,
``judge pool --from-diff`` pools what entered unjudged, a baseline without the rankings is an
error. A tiny inline suite: each pytest run is a few seconds."""

from __future__ import annotations

import json

import pytest

from pytest_retrieval.cli.app import main

from ..stability_suite import SEARCH_TEXT_TOO, canary_rows, run_with_report, stability_suite, write_canary

pytest_plugins = ["pytester"]

SUITE = stability_suite()
CANARY = canary_rows()
_canary, _run = write_canary, run_with_report


def test_canary_stability_workflow(pytester, capsys) -> None:
    suite = pytester.makefile(".yaml", retrieval_stable=SUITE)
    _canary(pytester, CANARY)
    result, _ = _run(pytester)  # no baseline: skipped, said
    result.assert_outcomes(skipped=2)
    assert "no stability comparison" in result.stdout.str()

    _run(pytester, "--retrieval-baseline-update")
    doc = json.loads((pytester.path / "retrieval_stable.baseline.json").read_text())
    entry = doc["retrievers"]["bm25"]
    assert set(entry["canary"]) == {"c1", "c2", "c3"} and entry["top_depth"] == 10
    assert set(doc["fingerprint"]["canary_hashes"]) == {"c1", "c2", "c3"}
    assert "c1" not in entry["per_query"]["ndcg@10"]  # never scored by a relevance measure

    result, report = _run(pytester)
    result.assert_outcomes(passed=2)
    section = report["suites"][0]["stability"]
    rbo = next(o for o in section["outcomes"] if o["measure"] == "rbo@10")
    assert (
        rbo["value"] == pytest.approx(1.0, abs=1e-12)
        and rbo["canary"]["queries"] == 3
        and rbo["judged"]["queries"] == 2
    )
    assert "3 canary queries: 100% top 10 unchanged" in result.stdout.str()

    # ranking changes (the text searched too: documents enter); a canary's text changed is left out and counted
    suite.write_text(SUITE.replace(*SEARCH_TEXT_TOO))
    _canary(pytester, CANARY[:2] + [{"_id": "c3", "text": "loop gravity"}])
    result, report = _run(pytester)
    out = result.stdout.str()
    assert result.ret == 1
    assert "stable :: bm25 :: stability:rbo@10" in out and "below the floor" in out
    assert "most changed queries" in out and "1 left out (text changed" in out
    assert "Traceback" not in out
    bm25 = report["suites"][0]["stability"]["retrievers"]["bm25"]
    assert bm25["left_out"] == 1 and bm25["most_changed"]

    # pool the unjudged documents that entered
    pairs = pytester.path / "pairs.jsonl"
    assert main(["judge", "pool", "--from-diff", str(pytester.path / "report.json"), "-o", str(pairs)]) == 0
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert rows and all(r["grade"] is None and r["title"] for r in rows)
    entered = {
        (c["query"], e["doc"]) for c in bm25["most_changed"] for e in c["entered"] if e["grade"] is None
    }
    assert {(r["query_id"], r["doc_id"]) for r in rows} == entered
    assert "to annotate" in capsys.readouterr().err


def test_baseline_without_canary_rankings_is_an_error(pytester) -> None:
    pytester.makefile(".yaml", retrieval_stable=SUITE.replace("  canary: canary.jsonl\n", ""))
    _run(pytester, "--retrieval-baseline-update")  # a baseline without canary rankings
    pytester.makefile(".yaml", retrieval_stable=SUITE)
    _canary(pytester, CANARY)
    result, _ = _run(pytester)
    out = result.stdout.str()
    assert result.ret == 1 and "2 errored" in out  # an error of the gate, never a pass
    assert "has no rankings of the canary queries" in out and "--retrieval-baseline-update" in out
