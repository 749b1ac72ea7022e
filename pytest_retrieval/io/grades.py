"""The grade scale of a judgment set: which grades it may hold, and how raw grades map onto
them (``judgments.grades`` in a suite, ``--grade-map`` on the command line)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional

from ..errors import ConfigError


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
        mapped = f" (mapped from {raw})" if grade != raw else ""
        if grade < 0 and not self.mapping:
            example = (
                f"{self.option}=-1:0" if self.option.startswith("--") else f"{self.option}.map: {{-1: 0}}"
            )
            problem = (
                f"negative relevance grade {grade}: map it onto the scale with {self.option} (e.g. {example})"
            )
        else:
            where = "map" if self.mapping and grade == raw else "range"
            problem = (
                f"relevance grade {grade}{mapped} outside the allowed range {self.low}..{self.high} "
                f"({self.option}; add it to the {where}"
                + (")" if where == "range" else " or widen the range)")
            )
        raise ConfigError(problem, file=file, line=line, key=key)


def parse_grade_map(text: str, *, option: str = "--grade-map") -> Dict[int, int]:
    """``"-1:0,1:3,2:2"`` -> ``{-1: 0, 1: 3, 2: 2}`` (one ``ConfigError`` line otherwise)."""
    out: Dict[int, int] = {}
    for part in text.split(","):
        raw, sep, new = part.partition(":")
        try:
            if not sep:
                raise ValueError
            a, b = int(raw.strip()), int(new.strip())
        except ValueError:
            raise ConfigError(
                f"{option}: {part.strip()!r} is not 'grade:grade' (e.g. {option}=-1:0,1:3,2:2,3:1)"
            ) from None
        if a in out and out[a] != b:
            raise ConfigError(f"{option}: grade {a} is mapped twice")
        out[a] = b
    return out
