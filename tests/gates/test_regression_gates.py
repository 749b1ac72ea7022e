"""Baseline workflow end to end through pytest: write, compare, catch a real regression."""

from __future__ import annotations

import json
from pathlib import Path

pytest_plugins = ["pytester"]

DATA = Path(__file__).resolve().parents[2] / "example_suite" / "data"

SUITE = f"""\
suite: regress
judgments:
  queries: {DATA}/queries.jsonl
  qrels: {DATA}/qrels.tsv
  corpus: {DATA}/corpus.jsonl
  tags: {DATA}/tags.tsv
latency:
  enabled: false
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
regression:
  max_drop: {{ndcg@10: 0.01}}
  strata: true
  resamples: 2000
floors:
  bm25:
    ndcg@10: 0.3
    ndcg@10[contradicts]: 0.3
"""


def _run(pytester, *args):
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess("-q", "-rs", f"--retrieval-report={report}", *args)
    return result, json.loads(report.read_text())


def test_baseline_workflow(pytester) -> None:
    suite = pytester.makefile(".yaml", retrieval_regress=SUITE)
    # 1. no baseline yet: the regression gate says so and skips (never a silent pass)
    result, _ = _run(pytester)
    result.assert_outcomes(passed=2, skipped=1)
    assert "no baseline at" in result.stdout.str()

    # 2. write it: diff-friendly JSON beside the suite
    result, _ = _run(pytester, "--retrieval-baseline-update")
    baseline = pytester.path / "retrieval_regress.baseline.json"
    assert baseline.exists() and "baseline written" in result.stdout.str()
    doc = json.loads(baseline.read_text())
    assert "ndcg@10" in doc["retrievers"]["bm25"]["per_query"]

    # 3. unchanged pipeline: identical numbers, passes, repeatedly
    for _ in range(2):
        result, report = _run(pytester)
        result.assert_outcomes(passed=3)
        (reg,) = report["suites"][0]["regressions"]
        assert reg["comparison"]["mean_diff"] == 0.0 and reg["passed"]

    # 4. a real regression: search the titles only (the abstracts field dropped)
    suite.write_text(SUITE.replace("fields: [title, text]", "fields: [title]"))
    result, report = _run(pytester)
    out = result.stdout.str()
    assert result.ret == 1
    assert "regress :: bm25 :: ndcg@10 vs baseline" in out
    (reg,) = report["suites"][0]["regressions"]
    assert not reg["passed"] and reg["comparison"]["mean_diff"] < -0.01
    assert "Traceback" not in out

    # 5. a change within the margin passes: a small tie_breaker tweak
    suite.write_text(SUITE.replace("fields: [title, text]", "fields: [title, text]\n    tie_breaker: 0.05"))
    result, report = _run(pytester)
    (reg,) = report["suites"][0]["regressions"]
    assert reg["passed"], reg["comparison"]
    result.assert_outcomes(passed=3)


def _regrade(n: int) -> str:
    """The example qrels with the judgments of its first ``n`` queries graded 2 instead of 1."""
    lines = (DATA / "qrels.tsv").read_text().splitlines()
    qids = list(dict.fromkeys(line.split("\t")[0] for line in lines[1:]))[:n]
    out = [lines[0]]
    for line in lines[1:]:
        q, d, g = line.split("\t")
        out.append(f"{q}\t{d}\t{2 if q in qids else g}")
    return "\n".join(out) + "\n"


def test_changed_qrels_compare_the_unchanged_queries_or_refuse(pytester) -> None:
    pytester.makefile(".yaml", retrieval_regress=SUITE)
    _run(pytester, "--retrieval-baseline-update")
    qrels = pytester.path / "qrels.tsv"
    changed = SUITE.replace(f"{DATA}/qrels.tsv", str(qrels))
    # a few judgments changed: compared on the others, the left-out ones named
    qrels.write_text(_regrade(3))
    pytester.makefile(".yaml", retrieval_regress=changed)
    result, report = _run(pytester)
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert "compared on 97 of 100 baseline queries; left out: 3 judgments changed (" in out
    (reg,) = report["suites"][0]["regressions"]
    assert len(reg["left_out"]) == 3 and reg["comparison"]["n"] == 97
    # too many changed (fewer than min_compared 0.8 unchanged): refused, floors only
    qrels.write_text(_regrade(30))
    result, _ = _run(pytester)
    result.assert_outcomes(passed=2, skipped=1)
    assert "only 70 of the baseline's 100 queries are unchanged" in result.stdout.str()
    pytester.makefile(
        ".yaml", retrieval_regress=changed.replace("  strata: true", "  strata: true\n  min_compared: 0.6")
    )
    result, _ = _run(pytester)
    result.assert_outcomes(passed=3)
    pytester.makefile(
        ".yaml",
        retrieval_regress=changed.replace(
            "  resamples: 2000", "  resamples: 2000\n  on_fingerprint_mismatch: error"
        ),
    )
    result, _ = _run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    assert "ConfigError" in result.stdout.str()
    # the metric profile changed: every value incomparable
    pytester.makefile(".yaml", retrieval_regress=SUITE + "evaluation:\n  profile: trec\n")
    result, _ = _run(pytester)
    result.assert_outcomes(passed=2, skipped=1)
    assert (
        "the inputs changed since the baseline (metric settings changed: average_over none -> run, profile exp -> trec)"
        in result.stdout.str()
    )


def test_stratum_floor_catches_what_the_aggregate_hides(pytester) -> None:
    pytester.makefile(
        ".yaml", retrieval_regress=SUITE.replace("ndcg@10[contradicts]: 0.3", "ndcg@10[contradicts]: 0.99")
    )
    result, _ = _run(pytester)
    out = result.stdout.str()
    assert "regress :: bm25 :: ndcg@10[contradicts] = " in out and "below the floor" in out
    result.assert_outcomes(passed=1, failed=1, skipped=1)
