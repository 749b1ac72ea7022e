"""Reports people look at (issue #36): readable latency ticks when every p95 sits in one decade,
"no hits" for a query with none (Markdown; the HTML detail is in the browser test), and the stage
table's "vs" column named after the BM25 retriever it compares with, or left out."""

from __future__ import annotations

import importlib.util
import re

import pytest

from pytest_retrieval.reports.formats import stage_head, stage_quality, stage_reference
from pytest_retrieval.reports.plots import _log_ticks, frontier
from pytest_retrieval.reports.view import SuiteView
from tests.ci import unavailable


def _tick_labels(svg: str) -> list:
    """The x tick labels of a matplotlib SVG (text kept as text)."""
    axis = svg[svg.index('id="matplotlib.axis_1"') : svg.index('id="matplotlib.axis_2"')]
    labels = [
        re.search(r"<text[^>]*>([^<]*)</text>", tick) for tick in re.split(r'<g id="xtick_\d+">', axis)[1:]
    ]
    return [m.group(1) for m in labels if m and m.group(1).strip()]


@pytest.mark.parametrize("p95s", [(12.0, 15.0, 18.0), (2.1, 3.4, 7.9), (10.2, 10.5, 10.8)])
def test_the_frontier_labels_three_latency_ticks_within_one_decade(p95s) -> None:
    if importlib.util.find_spec("matplotlib") is None:  # the [html] extra (in the test extras)
        unavailable("matplotlib is not installed (pip install -e '.[test]')")
    stages = [
        {"name": n, "p95_ms": p, "value": 0.5 + i / 10, "metric": "ndcg@10"}
        for i, (n, p) in enumerate(zip(("bm25", "dense", "rrf"), p95s))
    ]
    svg = frontier(SuiteView({"suite": "s", "stages": stages, "retrievers": []}))
    labels = _tick_labels(svg)
    assert len(labels) >= 3, labels
    values = [float(x) for x in labels]
    assert min(values) <= max(p95s) and max(values) >= min(p95s)


def test_log_ticks_leave_wide_ranges_to_matplotlib() -> None:
    assert _log_ticks([0.5, 120.0]) == []
    assert _log_ticks([3.0, 40.0]) == [5.0, 10.0, 20.0]


def test_the_stage_table_names_the_bm25_retriever_it_compares_with() -> None:
    rows = [
        {"name": "lexical", "reference": "lexical", "value": 0.5, "delta_vs_bm25": None},
        {"name": "rrf", "reference": "lexical", "value": 0.6, "delta_vs_bm25": 0.1, "delta_vs_input": 0.1},
    ]
    assert stage_reference(rows) == "lexical"
    assert "vs lexical" in stage_head("ndcg@10", "lexical") and "vs bm25" not in stage_head(
        "ndcg@10", "lexical"
    )
    no_bm25 = [{"name": "dense", "reference": None, "value": 0.5, "delta_vs_bm25": None}]
    assert stage_reference(no_bm25) is None
    assert not any(h.startswith("vs ") and h != "vs input" for h in stage_head("ndcg@10", None))
    assert len(stage_quality(no_bm25[0], None)) == 2
    # a report written before the column was named: "bm25", as it said then
    assert stage_reference([{"name": "x", "delta_vs_bm25": 0.1}]) == "bm25"


def test_the_terminal_stage_table_without_bm25_has_no_bm25_column(tmp_path) -> None:
    from pytest_retrieval.reports.terminal import render_summary

    stage = {
        "name": "rrf",
        "kind": "rrf",
        "builds_on": ["a", "b"],
        "metric": "ndcg@10",
        "value": 0.5,
        "mrr": None,
        "delta_vs_bm25": None,
        "delta_vs_input": 0.1,
        "candidate_recall": {},
        "p95_ms": None,
        "delta_p95_ms": None,
        "reference": None,
    }
    lines = render_summary(
        {"suite": "s", "file": "f.yaml", "backend": {"backend": "embedded"}, "stages": [stage]}
    )
    text = "\n".join(lines)
    assert "vs bm25" not in text and "deltas against each stage's best input" in text


def test_a_query_with_no_hits_says_so_in_the_markdown() -> None:
    from pytest_retrieval.reports.markdown import _diff_lines

    v = SuiteView(
        {
            "suite": "s",
            "retrievers": [{"name": "bm25"}],
            "rankings": {"bm25": {"q1": []}},
            "baseline": {"retrievers": {"bm25": {"top": {"q1": ["d1", "d2"]}}}},
            "query_details": {"q1": {"text": "t", "judged": {"d1": 1}}},
        }
    )
    q = {
        "qid": "q1",
        "text": "t",
        "before": 1.0,
        "now": 0.0,
        "diff": -1.0,
        "ranking": v.diff("bm25", "q1"),
        "hits": 0,
    }
    text = _diff_lines(v, q, "ndcg@10")
    assert "- no hits" in text and "left the top" in text
