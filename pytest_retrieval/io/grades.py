"""The grade scale of a judgment set: which grades it may hold, and how raw grades map onto
them (``judgments.grades`` in a suite, ``--grade-map`` on the command line)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from ..errors import ConfigError
from .numeric import value_text


@dataclass(frozen=True)
class GradeScale:
    """The grades a judgment set may hold, and how raw grades map onto them.

    ``mapping`` (raw grade -> grade) is applied first, to every judgment as it is read;
    grades it does not name are kept. The result must lie in ``low..high``. ``option`` is
    how the user sets the scale (``judgments.grades`` in a suite, ``--grade-map`` on the
    command line), named in every error."""

    low: int = 0
    high: int = 10
    mapping: Optional[Mapping[int, int]] = None
    option: str = "judgments.grades"

    def apply(self, grade: int, *, file: str, line: Optional[int] = None, key: Optional[str] = None) -> int:
        raw = grade
        if self.mapping:
            grade = self.mapping.get(grade, grade)
        if self.low <= grade <= self.high:
            return grade
        raise ConfigError(_off_scale(self, grade, raw), file=file, line=line, key=key)


def _off_scale(scale: GradeScale, grade: int, raw: int) -> str:
    """Why ``grade`` (mapped from ``raw``) is refused, and how to set the scale to take it."""
    if grade < 0 and not scale.mapping:
        example = (
            f"{scale.option}=-1:0" if scale.option.startswith("--") else f"{scale.option}.map: {{-1: 0}}"
        )
        return f"negative relevance grade {grade}: map it onto the scale with {scale.option} (e.g. {example})"
    mapped = f" (mapped from {raw})" if grade != raw else ""
    where = "map" if scale.mapping and grade == raw else "range"
    return (
        f"relevance grade {grade}{mapped} outside the allowed range {scale.low}..{scale.high} "
        f"({scale.option}; add it to the {where}" + (")" if where == "range" else " or widen the range)")
    )


# trec_eval reads a grade with atol() (get_qrels.c): optional sign, ASCII digits. We take the
# same characters plus a decimal point ("2.0"), and refuse what atol would silently truncate
# ("1.5" -> 1, "1e3" -> 1, "x" -> 0) and what Python's int()/float() would read further
# (unicode digits "\u0661", underscores "1_0", "inf", "0x1F").
_GRADE_TEXT = re.compile(r"[+-]?([0-9]+)(?:\.([0-9]*))?|[+-]?\.([0-9]+)")
MAX_GRADE_CHARS = 20  # longer is no grade (and int() of thousands of digits is refused by Python)


def grade_of(value: Any) -> int:
    """A relevance grade as trec_eval reads it: an int, an integral float (a JSON ``2.0``), or
    text of ASCII digits with an optional sign and decimal point whose fraction is zero.
    ``ValueError`` (the reason, one line) for anything else, a boolean included."""
    if isinstance(value, bool):
        raise ValueError(f"relevance grade {value!r} is a boolean, not an integer")
    if isinstance(value, int):
        return _bounded(value)
    if isinstance(value, float):
        if value != value or not value.is_integer():
            raise ValueError(f"relevance grade {value!r} is not an integer")
        return _bounded(int(value))
    if not isinstance(value, str):
        raise ValueError(f"relevance grade {value_text(value)} is not an integer")
    return _bounded(_grade_text(value))


def _bounded(grade: int) -> int:
    """A grade the metric engine's 64-bit columns hold (a larger one raised OverflowError)."""
    if abs(grade) > sys.maxsize:
        raise ValueError(f"relevance grade {value_text(grade)} is too large (at most {sys.maxsize})")
    return grade


def _grade_text(value: str) -> int:
    text = value.strip(" \t")
    m = _GRADE_TEXT.fullmatch(text) if len(text) <= MAX_GRADE_CHARS else None
    if m is None:
        raise ValueError(
            f"relevance grade {value!r} is not an integer as trec_eval reads one (ASCII digits, "
            "an optional sign and decimal point)"
        )
    whole, fraction = m.group(1) or "0", m.group(2) or m.group(3) or ""
    if fraction.strip("0"):
        raise ValueError(f"relevance grade {value!r} is not an integer")
    return -int(whole) if text.startswith("-") else int(whole)


def parse_grade_map(text: str, *, option: str = "--grade-map") -> Dict[int, int]:
    """``"-1:0,1:3,2:2"`` -> ``{-1: 0, 1: 3, 2: 2}`` (one ``ConfigError`` line otherwise)."""
    out: Dict[int, int] = {}
    for part in text.split(","):
        raw, sep, new = part.partition(":")
        try:
            if not sep:
                raise ValueError
            a, b = _grade_text(raw), _grade_text(new)  # as a qrels file's grades are read
        except ValueError:
            raise ConfigError(
                f"{option}: {part.strip()!r} is not 'grade:grade' (e.g. {option}=-1:0,1:3,2:2,3:1)"
            ) from None
        if a in out and out[a] != b:
            raise ConfigError(f"{option}: grade {a} is mapped twice")
        out[a] = b
    return out
