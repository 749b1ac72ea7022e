"""Floors a later file loosened: an override file (``--retrieval-override``) or a file that
includes the suite replaced a floor with a lower one (a ceiling with a higher one). Each such
floor names the stricter value it replaced and where (the PASS line, the JSON report, the
Markdown), and a file whose ``overrides.may_lower`` is ``false`` refuses the file that lowers
one of its floors or raises one of its ``regression.max_drop`` margins, naming both files and
lines (issue #36)."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

from ..errors import ConfigError
from .yamlio import Positions, format_path

__all__ = ["FloorGuard"]

_Key = Tuple[str, str, Optional[str]]  # (retriever, canonical metric, stratum)


def _where(pos: Positions, key: Tuple[Any, ...]) -> Tuple[Optional[str], Optional[int]]:
    return pos.get(key, (None, None))


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None  # not a gate number: the schema says so when the suite is validated
    return float(value)


def _origin(pos: Positions, key: Tuple[Any, ...]) -> str:
    file, line = _where(pos, key)
    return f"{file}:{line}" if file else ""


class FloorGuard:
    """Watches one suite's merges, in the order they happen (each include under the file that
    includes it, then each override file): ``check(base, base_pos, over, over_pos)`` before
    ``over`` is merged over ``base``. ``original[key]`` is the first stricter (value, origin)
    a later file replaced."""

    def __init__(self) -> None:
        self.original: Dict[_Key, Tuple[float, str]] = {}

    def check(self, base: Any, base_pos: Positions, over: Any, over_pos: Positions) -> None:
        base_floors, over_floors = _floors(base), _floors(over)
        for r_name, per_metric in over_floors.items():
            before = base_floors.get(r_name)
            if not isinstance(before, dict) or not isinstance(per_metric, dict):
                continue
            for m, value in per_metric.items():
                if m in before:
                    self._compare(base, base_pos, over_pos, (r_name, m), before[m], value)
        self._check_margins(base, base_pos, over, over_pos)

    def _check_margins(self, base: Any, base_pos: Positions, over: Any, over_pos: Positions) -> None:
        """A larger ``regression.max_drop`` loosens a baseline gate as a lower floor does:
        refused under ``overrides.may_lower: false`` the same way."""
        if _may_lower(base) is not False:
            return
        before, after = _margins(base), _margins(over)
        for m, value in after.items():
            old_v, new_v = _number(before.get(m)), _number(value)
            if old_v is not None and new_v is not None and new_v > old_v:
                key = ("regression", "max_drop", m)
                raise _refused(base_pos, over_pos, key, old_v, new_v, "max_drop")

    def _compare(
        self, base: Any, base_pos: Positions, over_pos: Positions, rm: Tuple[Any, Any], old: Any, new: Any
    ) -> None:
        from ..gates.floors import floor_key

        old_v, new_v = _number(old), _number(new)
        if old_v is None or new_v is None:
            return
        try:
            canon, op, stratum = floor_key(str(rm[1]))
        except ValueError:
            return  # a key that is no floor: parse_floors says so
        if not (new_v < old_v if op == ">=" else new_v > old_v):
            return
        key = ("floors",) + rm
        if _may_lower(base) is False:
            raise _refused(base_pos, over_pos, key, old_v, new_v, op)
        self.original.setdefault((str(rm[0]), canon, stratum), (old_v, _origin(base_pos, key)))

    def lowered(self, retriever: str, metric: str, stratum: Optional[str], op: str, threshold: float) -> str:
        """``"0.75 at file:line"`` when the final floor is looser than the first one replaced."""
        first = self.original.get((retriever, metric, stratum))
        if first is None:
            return ""
        old, origin = first
        looser = threshold < old if op == ">=" else threshold > old
        return f"{old:g} at {origin}" if looser else ""


def _floors(data: Any) -> Dict[Any, Any]:
    floors = data.get("floors") if isinstance(data, dict) else None
    return floors if isinstance(floors, dict) else {}


def _margins(data: Any) -> Dict[Any, Any]:
    reg = data.get("regression") if isinstance(data, dict) else None
    margins = reg.get("max_drop") if isinstance(reg, dict) else None
    return margins if isinstance(margins, dict) else {}


def _may_lower(data: Any) -> Any:
    rule = data.get("overrides") if isinstance(data, dict) else None
    return rule.get("may_lower") if isinstance(rule, dict) else None


def _refused(
    base_pos: Positions, over_pos: Positions, key: Tuple[Any, ...], old: float, new: float, op: str
) -> ConfigError:
    """The one line of a floor lowered against its file's ``overrides.may_lower: false``."""
    file, line = _where(over_pos, key)
    rule = _origin(base_pos, ("overrides", "may_lower")) or "the file that sets the floor"
    what = {">=": "lowers the floor", "max_drop": "raises the max_drop"}.get(op, "raises the ceiling")
    return ConfigError(
        f"{what} {old:g} set at {_origin(base_pos, key)} to {new:g}, and {rule} forbids it "
        f"(overrides.may_lower: false): keep {old:g} or stricter, or change the rule there",
        file=file,
        key=format_path(key),
        line=line,
    )
