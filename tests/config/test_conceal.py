"""An error message about a suite never shows a ``${VAR}`` value (issue #28 section 4):
``conceal`` names the variable for the quoted value and for the value standing as a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.config.yamlio import Interpolated, conceal, interpolated_values
from pytest_retrieval.errors import ConfigError


def _value(text: str, *names: str) -> Interpolated:
    out = Interpolated(text)
    out.variables = names
    return out


@pytest.mark.parametrize(
    "message,expected",
    [
        ("unknown retriever 'Hunter22'", "unknown retriever the value of ${PW}"),
        ("bad Hunter22, here", "bad the value of ${PW}, here"),
        ("xHunter22 is another word", "xHunter22 is another word"),
        ("nothing to hide", "nothing to hide"),
    ],
)
def test_conceal_names_the_variable(message: str, expected: str) -> None:
    assert conceal(message, [_value("Hunter22", "PW")]) == expected


def test_a_short_value_is_concealed_only_where_quoted() -> None:
    v = _value("abc", "A")
    assert conceal("'abc' and abc", [v]) == "the value of ${A} and abc"


def test_interpolated_values_are_found_in_lists_and_mappings_longest_first() -> None:
    data = {"a": [_value("xy", "A"), "plain"], "b": {"c": _value("xyz", "B")}}
    assert [str(v) for v in interpolated_values(data)] == ["xyz", "xy"]


def test_suite_errors_conceal_values_named_by_the_model(tmp_path: Path, monkeypatch) -> None:
    """``Suite.with_inputs`` (a retriever asked by name) and the gates' messages too."""
    monkeypatch.setenv("FLOOR_RETRIEVER", "Hunter22")
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(
        "judgments:\n  inline:\n    - {id: q1, text: a, relevant: {d1: 1}}\n"
        "  documents:\n    - {id: d1, text: a}\n"
        "retrievers:\n  bm25: {type: bm25}\n"
        "latency:\n  baseline: bm25\n"
        "floors:\n  bm25:\n    ndcg@10: 0.1\n"
    )
    suite = load_suite(p)
    suite.interpolated = [_value("Hunter22", "FLOOR_RETRIEVER")]
    with pytest.raises(ConfigError) as err:
        suite.with_inputs(["Hunter22"])
    assert "Hunter22" not in str(err.value) and "${FLOOR_RETRIEVER}" in str(err.value)
