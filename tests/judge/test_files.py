"""The one CSV/JSONL row reader of annotation files and click logs, and the qrels and
queries writers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.judge.annotations import read_annotations
from pytest_retrieval.judge.clicks import read_click_log
from pytest_retrieval.judge.files import read_csv, read_jsonl, write_qrels, write_queries


def _comma(first: str) -> str:
    return ","


def _any_width(fields: int, header: int):
    return None


def test_rows_carry_their_line_and_lower_cased_header(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b'\xef\xbb\xbf Query_ID ,Doc_ID\n\nq1,d1\n,\n"q\n2",d2\n')
    rows = list(read_csv(path, delimiter=_comma, width_error=_any_width))
    # BOM dropped, blank rows skipped, a quoted newline keeps the row's first line
    assert rows == [(3, {"query_id": "q1", "doc_id": "d1"}), (5, {"query_id": "q\n2", "doc_id": "d2"})]


def test_the_delimiter_is_chosen_from_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("a;b\n1;2\n", encoding="utf-8")
    seen = []

    def semicolon(first: str) -> str:
        seen.append(first)
        return ";"

    assert list(read_csv(path, delimiter=semicolon, width_error=_any_width)) == [(2, {"a": "1", "b": "2"})]
    assert seen == ["a;b\n"]


@pytest.mark.parametrize("where", ["header", "row"])
def test_bad_encoding_names_the_file(tmp_path: Path, where: str) -> None:
    path = tmp_path / "bad.csv"
    header, row = b"query_id,doc_id,clicked\n", b"q1,d1,1\n"
    path.write_bytes(
        header.replace(b"doc", b"d\xffoc") + row if where == "header" else header + b"q1,d\xff1,1\n"
    )
    with pytest.raises(ConfigError) as err:
        list(read_csv(path, delimiter=_comma, width_error=_any_width))
    assert err.value.file == str(path) and "not UTF-8" in str(err.value)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_click_log_with_a_bad_encoding_names_the_file(tmp_path: Path, suffix: str) -> None:
    """The click-log reader used to let a UnicodeDecodeError of the first line escape."""
    path = tmp_path / f"log{suffix}"
    path.write_bytes(b"query_id,doc_\xe9id,clicked\nq1,d1,1\n")
    with pytest.raises(ConfigError) as err:
        list(read_click_log(path))
    assert err.value.file == str(path) and "not UTF-8" in str(err.value)


def test_annotation_file_with_a_bad_encoding_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ann.csv"
    path.write_bytes(b"query_id,doc_id,grade\nq1,d\xe91,2\n")
    with pytest.raises(ConfigError) as err:
        read_annotations(path)
    assert err.value.file == str(path) and "not UTF-8" in str(err.value)


def test_width_rules_stay_the_callers(tmp_path: Path) -> None:
    ann = tmp_path / "ann.csv"
    ann.write_text("query_id,doc_id,grade\nq1,d1\nq1,d2,1,extra\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"4 fields but the header has 3 \(an unquoted") as err:
        read_annotations(ann)  # a short row is a blank grade; a long one an error
    assert err.value.line == 3
    log = tmp_path / "log.csv"
    log.write_text("query_id,doc_id,clicked\nq1,d1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"2 field\(s\), the header has 3") as err:
        list(read_click_log(log))
    assert err.value.line == 2


def test_missing_file_and_malformed_csv(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found") as err:
        list(read_csv(tmp_path / "nope.csv", delimiter=_comma, width_error=_any_width))
    assert err.value.file == str(tmp_path / "nope.csv")
    path = tmp_path / "m.csv"
    path.write_text("a,b\n1,2\n3," + "x" * (csv.field_size_limit() + 1) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="malformed CSV") as err:
        list(read_csv(path, delimiter=_comma, width_error=_any_width))
    assert err.value.line == 3


def test_jsonl_keys_are_lower_cased(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({" Query_ID ": "q1", "Grade": 2}) + "\n\n", encoding="utf-8")
    assert list(read_jsonl(path)) == [(1, {"query_id": "q1", "grade": 2})]


@pytest.mark.parametrize("name", ["q.txt", "q.tsv", "q.jsonl"])
def test_qrels_round_trip_in_every_format(tmp_path: Path, name: str) -> None:
    qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    assert write_qrels(qrels, tmp_path / name) == 3
    assert load_qrels(tmp_path / name) == qrels


def test_qrels_ids_the_format_cannot_hold(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="whitespace"):
        write_qrels({"q 1": {"d1": 1}}, tmp_path / "q.txt")
    with pytest.raises(ConfigError, match="tab or newline"):
        write_qrels({"q\t1": {"d1": 1}}, tmp_path / "q.tsv")
    assert not (tmp_path / "q.txt").exists() and not (tmp_path / "q.tsv").exists()
    write_qrels({"q 1": {"d\t1": 1}}, tmp_path / "q.jsonl")  # JSONL holds any id


@pytest.mark.parametrize("name", ["queries.jsonl", "queries.tsv"])
def test_queries_round_trip(tmp_path: Path, name: str) -> None:
    queries = {"q1": "solar panels", "q2": "wind  turbine\tnoise"}
    assert write_queries(queries, tmp_path / name) == 2
    got = load_queries(tmp_path / name)
    if name.endswith(".tsv"):  # whitespace folded, so a tab in a text cannot split the line
        assert got == {"q1": "solar panels", "q2": "wind turbine noise"}
    else:
        assert got == queries
