"""The one number rule of every config model (suite file, backends, models): never a boolean,
a float is finite, an integer fits 64 bits.

pydantic's lax mode reads ``true`` as 1 and ``false`` as 0 where a field expects a number, so a
YAML ``yes``/``on``/``true`` would silently become a batch size of 1 or a ``b`` of 1.0; and a
float field takes ``.nan`` and ``.inf``, which are no parameter. ``NUMBER``, the last item of a
number field's ``Annotated`` (after its ``Field`` constraints, so the published JSON Schema keeps
its ``minimum``/``maximum``), refuses both with one sentence, and an integer beyond 64 bits (numpy and the engines hold
no more: a 29-digit window was an ``OverflowError`` traceback). A string that spells a number is
still read (a whole-value ``${VAR}`` is text: ``config/yamlio.py``). Gate numbers are stricter
still (``config/gate_models.GateNumber``: written as numbers).

    batch_size: Annotated[int, Field(ge=1), NUMBER] = 100
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

__all__ = ["INT64_MAX", "NUMBER", "fits_int64", "not_boolean"]

INT64_MAX = 2**63 - 1


def not_boolean(value: Any) -> Any:
    """``value``, or ``ValueError`` (one sentence) for a boolean."""
    if isinstance(value, bool):
        raise ValueError(
            f"expected a number, got the boolean {str(value).lower()} "
            "(YAML reads yes/no/on/off/true/false as booleans)"
        )
    return value


def fits_int64(value: int) -> int:
    """``value``, or ``ValueError`` (one sentence) for an integer beyond 64 bits."""
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise ValueError(f"{len(str(abs(value)))}-digit integer is too large (at most {INT64_MAX})")
    return value


class _Number:
    """The marker: the field's schema (its constraints applied) behind a boolean check, its
    float schema made finite."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        schema = handler(source)
        if schema.get("type") == "float":
            schema = cast(core_schema.CoreSchema, {**schema, "allow_inf_nan": False})  # a copy: never shared
        elif schema.get("type") == "int":
            schema = core_schema.no_info_after_validator_function(fits_int64, schema)
        return core_schema.no_info_before_validator_function(not_boolean, schema)

    def __repr__(self) -> str:
        return "NUMBER"


NUMBER = _Number()
