"""The plugin end to end through pytest itself (pytester): collection, verdicts, messages,
errors vs failures, reports."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .tiny import TINY_SUITE as SUITE

pytest_plugins = ["pytester"]


@pytest.fixture
def suite(pytester: pytest.Pytester):
    def make(text: str = SUITE, name: str = "retrieval_tiny.yaml"):
        return pytester.makefile(".yaml", **{name[:-5]: textwrap.dedent(text)})

    return make


def test_items_are_named_by_suite_retriever_metric(pytester, suite) -> None:
    suite()
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    lines = [l for l in result.outlines if "::" in l]
    assert lines == [
        "retrieval_tiny.yaml::bm25::ndcg@10",
        "retrieval_tiny.yaml::bm25::p95_ms",
        "retrieval_tiny.yaml::rrf::recall@10",
    ]


def test_passing_suite_prints_the_summary_table(pytester, suite) -> None:
    suite()
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    assert "retrieval summary" in out
    assert "tiny (retrieval_tiny.yaml) on embedded (" in out
    assert "p95 ms" in out and "PASS  bm25 ndcg@10" in out
    assert "1 judged without a relevant document left out (average_over: relevant): q4" in out


def test_failed_gate_says_what_got_worse_and_for_which_queries(pytester, suite) -> None:
    suite(SUITE.replace("ndcg@10: 0.5", "ndcg@10: 0.99"))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "tiny :: bm25 :: ndcg@10 = " in out
    assert "below the floor >= 0.9900" in out
    assert "floor set at" in out and "retrieval_tiny.yaml:" in out
    assert "worst 3 queries for ndcg@10" in out
    assert "Traceback" not in out and "def runtest" not in out


def test_bad_yaml_is_one_line_collection_error(pytester, suite) -> None:
    suite(SUITE.replace("ndcg@10: 0.5", "ndcg@11x: 0.5"))
    result = pytester.runpytest_subprocess("-q")
    assert result.ret != 0
    out = result.stdout.str()
    assert "ConfigError:" in out and "floors.bm25.ndcg@11x" in out
    assert "Traceback" not in out and "raise " not in out


def test_missing_data_file_is_an_error_not_a_failure(pytester, suite) -> None:
    text = SUITE.replace("  inline:", "  qrels: missing.trec\n  queries: missing.jsonl\n  inline:")
    suite(text)
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(errors=1)  # one collection error, not one setup error per gate (#26)
    out = result.stdout.str()
    assert "judgments.queries: file not found:" in out and "missing.jsonl" in out
    assert out.count("ConfigError") == 1 and "Traceback" not in out


def test_a_missing_qrels_file_is_one_collection_error_with_its_line(pytester, suite) -> None:
    text = SUITE.replace("  inline:", "  qrels: gone/qrels.tsv\n  queries: q.jsonl\n  inline:")
    pytester.makefile(".jsonl", q='{"_id": "q9", "text": "x"}\n')
    path = suite(text)
    line = 1 + text.splitlines().index("  qrels: gone/qrels.tsv")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"ConfigError: *{Path(path).name}:{line}: judgments.qrels: file not found: *qrels.tsv"]
    )
    assert "ERROR at setup" not in out and out.count("file not found") == 1


def test_no_latency_switch_skips_latency_items_with_the_reason(pytester, suite) -> None:
    suite()
    result = pytester.runpytest_subprocess("-q", "-rs", "--retrieval-no-latency")
    # the p95 floor is not judged: skipped with the reason (never a silent pass, and the
    # file itself stays valid)
    result.assert_outcomes(passed=2, skipped=1)
    assert "--retrieval-no-latency: latency not measured" in result.stdout.str()


def test_latency_floor_with_latency_disabled_in_the_file_is_refused(pytester, suite) -> None:
    suite(SUITE.replace("latency:\n  warmup: 1", "latency:\n  warmup: 1\n  enabled: false"))
    result = pytester.runpytest_subprocess("-q")
    assert result.ret != 0
    assert "latency floor given but latency.enabled is false" in result.stdout.str()


def test_json_report_and_junit_properties(pytester, suite) -> None:
    suite()
    report = pytester.path / "out" / "report.json"
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}", f"--junitxml={junit}")
    result.assert_outcomes(passed=3)
    doc = json.loads(report.read_text())
    assert doc["version"] == 2  # report version 2 (#37): fingerprints and the run section
    (s,) = doc["suites"]
    assert s["suite"] == "tiny"
    names = [r["name"] for r in s["retrievers"]]
    assert names == ["bm25", "text_only", "rrf"]
    bm25 = s["retrievers"][0]
    assert set(bm25["latency_ms"]) >= {"p50", "p95", "p99"}
    assert set(bm25["per_query"]) == {"q1", "q2", "3"}
    assert {"retriever", "metric", "value", "op", "threshold", "passed"} <= set(s["gates"][0])
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).iter("property")}
    assert props["retrieval_metric"] in ("ndcg@10", "p95_ms", "recall@10")
    assert "retrieval_value" in props and "retrieval_threshold" in props


def test_profile_switch_on_the_command_line(pytester, suite) -> None:
    suite()
    report = pytester.path / "r.json"
    pytester.runpytest_subprocess("-q", f"--retrieval-report={report}", "--retrieval-profile=trec")
    assert json.loads(report.read_text())["suites"][0]["profile"] == "trec"


def test_team_override_file(pytester, suite) -> None:
    suite()
    pytester.makefile(".yaml", team="floors:\n  bm25:\n    ndcg@10: 0.999\n")
    result = pytester.runpytest_subprocess("-q", "--retrieval-override=team.yaml")
    result.assert_outcomes(passed=2, failed=1)
    assert "team.yaml:3" in result.stdout.str()


def test_fixtures_for_python_tests(pytester, suite) -> None:
    suite()
    pytester.makepyfile(
        test_code="""
        def test_floors(retrieval_suite, assert_floor):
            result = retrieval_suite("retrieval_tiny.yaml")
            assert set(result.retrievers) == {"bm25", "text_only", "rrf"}
            per_query = result.retrievers["bm25"].evaluation.per_query["ndcg@10"]
            assert set(per_query) == {"q1", "q2", "3"}
            assert_floor(result, "bm25", "ndcg@10", 0.1)

        def test_floor_fails_readably(retrieval_suite, assert_floor):
            result = retrieval_suite("retrieval_tiny.yaml")
            assert_floor(result, "bm25", "nDCG@10", 1.01)
    """
    )
    result = pytester.runpytest_subprocess("-q", "test_code.py")
    result.assert_outcomes(passed=1, failed=1)
    assert "tiny :: bm25 :: ndcg@10" in result.stdout.str()


def test_importing_the_plugin_stays_cheap() -> None:
    # an installed-but-unused plugin must not pull heavy libraries into pytest start-up
    code = (
        "import sys, pytest_retrieval.plugin; "
        "heavy = [m for m in ('numpy', 'pydantic', 'yaml', 'bm25s', 'elasticsearch', "
        "'opensearchpy', 'onnxruntime') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unreachable_engine_is_an_error_and_hides_credentials(pytester, suite) -> None:
    text = SUITE.replace(
        "latency:\n",
        "backend:\n  type: elasticsearch\n  connection:\n"
        "    hosts: ['http://127.0.0.1:9']\n    username: gate\n"
        "    password: hunter2-very-secret\n    max_retries: 0\n"
        "    request_timeout: 2\nlatency:\n",
    )
    suite(text)
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}")
    result.assert_outcomes(errors=3)  # never failed, never passed
    out = result.stdout.str() + result.stderr.str()
    assert "InfrastructureError" in out and "127.0.0.1:9" in out
    assert "hunter2-very-secret" not in out and "Traceback" not in out
    assert "hunter2-very-secret" not in report.read_text()
    assert "error" in json.loads(report.read_text())["suites"][0]


def test_lift_floor_compares_a_stage_with_its_best_input(pytester, suite) -> None:
    suite(SUITE.replace("    recall@10: 0.5\n", "    recall@10: 0.5\n    lift@ndcg@10: 0.5\n"))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert "tiny :: rrf :: lift@ndcg@10 = " in out and "below the floor >= 0.5000" in out
    assert "stages (deltas against bm25" in out


def test_latency_ceiling_is_judged_on_its_confidence_interval(pytester, suite) -> None:
    suite(SUITE.replace("p95_ms: 10000", "p95_ms: 0.000001"))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "tiny :: bm25 :: p95_ms is above the ceiling: " in out
    assert "95% lower bound" in out and "n=" in out


def test_export_unjudged_writes_the_annotation_queue(pytester, suite) -> None:
    suite(
        SUITE.replace(
            "  documents:\n", "  documents:\n    - {id: d6, title: Cost, text: solar panels cost}\n"
        )
    )
    out = pytester.path / "queue.jsonl"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-export-unjudged={out}")
    result.assert_outcomes(passed=3)
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    pairs = {(r["query_id"], r["doc_id"]) for r in rows}
    judged = {("q1", "d1"), ("q1", "d4"), ("q1", "d2"), ("q2", "d3"), ("3", "d5")}
    assert ("q1", "d6") in pairs and not (pairs & judged)
    assert "unjudged in the top 10: bm25" in result.stdout.str()


def test_unanswerable_queries_are_scored_by_abstention(pytester, suite) -> None:
    text = SUITE.replace(
        '    - {id: q4, text: "no relevant doc judged", relevant: {d1: 0}}',
        '    - {id: q4, text: "no relevant doc judged", relevant: {d1: 0}}\n'
        '    - {id: u1, text: "zebra migration patterns", tags: [unanswerable]}\n'
        '    - {id: u2, text: "solar", tags: [unanswerable]}',
    )
    text = text.replace("floors:\n", "unanswerable:\n  tag: unanswerable\nfloors:\n")
    text = text.replace("    recall@10: 0.5\n", "    recall@10: 0.5\n    abstention: 0.9\n")
    suite(text)
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}")
    # u1 has no matching term (zero hits: abstains); u2 matches 'solar' (answers): rate 0.5
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert "tiny :: rrf :: abstention = 0.5000, below the floor >= 0.9000" in out
    assert "u2" in out and "abstention on unanswerable queries: bm25 50%" in out


def test_a_failed_floor_lists_the_drops_against_the_baseline_first(pytester) -> None:
    """Issue #26: a floor that fails after a change lists the queries that dropped most against
    the committed baseline, not a run of queries tied at 0 that scored 0 in the baseline too."""
    import shutil

    example = Path(__file__).resolve().parents[1] / "example_suite"
    shutil.copytree(example / "data", pytester.path / "data")
    suite = pytester.path / "retrieval_scifact_mini.yaml"
    suite.write_text((example / suite.name).read_text())
    args = ("-q", "-p", "no:cacheprovider", "--retrieval-no-latency", suite.name)
    pytester.runpytest_subprocess(*args, "--retrieval-baseline-update").assert_outcomes(passed=18, skipped=1)
    text = suite.read_text().replace("    fields: [title, text]", "    fields: [title]", 1)
    suite.write_text(text.replace("    ndcg@10: 0.55", "    ndcg@10: 0.75", 1))
    out = pytester.runpytest_subprocess(*args).stdout.str()
    block = out[out.index("bm25 :: ndcg@10 = ") :]
    assert "worst 5 queries for ndcg@10 (largest drops against the baseline first):" in block
    first = block.split("first):\n")[1].splitlines()[0]
    assert first.strip().startswith("0.0000 (baseline 1.0000)"), block[:800]
