"""Hostile ids, grades and golden queries (issue #28, section 2): an ambiguous unquoted id or
grade, a grade Python would read but trec_eval would not, an expectation that checks nothing or
names a document that exists nowhere. Each is one clear line naming the file, the key (or line)
and what to write instead; never a pass, never a traceback, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.grades import parse_grade_map
from pytest_retrieval.io.qrels import load_qrels

from ..tiny import run_tiny
from .conftest import BASE, FLOORS, bounded, one_line

AMBIGUOUS_IDS = [
    "0123",
    "007",
    "00",
    "1_0",
    "1e3",
    "1E3",
    "1.0e+3",
    "+1",
    "-1",
    "1.5",
    "1.",
    ".5",
    "0x1F",
    "0o17",
    "0b101",
    "1:30",
    ".inf",
    "-.inf",
    ".nan",
    "yes",
    "no",
    "on",
    "off",
    "true",
    "2024-01-01",
]

# where a suite holds an id: (name, text with {v}, the key path)
ID_PLACES = [
    ("inline id", BASE.replace("{id: q1,", "{id: {v},") + FLOORS, "judgments.inline[0].id"),
    ("document id", BASE.replace("{id: d1,", "{id: {v},") + FLOORS, "judgments.documents[0].id"),
    ("relevant key", BASE.replace("{d1: 1}", "{{v}: 1}") + FLOORS, "judgments.inline[0].relevant.{v}"),
    ("expect query_id", BASE + FLOORS + "expectations:\n  - {query_id: {v}, min_hits: 1}\n", "query_id"),
    ("expect first", BASE + FLOORS + "expectations:\n  - {query: x, first: {v}}\n", "expectations[0].first"),
    ("expect contains", BASE + FLOORS + "expectations:\n  - {query: x, contains: [{v}]}\n", "contains[0]"),
    (
        "expect excludes",
        BASE + FLOORS + "expectations:\n  - {query: x, excludes: [d1, {v}]}\n",
        "excludes[1]",
    ),
    ("expect above", BASE + FLOORS + "expectations:\n  - {query: x, above: [d1, {v}]}\n", "above[1]"),
]

AMBIGUOUS_GRADES = [
    "010",
    "1_0",
    "0x1F",
    "1:30",
    "yes",
    "true",
    "1.5",
    ".inf",
    ".nan",
    "'1_0'",
    "'\u0661'",
    "1e3",
]

EXPECTATIONS = "expectations:\n  - {entry}\n"

# (id, suite text, fragments of the one-line error)
ERRORS = [
    *[
        (f"{place} {v}", text.replace("{v}", v), [key.replace("{v}", v), "ambiguous", f"quote it: '{v}'"])
        for place, text, key in ID_PLACES
        for v in AMBIGUOUS_IDS
    ],
    *[
        (
            f"grade {g}",
            BASE.replace("{d1: 1}", f"{{d1: {g}}}") + FLOORS,
            ["judgments.inline[0].relevant.d1", "relevance grade", "integer"],
        )
        for g in AMBIGUOUS_GRADES
    ],
    (
        "grade map key",
        BASE.replace("judgments:\n", "judgments:\n  grades: {map: {01: 0}}\n") + FLOORS,
        ["judgments.grades.map.01", "ambiguous"],
    ),
    (
        "grade max boolean",
        BASE.replace("judgments:\n", "judgments:\n  grades: {max: yes}\n") + FLOORS,
        ["judgments.grades.max", "ambiguous"],
    ),
    *[
        (f"expectation {name}", BASE + FLOORS + EXPECTATIONS.format(entry=entry), fragments)
        for name, entry, fragments in [
            ("above a a", "{query: x, above: [d1, d1]}", ["expectations[0].above", "twice"]),
            ("above 1 '1'", "{query: x, above: [1, '1']}", ["expectations[0].above", "twice"]),
            (
                "retrievers empty",
                "{query: x, contains: [d1], retrievers: []}",
                ["expectations[0].retrievers"],
            ),
            (
                "k zero",
                "{query: x, contains: [d1], k: 0}",
                ["expectations[0].k", "greater than or equal to 1"],
            ),
            ("k negative", "{query: x, excludes: [d1], k: -3}", ["expectations[0].k"]),
            ("k boolean", "{query: x, excludes: [d1], k: yes}", ["expectations[0].k"]),
            ("k text", "{query: x, excludes: [d1], k: '5'}", ["expectations[0].k"]),
            ("k deeper than the run", "{query: x, excludes: [d1], k: 101}", ["expectations[0].k", "depth"]),
            ("min_hits zero", "{query: x, min_hits: 0}", ["expectations[0].min_hits"]),
            ("min_hits boolean", "{query: x, min_hits: true}", ["expectations[0].min_hits"]),
            ("no check", "{query: x, k: 3}", ["expectations[0]", "needs a check"]),
            ("blank query", "{query: '  ', min_hits: 1}", ["expectations[0]", "empty"]),
        ]
    ],
]


@pytest.mark.parametrize("text, fragments", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_hostile_ids_grades_and_expectations_are_one_clear_line(tmp_path: Path, text: str, fragments) -> None:
    path = tmp_path / "retrieval_x.yaml"
    path.write_text(text, encoding="utf-8")
    with bounded(), pytest.raises(ConfigError) as err:
        load_suite(path)
    one_line(str(err.value), str(path), *fragments)
    assert "Value error" not in str(err.value)


@pytest.mark.parametrize(
    "missing, key",
    [
        ("{query: solar, excludes: [d9]}", "expectations[0].excludes[0]"),
        ("{query: solar, contains: [D1]}", "expectations[0].contains[0]"),
        ("{query: solar, first: 'd1 '}", "expectations[0].first"),
        ("{query: solar, above: [d1, d2x]}", "expectations[0].above[1]"),
        ("{query_id: q1, above: [zz, d1]}", "expectations[0].above[0]"),
    ],
)
def test_an_expectation_of_a_document_that_exists_nowhere_is_refused(
    tmp_path: Path, missing: str, key: str
) -> None:
    with bounded(60), pytest.raises(ConfigError) as err:
        run_tiny(tmp_path, BASE + FLOORS + EXPECTATIONS.format(entry=missing))
    one_line(str(err.value), "retrieval_tiny.yaml:", key, "is not in the corpus", "exists nowhere")


# (file name, content, fragments): grades trec_eval would not read as Python does
QRELS = [
    ("q.trec", "q1 0 d1 1_0\n", ["q.trec:1", "'1_0'", "trec_eval"]),
    ("q.trec", "q1 0 d1 \u0661\n", ["q.trec:1", "trec_eval"]),
    ("q.trec", "q1 0 d1 \uff12\n", ["q.trec:1", "trec_eval"]),
    ("q.trec", "q1 0 d1 1e0\n", ["q.trec:1", "'1e0'"]),
    ("q.trec", "q1 0 d1 0x1\n", ["q.trec:1", "'0x1'"]),
    ("q.trec", "q1 0 d1 -inf\n", ["q.trec:1", "'-inf'"]),
    ("q.trec", "q1 0 d1 " + "9" * 5000 + "\n", ["q.trec:1", "not an integer"]),
    ("q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1_0\n", ["q.tsv:2", "'1_0'"]),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": true}\n', ["q.jsonl:1", "boolean"]),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": "1_0"}\n', ["q.jsonl:1", "'1_0'"]),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": 1.5}\n', ["q.jsonl:1", "integer"]),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": [1]}\n', ["q.jsonl:1", "integer"]),
    ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": null}\n', ["q.jsonl:1", "integer"]),
    # a JSON float id: the text written (1e3, 1.0, 1.10) is gone
    ("q.jsonl", '{"query_id": 1e3, "doc_id": "d1", "grade": 1}\n', ["q.jsonl:1", "query id", "as a string"]),
    (
        "q.jsonl",
        '{"query_id": "q1", "doc_id": 1.0, "grade": 1}\n',
        ["q.jsonl:1", "document id", "as a string"],
    ),
    (
        "q.jsonl",
        '{"query_id": "q1", "doc_id": 1.10, "grade": 1}\n',
        ["q.jsonl:1", "document id", "as a string"],
    ),
]


@pytest.mark.parametrize("name, content, fragments", QRELS, ids=[f"{c[0]} {c[1][-12:]!r}" for c in QRELS])
def test_hostile_grades_in_qrels_files_are_one_line(
    tmp_path: Path, name: str, content: str, fragments
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with bounded(), pytest.raises(ConfigError) as err:
        load_qrels(path)
    one_line(str(err.value), str(path), *fragments)


@pytest.mark.parametrize("text", ["1_0:0", "\u0661:0", "1:\uff10", "1e0:0", "yes:0", "1.5:1"])
def test_hostile_grade_maps_are_one_line(text: str) -> None:
    with bounded(), pytest.raises(ConfigError) as err:
        parse_grade_map(text)
    one_line(str(err.value), "--grade-map", "is not 'grade:grade'")
