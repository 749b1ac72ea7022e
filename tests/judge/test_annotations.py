"""Annotation files: validation of filled grades (file and line of every bad row), the
formats a spreadsheet saves, and the round trip of the pooled pairs' texts."""

from __future__ import annotations

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.annotations import read_annotations, read_pairs, write_annotation_file
from pytest_retrieval.judge.pool import pool_runs
from pytest_retrieval.types import Ranking


def test_grades_are_validated_with_file_and_line(tmp_path) -> None:
    f = tmp_path / "a.csv"
    f.write_text(
        "query_id,query,doc_id,title,text,grade\n"
        'q1,solar,d1,T,"a text\nover two lines",2\n'
        "q1,solar,d2,T,x,5\n"
        "q1,solar,d3,T,x,two\n"
        "q1,solar,d4,T,x,2.5\n"
    )
    with pytest.raises(ConfigError) as e:
        read_annotations(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}:4: grade 5 is outside the allowed range 0..3")
    assert "(+2 more bad line(s): 5, 6)" in msg and "\n" not in msg
    # the allowed range is configurable
    f.write_text("query_id,doc_id,grade\nq1,d1,4\nq1,d2,\nq1,d3,  \nq1,d4,1.0\n")
    ann = read_annotations(f, grade_range=(0, 4))
    assert ann.grades == {"q1": {"d1": 4, "d4": 1}}
    assert [(q, d, n) for q, d, n in ann.blank] == [("q1", "d2", 3), ("q1", "d3", 4)]


def test_duplicates_missing_columns_and_formats(tmp_path) -> None:
    f = tmp_path / "a.csv"
    f.write_text("query_id,doc_id,grade\nq1,d1,2\nq1,d1,2\nq1,d1,1\n")
    with pytest.raises(ConfigError, match=r"a.csv:4: \('q1', 'd1'\) graded 1 here and 2 on line 2"):
        read_annotations(f)
    f.write_text("query_id,doc_id\nq1,d1\n")
    with pytest.raises(ConfigError, match="no 'grade' column"):
        read_annotations(f)
    f.write_text("query,doc_id,grade\nsolar,d1,1\n")
    with pytest.raises(ConfigError, match=r"a.csv:2: missing query id column"):
        read_annotations(f)
    # a spreadsheet's ';'-separated CSV, with a BOM
    f.write_text("\ufeffquery_id;doc_id;grade\nq1;d1;3\n", encoding="utf-8")
    assert read_annotations(f).grades == {"q1": {"d1": 3}}
    j = tmp_path / "a.jsonl"
    j.write_text(
        '{"query_id": "q1", "doc_id": "d1", "grade": 2}\n'
        '{"query_id": "q1", "doc_id": "d2", "grade": null}\n'
        '{"query_id": 7, "doc_id": "d3", "grade": "1"}\n'
        '{"query_id": "q1", "doc_id": "d4", "grade": true}\n'
    )
    with pytest.raises(ConfigError, match=r"a.jsonl:4: grade True is not an integer"):
        read_annotations(j)
    j.write_text("\n".join(j.read_text().splitlines()[:3]) + "\n")
    ann = read_annotations(j)
    assert ann.grades == {"q1": {"d1": 2}, "7": {"d3": 1}} and len(ann.blank) == 1


def test_annotation_file_roundtrip(tmp_path) -> None:
    pool = pool_runs(
        {"a": {"q1": Ranking(["d1"], [1.0])}},
        {},
        queries={"q1": 'solar, "panels"'},
        documents={"d1": ("Title, with comma", "text\nwith newline")},
    )
    for name in ("p.csv", "p.tsv", "p.jsonl"):
        write_annotation_file(pool, tmp_path / name)
        [pair] = read_pairs(tmp_path / name)
        assert (pair.query, pair.title, pair.text) == (
            'solar, "panels"',
            "Title, with comma",
            "text\nwith newline",
        )
    with pytest.raises(ConfigError):
        write_annotation_file(pool, tmp_path / "p.xlsx")
