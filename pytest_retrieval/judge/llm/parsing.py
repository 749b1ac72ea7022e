"""Reading a grade out of a judge's answer, strictly.

Accepted, case-insensitively and ignoring surrounding whitespace: a lone digit 0-3,
optionally wrapped in matching quotes, backticks or markdown ``*``/``**``, optionally
followed by one ``.``, optionally preceded by a label ``grade``, ``score``, ``relevance``,
``label`` or ``final score`` (leading ``#``s allowed) and an optional ``:`` or ``=``. So
``2``, ``" 2\\n"``, ``'2'``, ``**2**``, ``2.``, ``Grade: 2``, ``##final score: 2`` are 2.
Everything else is a failure, logged and reported, never a silent 0: ``4``, ``-1``,
``2.5``, ``2.0``, ``2/3``, ``two``, ``2 or 3``, ``Grade: 2 because ...``, an empty answer.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["GradeParseError", "parse_grade", "snippet"]


class GradeParseError(ValueError):
    pass


_GRADE_RE = re.compile(
    r"""^\s*
        (?:\#*\s*(?:final\s+score|grade|score|relevance|label)\s*[:=]?\s*)?
        (?P<w>\*\*|\*|["'`]?)
        (?P<g>[0-3])
        (?P=w)
        \s*\.?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)


def parse_grade(answer: Any, *, lo: int = 0, hi: int = 3) -> int:
    """The grade in a judge's answer, strictly (see the module docstring), else GradeParseError."""
    if isinstance(answer, bool):
        raise GradeParseError(f"answer {answer!r} is not a grade")
    if isinstance(answer, int):
        if lo <= answer <= hi:
            return answer
        raise GradeParseError(f"grade {answer} outside {lo}..{hi}")
    if not isinstance(answer, str):
        raise GradeParseError(f"answer of type {type(answer).__name__} is not a grade")
    m = _GRADE_RE.match(answer)
    if not m or not lo <= int(m.group("g")) <= hi:
        raise GradeParseError(f"answer {snippet(answer)!r} is not a lone grade {lo}-{hi}")
    return int(m.group("g"))


def snippet(text: str, n: int = 80) -> str:
    """``text`` cut to ``n`` characters for an error message, every registered secret
    redacted first (``redaction.clip``: a cut never shows the start of one)."""
    from ...redaction import clip, redact

    shown = redact(text if isinstance(text, str) else repr(text))
    return shown if len(shown) <= n else clip(shown, n - 3)
