"""Stability against a stored run of the history (issue #33): ``--retrieval-stability-against RUN``
compares the rankings with those a run of ``--retrieval-history`` kept, as with the baseline's:
the record keeps the canary queries' rankings and text hashes; an unchanged pipeline passes
against a tag; a ranking change fails against ``latest`` with the stored run named, a changed
canary text left out and counted, the system change named; a run that kept no canary rankings is
an error of one line, never a pass. The tiny suite of tests/stability_suite.py: a few seconds a run."""

from __future__ import annotations

import json

from pytest_retrieval.history import open_store
from pytest_retrieval.history.rankings import stored_rankings

from ..stability_suite import SEARCH_TEXT_TOO, canary_rows, run_with_report, stability_suite, write_canary

pytest_plugins = ["pytester"]

SUITE = stability_suite()


def test_stability_against_a_stored_run(pytester) -> None:
    history = str(pytester.path / "history.sqlite")
    suite = pytester.makefile(".yaml", retrieval_stable=SUITE.replace("  canary: canary.jsonl\n", ""))
    result, _ = run_with_report(
        pytester, f"--retrieval-history={history}", "--retrieval-history-tag=nocanary"
    )
    write_canary(pytester, canary_rows())
    suite.write_text(SUITE)
    result, _ = run_with_report(pytester, f"--retrieval-history={history}", "--retrieval-history-tag=v1")

    # the record keeps what a later run compares with
    store = open_store(history)
    try:
        record = store.load(store.resolve("v1"))
    finally:
        store.close()
    stored = stored_rankings(record, "stable")
    assert set(stored.canary["bm25"]) == {"c1", "c2", "c3"} and set(stored.by_retriever["bm25"]) == {
        "q1",
        "q2",
    }
    assert set(stored.fingerprint["canary_hashes"]) == {"c1", "c2", "c3"}

    # unchanged: passes against the tagged run, which the summary and the report name
    result, report = run_with_report(
        pytester, f"--retrieval-history={history}", "--retrieval-stability-against=v1"
    )
    result.assert_outcomes(passed=2)
    section = report["suites"][0]["stability"]
    run_id = record["run"]["id"]
    assert section["against"] == f"stored run {run_id[:12]} (v1)"
    assert f"stability against stored run {run_id[:12]} (v1)'s rankings" in result.stdout.str()
    assert all(o["against"] == section["against"] for o in section["outcomes"])

    # ranking changed, c3's text too: fails against the latest run, c3 left out and counted
    suite.write_text(SUITE.replace(*SEARCH_TEXT_TOO))
    write_canary(pytester, canary_rows()[:2] + [{"_id": "c3", "text": "loop gravity"}])
    result, report = run_with_report(
        pytester, f"--retrieval-history={history}", "--retrieval-stability-against=latest"
    )
    out = result.stdout.str()
    assert result.ret == 1 and "stable :: bm25 :: stability:rbo@10" in out and "below the floor" in out
    assert "(latest)'s rankings:" in out and "1 left out (text changed" in out
    assert "system changes, compared:" in out and "Traceback" not in out
    bm25 = report["suites"][0]["stability"]["retrievers"]["bm25"]
    assert bm25["left_out"] == 1 and bm25["most_changed"] and bm25["system"]

    # a run that kept no rankings of the canary queries: an error of each gate, one line
    result, report = run_with_report(
        pytester, f"--retrieval-history={history}", "--retrieval-stability-against=nocanary"
    )
    out = result.stdout.str()
    assert result.ret == 1 and "2 errored" in out and "Traceback" not in out
    assert "(nocanary) kept no rankings of the canary queries" in out
    assert "--retrieval-stability-against" in out
    assert (
        "kept no rankings of the canary queries"
        in report["suites"][0]["stability"]["retrievers"]["bm25"]["note"]
    )
    assert json.dumps(report)  # the report is written whole

    # no such run: an error of each gate, one line naming the option and the store
    result, _ = run_with_report(
        pytester, f"--retrieval-history={history}", "--retrieval-stability-against=nosuch"
    )
    out = result.stdout.str()
    assert result.ret == 1 and "2 errored" in out and "Traceback" not in out
    assert "--retrieval-stability-against nosuch: history" in out and "no run, tag or commit 'nosuch'" in out
