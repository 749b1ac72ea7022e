"""Every number key of the suite file faces a boolean, a NaN, an infinity and a 29-digit integer
on every run (the generated table of ``test_surface_threats`` draws three values per key; this
draws all four for every key): each is refused with one line naming the file, the key and what
is wrong (``pytest_retrieval.numbers``: pydantic's lax mode read ``true`` as 1)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, List

import pytest

from .conftest import one_line
from .drivers import run_yaml
from .test_surface_threats import DECLARED
from .test_surfaces_yaml import SCHEMA, _kinds, _leaf

NUMBER_KEYS = sorted(p for p, kinds in DECLARED["yaml"].items() if "number" in kinds)


def _types(path: str) -> set:
    return set(_kinds(_leaf(SCHEMA, path.split("."))))


def _hostile(path: str) -> List[Any]:
    values: List[Any] = [True, False]
    types = _types(path)
    if "number" in types:
        values += [math.nan, math.inf]
    if "integer" in types and "number" not in types:
        values.append(10**28)
    return values


def test_the_number_keys_are_found() -> None:
    assert len(NUMBER_KEYS) > 30, NUMBER_KEYS
    assert "retrievers.*.k1" in NUMBER_KEYS and "backend.connection.batch_size" in NUMBER_KEYS


@pytest.mark.parametrize("path", NUMBER_KEYS)
def test_a_number_key_refuses_what_is_no_number(tmp_path: Path, path: str) -> None:
    for value in _hostile(path):
        out = run_yaml(tmp_path, path, value)
        assert out.refused, f"{path}: {value!r} accepted"
        one_line(out.line)
        assert "s.yaml" in out.line, out.line
        if isinstance(value, bool):
            assert "boolean" in out.line or "valid" in out.line, f"{path}: {out.line}"


@pytest.mark.parametrize(
    "fields, key",
    [
        ({"text": -1}, "retrievers.hx.fields.text"),  # the engines refuse a negative boost
        ({"text": math.nan}, "retrievers.hx.fields.text"),
        (["text^nan"], "retrievers.hx.fields[0]"),
        (["text^inf"], "retrievers.hx.fields[0]"),
        (["text^-2"], "retrievers.hx.fields[0]"),
    ],
)
def test_a_field_boost_is_finite_and_not_negative(tmp_path: Path, fields: Any, key: str) -> None:
    """Named at the boost (of the union of a list and a mapping, the branch the value is)."""
    out = run_yaml(tmp_path, "retrievers.*.fields", fields)
    assert out.refused, fields
    assert f": {key}: " in out.line, out.line
