"""The reports of the example suite with a baseline and an induced regression (BM25 loses its
abstracts field): Markdown, OpenMetrics, the JSON report's additions, the failure message's
ranking diff, the ``report`` and ``compare`` commands, and the limits."""

from __future__ import annotations

import copy
import json
import re

import pytest
from markdown_it import MarkdownIt
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from pytest_retrieval.cli import main
from pytest_retrieval.reports.markdown import LIMIT, render_markdown
from pytest_retrieval.reports.openmetrics import render_openmetrics

# queries whose relevant document BM25 (title only) pushed out of its top 10, and that document
MOVED = {"1024": "5373138", "1107": "20532591", "1137": "33370"}


def _tables(md: str):
    """Every table of the Markdown as (header cells, [row cells]) from a CommonMark+GFM-tables parse."""
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    tables, cur, row = [], None, None
    for t in tokens:
        if t.type == "table_open":
            cur = {"head": [], "rows": []}
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            row.append(t.type)
        elif t.type == "tr_close":
            (cur["head"] if row and row[0] == "th_open" else cur["rows"]).append(row)
        elif t.type == "table_close":
            tables.append(cur)
    return tables


def test_the_regressed_run_fails_and_its_message_shows_the_ranking_diff(scenario) -> None:
    bad = scenario["bad"]
    assert bad.rc == 1
    assert "demo :: bm25 :: ndcg@10 vs baseline: FAIL" in bad.out
    assert "ranking changes in the top 10 (baseline -> now) of the largest drops:" in bad.out
    assert "relevant that left the top 10: 5373138 (grade 1, was #1)" in bad.out
    assert scenario["good"].rc == 0, scenario["good"].out
    assert "could not write" not in bad.out + scenario["good"].out


def test_json_report_holds_what_the_renderers_need(bad_doc) -> None:
    (s,) = bad_doc["suites"]
    assert s["k"] == 20  # rrf gates recall@100: the deepest cut-off, at most 20
    assert len(s["rankings"]["bm25"]["1024"]) == 20
    assert s["baseline"]["retrievers"]["bm25"]["top"]["1024"][0] == "5373138"
    assert s["query_details"]["1024"]["judged"]["5373138"] == 1
    assert s["titles"]["5373138"].startswith("3D Chromosome Regulatory Landscape")
    outcomes = {(i["retriever"], i["gate"]): i["outcome"] for i in s["items"]}
    assert outcomes[("bm25", "baseline:ndcg@10")] == "failed" and outcomes[("dense", "ndcg@10")] == "passed"
    assert len(s["latency_samples_ms"]["rrf"]) >= 50
    assert bad_doc["session"]["collection_errors"] == []


def test_markdown_summary_of_the_induced_regression(scenario) -> None:
    md = scenario["bad"].files["md"].read_text()
    assert len(md) < LIMIT
    first = md.splitlines()[0]
    assert first.startswith("## ❌ Retrieval gates failed: ") and "regressions against the baseline" in first
    assert "demo: bm25 ndcg@10 −0.1971" in first
    # failed gates first, then the table with the difference and its bounds and the marker
    assert md.index("**Failed and errored gates**") < md.index("| retriever |")
    assert "❌ **failed** `bm25::baseline:ndcg@10`" in md
    assert re.search(r"❌ Δ −0\.1971 \[−0\.\d{4}, −0\.\d{4}\] ▼", md)
    assert "**Stages**" in md and "**Strata**" in md and "Unjudged in the top 10:" in md
    # worst-moved queries with their ranking diffs, folded
    assert "<details><summary>Worst-moved queries: bm25 ndcg@10" in md
    for q, doc in MOVED.items():
        assert f"**`{q}`**" in md and f"`{doc}`" in md
    assert "- left the top 10: `5373138` *3D Chromosome Regulatory Landscape" in md
    assert "(grade 1, was #1)" in md and "(unjudged, now #" in md
    # CommonMark + GFM tables: every row has the header's number of cells
    tables = _tables(md)
    assert len(tables) == 3  # gated metrics, stages, strata
    for t in tables:
        (head,) = t["head"]
        assert t["rows"] and all(len(r) == len(head) for r in t["rows"])
    assert len(tables[0]["rows"]) == 4 and len(tables[0]["head"][0]) == 1 + 5  # retrievers x gated metrics
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<details>") == html.count("</details>") >= 2


def test_step_summary_is_appended(scenario) -> None:
    text = scenario["bad"].files["step_summary"].read_text()
    assert text.startswith("earlier step\n## ❌ Retrieval gates failed")
    assert text.rstrip() == ("earlier step\n" + scenario["bad"].files["md"].read_text()).rstrip()


def test_markdown_of_the_unchanged_run_passes(scenario) -> None:
    md = scenario["good"].files["md"].read_text()
    assert md.startswith(
        # 12 gates and the example's 11 golden-query items
        "## ✅ Retrieval gates passed: 0 failed, 0 errored, 23 passed; no regression against the baseline"
    )
    assert "Worst-moved" not in md and "Failed and errored" not in md


