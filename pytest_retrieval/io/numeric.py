"""Every number from outside the plugin (a JSON answer, a team's Python function, a run file's
score column, a sparse weight, ``took``) read the one way: :func:`external_float`.

Python's ``float()`` of an integer too large for a double raises ``OverflowError`` (a 400-digit
score from ``json.loads`` or a team's function), of text returns ``inf`` (``"1e400"``) or
``nan``, of a boolean ``1.0``; each of those reached a ranking, a gate or a traceback. Here any
of them is a ``ValueError`` whose text is the reason, one line, for the caller to put after the
file, key or query it names. Pure: no I/O.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from typing import Any

__all__ = ["external_float", "value_text"]

# what a number written as text may look like: ASCII digits, an optional sign, decimal point and
# exponent (Python's float() also reads "1_0", unicode digits, "inf", "nan" and "infinity")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # unambiguous: linear
MAX_TEXT_CHARS = 4096


def external_float(value: Any, *, text: bool = False, infinite: bool = False) -> float:
    """``value`` as a finite float: an int or float (Python's or numpy's), or with ``text``
    a decimal string. ``ValueError`` (the reason, one line) for a boolean, NaN, an infinity,
    an integer or text too large for a float, or anything else. ``infinite``: an infinity is
    kept (a run file's score, which trec_eval reads with ``atof``: ``inf``, ``1e400``)."""
    if isinstance(value, bool) or type(value).__name__ in (
        "bool_",
        "bool",
    ):  # numpy's: bool_ (1.x), bool (2.x)
        raise ValueError(f"{value!r} is a boolean, not a number")
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()  # a numpy scalar
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _checked(value, repr(value), infinite)
    if text and isinstance(value, str):
        return _text(value, infinite)
    if isinstance(value, numbers.Real):  # a Fraction, a third party's number type
        try:
            return _checked(float(value), value_text(value))
        except (OverflowError, TypeError, ValueError):
            raise ValueError(f"{value_text(value)} is too large for a float or not a number") from None
    raise ValueError(f"{value_text(value)} is not a number")


def _int(value: int) -> float:
    if abs(value) <= sys.float_info.max:
        return float(value)
    raise ValueError(f"{value_text(value)} is too large for a float (at most about 1.8e308)")


def _text(value: str, infinite: bool) -> float:
    stripped = value.strip()
    if len(stripped) > MAX_TEXT_CHARS:
        raise ValueError(f"{value_text(value)} is longer than {MAX_TEXT_CHARS} characters, not a number")
    if not _DECIMAL.fullmatch(stripped):
        word = stripped.lower().lstrip("+-")
        if word == "nan":
            raise ValueError(f"{value_text(value)} is NaN, not a number")
        if word in ("inf", "infinity") and infinite:
            return float(stripped)
        if word in ("inf", "infinity"):
            raise ValueError(f"{value_text(value)} is infinite, not a finite number")
        raise ValueError(f"{value_text(value)} is not a decimal number")
    return _checked(float(stripped), value_text(stripped), infinite)


def _checked(out: float, shown: str, infinite: bool = False) -> float:
    if math.isnan(out):
        raise ValueError(f"{shown} is NaN, not a number")
    if math.isinf(out) and not infinite:
        raise ValueError(f"{shown} is infinite or too large for a float (at most about 1.8e308)")
    return out


def value_text(value: Any) -> str:
    """A value in a message, short whatever its size: a huge integer by its number of digits
    (``repr`` of one over 4,300 digits raises in Python >= 3.11), anything else by a cut repr."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        digits = int(math.log10(abs(value))) + 1
        return f"a {digits}-digit integer"
    if (
        isinstance(value, str)
        and len(value) > 30
        and value.isascii()
        and value.strip().lstrip("+-").isdigit()
    ):
        return f"a {len(value.strip().lstrip('+-'))}-digit number"
    try:
        shown = repr(value)
    except Exception:  # noqa: BLE001 - a third party's __repr__
        shown = f"<{type(value).__name__}>"
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return shown if isinstance(value, (int, float, str)) else f"{type(value).__name__} {shown}"
