"""Hostile judge files (issue #11): filled annotation files, pooled sets and click logs as
people and spreadsheets leave them. Each is one clear line naming the file and line, or is
read exactly as written; a formula-shaped id is never taken on trust."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.annotations import read_annotations, read_pairs, read_pooled_pairs
from pytest_retrieval.judge.clicks import read_click_log
from pytest_retrieval.judge.merge import import_annotations

from .conftest import bounded, one_line

H = "query_id,query,doc_id,title,text,grade\n"


def annotations(path: Path) -> Any:
    return read_annotations(path)


def unpooled_import(path: Path) -> Any:
    return import_annotations([path], {})


def pooled_import(path: Path) -> Any:
    """Import with a pooled set holding only (q1, d1) and (q1, -d7)."""
    return import_annotations([path], {}, pooled={("q1", "d1"), ("q1", "-d7")})


def pairs(path: Path) -> Any:
    return read_pairs(path)


def clicks(path: Path) -> Any:
    return list(read_click_log(path))


# (id, file name, content, loader, fragments of the one-line error)
ERRORS: List[Tuple[str, str, Any, Callable[[Path], Any], List[str]]] = [
    ("grade out of range", "a.csv", H + "q1,s,d1,,t,5\n", annotations, ["a.csv:2", "grade 5", "0..3"]),
    (
        "grade a formula",
        "a.csv",
        H + "q1,s,d1,,t,=1+1\n",
        annotations,
        ["a.csv:2", "'=1+1'", "not an integer"],
    ),
    ("grade escaped formula", "a.csv", H + "q1,s,d1,,t,'=1+1\n", annotations, ["a.csv:2", "not an integer"]),
    ("grade 1e3", "a.csv", H + "q1,s,d1,,t,1e3\n", annotations, ["a.csv:2", "grade 1000"]),
    ("grade inf", "a.csv", H + "q1,s,d1,,t,inf\n", annotations, ["a.csv:2", "'inf'"]),
    ("grade nan", "a.csv", H + "q1,s,d1,,t,nan\n", annotations, ["a.csv:2", "'nan'"]),
    ("grade -1", "a.csv", H + "q1,s,d1,,t,-1\n", annotations, ["a.csv:2", "grade -1"]),
    ("grade 1.5", "a.csv", H + "q1,s,d1,,t,1.5\n", annotations, ["a.csv:2", "'1.5'"]),
    (
        "grade true (JSONL)",
        "a.jsonl",
        '{"query_id": "q1", "doc_id": "d1", "grade": true}\n',
        annotations,
        ["a.jsonl:1"],
    ),
    (
        "graded twice",
        "a.csv",
        H + "q1,s,d1,,t,1\nq1,s,d1,,t,2\n",
        annotations,
        ["a.csv:3", "graded 2 here and 1 on line 2"],
    ),
    ("no grade column", "a.csv", "query_id,doc_id\nq1,d1\n", annotations, ["a.csv:1", "no 'grade' column"]),
    (
        "no doc id column",
        "a.csv",
        "query_id,grade\nq1,1\n",
        annotations,
        ["a.csv:2", "missing document id column"],
    ),
    ("empty doc id", "a.csv", H + "q1,s,,,t,1\n", annotations, ["a.csv:2", "document id"]),
    (
        "row too wide",
        "a.csv",
        H + "q1,s,d1,,t, with, commas,1\n",
        annotations,
        ["a.csv:2", "8 fields but the header has 6"],
    ),
    ("unterminated quote", "a.csv", H + 'q1,"s,d1,,t,1\n', annotations, ["a.csv"]),
    ("not UTF-8", "a.csv", (H + "q1,s\xe9,d1,,t,1\n").encode("latin-1"), annotations, ["a.csv", "not UTF-8"]),
    ("UTF-16", "a.csv", (H + "q1,s,d1,,t,1\n").encode("utf-16"), annotations, ["a.csv", "not UTF-8"]),
    ("NUL byte", "a.csv", H + "q1,s,d\x001,,t,1\n", annotations, ["a.csv:2", "NUL"]),
    (
        "huge field",
        "a.csv",
        H + "q1,s,d1,," + "x" * 200_000 + ",1\n",
        annotations,
        ["a.csv:2", "malformed CSV"],
    ),
    ("JSONL not an object", "a.jsonl", "[1, 2]\n", annotations, ["a.jsonl:1", "JSON object"]),
    ("JSONL broken", "a.jsonl", '{"query_id": "q1"\n', annotations, ["a.jsonl:1", "invalid JSON"]),
    ("wrong extension", "a.xlsx", "PK\x03\x04", annotations, ["a.xlsx", ".csv, .tsv or .jsonl"]),
    # formula-shaped ids (item 5)
    (
        "formula doc id, no pool",
        "a.csv",
        H + 'q1,s,"=HYPERLINK(""http://x"")",,t,1\n',
        unpooled_import,
        ["a.csv:2", "formula", "--pool"],
    ),
    (
        "formula query id, no pool",
        "a.csv",
        H + "@SUM(A1),s,d1,,t,1\n",
        unpooled_import,
        ["a.csv:2", "query id '@SUM(A1)'"],
    ),
    (
        "dash id, no pool",
        "a.tsv",
        "query_id\tdoc_id\tgrade\nq1\t-d7\t1\n",
        unpooled_import,
        ["a.tsv:2", "'-d7'"],
    ),
    (
        "formula id not pooled",
        "a.csv",
        H + "q1,s,=1+2,,t,1\n",
        pooled_import,
        ["a.csv:2", "not among the pooled pairs"],
    ),
    ("pooled id, other query", "a.csv", H + "q2,s,-d7,,t,1\n", pooled_import, ["a.csv:2", "'-d7'", "pooled"]),
    ("plus-number-shaped formula", "a.csv", H + "q1,s,+1+1,,t,1\n", pooled_import, ["a.csv:2", "'+1+1'"]),
    # pairs for the LLM judge
    ("pairs without query text", "p.csv", H + "q1,,d1,,t,\n", pairs, ["p.csv:2", "missing query text"]),
    ("pairs without document text", "p.csv", H + "q1,s,d1,,,\n", pairs, ["p.csv:2", "missing document text"]),
    ("pairs: empty file", "p.csv", H, pairs, ["p.csv", "no pairs"]),
    # click logs through the same reader
    (
        "clicks: clicked not 1/0",
        "c.csv",
        "query,doc_id,clicked\ns,d1,=1\n",
        clicks,
        ["c.csv:2", "clicked value"],
    ),
    (
        "clicks: formula position",
        "c.csv",
        "query,doc_id,clicked,position\ns,d1,1,=2\n",
        clicks,
        ["c.csv:2", "position"],
    ),
]


@pytest.mark.parametrize("name,content,loader,fragments", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_hostile_judge_file_is_one_clear_line(tmp_path: Path, name, content, loader, fragments) -> None:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with bounded(20), pytest.raises(ConfigError) as err:
        loader(p)
    one_line(str(err.value), *fragments)


def test_agree_reads_formula_shaped_ids_as_they_are(tmp_path: Path) -> None:
    """Only ``judge import`` turns rows into labels; ``judge agree`` compares ids as written."""
    from pytest_retrieval.judge.annotations import load_labels

    p = tmp_path / "a.csv"
    p.write_text("query_id,doc_id,grade\nq1,-d7,1\n", encoding="utf-8")
    assert load_labels(p).grades == {"q1": {"-d7": 1}}


# read exactly as written
EXACT = [
    ("plain number ids need no pool", H + "-1,s,+2,,t,1\n", {"-1": {"+2": 1}}),
    ("escaped formula id, pooled", H + "q1,s,'-d7,,t,2\n", {"q1": {"-d7": 2}}),
    ("spreadsheet dropped the quote, pooled", H + "q1,s,-d7,,t,3\n", {"q1": {"-d7": 3}}),
    ("a quote that is text", H + "q1,s,d1,,'quoted text,0\n", {"q1": {"d1": 0}}),
    ("semicolon CSV with BOM", "\ufeffquery_id;doc_id;grade\nq1;d1;2\n", {"q1": {"d1": 2}}),
    ("CRLF line ends", H.replace("\n", "\r\n") + "q1,s,d1,,t,1\r\n", {"q1": {"d1": 1}}),
    ("blank rows and grade", H + "\n,,,,,\nq1,s,d1,,t,\nq1,s,-d7,,t,1\n", {"q1": {"-d7": 1}}),
]


@pytest.mark.parametrize("content,expected", [c[1:] for c in EXACT], ids=[c[0] for c in EXACT])
def test_judge_file_read_exactly(tmp_path: Path, content: str, expected) -> None:
    p = tmp_path / "a.csv"
    p.write_text(content, encoding="utf-8")
    with bounded(20):
        assert pooled_import(p).qrels == expected


@pytest.mark.parametrize(
    "where,fragment", [("/dev/zero", "/dev/zero"), ("FIFO", "not a regular file"), ("DIR", "directory")]
)
@pytest.mark.parametrize(
    "loader", [annotations, read_pooled_pairs, clicks], ids=["annotations", "pool", "clicks"]
)
def test_special_judge_files_are_refused_without_reading(
    tmp_path: Path, loader, where: str, fragment: str
) -> None:
    if where == "FIFO":
        path = tmp_path / "fifo.csv"
        os.mkfifo(path)
    elif where == "DIR":
        path = tmp_path / "dir.csv"
        path.mkdir()
    else:
        path = Path(where)  # refused by its name (no extension) or as a device
    with bounded(10), pytest.raises(ConfigError) as err:
        loader(path)
    one_line(str(err.value), fragment)