def test_markdown_stays_under_its_limit_and_says_what_it_left_out(bad_doc) -> None:
    small = render_markdown(bad_doc, limit=9000, full_report="the HTML report (bad.html)")
    assert len(small) <= 9000
    assert small.startswith("## ❌ Retrieval gates failed")
    assert "**Left out to stay under 9,000 characters:**" in small and "bad.html" in small
    # 40 suites of the same run: far beyond a PR comment, still under 60,000 and still parseable
    big = copy.deepcopy(bad_doc)
    big["suites"] = [dict(copy.deepcopy(bad_doc["suites"][0]), suite=f"demo{i}") for i in range(40)]
    big["session"].pop("gates", None)  # the session's gate counts are the one suite's: count the items
    md = render_markdown(big)
    assert len(md) <= LIMIT and "Left out to stay under 60,000 characters" in md
    assert md.splitlines()[0].startswith("## ❌ Retrieval gates failed: 280 failed")  # 40 x 7
    for t in _tables(md):
        assert all(len(r) == len(t["head"][0]) for r in t["rows"])


def test_markdown_escapes_what_would_break_it(bad_doc) -> None:
    doc = copy.deepcopy(bad_doc)
    s = doc["suites"][0]
    s["query_details"]["1024"]["text"] = "pipes | and <script>alert(1)</script> and *stars*"
    s["titles"]["5373138"] = "A | B <b>"
    md = render_markdown(doc)
    assert "<script>" not in md and "&lt;script&gt;" in md and "pipes \\| and" in md
    for t in _tables(md):
        assert all(len(r) == len(t["head"][0]) for r in t["rows"])


def test_openmetrics_parses_with_prometheus_client(scenario) -> None:
    text = scenario["bad"].files["om"].read_text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert {
        "retrieval_quality",
        "retrieval_latency_ms",
        "retrieval_baseline_diff",
        "retrieval_gate_passed",
    } <= set(families)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples
    }
    f = ("file", "retrieval_demo.yaml")  # the suite file's name tells two suites of one name apart
    key = ("retrieval_baseline_diff", (f, ("metric", "ndcg@10"), ("retriever", "bm25"), ("suite", "demo")))
    assert samples[key] == pytest.approx(-0.1971, abs=1e-4)
    gate = (
        "retrieval_gate_passed",
        (f, ("gate", "baseline:ndcg@10"), ("metric", "ndcg@10"), ("retriever", "bm25"), ("suite", "demo")),
    )
    assert samples[gate] == 0
    # 6 gates, and one of the example's golden queries, which BM25 on titles alone loses
    assert samples[("retrieval_gates", (("outcome", "failed"),))] == 7
    # the same text from the command, after the fact
    assert render_openmetrics(json.loads(scenario["bad"].files["json"].read_text())) == text


def test_report_command_renders_the_same_outputs(scenario, tmp_path, capsys) -> None:
    bad = scenario["bad"].files
    rc = main(
        [
            "report",
            str(bad["json"]),
            "--markdown",
            str(tmp_path / "o.md"),
            "--openmetrics",
            str(tmp_path / "o.txt"),
        ]
    )
    assert rc == 0
    strip = lambda t: t.replace("bad.html", "X").replace("bad.json", "X")  # noqa: E731 - the hint names its source
    assert strip((tmp_path / "o.md").read_text()) == strip(bad["md"].read_text())
    assert (tmp_path / "o.txt").read_text() == bad["om"].read_text()
    assert main(["report", str(bad["json"])]) == 0
    assert capsys.readouterr().out.startswith("## ❌ Retrieval gates failed")
    assert main(["report", str(tmp_path / "missing.json")]) == 2


def test_compare_two_reports(scenario, capsys) -> None:
    good, bad = str(scenario["good"].files["json"]), str(scenario["bad"].files["json"])
    assert main(["compare", good, bad]) == 0
    out = capsys.readouterr().out
    assert re.search(r"bm25\s+ndcg@10\s+0\.6835\s+0\.4864\s+-0\.1971\s+\[-0\.\d+, -0\.\d+\]\s+16/44/40", out)
    assert "regressed (margin 0.01)" in out and "gated regressions" in out
    assert main(["compare", good, bad, "--fail-on-regression"]) == 1
    capsys.readouterr()
    assert main(["compare", good, good, "--fail-on-regression"]) == 0
    assert "no gated regression" in capsys.readouterr().out
    assert main(["compare", bad, good, "--fail-on-regression", "--json"]) == 0  # the fix is an improvement
    doc = json.loads(capsys.readouterr().out)
    row = next(r for r in doc["rows"] if r["retriever"] == "bm25" and r["metric"] == "ndcg@10")
    assert row["verdict"] == "improved" and doc["regressions"] == 0
    # a margin wider than the drop: no regression
    assert main(["compare", good, bad, "--fail-on-regression", "-m", "ndcg@10", "--max-drop", "0.5"]) == 0
