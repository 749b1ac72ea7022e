"""Ids and grades in a suite file are typed by the suite's rules, not YAML's resolver: a plain
decimal id is its text, an ambiguous one (``0123``, ``1_0``, ``1e3``) asks for quotes, a grade is
a decimal integer (``config/scalars.py``)."""

from __future__ import annotations

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.config.scalars import ANY, ScalarRules, typed_scalar
from pytest_retrieval.config.yamlio import load_yaml
from pytest_retrieval.errors import ConfigError

from ..hostile.conftest import BASE, FLOORS

RULES = ScalarRules(ids=(("ids", ANY),), id_keys=(("by_id",),), grades=(("grades", ANY),))


@pytest.mark.parametrize(
    "text, value",
    [("1", "1"), ("42", "42"), ("0", "0"), ("q7", "q7"), ("'0123'", "0123"), ('"1e3"', "1e3"), ("~", None)],
)
def test_plain_decimals_and_quoted_ids_are_text(tmp_path, text: str, value) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(f"ids: [{text}]\nby_id: {{{text}: 1}}\nother: 0123\n")
    data, _ = load_yaml(path, RULES)
    assert data["ids"] == [value]
    assert list(data["by_id"]) == [value]
    assert data["other"] == 83  # elsewhere YAML's own reading stands


@pytest.mark.parametrize(
    "text, reading",
    [
        ("0123", "the number 83"),
        ("007", "the number 7"),
        ("1_0", "the number 10"),
        ("1e3", "YAML 1.2 reads it as a number"),
        ("1.0e+3", "the number 1000.0"),
        ("+1", "the number 1"),
        ("-1", "the number -1"),
        ("1.5", "the number 1.5"),
        ("0x1F", "the number 31"),
        ("0o17", "YAML 1.2 reads it as a number"),
        ("1:30", "the number 90"),
        (".inf", "the number inf"),
        ("yes", "the boolean true"),
        ("2024-01-01", "a date"),
    ],
)
def test_ambiguous_ids_ask_for_quotes(tmp_path, text: str, reading: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(f"a: 1\nids:\n  - {text}\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path, RULES)
    message = str(err.value)
    assert message.startswith(f"{path}:3: ids[0]: unquoted id {text} is ambiguous")
    assert reading in message and f"quote it: '{text}'" in message


def test_an_ambiguous_id_as_a_mapping_key_names_the_key(tmp_path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("by_id:\n  0123: 1\n")
    with pytest.raises(ConfigError, match=r"x.yaml:2: by_id.0123: unquoted id 0123"):
        load_yaml(path, RULES)


@pytest.mark.parametrize("text, value", [("2", 2), ("-1", -1), ("+3", 3), ("2.0", 2.0), ("'1_0'", "1_0")])
def test_decimal_grades_are_read_as_written(text: str, value) -> None:
    tag = "tag:yaml.org,2002:" + ("str" if text.startswith("'") else "int")
    assert typed_scalar("grade", text, tag, value) == value


@pytest.mark.parametrize("text", ["010", "1_0", "0x1F", "1:30", "yes", "1.5"])
def test_ambiguous_grades_are_refused(tmp_path, text: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(f"grades: [{text}]\n")
    with pytest.raises(ConfigError, match=rf"x.yaml:1: grades\[0\]: relevance grade {text} is ambiguous"):
        load_yaml(path, RULES)


def test_a_suite_reads_plain_decimal_ids_as_strings(tmp_path) -> None:
    path = tmp_path / "retrieval_x.yaml"
    text = BASE.replace("{id: q1,", "{id: 1,").replace("{d1: 1}", "{7: 2}").replace("{id: d1,", "{id: 7,")
    path.write_text(text + FLOORS + "expectations:\n  - {query_id: 1, contains: [7], first: 7}\n")
    suite = load_suite(path)
    (q1, _) = suite.model.judgments.inline or []
    assert q1.id == "1" and q1.relevant == {"7": 2}
    assert (suite.model.judgments.documents or [])[0].id == "7"
    (e,) = suite.expectations
    assert e.query_id == "1" and e.checks.contains == ("7",) and e.checks.first == "7"


@pytest.mark.parametrize(
    "grade, fragment",
    [
        ("'1_0'", "'1_0' is not an integer as trec_eval reads one"),
        ("yes", "relevance grade yes is ambiguous"),
    ],
)
def test_inline_grades_follow_the_grade_rule(tmp_path, grade: str, fragment: str) -> None:
    path = tmp_path / "retrieval_x.yaml"
    path.write_text(BASE.replace("{d1: 1}", f"{{d1: {grade}}}") + FLOORS)
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert "judgments.inline[0].relevant.d1" in str(err.value) and fragment in str(err.value)
    assert "Value error" not in str(err.value)


def test_an_override_file_follows_the_same_rules(tmp_path) -> None:
    path = tmp_path / "retrieval_x.yaml"
    path.write_text(BASE + FLOORS)
    team = tmp_path / "team.yaml"
    team.write_text("expectations:\n  - {query: solar, first: 0123}\n")
    with pytest.raises(ConfigError, match=r"team.yaml:2: expectations\[0\].first: unquoted id 0123"):
        load_suite(path, overrides=(team,))
