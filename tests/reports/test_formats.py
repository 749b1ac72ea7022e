"""formats.py: one formatter per thing shown, in the reports' spelling and the terminal's (plain)."""

from __future__ import annotations

import math

from pytest_retrieval.reports.formats import (
    candidate_recall,
    delta,
    engine_line,
    missing,
    percent_shares,
    stage_latency,
    text_table,
)


def test_delta_spells_minus_and_missing_per_output():
    assert delta(-0.01234) == "−0.0123" and delta(0.01234) == "+0.0123"
    assert delta(-0.01234, plain=True) == "-0.0123"
    assert delta(-1.25, 1, plain=True) == "-1.2"
    assert (delta(None), delta(math.nan), delta(None, plain=True)) == ("–", "–", "-")
    assert missing(None) and missing(math.nan) and not missing(0.0)


def test_the_engine_line_names_the_engine_once():
    info = {
        "backend": "opensearch",
        "engine": "OpenSearch",
        "version": "2.19.1",
        "client": "opensearch-py 2.8",
    }
    assert engine_line(info) == "opensearch 2.19.1 (client opensearch-py 2.8)"
    es = {"backend": "elasticsearch", "engine": "elasticsearch", "version": "8.19.21"}
    assert engine_line(es) == "elasticsearch 8.19.21"
    assert (
        engine_line({"backend": "embedded", "engine": "bm25s 0.3.16 + numpy"})
        == "embedded (bm25s 0.3.16 + numpy)"
    )
    assert engine_line({"backend": "http"}) == "http"


def test_stage_cells_and_shares():
    row = {
        "candidate_recall": {"bm25": 0.91234, "dense": 0.5},
        "window": 100,
        "p95_ms": 12.345,
        "delta_p95_ms": -2.0,
    }
    assert candidate_recall(row) == "bm25@100=0.912 dense@100=0.500"
    assert candidate_recall(row, str.upper) == "BM25@100=0.912 DENSE@100=0.500"
    assert stage_latency(row) == ["12.3", "−2.0"] and stage_latency({}) == ["–", "–"]
    assert percent_shares({"bm25": 0.125, "dense": 0.3}) == "bm25 12%, dense 30%"


def test_text_table_aligns_left_columns_and_numbers():
    lines = text_table(
        ["name", "value", "note"], [["bm25", "0.5000", "ok"], ["rrf", "0.61", "x"]], left=(0, 2)
    )
    assert lines == [
        "name   value  note",
        "----  ------  ----",
        "bm25  0.5000  ok  ",
        "rrf     0.61  x   ",
    ]
    assert text_table(["a", "bb"], []) == ["a  bb", "-  --"]
