"""Grades are read as trec_eval reads them (``atol``: sign, ASCII digits) plus a zero fraction,
never as Python's ``int()`` / ``float()`` read unicode digits, underscores or ``inf``."""

from __future__ import annotations

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.grades import grade_of
from pytest_retrieval.io.qrels import load_qrels


@pytest.mark.parametrize(
    "value, grade",
    [("1", 1), ("+2", 2), ("-1", -1), ("2.0", 2), ("2.", 2), (" 3 ", 3), ("010", 10), (1, 1), (2.0, 2)],
)
def test_trec_eval_grades(value, grade: int) -> None:
    assert grade_of(value) == grade


@pytest.mark.parametrize(
    "value",
    [
        "1.5",
        "1e3",
        "1_0",
        "\u0661",
        "\uff11",
        "inf",
        "nan",
        "0x1F",
        "",
        "+",
        "1 2",
        "9" * 30,
        True,
        1.5,
        None,
    ],
)
def test_anything_else_is_refused(value) -> None:
    with pytest.raises(ValueError, match="relevance grade .* not an integer"):
        grade_of(value)


@pytest.mark.parametrize(
    "name, text",
    [
        ("q.trec", "q1 0 d1 1_0\n"),
        ("q.trec", "q1 0 d1 \u0662\n"),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": true}\n'),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": "1_0"}\n'),
    ],
)
def test_qrels_files_refuse_them_naming_the_line(tmp_path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text("q0 0 d0 1\n" + text if name.endswith(".trec") else text, encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{name}:\d: relevance grade .* not an integer"):
        load_qrels(path)
